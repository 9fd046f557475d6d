"""ORM classes mapped onto the Core tables of :mod:`opgov.db.tables` (the one schema definition).

The annotations are for typing; the columns come from ``__table__``.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy.orm import DeclarativeBase, Mapped, relationship

from opgov.db import tables


class Base(DeclarativeBase):
    metadata = tables.metadata


class Snapshot(Base):
    __table__ = tables.snapshots

    id: Mapped[int]
    label: Mapped[str]
    source: Mapped[str]
    content_hash: Mapped[str]
    imported_at: Mapped[datetime]
    actor: Mapped[str]
    operator_count: Mapped[int]
    stats: Mapped[dict[str, Any]]
    position: Mapped[int]


class Operator(Base):
    __table__ = tables.operators
    __mapper_args__ = {"version_id_col": tables.operators.c.version}

    id: Mapped[int]
    qualname: Mapped[str]
    namespace: Mapped[str]
    name: Mapped[str]
    overload: Mapped[str]
    schema: Mapped[str | None]
    kind: Mapped[str]
    tags: Mapped[list[str]]
    autogen_of: Mapped[str | None]
    composite_implicit: Mapped[bool]
    present: Mapped[bool]
    first_snapshot_id: Mapped[int]
    last_snapshot_id: Mapped[int]
    category: Mapped[str]
    category_source: Mapped[str]
    needs_review: Mapped[bool]
    lifecycle: Mapped[str]
    lifecycle_since: Mapped[datetime | None]
    replacement: Mapped[str | None]
    version: Mapped[int]
    delegate: Mapped[str | None]
    review_reason: Mapped[str | None]


class Event(Base):
    __table__ = tables.events

    id: Mapped[int]
    at: Mapped[datetime]
    actor: Mapped[str]
    action: Mapped[str]
    subject: Mapped[str]
    before: Mapped[dict[str, Any] | None]
    after: Mapped[dict[str, Any] | None]
    reason: Mapped[str | None]
    prev_hash: Mapped[str | None]
    hash: Mapped[str | None]
    token_id: Mapped[int | None]


class Member(Base):
    __table__ = tables.members

    id: Mapped[int]
    name: Mapped[str]
    role: Mapped[str]
    added_at: Mapped[datetime]
    added_by: Mapped[str]


class Setting(Base):
    __table__ = tables.settings

    key: Mapped[str]
    value: Mapped[str]


class Proposal(Base):
    __table__ = tables.proposals
    __mapper_args__ = {"version_id_col": tables.proposals.c.version}

    id: Mapped[int]
    operator_id: Mapped[int]
    kind: Mapped[str]
    targets: Mapped[list[str]]
    rationale: Mapped[str]
    proposer: Mapped[str]
    created_at: Mapped[datetime]
    status: Mapped[str]
    closed_at: Mapped[datetime | None]
    version: Mapped[int]

    operator: Mapped[Operator] = relationship()
    votes: Mapped[list[Vote]] = relationship(back_populates="proposal", order_by="Vote.id")


class Vote(Base):
    __table__ = tables.votes

    id: Mapped[int]
    proposal_id: Mapped[int]
    voter: Mapped[str]
    approve: Mapped[bool]
    comment: Mapped[str]
    at: Mapped[datetime]

    proposal: Mapped[Proposal] = relationship(back_populates="votes")


class Decision(Base):
    __table__ = tables.decisions

    id: Mapped[int]
    operator_id: Mapped[int]
    proposal_id: Mapped[int | None]
    category: Mapped[str]
    targets: Mapped[list[str]]
    rationale: Mapped[str]
    decided_at: Mapped[datetime]
    decided_by: Mapped[list[str]]
    votes: Mapped[list[Any]]
    imported: Mapped[bool]
    source: Mapped[str | None]
    note: Mapped[str | None]

    operator: Mapped[Operator] = relationship()


class LifecycleStep(Base):
    __table__ = tables.lifecycle_steps

    id: Mapped[int]
    operator_id: Mapped[int]
    from_state: Mapped[str]
    to_state: Mapped[str]
    at: Mapped[datetime]
    actor: Mapped[str]
    reason: Mapped[str | None]
    replacement: Mapped[str | None]

    operator: Mapped[Operator] = relationship()


class Finding(Base):
    __table__ = tables.findings

    id: Mapped[int]
    snapshot_id: Mapped[int]
    base_snapshot_id: Mapped[int | None]
    operator: Mapped[str]
    kind: Mapped[str]
    rule: Mapped[str]
    severity: Mapped[str]
    message: Mapped[str]
    old_schema: Mapped[str | None]
    new_schema: Mapped[str | None]
    line: Mapped[int | None]


class BcException(Base):
    __table__ = tables.bc_exceptions

    id: Mapped[int]
    pattern: Mapped[str]
    reason: Mapped[str]
    created_by: Mapped[str]
    created_at: Mapped[datetime]
    expires_on: Mapped[date]
    removed_at: Mapped[datetime | None]
    removed_by: Mapped[str | None]


class DecompRule(Base):
    __table__ = tables.decomp_rules

    id: Mapped[int]
    operator: Mapped[str]
    targets: Mapped[list[str]]
    source: Mapped[str]
    source_detail: Mapped[str | None]
    created_at: Mapped[datetime]
    created_by: Mapped[str]


class ApiToken(Base):
    __table__ = tables.api_tokens

    id: Mapped[int]
    member: Mapped[str]
    member_id: Mapped[int | None]
    token_hash: Mapped[str]
    created_at: Mapped[datetime]
    created_by: Mapped[str]
    expires_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]
    revoked_by: Mapped[str | None]
