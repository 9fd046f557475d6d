"""Registering a runtime (the other runtime routes are declared: opgov.usecases.runtimes)."""

from __future__ import annotations

from datetime import date

from fastapi import APIRouter, File, Form, Query, Request, UploadFile
from pydantic import BaseModel, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import RUNTIME_PATTERN, OperatorName, Text
from opgov.api.uploads import read_upload
from opgov.results.runtimes import RuntimeAdded

router = APIRouter(prefix="/api/v1")


@router.post("/runtimes", response_model=RuntimeAdded, status_code=201, tags=["runtimes"])
def add_runtime(request: Request, ctx: Writer, runtime: str = Form(..., pattern=RUNTIME_PATTERN, max_length=200, description="NAME@VERSION"),
                ops: list[UploadFile] = File(..., description="ExecuTorch kernel yaml (functions.yaml), "
                                             "selected_operators.yaml, `opgov opset build` output, or a list"),
                released: date | None = Form(None), replace: bool = Form(False)) -> RuntimeAdded:
    """Register a runtime at a version with the operators of the uploaded files (their union;
    maintainers). The same operators again change nothing; others are refused (409) without ``replace``."""
    from opgov.services.common import require
    from opgov.services.runtimes import add_runtime

    require(ctx, "runtimes", "register runtimes")  # before reading what a member without the role sent
    limit = request.app.state.config.max_upload_bytes
    return add_runtime(ctx, runtime, [read_upload(upload, limit) for upload in ops], released=released,
                       replace=replace)
