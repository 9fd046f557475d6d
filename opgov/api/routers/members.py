"""Members and their roles, and the governance settings (quorum, the lifecycle periods)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import MemberName, Role, SettingKey, SettingValue
from opgov.results.models import MemberView, SettingChange, Settings

router = APIRouter(prefix="/api/v1")


@router.get("/members", response_model=list[MemberView], tags=["members"])
def list_members(ctx: Reader) -> list[MemberView]:
    """Members and their roles, by name."""
    from opgov.services.governance import list_members

    return list_members(ctx)


class MemberRequest(BaseModel):
    name: MemberName = Field(description="the member's name, as the event log records it")
    role: Role = Field(description="maintainer, developer or bot")


@router.post("/members", response_model=MemberView, status_code=201, tags=["members"])
def add_member(body: MemberRequest, ctx: Writer) -> MemberView:
    """Add a member (maintainers). Give them a token with `opgov tokens create`."""
    from opgov.services.governance import add_member

    return add_member(ctx, body.name, body.role)


@router.delete("/members/{name}", response_model=MemberView, tags=["members"])
def remove_member(name: Annotated[str, Path(max_length=200)], ctx: Writer) -> MemberView:
    """Remove a member (maintainers; never the last maintainer while others remain)."""
    from opgov.services.governance import remove_member

    return remove_member(ctx, name)


@router.get("/config", response_model=Settings, tags=["config"])
def list_settings(ctx: Reader) -> Settings:
    """The governance settings."""
    from opgov.services.governance import list_settings

    return list_settings(ctx)


class SettingRequest(BaseModel):
    value: SettingValue


@router.put("/config/{key}", response_model=SettingChange, tags=["config"])
def set_setting(key: SettingKey, body: SettingRequest, ctx: Writer) -> SettingChange:
    """Set quorum, deprecating_days or deprecated_days (maintainers; logged)."""
    from opgov.services.governance import set_setting

    return set_setting(ctx, key, str(body.value))
