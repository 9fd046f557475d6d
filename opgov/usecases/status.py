"""The database at a glance (``opgov status``)."""

from __future__ import annotations

from opgov.results.status import StatusReport
from opgov.usecases.declaration import UseCase, lazy


STATUS = UseCase(
    "status", result=StatusReport, service=lazy("opgov.services.status", "status"), method="GET",
    path="/api/v1/status",
    summary="The database at a glance: its revision, snapshots, operators by category, open proposals and "
            "members.")

DECLARED: tuple[UseCase, ...] = (STATUS,)
