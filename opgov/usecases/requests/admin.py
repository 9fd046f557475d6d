"""What the admin use cases ask (opgov.usecases.admin): members, settings, tokens."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opgov.usecases.fields import Days, MemberName, Role, SettingKey, SettingValue
from opgov.usecases.requests import Request


class MemberRequest(Request):
    name: MemberName = Field(description="the member's name, as the event log records it")
    role: Role = Field(description="maintainer, developer or bot")


class MemberRef(Request):
    name: Annotated[str, Field(max_length=200, description="a member's name")]


class SettingRequest(Request):
    key: SettingKey = Field(description="quorum, deprecating_days or deprecated_days")
    value: SettingValue


class TokenRequest(Request):
    member: MemberName = Field(description="the member the token acts as")
    expires_days: Days | None = Field(default=None, description="days until it expires (default: never)")


class TokenQuery(Request):
    member: str | None = Field(default=None, description="only this member's tokens")


class TokenId(Request):
    # any whole number: one opgov never gave is an unknown token (404), as the CLI says it
    token_id: int = Field(description="a token's id (`opgov tokens list`)")
