"""API tokens of members: create (the secret is in this one answer), list (never a secret nor its
hash), revoke. The rules are the service's (opgov.services.tokens): maintainers create and see all,
a member sees and revokes their own."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import Days, IdPath, MemberName
from opgov.results.models import TokenCreated, TokenView

router = APIRouter(prefix="/api/v1/tokens", tags=["tokens"])


class TokenRequest(BaseModel):
    member: MemberName = Field(description="the member the token acts as")
    expires_days: Days | None = Field(default=None, description="days until it expires (default: never)")


@router.post("", response_model=TokenCreated, status_code=201)
def create_token(body: TokenRequest, ctx: Writer) -> TokenCreated:
    """A new token for a member (maintainers). ``token`` is in this answer only: the server keeps
    its sha256."""
    from opgov.services.tokens import create_token

    return create_token(ctx, body.member, expires_days=body.expires_days)


@router.get("", response_model=list[TokenView])
def list_tokens(ctx: Reader, member: str | None = None) -> list[TokenView]:
    """Tokens, oldest first, never their secrets: maintainers see all, a member (``member`` = their
    name) their own."""
    from opgov.services.tokens import list_tokens

    return list_tokens(ctx, member=member)


@router.delete("/{token_id}", response_model=TokenView)
def revoke_token(token_id: IdPath, ctx: Writer) -> TokenView:
    """Revoke a token now (maintainers any, a member their own); 404 for an unknown id."""
    from opgov.services.tokens import revoke_token

    return revoke_token(ctx, token_id)
