"""Health and BC exceptions."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import IdPath, Text
from opgov.results.models import ExceptionAdded, ExceptionView

router = APIRouter()


class Health(BaseModel):
    status: str = Field(description="ok when the database answers at the revision this opgov needs")
    revision: str | None


@router.get("/healthz", response_model=Health, tags=["system"])
def healthz(request: Request) -> Health:
    """Whether the service and its database are up."""
    from opgov.db.engine import current_revision

    return Health(status="ok", revision=current_revision(request.app.state.engine))


class ExceptionRequest(BaseModel):
    pattern: Text = Field(max_length=300, description="operator glob, e.g. aten::_foreach_*")
    reason: Text
    expires: date = Field(description="the last day it applies (a future date)")


@router.get("/api/v1/exceptions", response_model=list[ExceptionView], tags=["exceptions"])
def get_exceptions(ctx: Reader, all: bool = False) -> list[ExceptionView]:  # noqa: A002
    """BC exceptions in force and expired (``all``: removed ones too)."""
    from opgov.services.compat_checks import list_exceptions

    return list_exceptions(ctx, include_removed=all)


@router.post("/api/v1/exceptions", response_model=ExceptionAdded, status_code=201, tags=["exceptions"])
def post_exception(body: ExceptionRequest, ctx: Writer) -> ExceptionAdded:
    """Record an exception: BC breaks of matching non-core operators are not errors until it expires."""
    from opgov.services.compat_checks import add_exception

    return add_exception(ctx, body.pattern, reason=body.reason, expires=body.expires)


@router.delete("/api/v1/exceptions/{exception_id}", response_model=ExceptionView, tags=["exceptions"])
def delete_exception(exception_id: IdPath, ctx: Writer) -> ExceptionView:
    """Remove an exception (maintainers; kept in the log). 404 for an unknown id."""
    from opgov.services.compat_checks import remove_exception

    return remove_exception(ctx, exception_id)
