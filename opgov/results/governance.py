"""The results of the committee's use cases (:mod:`opgov.services.governance`): members, settings,
proposals and their votes, historical decisions."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from opgov.results.plain import about as _about
from opgov.results.vocab import Category, ProposalKind, ProposalStatus, Role


@dataclass(frozen=True, kw_only=True)
class MemberView:
    """A member and their role."""

    name: str
    role: Role
    added_at: datetime | None = None
    added_by: str | None = None


@dataclass(frozen=True, kw_only=True)
class SettingChange:
    """``opgov config set``."""

    key: str
    before: str
    value: str


@dataclass(frozen=True, kw_only=True)
class Settings:
    """``opgov config list``."""

    quorum: int = field(metadata=_about("approvals a proposal needs to be decided"))
    deprecating_days: int = field(metadata=_about("days deprecating before it may be marked deprecated"))
    deprecated_days: int = field(metadata=_about("days deprecated before its entry may be deleted"))
    simulation: bool = field(metadata=_about("a simulation database"))


@dataclass(frozen=True, kw_only=True)
class VoteView:
    voter: str
    approve: bool
    comment: str
    at: datetime


@dataclass(frozen=True, kw_only=True)
class ProposalDecision:
    """The decision an approved proposal made."""

    category: Category
    decided_at: datetime
    decided_by: list[str]
    rationale: str


@dataclass(frozen=True, kw_only=True)
class ProposalView:
    """A proposal with its votes (``opgov proposals``, ``propose-*``, ``review``, ``withdraw``)."""

    id: int
    operator: str
    kind: ProposalKind
    targets: list[str] = field(metadata=_about("decomposition targets (kind decompose)"))
    rationale: str
    proposer: str
    created_at: datetime
    status: ProposalStatus
    closed_at: datetime | None
    approvals: list[str] = field(metadata=_about("voters approving"))
    rejections: list[str] = field(metadata=_about("voters rejecting"))
    votes: list[VoteView]
    quorum: int | None = field(metadata=_about("approvals (or rejections) that decide it"))
    decision: ProposalDecision | None = field(default=None, metadata=_about(
        "the decision, once approved: in every answer (the vote that decided it, `proposals`, `proposals show`)"))
    confirms: str | None = field(default=None, metadata=_about(
        "the category (and its source) the proposal confirms, when it confirms the one an import placed"))
    replaced: VoteView | None = field(default=None, metadata=_about(
        "`review` only: the voter's earlier vote that this one replaces (kept in the event log)"))


@dataclass(frozen=True, kw_only=True)
class DecisionsLoaded:
    """``opgov decisions load``."""

    file: str
    decisions: int = field(metadata=_about("records in the file"))
    recorded: int
    already_recorded: int
    superseded: list[str] = field(metadata=_about(
        "operators whose decision is on record only: a newer snapshot tags them core"))
    decomposition_errors: list[str] = field(default_factory=list, metadata=_about(
        "check-decomps errors of the file's rules: rules that end in operators neither core nor decomposed"))
    skipped: dict[str, str] = field(default_factory=dict, metadata=_about(
        "operator → why its decision was not recorded: the database does not know it or a target of it yet (a "
        "release that has them imported, loading the file again records it)"))
