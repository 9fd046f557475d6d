"""The database schema as SQLAlchemy 2 typed ORM classes.

Alembic migrations (``migrations/versions``) are the only way this schema is created or changed;
``tests/test_migrations.py`` checks that the migrations produce exactly these tables.
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from typing import Any

from sqlalchemy import (JSON, Boolean, Date, DateTime, ForeignKey, Index, Integer, String, Text,
                        TypeDecorator, UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class UTCDateTime(TypeDecorator):
    """Timezone-aware UTC in, timezone-aware UTC out, on SQLite (naive storage) and PostgreSQL."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("opgov stores timezone-aware UTC datetimes only")
        value = value.astimezone(timezone.utc)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc)


class Base(DeclarativeBase):
    type_annotation_map = {datetime: UTCDateTime, dict[str, Any]: JSON, list[str]: JSON, list[Any]: JSON}


# --- registry: snapshots, operators, schema history, the event log (revision 0001) -------------


class Snapshot(Base):
    __tablename__ = "snapshots"

    id: Mapped[int] = mapped_column(primary_key=True)
    label: Mapped[str] = mapped_column(String(200), unique=True)
    source: Mapped[str] = mapped_column(Text)
    content_hash: Mapped[str] = mapped_column(String(64))
    imported_at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(200))
    operator_count: Mapped[int] = mapped_column(Integer)
    # counts per category and lifecycle right after the import, for trends
    stats: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Operator(Base):
    __tablename__ = "operators"
    __table_args__ = (UniqueConstraint("namespace", "name", "overload", name="uq_operators_identity"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    qualname: Mapped[str] = mapped_column(String(300), unique=True)  # aten::add.Tensor
    namespace: Mapped[str] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(200))
    overload: Mapped[str] = mapped_column(String(200))  # "" = default overload
    schema: Mapped[str | None] = mapped_column(Text)  # current func: text; None for autogen
    kind: Mapped[str] = mapped_column(String(20))  # functional | inplace | out | mutable | scratch
    tags: Mapped[list[str]] = mapped_column(default=list)
    autogen_of: Mapped[str | None] = mapped_column(String(300))
    composite_implicit: Mapped[bool] = mapped_column(Boolean, default=False)
    present: Mapped[bool] = mapped_column(Boolean, default=True)
    first_snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id"))
    last_snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id"))
    # category: core | decomposable | custom; source: yaml-tag | heuristic | decision
    category: Mapped[str] = mapped_column(String(20))
    category_source: Mapped[str] = mapped_column(String(20))
    needs_review: Mapped[bool] = mapped_column(Boolean, default=False)
    # lifecycle: active | deprecating | deprecated | deleted
    lifecycle: Mapped[str] = mapped_column(String(20), default="active")
    lifecycle_since: Mapped[datetime | None]
    replacement: Mapped[str | None] = mapped_column(String(300))
    version: Mapped[int] = mapped_column(Integer, default=1)

    __mapper_args__ = {"version_id_col": version}


class SchemaVersion(Base):
    """A row each time an operator's schema text changes (and one when it first appears)."""

    __tablename__ = "schema_versions"
    __table_args__ = (UniqueConstraint("operator_id", "snapshot_id", name="uq_schema_versions_op_snap"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    operator_id: Mapped[int] = mapped_column(ForeignKey("operators.id"), index=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id"))
    schema: Mapped[str | None] = mapped_column(Text)


class SnapshotEntry(Base):
    """Which operators a snapshot holds, with the schema, tags and line it had there."""

    __tablename__ = "snapshot_entries"

    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id"), primary_key=True)
    operator_id: Mapped[int] = mapped_column(ForeignKey("operators.id"), primary_key=True, index=True)
    schema: Mapped[str | None] = mapped_column(Text)
    tags: Mapped[list[str]] = mapped_column(default=list)
    line: Mapped[int] = mapped_column(Integer)


class Event(Base):
    """The append-only event log: the application inserts rows and never updates or deletes them."""

    __tablename__ = "events"
    __table_args__ = (Index("ix_events_subject", "subject"), Index("ix_events_at", "at"))

    id: Mapped[int] = mapped_column(primary_key=True)
    at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(60))
    subject: Mapped[str] = mapped_column(String(300))
    before: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    after: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    reason: Mapped[str | None] = mapped_column(Text)


# --- governance: members, settings, proposals, votes, decisions, lifecycle (revision 0002) -----


class Member(Base):
    __tablename__ = "members"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    role: Mapped[str] = mapped_column(String(20))  # maintainer | developer | bot
    added_at: Mapped[datetime]
    added_by: Mapped[str] = mapped_column(String(200))


class Setting(Base):
    __tablename__ = "settings"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Proposal(Base):
    __tablename__ = "proposals"

    id: Mapped[int] = mapped_column(primary_key=True)
    operator_id: Mapped[int] = mapped_column(ForeignKey("operators.id"), index=True)
    kind: Mapped[str] = mapped_column(String(20))  # core | decompose | custom
    targets: Mapped[list[str]] = mapped_column(default=list)
    rationale: Mapped[str] = mapped_column(Text)
    proposer: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime]
    status: Mapped[str] = mapped_column(String(20), default="open")  # open|approved|rejected|withdrawn
    closed_at: Mapped[datetime | None]
    version: Mapped[int] = mapped_column(Integer, default=1)

    operator: Mapped[Operator] = relationship()
    votes: Mapped[list[Vote]] = relationship(back_populates="proposal", order_by="Vote.id")

    __mapper_args__ = {"version_id_col": version}


class Vote(Base):
    __tablename__ = "votes"
    __table_args__ = (UniqueConstraint("proposal_id", "voter", name="uq_votes_proposal_voter"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    proposal_id: Mapped[int] = mapped_column(ForeignKey("proposals.id"))
    voter: Mapped[str] = mapped_column(String(200))
    approve: Mapped[bool] = mapped_column(Boolean)
    comment: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime]

    proposal: Mapped[Proposal] = relationship(back_populates="votes")


class Decision(Base):
    __tablename__ = "decisions"

    id: Mapped[int] = mapped_column(primary_key=True)
    operator_id: Mapped[int] = mapped_column(ForeignKey("operators.id"), index=True)
    proposal_id: Mapped[int | None] = mapped_column(ForeignKey("proposals.id"))
    category: Mapped[str] = mapped_column(String(20))
    targets: Mapped[list[str]] = mapped_column(default=list)
    rationale: Mapped[str] = mapped_column(Text)
    decided_at: Mapped[datetime]
    decided_by: Mapped[list[str]] = mapped_column(default=list)
    votes: Mapped[list[Any]] = mapped_column(default=list)
    imported: Mapped[bool] = mapped_column(Boolean, default=False)
    source: Mapped[str | None] = mapped_column(Text)

    operator: Mapped[Operator] = relationship()


class LifecycleStep(Base):
    __tablename__ = "lifecycle_steps"

    id: Mapped[int] = mapped_column(primary_key=True)
    operator_id: Mapped[int] = mapped_column(ForeignKey("operators.id"), index=True)
    from_state: Mapped[str] = mapped_column(String(20))
    to_state: Mapped[str] = mapped_column(String(20))
    at: Mapped[datetime]
    actor: Mapped[str] = mapped_column(String(200))
    reason: Mapped[str | None] = mapped_column(Text)
    replacement: Mapped[str | None] = mapped_column(String(300))

    operator: Mapped[Operator] = relationship()


# --- compatibility: findings per import, BC exceptions (revision 0003) -----------------------


class Finding(Base):
    __tablename__ = "findings"

    id: Mapped[int] = mapped_column(primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(ForeignKey("snapshots.id"), index=True)
    base_snapshot_id: Mapped[int | None] = mapped_column(ForeignKey("snapshots.id"))
    operator: Mapped[str] = mapped_column(String(300), index=True)
    kind: Mapped[str] = mapped_column(String(10))  # bc | fc | new
    rule: Mapped[str] = mapped_column(String(80))
    severity: Mapped[str] = mapped_column(String(20))
    message: Mapped[str] = mapped_column(Text)
    old_schema: Mapped[str | None] = mapped_column(Text)
    new_schema: Mapped[str | None] = mapped_column(Text)
    line: Mapped[int | None] = mapped_column(Integer)


class BcException(Base):
    __tablename__ = "bc_exceptions"

    id: Mapped[int] = mapped_column(primary_key=True)
    pattern: Mapped[str] = mapped_column(String(300))
    reason: Mapped[str] = mapped_column(Text)
    created_by: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime]
    expires_on: Mapped[date] = mapped_column(Date)
    removed_at: Mapped[datetime | None]
    removed_by: Mapped[str | None] = mapped_column(String(200))


# --- decompositions (revision 0004) ------------------------------------------------------------


class DecompRule(Base):
    """operator → the operators its decomposition produces, and where the rule came from."""

    __tablename__ = "decomp_rules"

    id: Mapped[int] = mapped_column(primary_key=True)
    operator: Mapped[str] = mapped_column(String(300), unique=True)
    targets: Mapped[list[str]] = mapped_column(default=list)
    source: Mapped[str] = mapped_column(String(20))  # decision | file | torch
    source_detail: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime]
    created_by: Mapped[str] = mapped_column(String(200))
