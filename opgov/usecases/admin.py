"""The append-only event log and its verification."""

from __future__ import annotations

from opgov.results.admin import EventsPage, LogVerification
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.admin import EventsQuery


LOG = UseCase(
    "log", request=EventsQuery, result=EventsPage,
    service=lazy("opgov.services.admin", "events_page"), method="GET", path="/api/v1/events",
    summary="The newest `limit` events matching the filters (older than `before`), oldest first.",
    description="`opgov log` asks for the older pages itself (`next_before`) up to its `--limit`.")

LOG_VERIFY = UseCase(
    "log verify", result=LogVerification, service=lazy("opgov.services.admin", "verify_log"),
    method="GET", path="/api/v1/events/verify",
    summary="Walk the event log's hash chain, oldest first: `intact`, or the first broken link (an event "
            "changed, removed or inserted since it was written).")

DECLARED: tuple[UseCase, ...] = (LOG, LOG_VERIFY)
