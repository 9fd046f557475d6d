"""What every service shares: the context of a command, the event log, settings, lookups, roles."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from sqlalchemy import func, select

from opgov.core.clock import Clock, FixedClock
from opgov.core.eventlog import plain_json
from opgov.core.settings import SETTING_RANGE  # the values each setting may take
from opgov.db import tables
from opgov.db.events import append_logged, logged, logged_so_far
from opgov.core.errors import BadInput, Forbidden, NotFound, PolicyRefusal, Unauthenticated
from opgov.core.names import parse_op_name
from opgov.core.vocab import Role


if TYPE_CHECKING:
    from sqlalchemy import Connection
    from sqlalchemy.orm import Session

    from opgov.db.models import Operator, Proposal, Snapshot


@dataclass(frozen=True)
class Ctx:
    """A command's transaction, who runs it, and the clock it runs by.

    ``session`` is an ORM ``Session``, or a Core ``Connection`` for the services that use only
    :mod:`opgov.db.tables` (import, sync); the helpers here work with either.
    """

    session: Session | Connection
    actor: str
    clock: Clock
    token_id: int | None = None  # the API token of a request to `opgov serve`; recorded with each event
    # an unauthenticated request to `opgov serve`: its actor (ANONYMOUS) is a label for the log, never
    # a member; every role check refuses it without looking the name up
    anonymous: bool = False

    def now(self) -> datetime:
        return self.clock.now()


# --- settings -------------------------------------------------------------------------------------

DEFAULT_SETTINGS: dict[str, str] = {
    "quorum": "2",
    "deprecating_days": "14",
    "deprecated_days": "180",
    "simulation": "false",
}
SETTING_HELP = {
    "quorum": "approvals a proposal needs to be decided",
    "deprecating_days": "days an operator stays deprecating before it may be marked deprecated",
    "deprecated_days": "days an operator stays deprecated before its entry may be deleted",
}


def get_setting(session, key: str) -> str:
    value = session.scalar(select(tables.settings.c.value).where(tables.settings.c.key == key))
    return value if value is not None else DEFAULT_SETTINGS[key]


def get_int_setting(session, key: str) -> int:
    value = get_setting(session, key)
    low, high = SETTING_RANGE.get(key, (None, None))
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or (low is not None and not low <= number <= high):
        raise BadInput(f"setting {key} is {value!r}, outside {low} to {high}: set it again with "
                       f"`opgov config set {key} N`")
    return number


def is_simulation(session) -> bool:
    return get_setting(session, "simulation") == "true"


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


def logged_after(ctx: Ctx, action: str, subjects: set[str]) -> list[dict[str, Any]]:
    """The ``after`` of every event of ``action`` about one of ``subjects``, oldest first: those in
    the log and those this transaction logged and will append at commit, so a write answers what a
    later read shows."""
    events = tables.events.c
    stored = ctx.session.execute(select(events.after).where(events.subject.in_(sorted(subjects)),
                                                            events.action == action).order_by(events.id)).scalars()
    pending = (row["after"] for row in logged_so_far(ctx.session)
               if row["action"] == action and row["subject"] in subjects)
    return [after for after in (*stored, *pending) if after]


def log_version(session) -> int:
    """The id of the newest event (0 for none): the database's version stamp. Every write that
    changes governance logs an event in its transaction, and ids grow in commit order (they are
    given under the events lock), so a reader that sees the same stamp sees the same data; the
    service's response cache keys its answers on it (opgov.api.cache)."""
    return session.execute(select(func.max(tables.events.c.id))).scalar() or 0


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


# --- lookups --------------------------------------------------------------------------------------


def find_operator(session: Session, text: str, *, lock: bool = False) -> Operator:
    """The operator for any accepted spelling; unknown names suggest the closest ones."""
    from opgov.db.models import Operator

    qualname = str(parse_op_name(text))
    query = select(Operator).where(Operator.qualname == qualname)
    if lock:
        query = query.with_for_update()
    op = session.scalars(query).first()
    if op is not None:
        return op
    names = session.scalars(select(Operator.qualname)).all()
    close = difflib.get_close_matches(qualname, names, n=4, cutoff=0.6)
    if not names:
        raise NotFound(f"unknown operator {text}: the database holds no snapshot yet (run `opgov import`)")
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise NotFound(f"unknown operator {text}{hint}")


def find_proposal(session: Session, proposal_id: int, *, lock: bool = False) -> Proposal:
    from opgov.db.limits import check_id
    from opgov.db.models import Proposal

    query = select(Proposal).where(Proposal.id == check_id(proposal_id, "proposal"))
    if lock:
        query = query.with_for_update()
    proposal = session.scalars(query).first()
    if proposal is None:
        raise NotFound(f"unknown proposal {proposal_id}")
    return proposal


def latest_snapshot(session: Session) -> Snapshot | None:
    """The latest snapshot: the newest import that is not a historical one (``import --historical``)."""
    from opgov.db.models import Snapshot

    latest_id = latest_snapshot_id(session)
    return None if latest_id is None else session.get(Snapshot, latest_id)


def latest_snapshot_id(session) -> int | None:
    """Core-only: the id of the latest snapshot, the last in history (a release stored with
    ``import --historical`` is always placed before a newer one, so it is never the latest)."""
    s = tables.snapshots.c
    return session.execute(select(s.id).order_by(s.position.desc()).limit(1)).scalar()


def is_historical(stats) -> bool:
    """A snapshot imported with ``--historical`` (older than the latest when imported): it holds a
    place in history without being the latest."""
    return bool((stats or {}).get("historical"))


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

ROLES = tuple(Role)

# names opgov itself acts under: the unauthenticated caller of `opgov serve`, and opgov's own events
# (db.simulation). No member may take one, so no request or event can be mistaken for a member's.
ANONYMOUS = "anonymous"
SYSTEM_ACTOR = "opgov"
RESERVED_NAMES = frozenset({ANONYMOUS, SYSTEM_ACTOR})


def member_name(name: str | None) -> str:
    """``name`` as a new member's name, normalised (opgov.core.identity: NFKC, no invisible
    characters, letters of one script): not empty, not a reserved name however it is spelled (its
    length is checked against the column with every other text, db.limits)."""
    from opgov.core.identity import member_skeleton, normalise_member_name

    name = normalise_member_name(require_text(name, "member name"))
    if member_skeleton(name) in RESERVED_NAMES:
        raise BadInput(f"{name!r} is reserved: opgov uses it for "
                       + ("requests without a token" if member_skeleton(name) == ANONYMOUS else "its own events")
                       + "; choose another member name")
    return name


def lookalike_member(session, name: str) -> str | None:
    """The member whose name a reader would take for ``name`` (the same skeleton,
    opgov.core.identity), or None."""
    from opgov.core.identity import member_skeleton

    wanted = member_skeleton(name)
    return next((taken for taken in session.scalars(select(tables.members.c.name))
                 if member_skeleton(taken) == wanted), None)
# what each role may do besides reading; maintainers may do everything
BOT_ACTIONS = frozenset({"import", "sync", "tick"})
DEVELOPER_ACTIONS = frozenset({"propose", "withdraw"})


def role_of(session, actor: str) -> str | None:
    return session.scalar(select(tables.members.c.role).where(tables.members.c.name == actor))


def single_user_mode(session) -> bool:
    return session.scalar(select(func.count()).select_from(tables.members)) == 0


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


def require_text(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise BadInput(f"{what} must not be empty")
    return value.strip()
