"""Health, the lifecycle tick."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from opgov.api.deps import Writer
from opgov.api.fields import Flag, WithinDays
from opgov.results.models import TickResult

router = APIRouter()


class Health(BaseModel):
    status: str = Field(description="ok when the database answers at the revision this opgov needs")
    revision: str | None


@router.get("/healthz", response_model=Health, tags=["system"])
def healthz(request: Request) -> Health:
    """Whether the service and its database are up."""
    from opgov.db.engine import current_revision

    return Health(status="ok", revision=current_revision(request.app.state.engine))


class TickRequest(BaseModel):
    apply: Flag = Field(default=True, description="perform the due transitions (bots and maintainers)")
    within_days: WithinDays = Field(default=0, description="also list those coming due within this many days")


@router.post("/api/v1/tick", response_model=TickResult, tags=["lifecycle"])
def post_tick(body: TickRequest, ctx: Writer) -> TickResult:
    """Lifecycle transitions due now (and within ``within_days``); ``apply`` performs the due ones."""
    from opgov.services.lifecycle import tick

    return tick(ctx, apply=body.apply, within_days=body.within_days)
