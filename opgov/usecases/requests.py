"""The requests of the use cases (opgov.usecases.USE_CASES): what each asks, with the constraints
of its fields. The API takes them as its bodies, path and query parameters; the CLI builds them
from its arguments and checks them before it runs or sends one."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from opgov.usecases.fields import Days, MemberName, Role, SettingKey, SettingValue


class Request(BaseModel):
    model_config = ConfigDict(frozen=True)


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
