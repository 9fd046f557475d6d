"""Health: whether the service and its database are up (every other JSON route is a declared use
case: opgov.usecases)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

router = APIRouter()


class Health(BaseModel):
    status: str = Field(description="ok when the database answers at the revision this opgov needs")
    revision: str | None


@router.get("/healthz", response_model=Health, tags=["system"])
def healthz(request: Request) -> Health:
    """Whether the service and its database are up."""
    from opgov.db.engine import current_revision

    return Health(status="ok", revision=current_revision(request.app.state.engine))
