"""Checks: compatibility of two uploaded native_functions.yaml, and whether a model's operators run."""

from __future__ import annotations

from fastapi import APIRouter, Depends, File, Request, UploadFile
from pydantic import BaseModel, Field

from opgov.api.deps import Reader
from opgov.api.uploads import check_length, read_text

router = APIRouter(prefix="/api/v1", tags=["checks"])


def _check_report():
    from opgov.render.compat import CheckReport

    return CheckReport


def _model_report():
    from opgov.render.decomps import ModelCheckReport

    return ModelCheckReport


@router.post("/check-bc", response_model=_check_report(), dependencies=[Depends(check_length)])
def check_bc(request: Request, ctx: Reader, old: UploadFile = File(..., description="the old native_functions.yaml"),
             new: UploadFile = File(..., description="the new native_functions.yaml")):
    """BC/FC findings of old → new with PyTorch's semantics and the core policy (the database's
    decisions, exceptions and completed deletions apply). ``summary.errors`` > 0 is what makes
    ``opgov check-bc`` exit 1. Writes nothing."""
    from opgov.services.compat_checks import check_bc_texts

    limit = request.app.state.config.max_upload_bytes
    return check_bc_texts(read_text(old, limit), read_text(new, limit), session=ctx.session, today=ctx.now().date())


class ModelCheckRequest(BaseModel):
    operators: list[str] = Field(min_length=1, description="the operators the model uses, e.g. aten::add.Tensor")
    runtime: str | None = Field(default=None, description="the snapshot label the runtime was built from")


@router.post("/check-model", response_model=_model_report())
def check_model(body: ModelCheckRequest, ctx: Reader):
    """Can a runtime run a model using these operators? ``ok`` is false on deleted, deprecated or
    missing operators. Writes nothing."""
    from opgov.core.errors import BadInput
    from opgov.core.names import canonical
    from opgov.render.decomps import ModelCheckReport
    from opgov.services.decompositions import check_model_ops

    ops: list[str] = []
    for name in body.operators:
        try:
            ops.append(canonical(name))
        except BadInput as err:
            raise BadInput(f"operators: {err}") from None
    return ModelCheckReport.of(check_model_ops(ctx, list(dict.fromkeys(ops)), runtime=body.runtime))
