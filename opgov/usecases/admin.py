"""Members, settings, tokens and the database's status."""

from __future__ import annotations

from opgov.usecases.declaration import MODELS, UseCase

REQUESTS = "opgov.usecases.requests.admin"

DECLARED: tuple[UseCase, ...] = (
    UseCase("members list", result=f"list[{MODELS}:MemberView]", service="opgov.services.governance:list_members",
            method="GET", path="/api/v1/members", summary="Members and their roles, by name."),
    UseCase("members add", request=f"{REQUESTS}:MemberRequest", result=f"{MODELS}:MemberView",
            service="opgov.services.governance:add_member", writes=True, method="POST", path="/api/v1/members",
            status=201, summary="Add a member (maintainers). Give them a token with `opgov tokens create`."),
    UseCase("members remove", request=f"{REQUESTS}:MemberRef", result=f"{MODELS}:MemberView",
            service="opgov.services.governance:remove_member", writes=True, method="DELETE",
            path="/api/v1/members/{name}",
            summary="Remove a member (maintainers; never the last maintainer while others remain)."),
    UseCase("config list", result=f"{MODELS}:Settings", service="opgov.services.governance:list_settings",
            method="GET", path="/api/v1/config", summary="The governance settings."),
    UseCase("config set", request=f"{REQUESTS}:SettingRequest", result=f"{MODELS}:SettingChange",
            service="opgov.services.governance:set_setting", writes=True, method="PUT", path="/api/v1/config/{key}",
            summary="Set quorum, deprecating_days or deprecated_days (maintainers; logged)."),
    UseCase("tokens create", request=f"{REQUESTS}:TokenRequest", result=f"{MODELS}:TokenCreated",
            service="opgov.services.tokens:create_token", writes=True, method="POST", path="/api/v1/tokens",
            status=201, summary="A new token for a member (maintainers).",
            description="`token` is in this answer only: the server keeps its sha256."),
    UseCase("tokens list", request=f"{REQUESTS}:TokenQuery", result=f"list[{MODELS}:TokenView]",
            service="opgov.services.tokens:list_tokens", method="GET", path="/api/v1/tokens",
            summary="Tokens, oldest first, never their secrets.",
            description="Maintainers see all, a member (`member` = their name) their own."),
    UseCase("tokens revoke", request=f"{REQUESTS}:TokenId", result=f"{MODELS}:TokenView",
            service="opgov.services.tokens:revoke_token", writes=True, method="DELETE",
            path="/api/v1/tokens/{token_id}",
            summary="Revoke a token now (maintainers any, a member their own); 404 for an unknown id."),
    UseCase("status", result=f"{MODELS}:StatusReport", service="opgov.services.status:status", method="GET",
            path="/api/v1/status", render="opgov.render.status:status_text",
            summary="The database at a glance: its revision, snapshots, operators by category, open proposals and "
                    "members."),
)

