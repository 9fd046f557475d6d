"""Members, settings, tokens and the database's status."""

from __future__ import annotations

from opgov.results.models import MemberView, SettingChange, Settings, StatusReport, TokenCreated, TokenView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.admin import MemberRef, MemberRequest, SettingRequest, TokenId, TokenQuery, TokenRequest


DECLARED: tuple[UseCase, ...] = (
    UseCase("members list", result=list[MemberView], service=lazy("opgov.services.governance", "list_members"),
            method="GET", path="/api/v1/members", summary="Members and their roles, by name."),
    UseCase("members add", request=MemberRequest, result=MemberView,
            service=lazy("opgov.services.governance", "add_member"), writes=True, method="POST", path="/api/v1/members",
            status=201, summary="Add a member (maintainers). Give them a token with `opgov tokens create`."),
    UseCase("members remove", request=MemberRef, result=MemberView,
            service=lazy("opgov.services.governance", "remove_member"), writes=True, method="DELETE",
            path="/api/v1/members/{name}",
            summary="Remove a member (maintainers; never the last maintainer while others remain)."),
    UseCase("config list", result=Settings, service=lazy("opgov.services.governance", "list_settings"),
            method="GET", path="/api/v1/config", summary="The governance settings."),
    UseCase("config set", request=SettingRequest, result=SettingChange,
            service=lazy("opgov.services.governance", "set_setting"), writes=True, method="PUT", path="/api/v1/config/{key}",
            summary="Set quorum, deprecating_days or deprecated_days (maintainers; logged)."),
    UseCase("tokens create", request=TokenRequest, result=TokenCreated,
            service=lazy("opgov.services.tokens", "create_token"), writes=True, method="POST", path="/api/v1/tokens",
            status=201, summary="A new token for a member (maintainers).",
            description="`token` is in this answer only: the server keeps its sha256."),
    UseCase("tokens list", request=TokenQuery, result=list[TokenView],
            service=lazy("opgov.services.tokens", "list_tokens"), method="GET", path="/api/v1/tokens",
            summary="Tokens, oldest first, never their secrets.",
            description="Maintainers see all, a member (`member` = their name) their own."),
    UseCase("tokens revoke", request=TokenId, result=TokenView,
            service=lazy("opgov.services.tokens", "revoke_token"), writes=True, method="DELETE",
            path="/api/v1/tokens/{token_id}",
            summary="Revoke a token now (maintainers any, a member their own); 404 for an unknown id."),
    UseCase("status", result=StatusReport, service=lazy("opgov.services.status", "status"), method="GET",
            path="/api/v1/status",
            summary="The database at a glance: its revision, snapshots, operators by category, open proposals and "
                    "members."),
)

