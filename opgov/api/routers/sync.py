"""The sync bot for a client's files: what `opgov sync-yaml` would change in an uploaded
native_functions.yaml (and tags.yaml), computed from this server's database."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, File, Form, Request, UploadFile

from opgov.api.deps import Reader, Writer
from opgov.results.models import SyncAnswer

router = APIRouter(prefix="/api/v1/sync-yaml", tags=["sync"])

_NATIVE = File(..., description="native_functions.yaml")
_TAGS = File(None, description="tags.yaml: the one to check the tags against and declare new ones in")
_BESIDE = Form(False, description="tags is the tags.yaml found beside native_functions.yaml, not one the user "
                                  "named (a check then reads only its `- tag:` lines, as locally)")


def _answer(request: Request, ctx, mode: str, native_functions: UploadFile, tags: UploadFile | None,
            tags_beside: bool, dry_run: bool = False) -> SyncAnswer:
    from opgov.api.uploads import read_text, shown_name
    from opgov.services.sync import sync_texts

    limit = request.app.state.config.max_upload_bytes
    # named as the client named them; bytes decoded as they are (line endings kept)
    text = read_text(native_functions, limit)[1]
    tags_text = read_text(tags, limit)[1] if tags is not None else None
    return sync_texts(ctx, text, shown_name(native_functions), mode=mode, tags_text=tags_text,
                      tags_yaml=shown_name(tags) if tags is not None else None, found_beside=tags_beside,
                      dry_run=dry_run)


@router.post("", response_model=SyncAnswer)
def check(request: Request, ctx: Reader, native_functions: UploadFile = _NATIVE, tags: UploadFile | None = _TAGS,
          mode: Literal["check", "diff"] = Form("check", description="check: what is out of sync; diff: also "
                                                                      "the unified diff"),
          tags_beside: bool = _BESIDE) -> SyncAnswer:
    """What the sync bot would change in the uploaded files: `opgov sync-yaml --check` / `--diff`
    (``report.in_sync`` false, or conflicts, is what makes it exit 1). Writes nothing."""
    return _answer(request, ctx, mode, native_functions, tags, tags_beside)


@router.post("/write", response_model=SyncAnswer)
def write(request: Request, ctx: Writer, native_functions: UploadFile = _NATIVE, tags: UploadFile | None = _TAGS,
          tags_beside: bool = _BESIDE,
          dry_run: bool = Form(False, description="answer as for a write, but log nothing: the client cannot "
                                                  "write its files now (a lock left behind)")) -> SyncAnswer:
    """`opgov sync-yaml --write` (bots and maintainers): the new texts of the files that change
    (``native_functions``, ``tags``; null: unchanged) for the client to write, and the sync logged."""
    from opgov.services.common import require

    require(ctx, "sync", "write native_functions.yaml")  # before reading what a member without the role sent
    return _answer(request, ctx, "write", native_functions, tags, tags_beside, dry_run)
