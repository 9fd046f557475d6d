"""API tokens of members, for ``opgov serve``."""

from __future__ import annotations

from opgov.results.tokens import TokenCreated, TokenView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.tokens import TokenId, TokenQuery, TokenRequest


TOKENS_CREATE = UseCase(
    "tokens create", request=TokenRequest, result=TokenCreated,
    service=lazy("opgov.services.tokens", "create_token"), writes=True, method="POST", path="/api/v1/tokens",
    status=201, summary="A new token for a member (maintainers).",
    description="`token` is in this answer only: the server keeps its sha256.")

TOKENS_LIST = UseCase(
    "tokens list", request=TokenQuery, result=list[TokenView],
    service=lazy("opgov.services.tokens", "list_tokens"), method="GET", path="/api/v1/tokens",
    summary="Tokens, oldest first, never their secrets.",
    description="Maintainers see all, a member (`member` = their name) their own.")

TOKENS_REVOKE = UseCase(
    "tokens revoke", request=TokenId, result=TokenView,
    service=lazy("opgov.services.tokens", "revoke_token"), writes=True, method="DELETE",
    path="/api/v1/tokens/{token_id}",
    summary="Revoke a token now (maintainers any, a member their own); 404 for an unknown id.")

DECLARED: tuple[UseCase, ...] = (TOKENS_CREATE, TOKENS_LIST, TOKENS_REVOKE)
