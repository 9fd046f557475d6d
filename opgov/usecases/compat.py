"""The compatibility check of two registries (``check-bc``), as a server answers it: each side an
uploaded native_functions.yaml or a snapshot it holds. A local check (files, git refs) runs in the
command without a request (opgov.cli.commands_checks)."""

from __future__ import annotations

from opgov.results.compat import CheckReport
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.compat import CheckBcSides


DECLARED: tuple[UseCase, ...] = (
    UseCase("check-bc", request=CheckBcSides, result=CheckReport,
            service=lazy("opgov.services.compat_checks", "check_bc_sides"), method="POST", path="/api/v1/check-bc",
            group="checks",
            summary="BC/FC findings of old → new: `opgov check-bc OLD NEW --server`.",
            description="With PyTorch's semantics and the core policy (the database's decisions, exceptions and "
                        "completed deletions apply). Each side is an uploaded file or the label of a snapshot the "
                        "server holds (`opgov check-bc 2.12.0 2.13.0 --server …`). `summary.errors` > 0 is what "
                        "makes `opgov check-bc` exit 1. Writes nothing."),
)
