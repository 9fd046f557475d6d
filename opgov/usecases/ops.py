"""The operators of the registry: the list, and one operator with its history."""

from __future__ import annotations

from opgov.results.ops import OperatorDetail, OperatorSummary
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.ops import OperatorRef, OperatorsQuery


OPS_LIST = UseCase("ops list", request=OperatorsQuery, result=list[OperatorSummary],
                   service=lazy("opgov.services.ops", "list_operators"), method="GET", path="/api/v1/operators",
                   summary="Operators present in the latest snapshot (`all`: every operator ever seen), by name; `q` "
                           "filters by a part of the name.")
DECLARED: tuple[UseCase, ...] = (
    OPS_LIST,
    UseCase("ops show", request=OperatorRef, result=OperatorDetail,
            service=lazy("opgov.services.ops", "show_op"), method="GET", path="/api/v1/operators/{name}",
            summary="One operator (`aten::add.Tensor`, URL-encoded): schema per snapshot, category and its decisions "
                    "with rationale, proposals, lifecycle with dates, compatibility findings.",
            description="A deprecating or deprecated operator's answer carries `Deprecation` and `Sunset`. The "
                        "answer has a strong `ETag`: send it back in `If-None-Match` to get 304 while nothing "
                        "changed."),
)
