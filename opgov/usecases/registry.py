"""The registry: snapshots of native_functions.yaml, operators, the event log."""

from __future__ import annotations

from opgov.results.models import EventsPage, LogVerification, OperatorDetail, OperatorSummary, SnapshotView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.registry import EventsQuery, OperatorRef, OperatorsQuery


DECLARED: tuple[UseCase, ...] = (
    UseCase("snapshots", result=list[SnapshotView], service=lazy("opgov.services.imports", "list_snapshots"),
            method="GET", path="/api/v1/snapshots", orm=False,
            summary="Every imported snapshot, in the order of history (an older release imported as historical in "
                    "its place)."),
    UseCase("ops list", request=OperatorsQuery, result=list[OperatorSummary],
            service=lazy("opgov.services.ops", "list_operators"), method="GET", path="/api/v1/operators",
            summary="Operators present in the latest snapshot (`all`: every operator ever seen), by name; `q` "
                    "filters by a part of the name."),
    UseCase("ops show", request=OperatorRef, result=OperatorDetail,
            service=lazy("opgov.services.ops", "show_op"), method="GET", path="/api/v1/operators/{name}",
            summary="One operator (`aten::add.Tensor`, URL-encoded): schema per snapshot, category and its decisions "
                    "with rationale, proposals, lifecycle with dates, compatibility findings.",
            description="A deprecating or deprecated operator's answer carries `Deprecation` and `Sunset`. The "
                        "answer has a strong `ETag`: send it back in `If-None-Match` to get 304 while nothing "
                        "changed."),
    UseCase("log", request=EventsQuery, result=EventsPage,
            service=lazy("opgov.services.admin", "events_page"), method="GET", path="/api/v1/events",
            summary="The newest `limit` events matching the filters (older than `before`), oldest first.",
            description="`opgov log` asks for the older pages itself (`next_before`) up to its `--limit`."),
    UseCase("log verify", result=LogVerification, service=lazy("opgov.services.admin", "verify_log"),
            method="GET", path="/api/v1/events/verify",
            summary="Walk the event log's hash chain, oldest first: `intact`, or the first broken link (an event "
                    "changed, removed or inserted since it was written)."),
)

