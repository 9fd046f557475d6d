"""Operator upgraders (the runtime routes are declared: opgov.usecases.runtimes)."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import OperatorName, Text
from opgov.services.upgraders import UpgraderAdded, UpgraderList, UpgraderTimers, UpgraderView

router = APIRouter(prefix="/api/v1")


# --- upgraders ----------------------------------------------------------------------------------


@router.get("/upgraders", response_model=UpgraderList, tags=["upgraders"])
def list_upgraders(ctx: Reader) -> UpgraderList:
    """Every recorded upgrader, the recorded version bumps, and the current operator version."""
    from opgov.services.upgraders import list_upgraders

    return list_upgraders(ctx)


@router.get("/upgraders/timers", response_model=UpgraderTimers, tags=["upgraders"])
def upgrader_timers(ctx: Reader, within_days: int = Query(0, ge=0, le=36500)) -> UpgraderTimers:
    """Upgraders that may be replaced now (180 days after their version bump), and those that may
    within ``within_days``: what `opgov tick` reports besides the lifecycle."""
    from opgov.services.upgraders import upgrader_timers

    return upgrader_timers(ctx, within_days=within_days)


@router.get("/upgraders/{name}", response_model=UpgraderView, tags=["upgraders"])
def show_upgrader(name: str, ctx: Reader) -> UpgraderView:
    """One upgrader by name (``<name>_<overload>_<start>_<end>``)."""
    from opgov.services.upgraders import show_upgrader

    return show_upgrader(ctx, name)


class UpgraderRequest(BaseModel):
    operator: OperatorName = Field(description="e.g. aten::linspace")
    versions: str = Field(pattern=r"^\d{1,9}-\d{1,9}$", description="START-END: the operator versions it applies to, e.g. 0-7")
    old_schema: str = Field(description="the operator's schema at those versions")
    bumped_on: date | None = Field(default=None, description="when the version was bumped to END+1 (unless recorded)")
    reason: Text | None = Field(default=None, description="why it was bumped (unless recorded)")
    name: str | None = Field(default=None, description="default <name>_<overload>_<start>_<end>")
    replaces: str | None = Field(default=None, description="take over from this upgrader (180 days after its bump)")


@router.post("/upgraders", response_model=UpgraderAdded, status_code=201, tags=["upgraders"])
def add_upgrader(body: UpgraderRequest, ctx: Writer) -> UpgraderAdded:
    """Record an upgrader and the version bump it came with; replacing one is refused (409) until
    180 days after its bump."""
    from opgov.services.upgraders import add_upgrader

    return add_upgrader(ctx, body.operator, versions=body.versions, old_schema=body.old_schema,
                        bumped_on=body.bumped_on, reason=body.reason, name=body.name, replaces=body.replaces)

