"""What every reader shares: the context of a command, the settings, the database's version stamp,
lookups, members and roles (the writes and the event log are :mod:`opgov.services.common`'s)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from opgov.core.clock import Clock
from opgov.core.errors import BadInput, NotFound
from opgov.core.lifecycle import Periods
from opgov.core.names import parse_op_name
from opgov.core.settings import SETTING_RANGE  # the values each setting may take
from opgov.core.vocab import Role
from opgov.db import tables

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


def periods(ctx: Ctx) -> Periods:
    """The lifecycle's waiting periods, as the settings say now."""
    return Periods(deprecating_days=get_int_setting(ctx.session, "deprecating_days"),
                   deprecated_days=get_int_setting(ctx.session, "deprecated_days"))


def is_simulation(session) -> bool:
    return get_setting(session, "simulation") == "true"


# --- the database's version stamp -----------------------------------------------------------------


def log_version(session) -> int:
    """The id of the newest event (0 for none): the database's version stamp. Every write that
    changes governance logs an event in its transaction, and ids grow in commit order (they are
    given under the events lock), so a reader that sees the same stamp sees the same data; the
    service's response cache keys its answers on it (opgov.api.cache)."""
    return session.execute(select(func.max(tables.events.c.id))).scalar() or 0


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


# --- members and roles ----------------------------------------------------------------------------


ROLES = tuple(Role)


def lookalike_member(session, name: str) -> str | None:
    """The member whose name a reader would take for ``name`` (the same skeleton,
    opgov.core.identity), or None."""
    from opgov.core.identity import member_skeleton

    wanted = member_skeleton(name)
    return next((taken for taken in session.scalars(select(tables.members.c.name))
                 if member_skeleton(taken) == wanted), None)


def role_of(session, actor: str) -> str | None:
    return session.scalar(select(tables.members.c.role).where(tables.members.c.name == actor))


def single_user_mode(session) -> bool:
    return session.scalar(select(func.count()).select_from(tables.members)) == 0

