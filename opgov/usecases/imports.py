"""Importing a snapshot of native_functions.yaml (``opgov import``) and the snapshots imported."""

from __future__ import annotations

from opgov.results.imports import ImportResult, SnapshotView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.imports import ImportRequest


IMPORT = UseCase(
    "import", request=ImportRequest, result=ImportResult,
    service=lazy("opgov.services.imports", "import_file"), writes=True, orm=False, method="POST",
    path="/api/v1/snapshots", status=201,
    summary="Import a snapshot (bots and maintainers): operators added, removed and schema-changed since "
            "the previous one, and their compatibility findings.",
    description="An older release than the latest snapshot is refused (409) unless `historical`. Messages "
                "and the snapshot's source name the files as the client named them.")

SNAPSHOTS = UseCase(
    "snapshots", result=list[SnapshotView], service=lazy("opgov.services.imports", "list_snapshots"),
    method="GET", path="/api/v1/snapshots", orm=False,
    summary="Every imported snapshot, in the order of history (an older release imported as historical in "
            "its place).")

DECLARED: tuple[UseCase, ...] = (IMPORT, SNAPSHOTS)
