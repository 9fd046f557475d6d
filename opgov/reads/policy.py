"""What the database says for the compatibility checks and the PR gate: the BC exceptions on record,
the committee's decisions in force, the lifecycle states. No module-level import of the database
layer: ``check-bc`` and ``check-pr`` without a database never load it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from opgov.core.prgate import Decision


def recorded_exceptions(session, today: date) -> list:
    """The BC exceptions on record and not removed (whether each has expired by ``today`` the policy
    judges), oldest first."""
    from sqlalchemy import select

    from opgov.core.compat import BcException as Rule
    from opgov.db import tables

    e = tables.bc_exceptions.c
    return [Rule(pattern=r.pattern, reason=r.reason, created_by=r.created_by, expires_on=r.expires_on)
            for r in session.execute(select(e.pattern, e.reason, e.created_by, e.expires_on)
                                     .where(e.removed_at.is_(None)).order_by(e.id))]


@dataclass
class DatabaseFacts:
    """What a database adds to the PR gate (none without one)."""

    decisions: tuple[Decision, ...] = ()
    lifecycle: dict[str, str] | None = None
    deleted: frozenset[str] = frozenset()
    exceptions: tuple = ()


def database_facts(session, today: date) -> DatabaseFacts:
    """Decisions, lifecycle states, completed deletions and exceptions from a database."""
    from sqlalchemy import select

    from opgov.core.prgate import Decision
    from opgov.db import tables

    c = tables.operators.c
    rows = session.execute(select(c.qualname, c.category, c.category_source, c.lifecycle)).all()
    decisions = tuple(Decision(r.qualname, r.category, "the database") for r in rows
                      if r.category_source == "decision" and r.category)
    return DatabaseFacts(decisions=decisions,
                         lifecycle={r.qualname: r.lifecycle for r in rows if r.lifecycle},
                         deleted=frozenset(r.qualname for r in rows if r.lifecycle == "deleted"),
                         exceptions=tuple(recorded_exceptions(session, today)))


def export_decisions(session) -> list:
    """The committee's decision in force for every operator whose category a decision set (the
    latest one), as :class:`opgov.formats.decisions.DecisionRecord` items in operator order."""
    from sqlalchemy import select

    from opgov.db import tables
    from opgov.formats.decisions import DecisionRecord

    d, o = tables.decisions.c, tables.operators.c
    rows = session.execute(select(o.qualname, o.category, d.category.label("decided"), d.targets, d.rationale,
                                  d.decided_at, d.decided_by, d.source)
                           .join(tables.operators, o.id == d.operator_id)
                           .where(o.category_source == "decision")
                           .order_by(o.qualname, d.decided_at, d.id)).all()
    latest = {}
    for r in rows:
        if r.decided == r.category:
            latest[r.qualname] = r
    return [DecisionRecord(op=r.qualname, category=r.decided, into=tuple(r.targets or ()), rationale=r.rationale,
                           decided_at=r.decided_at, decided_by=list(r.decided_by or []), source=r.source or "",
                           line=0) for r in latest.values()]
