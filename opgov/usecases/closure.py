"""The closure proof of torch's default decomposition table."""

from __future__ import annotations

from opgov.results.closure import ClosureReport
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.closure import ClosureQuery


DECOMPS_CLOSURE = UseCase("decomps closure", group="decompositions", request=ClosureQuery, result=ClosureReport,
                          service=lazy("opgov.services.closure", "closure_report"),
                          orm=False, method="GET", path="/api/v1/decomps/closure",
                          summary="The closure proof: does each operator of torch's default decomposition table end only in core "
                                  "operators, following the table as traced?",
                          description="From the facts `decomps import-torch` recorded. Each item: `op`, `closed`, `ends_in` (the "
                                      "operators it ends in) and, when not closed, `why`. `against`: the change from another "
                                      "closure (operators that stopped or started closing: a finding).")
DECLARED: tuple[UseCase, ...] = (
    DECOMPS_CLOSURE,
)
