"""Checks: whether a model's operators run (check-bc's route is derived from its declaration,
opgov.usecases.compat)."""

from __future__ import annotations

from dataclasses import dataclass, field

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field

from opgov.api.deps import Reader
from opgov.api.fields import OperatorName
from opgov.formats.files import Content
from opgov.usecases import PREFIX
from opgov.usecases.runtimes import CHECK_MODEL

router = APIRouter(prefix="/api/v1", tags=["checks"])


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


# the declared use case (opgov.usecases.runtimes), by hand: one route takes its multipart form or a JSON body
@router.post(CHECK_MODEL.path[len(PREFIX):], response_model=CHECK_MODEL.result, openapi_extra=_MODEL_BODY,
             operation_id=CHECK_MODEL.operation_id, summary=CHECK_MODEL.summary,
             description=CHECK_MODEL.description)  # the router's tag is the declaration's group
def check_model(ctx: Reader, spec: _ModelInput = Depends(_model_input)):
    if spec.operators is None:
        return CHECK_MODEL.function(ctx, spec.files, spec.runtime)
    return CHECK_MODEL.function(ctx, operators=spec.operators, runtime=spec.runtime)
