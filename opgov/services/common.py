"""What every service shares besides the reads (:mod:`opgov.reads.common`): the event log, the
locks that serialise writers, the role checks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterable, Iterator

from sqlalchemy import select

from opgov.core.clock import FixedClock
from opgov.core.eventlog import plain_json
from opgov.db import tables
from opgov.db.events import append_logged, logged, logged_so_far
from opgov.core.errors import Forbidden, PolicyRefusal, Unauthenticated
from opgov.reads.common import Ctx, role_of, single_user_mode


# --- the event log --------------------------------------------------------------------------------
#
# A service logs its events into its transaction's list (opgov.db.events); the transaction appends
# them to the hash chain as its last step before it commits (opgov.db.engine.transaction), so an
# event is in the log exactly when the change it records is.
# An import appends its thousands of events as it builds them (append_events_now).


def log_event(ctx: Ctx, action: str, subject: str, *, before: dict[str, Any] | None = None,
              after: dict[str, Any] | None = None, reason: str | None = None) -> None:
    log_events(ctx, [{"action": action, "subject": subject, "before": before, "after": after, "reason": reason}])


def log_events(ctx: Ctx, rows: list[dict[str, Any]]) -> None:
    """Many events at once (an import); each row has action, subject and optionally before/after/reason."""
    if not rows:
        return
    at = ctx.now()
    pending = logged(ctx.session)
    if not pending and isinstance(ctx.clock, FixedClock):
        _refuse_going_back(ctx, at)
    for row in rows:
        event = {"at": at, "actor": ctx.actor, "before": None, "after": None, "reason": None,
                 "token_id": ctx.token_id, **row}
        event["before"], event["after"] = plain_json(event["before"]), plain_json(event["after"])
        pending.append(event)


def _refuse_going_back(ctx: Ctx, at: datetime) -> None:
    """A claimed time (a simulation's --now) is never before the log's last event: the log's
    timestamps only go forward, as the real clock's do. (A server's own clock is not held to it:
    two hosts' clocks may differ by a little.) The database's own events (``db.simulation``, made
    by the real clock before the simulation's calendar starts) do not count."""
    events = tables.events.c
    last = ctx.session.execute(select(events.at).where(events.action.not_like("db.%"))
                               .order_by(events.id.desc()).limit(1)).scalar()
    if last is not None and at < last:
        raise PolicyRefusal(f"the claimed time {at:%Y-%m-%dT%H:%M:%SZ} is before the log's last event "
                            f"({last:%Y-%m-%dT%H:%M:%SZ}): a simulation's clock never goes back; claim "
                            "that time or a later one")


@dataclass(frozen=True)
class LoggedEvent:
    """An event of the log, or one this transaction logged and will append at commit: what was done
    (``action``), to what (``subject``), and the state it recorded after (``after``)."""

    action: str
    subject: str
    after: dict[str, Any]


def logged_after(ctx: Ctx, action: str, subjects: set[str]) -> list[LoggedEvent]:
    """Every event of ``action`` about one of ``subjects`` that recorded an ``after``, oldest first:
    those in the log and those this transaction logged and will append at commit, so a write answers
    what a later read shows."""
    events = tables.events.c
    stored = ctx.session.execute(select(events.subject, events.after).where(events.subject.in_(sorted(subjects)),
                                                                            events.action == action)
                                 .order_by(events.id)).all()
    pending = ((row["subject"], row["after"]) for row in logged_so_far(ctx.session)
               if row["action"] == action and row["subject"] in subjects)
    return [LoggedEvent(action=action, subject=subject, after=after)
            for subject, after in (*stored, *pending) if after]


def flush_events(ctx: Ctx) -> None:
    """Append the events logged so far now, rather than just before the commit (a downgrade, before
    the migrations change the events table)."""
    append_logged(ctx.session)


def append_events_now(ctx: Ctx, rows: Iterable[dict[str, Any]]) -> None:
    """Log many events (an import's, one per operator it adds) and append them now, a chunk at a
    time, rather than holding them all until the commit: they cost a chunk's memory, however many
    there are. The events logged before them are appended first (in the order they were logged).
    This takes the events lock early (PostgreSQL: until the transaction ends), so a writer that
    commits meanwhile appends its events after these and ids still grow in commit order. Only for a
    transaction whose remaining writes wait on no other writer's lock (an import: it holds the
    import lock, and what it writes afterwards are its own rows)."""
    at = ctx.now()
    if not logged_so_far(ctx.session) and isinstance(ctx.clock, FixedClock):
        _refuse_going_back(ctx, at)

    def events() -> Iterator[dict[str, Any]]:
        for row in rows:
            event = {"at": at, "actor": ctx.actor, "before": None, "after": None, "reason": None,
                     "token_id": ctx.token_id, **row}
            event["before"], event["after"] = plain_json(event["before"]), plain_json(event["after"])
            yield event

    append_logged(ctx.session, events())


# --- serialising writers ----------------------------------------------------------------------

_LOCKS = {"import": 0x6F70676F76_01}  # one PostgreSQL advisory lock per kind of exclusive work


def serialize(ctx: Ctx, what: str, *, shared: bool = False) -> None:
    """Hold a lock on ``what`` until the transaction ends.

    An import takes the ``"import"`` lock exclusively: two imports never interleave (each would
    diff against the same previous snapshot). Every other writer of operator rows (votes that
    decide, lifecycle steps, ticks, loading decisions) takes it ``shared``, first thing: they run
    side by side, but never while an import is between reading the operators and writing them
    back, so an import can never revert a decision it did not see. On SQLite every write
    transaction already begins with ``BEGIN IMMEDIATE``, which serialises writers.
    """
    from sqlalchemy import text

    bind = ctx.session if hasattr(ctx.session, "dialect") else ctx.session.get_bind()
    if bind.dialect.name == "postgresql":
        function = "pg_advisory_xact_lock_shared" if shared else "pg_advisory_xact_lock"
        ctx.session.execute(text(f"SELECT {function}(:key)"), {"key": _LOCKS[what]})


# --- roles ----------------------------------------------------------------------------------------


# what each role may do besides reading; maintainers may do everything
BOT_ACTIONS = frozenset({"import", "sync", "tick"})
DEVELOPER_ACTIONS = frozenset({"propose", "withdraw"})


def require(ctx: Ctx, action: str, what: str) -> None:
    """Refuse (exit 1) unless the actor's role allows ``action``. ``what`` names it for the user.
    A request without a token is refused (401) before any name is looked up."""
    if ctx.anonymous:
        raise Unauthenticated(f"a request without a token may not {what}: send `Authorization: Bearer <token>` "
                              "(see `opgov tokens create`)", subject=ctx.actor)
    if single_user_mode(ctx.session):
        return
    role = role_of(ctx.session, ctx.actor)
    allowed = (role == "maintainer" or (role == "bot" and action in BOT_ACTIONS)
               or (role == "developer" and action in DEVELOPER_ACTIONS))
    if not allowed:
        who = f"{ctx.actor} ({role})" if role else f"{ctx.actor} (not a member)"
        raise Forbidden(f"{who} may not {what}", subject=ctx.actor)


