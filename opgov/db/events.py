"""The event log's writes: the events a transaction logged, appended to the chain just before it commits.

A service logs events (:func:`opgov.services.common.log_events`) into its transaction's list of
logged events, held in the ``info`` of the ORM ``Session`` or Core ``Connection`` the transaction
runs on. :func:`opgov.db.engine.transaction` calls :func:`append_logged` as the last step before
it commits: under one lock (PostgreSQL: an advisory lock; SQLite: the write lock BEGIN IMMEDIATE
took) each event gets the next id, the hash of the event before it and its own hash
(:mod:`opgov.core.eventlog`). Two writers can never fork the chain, and the lock is the last one a
transaction takes, so it cannot deadlock. A transaction that rolls back drops its list with it.
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Iterable

from sqlalchemy import insert, select, text

from opgov.core.eventlog import GENESIS, event_hash
from opgov.db import tables

_LOGGED = "opgov.logged_events"  # the key of a transaction's list in its session's or connection's info
_EVENTS_LOCK = 0x6F70676F76_02  # PostgreSQL's advisory lock for appending to the chain


def logged(holder) -> list[dict[str, Any]]:
    """The events ``holder`` (a Session or a Connection in a transaction) has logged so far: the
    list to append to."""
    return holder.info.setdefault(_LOGGED, [])


def logged_so_far(holder) -> list[dict[str, Any]]:
    """The events logged so far, not yet appended (empty for none); read-only."""
    return holder.info.get(_LOGGED, [])


def discard_logged(holder) -> None:
    """Forget the logged events (the transaction rolled back, or a Connection goes back to its pool:
    a Connection's info outlives its transaction)."""
    holder.info.pop(_LOGGED, None)


def append_logged(holder, more: Iterable[dict[str, Any]] = (), *, chunk: int = 250) -> None:
    """Append the events ``holder``'s transaction logged to the chain, in this transaction: called
    just before it commits, or earlier by a command that must write them before it changes the
    events table (a downgrade). ``more``: events built as they are appended, ``chunk`` at a time
    (an import's thousands), after those logged so far."""
    rows = chain(holder.info.pop(_LOGGED, None) or (), more)
    first = next(rows, None)
    if first is None:
        return
    events = tables.events
    postgres = _dialect(holder) == "postgresql"
    if postgres:
        holder.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _EVENTS_LOCK})
    last = holder.execute(select(events.c.id, events.c.hash).order_by(events.c.id.desc()).limit(1)).first()
    next_id, previous = (last.id + 1, last.hash or GENESIS) if last is not None else (1, GENESIS)
    batch: list[dict[str, Any]] = []
    for row in chain((first,), rows):
        row["id"], row["prev_hash"] = next_id, previous
        row["hash"] = previous = event_hash(row, previous)
        next_id += 1
        batch.append(row)
        if len(batch) >= chunk:
            holder.execute(insert(events), batch)
            batch = []
    if batch:
        holder.execute(insert(events), batch)
    if postgres:  # keep the id sequence past the ids given here
        holder.execute(text("SELECT setval(pg_get_serial_sequence('events', 'id'), :last)"), {"last": next_id - 1})


def _dialect(holder) -> str:
    bind = holder if hasattr(holder, "dialect") else holder.get_bind()
    return bind.dialect.name
