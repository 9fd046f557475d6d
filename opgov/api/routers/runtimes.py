"""Runtimes (what an engine implements, and the coverage matrix); the upgraders are declared use
cases (opgov.usecases.governance)."""

from __future__ import annotations

from datetime import date
from typing import Literal

from fastapi import APIRouter, File, Form, Request, Response, UploadFile

from opgov.api.deps import Reader, Writer
from opgov.api.fields import RUNTIME_PATTERN, RuntimePath
from opgov.api.uploads import read_upload
from opgov.services.runtimes import CoverageMatrix, RuntimeAdded, RuntimeDetail, RuntimeList

router = APIRouter(prefix="/api/v1")


@router.get("/runtimes", response_model=RuntimeList, tags=["runtimes"])
def list_runtimes(ctx: Reader) -> RuntimeList:
    """Every registered runtime, oldest version first: kernels, core coverage, gains over the previous version."""
    from opgov.services.runtimes import list_runtimes

    return list_runtimes(ctx)


@router.get("/runtimes/coverage", response_model=CoverageMatrix, tags=["runtimes"],
            responses={200: {"content": {"text/markdown": {}, "text/plain": {}}}})
def coverage(ctx: Reader, format: Literal["json", "md", "text"] = "json",  # noqa: A002
             stage: Literal["core-aten", "exported"] = "core-aten"):
    """Core operators × registered runtimes, and which of the bundled models each runtime runs
    (the models of ``OPGOV_MODELS_DIR`` on the server, when it is set)."""
    from opgov.render.runtimes import render_matrix
    from opgov.services.decompositions import corpora_dir
    from opgov.services.runtimes import coverage_matrix

    models = corpora_dir()
    result = coverage_matrix(ctx, models=str(models) if models is not None and models.is_dir() else None,
                             stage=stage)
    if format == "json":
        return result
    media = "text/markdown" if format == "md" else "text/plain"
    return Response(render_matrix(result, format), media_type=f"{media}; charset=utf-8")


@router.get("/runtimes/{runtime}", response_model=RuntimeDetail, tags=["runtimes"])
def show_runtime(runtime: RuntimePath, ctx: Reader) -> RuntimeDetail:
    """One runtime (``NAME@VERSION``): its sources, kernels, the functional operators they give, the
    core operators it lacks."""
    from opgov.services.runtimes import show_runtime

    return show_runtime(ctx, runtime)


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
