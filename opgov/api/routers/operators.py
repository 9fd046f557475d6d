"""Operators' lifecycle steps (the list and one operator's story are use cases: opgov.usecases.registry)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, Field

from opgov.api.deps import Writer
from opgov.api.fields import OperatorName, OperatorPath, Text
from opgov.results.models import LifecycleStepResult

router = APIRouter(prefix="/api/v1/operators", tags=["operators"])


class DeprecateRequest(BaseModel):
    reason: Text
    replacement: OperatorName | None = Field(default=None, description="the operator to use instead (required for core)")


class ReasonRequest(BaseModel):
    reason: Text | None = None


class UndeprecateRequest(BaseModel):
    reason: Text


@router.post("/{name}/deprecate", response_model=LifecycleStepResult)
def deprecate(name: OperatorPath, body: DeprecateRequest, ctx: Writer) -> LifecycleStepResult:
    """active → deprecating (maintainers)."""
    from opgov.services.lifecycle import deprecate

    return deprecate(ctx, name, reason=body.reason, replacement=body.replacement)


@router.post("/{name}/mark-deprecated", response_model=LifecycleStepResult)
def mark_deprecated(name: OperatorPath, ctx: Writer, body: ReasonRequest | None = None) -> LifecycleStepResult:
    """deprecating → deprecated, no sooner than deprecating_days after."""
    from opgov.services.lifecycle import mark_deprecated

    return mark_deprecated(ctx, name, reason=body.reason if body else None)


@router.post("/{name}/delete", response_model=LifecycleStepResult)
def delete(name: OperatorPath, ctx: Writer, body: ReasonRequest | None = None) -> LifecycleStepResult:
    """deprecated → deleted, no sooner than deprecated_days after."""
    from opgov.services.lifecycle import delete

    return delete(ctx, name, reason=body.reason if body else None)


@router.post("/{name}/undeprecate", response_model=LifecycleStepResult)
def undeprecate(name: OperatorPath, body: UndeprecateRequest, ctx: Writer) -> LifecycleStepResult:
    """Back to active from deprecating or deprecated."""
    from opgov.services.lifecycle import undeprecate

    return undeprecate(ctx, name, reason=body.reason)
