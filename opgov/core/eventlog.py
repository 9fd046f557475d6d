"""The event log's hash chain, as pure functions.

Each event carries ``prev_hash``, the hash of the event before it (:data:`GENESIS` for the
first), and ``hash``, the SHA-256 of a canonical serialisation of its own content and
``prev_hash``. Changing, inserting, removing or reordering an event breaks the chain at that
event, the way a git commit's id covers its parent's: :func:`verify_chain` finds the first
broken link. The serialisation is fixed (version 1): JSON with sorted keys, no spaces, UTF-8,
the time as UTC with microseconds. ``token_id`` (the API token a request of ``opgov serve`` was
made with, revision 0008) is part of the content when it is set, and absent from it when it is
null, so the hashes of events written before it existed (or without a token) stay valid.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable

GENESIS = "0" * 64
FIELDS = ("id", "at", "actor", "action", "subject", "before", "after", "reason")


def canonical_time(at: datetime) -> str:
    if at.tzinfo is None:  # stored naive means UTC
        at = at.replace(tzinfo=timezone.utc)
    at = at.astimezone(timezone.utc)
    return f"{at.year:04d}-{at:%m-%dT%H:%M:%S}.{at.microsecond:06d}Z"


def canonical(event: dict[str, Any], prev_hash: str) -> bytes:
    """The bytes an event's hash is taken over: its content and the previous event's hash."""
    content = {key: event[key] for key in FIELDS}
    if event.get("token_id") is not None:  # who acted through the API is covered too
        content["token_id"] = event["token_id"]
    content["at"] = canonical_time(event["at"])
    content["prev_hash"] = prev_hash
    return json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def event_hash(event: dict[str, Any], prev_hash: str) -> str:
    return hashlib.sha256(canonical(event, prev_hash)).hexdigest()


def plain_json(value: Any) -> Any:
    """``value`` as the database will give it back (tuples become lists, keys strings), so the
    hash taken before writing is the hash a reader computes after."""
    return None if value is None else json.loads(json.dumps(value, allow_nan=False))


@dataclass(frozen=True)
class Break:
    """The first broken link: which event, and what is wrong with it."""

    event_id: int
    problem: str

    def __str__(self) -> str:
        return f"event {self.event_id}: {self.problem}"


@dataclass(frozen=True)
class ChainReport:
    events: int
    head: str  # the hash of the last event (GENESIS for an empty log)
    broken: Break | None


def verify_chain(events: Iterable[dict[str, Any]]) -> ChainReport:
    """Walk ``events`` (oldest first, each with the :data:`FIELDS`, ``prev_hash`` and ``hash``)."""
    previous, previous_id, count = GENESIS, None, 0
    for event in events:
        count += 1
        after = f"event {previous_id}" if previous_id is not None else "the start of the log"
        if not event.get("hash") or not event.get("prev_hash"):
            return ChainReport(count, previous, Break(event["id"], "it has no hash: it was not appended by opgov"))
        if event["prev_hash"] != previous:
            return ChainReport(count, previous, Break(
                event["id"], f"its prev_hash {event['prev_hash'][:12]}… does not match the hash of {after} "
                             f"({previous[:12]}…): an event before it was removed, inserted or changed"))
        computed = event_hash(event, event["prev_hash"])
        if computed != event["hash"]:
            return ChainReport(count, previous, Break(
                event["id"], f"its content does not match its hash (stored {event['hash'][:12]}…, computed "
                             f"{computed[:12]}…): {event['action']} on {event['subject']} was changed after it "
                             "was written"))
        previous, previous_id = event["hash"], event["id"]
    return ChainReport(count, previous, None)
