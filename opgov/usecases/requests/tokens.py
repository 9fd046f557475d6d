"""What the token use cases ask (opgov.usecases.tokens)."""

from __future__ import annotations

from pydantic import Field

from opgov.usecases.fields import Days, MemberName
from opgov.usecases.requests import Request


class TokenRequest(Request):
    member: MemberName = Field(description="the member the token acts as")
    expires_days: Days | None = Field(default=None, description="days until it expires (default: never)")


class TokenQuery(Request):
    member: str | None = Field(default=None, description="only this member's tokens")


class TokenId(Request):
    # any whole number: one opgov never gave is an unknown token (404), as the CLI says it
    token_id: int = Field(description="a token's id (`opgov tokens list`)")
