"""The results of the admin use cases (:mod:`opgov.services.admin`): the append-only event log, its
verification, and the database's revision."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opgov.results.plain import about as _about


@dataclass(frozen=True, kw_only=True)
class EventView:
    """One entry of the append-only event log."""

    id: int
    at: datetime
    actor: str
    action: str = field(metadata=_about("e.g. proposal.vote, lifecycle.deprecating, snapshot.import"))
    subject: str = field(metadata=_about("an operator name, or kind:name (member:…, snapshot:…, exception:…)"))
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str | None
    token: int | None = field(default=None, metadata=_about("the API token the request was made with, if any"))


@dataclass(frozen=True, kw_only=True)
class ChainBreak:
    """The first broken link of the event log's hash chain."""

    event: int = field(metadata=_about("the id of the first event whose link is broken"))
    problem: str = field(metadata=_about("what is wrong with it (changed, inserted, removed or not appended by opgov)"))


@dataclass(frozen=True, kw_only=True)
class LogVerification:
    """``opgov log verify``: the event log's hash chain, walked oldest first."""

    events: int = field(metadata=_about("events walked (up to and including a broken one)"))
    intact: bool = field(metadata=_about("every event's prev_hash and hash match"))
    head: str | None = field(metadata=_about("the hash of the last event when intact (64 zeros for an empty log)"))
    broken: ChainBreak | None = field(metadata=_about("the first broken link, when not intact"))


@dataclass(frozen=True, kw_only=True)
class DatabaseStatus:
    """``opgov db current``."""

    url: str = field(metadata=_about("the database URL, password hidden"))
    revision: str | None = field(metadata=_about("its migration revision; null for an empty database"))
    head: str = field(metadata=_about("the revision this opgov needs"))
    up_to_date: bool
    simulation: bool = field(metadata=_about("a simulation database, where a claimed time is honoured"))


@dataclass(frozen=True, kw_only=True)
class RevisionChange:
    """``opgov db upgrade`` / ``downgrade``: the revision before and after."""

    before: str | None
    after: str | None


EVENTS_PAGE_MAX = 1000  # the most events one page of /api/v1/events holds (?limit=)


@dataclass(frozen=True, kw_only=True)
class EventsPage:
    """A page of the event log, oldest first; ``next_before`` fetches the older page."""

    events: list[EventView]
    next_before: int | None = field(metadata=_about(
        "pass as ?before= for the previous (older) page; null at the start"))
