"""Checks: compatibility of two uploaded native_functions.yaml, and whether a model's operators run."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from pydantic import BaseModel, Field

from opgov.api.contract import ONE_OF
from opgov.api.deps import Reader
from opgov.api.fields import NOT_BLANK, OperatorName
from opgov.api.uploads import read_text
from opgov.formats.files import Content
from opgov.usecases import PREFIX, named

router = APIRouter(prefix="/api/v1", tags=["checks"])


def _check_report():
    from opgov.results.compat import CheckReport

    return CheckReport


@router.post("/check-bc", response_model=_check_report(),
             openapi_extra={ONE_OF: [["old", "old_snapshot"], ["new", "new_snapshot"]]})
def check_bc(request: Request, ctx: Reader,
             old: UploadFile | None = File(None, description="the old native_functions.yaml (or old_snapshot)"),
             new: UploadFile | None = File(None, description="the new native_functions.yaml (or new_snapshot)"),
             old_snapshot: str | None = Form(None, min_length=1, max_length=200, pattern=NOT_BLANK,
                                             description="the label of a snapshot the server holds, as OLD"),
             new_snapshot: str | None = Form(None, min_length=1, max_length=200, pattern=NOT_BLANK,
                                             description="the label of a snapshot the server holds, as NEW")):
    """BC/FC findings of old → new with PyTorch's semantics and the core policy (the database's
    decisions, exceptions and completed deletions apply). Each side is an uploaded file or the
    label of a snapshot the server holds (`opgov check-bc 2.12.0 2.13.0 --server …`).
    ``summary.errors`` > 0 is what makes ``opgov check-bc`` exit 1. Writes nothing."""
    from fastapi import HTTPException

    from opgov.services.compat_checks import check_bc_texts

    from opgov.api.uploads import shown_name

    limit = request.app.state.config.max_upload_bytes
    sides = []
    for name, upload, label in (("old", old, old_snapshot), ("new", new, new_snapshot)):
        if (upload is None) == (label is None):  # the form does not match its schema: 422, as a missing field is
            raise HTTPException(422, f"{name}: give either the file `{name}` or the snapshot label `{name}_snapshot`")
        # the findings name the files as the client named them
        sides.append((shown_name(upload), read_text(upload, limit)[1]) if upload is not None else label)
    return check_bc_texts(sides[0], sides[1], session=ctx.session, today=ctx.now().date())


class ModelCheckRequest(BaseModel):
    operators: list[OperatorName] = Field(min_length=1, description="the operators the model uses, e.g. aten::add.Tensor")
    runtime: str | None = Field(default=None, description="a registered runtime NAME@VERSION, or the snapshot "
                                                          "label the runtime was built from")


@dataclass
class _ModelInput:
    runtime: str | None
    operators: list[str] | None = None  # the JSON body
    files: list[Content] = field(default_factory=list)  # the uploads, named as the client named them


async def _model_input(request: Request) -> _ModelInput:
    """The JSON body ``{operators, runtime}``, or a multipart form: ``models`` (files: .pt2 archives,
    selected_operators.yaml, op lists; several give their union) and ``runtime``."""
    from pydantic import ValidationError
    from starlette.datastructures import UploadFile as Upload

    from opgov.api.uploads import read_upload

    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await request.form()
        uploads = [u for u in form.getlist("models") if isinstance(u, Upload)]
        runtime = form.get("runtime")
        limit = request.app.state.config.max_upload_bytes
        found = _ModelInput(runtime=runtime if isinstance(runtime, str) and runtime else None)
        found.files = [read_upload(upload, limit) for upload in uploads]
        return found
    try:
        body = ModelCheckRequest.model_validate_json(await request.body())
    except ValidationError as err:
        from fastapi.exceptions import RequestValidationError

        raise RequestValidationError(err.errors()) from None
    return _ModelInput(runtime=body.runtime, operators=body.operators)


_MODEL_BODY = {"requestBody": {"required": True, "content": {
    "application/json": {"schema": ModelCheckRequest.model_json_schema()},
    "multipart/form-data": {"schema": {"type": "object", "required": ["models"], "properties": {
        "models": {"type": "array", "items": {"type": "string", "format": "binary"},
                   "description": "model files: .pt2 archives, selected_operators.yaml, op lists (their union)"},
        "runtime": {"type": "string", "description": "a registered runtime NAME@VERSION, or a snapshot label"}}}}}}}


_CHECK_MODEL = named("check-model")


# the declared use case (opgov.usecases.runtimes), by hand: one route takes its multipart form or a JSON body
@router.post(_CHECK_MODEL.path[len(PREFIX):], response_model=_CHECK_MODEL.result_type, openapi_extra=_MODEL_BODY,
             operation_id=_CHECK_MODEL.operation_id, summary=_CHECK_MODEL.summary,
             description=_CHECK_MODEL.description)  # the router's tag is the declaration's group
def check_model(ctx: Reader, spec: _ModelInput = Depends(_model_input)):
    from opgov.services.runtimes import check_model, check_model_operators

    if spec.operators is None:
        return check_model(ctx, spec.files, spec.runtime)
    return check_model_operators(ctx, spec.operators, spec.runtime)
