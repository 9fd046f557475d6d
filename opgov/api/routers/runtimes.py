"""Runtimes (what an engine implements, and the coverage matrix) and operator upgraders."""

from __future__ import annotations

from datetime import date
from typing import Literal

from fastapi import APIRouter, File, Form, Query, Request, Response, UploadFile
from pydantic import BaseModel, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import RUNTIME_PATTERN, OperatorName, RuntimePath, Text
from opgov.api.uploads import read_upload
from opgov.results.runtimes import CoverageMatrix, RuntimeAdded, RuntimeDetail, RuntimeList
from opgov.results.upgraders import UpgraderAdded, UpgraderList, UpgraderTimers, UpgraderView

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

