"""The sync bot: governance written back into native_functions.yaml (``sync-yaml``)."""

from __future__ import annotations

from opgov.results.sync import SyncAnswer
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.sync import SyncCheck, SyncWrite


SYNC_YAML = UseCase(
    "sync-yaml", group="sync", request=SyncCheck,
    result=SyncAnswer,
    service=lazy("opgov.services.sync", "check_files"), method="POST", path="/api/v1/sync-yaml", orm=False,
    summary="What the sync bot would change in the uploaded files: `opgov sync-yaml --check` / `--diff`.",
    description="`report.in_sync` false, or conflicts, is what makes the command exit 1. Writes nothing.")

SYNC_YAML_WRITE = UseCase(
    "sync-yaml write", group="sync", request=SyncWrite,
    result=SyncAnswer,
    service=lazy("opgov.services.sync", "write_files"), writes=True, method="POST", path="/api/v1/sync-yaml/write",
    orm=False,
    summary="`opgov sync-yaml --write` (bots and maintainers): the new texts of the files that change, for "
            "the client to write, and the sync logged.",
    description="`native_functions`, `tags`: the new texts (null: unchanged).")

DECLARED: tuple[UseCase, ...] = (SYNC_YAML, SYNC_YAML_WRITE)
