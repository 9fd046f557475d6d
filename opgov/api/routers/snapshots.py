"""Snapshots of native_functions.yaml: the list, and the bot's import by upload."""

from __future__ import annotations

from fastapi import APIRouter, File, Form, Request, UploadFile

from opgov.api.deps import Reader, Writer
from opgov.api.fields import NOT_BLANK
from opgov.api.uploads import read_upload, safe_name
from opgov.results.imports import ImportResult
from opgov.results.models import SnapshotView

router = APIRouter(prefix="/api/v1/snapshots", tags=["snapshots"])


@router.get("", response_model=list[SnapshotView])
def list_snapshots(ctx: Reader) -> list[SnapshotView]:
    """Every imported snapshot, oldest first."""
    from opgov.services.imports import list_snapshots

    return list_snapshots(ctx)


@router.post("", response_model=ImportResult, status_code=201)
def post_snapshot(request: Request, ctx: Writer, label: str = Form(..., min_length=1, max_length=200, pattern=NOT_BLANK, description="e.g. 2.13.0"),
                  native_functions: UploadFile = File(..., description="native_functions.yaml"),
                  tags: UploadFile | None = File(None, description="tags.yaml: every tag used must be declared"),
                  historical: bool = Form(False, description="an older release (by its label as a version), "
                                                             "stored in its place in history")
                  ) -> ImportResult:
    """Import a snapshot (bots and maintainers): operators added, removed and schema-changed since
    the previous one, and their compatibility findings. An older release than the latest snapshot
    is refused (409) unless ``historical``. Messages name the files as the client named them."""
    from opgov.formats.registry import parse_registry
    from opgov.services.common import require
    from opgov.services.imports import import_snapshot

    require(ctx, "import", "import snapshots")  # before reading what a member without the role sent
    limit = request.app.state.config.max_upload_bytes
    native = read_upload(native_functions, limit, default="upload.yaml")
    declared = read_upload(tags, limit, default="upload.yaml") if tags is not None else None
    registry = parse_registry(native.data, native.name, tags=declared)
    return import_snapshot(ctx, f"upload:{safe_name(native_functions, 'upload.yaml')}", label=label,
                           registry=registry, historical=historical)
