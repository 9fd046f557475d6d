"""The results of the operator use cases (:mod:`opgov.services.ops`): an operator, its schema history,
its decisions and lifecycle."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from opgov.results.plain import about as _about, ALIASED
from opgov.results.vocab import Category, Lifecycle, ProposalKind, ProposalStatus


@dataclass(frozen=True, kw_only=True)
class OperatorSummary:
    """One operator as ``opgov ops list`` shows it."""

    name: str = field(metadata=_about("canonical name, e.g. aten::add.Tensor"))
    schema: str | None = field(metadata=_about(
        "the func: text of its current schema; null for an operator declared only by autogen:"))
    kind: str = field(metadata=_about("functional, inplace, out, mutable or scratch"))
    tags: list[str] = field(metadata=_about("its tags in native_functions.yaml"))
    category: Category
    category_source: str = field(metadata=_about("decision (the committee), yaml-tag, or heuristic"))
    lifecycle: Lifecycle
    present: bool = field(metadata=_about("whether the latest snapshot holds it"))
    needs_review: bool = field(metadata=_about("waiting for a committee decision (in the review queue)"))
    review_reason: str | None = field(default=None, metadata=_about(
        "why it waits: new in a snapshot, or a `core` tag a release added or dropped (a core operator whose tag was "
        "dropped stays core until the committee decides)"))
    autogen_of: str | None = field(metadata=_about("the entry whose autogen: declares it"))
    replacement: str | None = field(metadata=_about("what to use instead (deprecating operators)"))


@dataclass(frozen=True, kw_only=True)
class HistoryChange:
    """One change of the operator's record within a run of its history: its schema or tags (what the
    run's first snapshot changed), its category, its place in the review queue, its lifecycle (what
    an import, a decision or a lifecycle step changed while the run's snapshots were the latest)."""

    what: Literal["schema", "tags", "category", "review", "lifecycle"]
    before: str | None = field(metadata=_about("the old value (tags: those dropped, e.g. core)"))
    after: str | None = field(metadata=_about("the new value (tags: those added); review: waits or decided"))
    snapshot: str = field(metadata=_about("the snapshot that was the latest when it changed"))
    at: datetime
    actor: str = field(metadata=_about("who changed it: the importer, the member whose vote decided, who stepped it"))
    by: list[str] = field(default_factory=list, metadata=_about("category decisions: the maintainers who approved"))
    reason: str | None = field(metadata=_about(
        "why: the import's account, the committee's rationale, the step's reason"))
    event: int | None = field(default=None, metadata=_about(
        "the event of the log recording it (null: read from the snapshots themselves, e.g. one imported --historical)"))


@dataclass(frozen=True, kw_only=True)
class HistoryEntry:
    """A run of consecutive snapshots, in the order of history, in which the operator's entry
    stayed the same (its schema and tags), or in which it was absent."""

    snapshot: str = field(metadata=_about("the label of the run's first snapshot"))
    imported_at: datetime = field(metadata=_about("when the run's first snapshot was imported"))
    last_snapshot: str = field(metadata=_about("the label of the run's last snapshot (the same for a run of one)"))
    snapshots: int = field(metadata=_about("how many snapshots the run spans"))
    present: bool
    schema: str | None
    line: int | None = field(metadata=_about("line of its entry in the run's last snapshot's native_functions.yaml"))
    tags: list[str]
    changed: bool = field(metadata=_about("its schema differs from the previous run holding it"))
    tags_changed: list[str] = field(default_factory=list, metadata=_about(
        "governance tags (core, deprecating, deprecated) this run added (+core) or dropped (-core) against the "
        "previous run holding it: why a run begins when the schema did not change"))
    changes: list[HistoryChange] = field(default_factory=list, metadata=_about(
        "what changed in this run and why: schema, tags, category, review, lifecycle, oldest first"))


@dataclass(frozen=True, kw_only=True)
class DecisionView:
    """A committee decision on the operator's category, with its rationale."""

    id: int
    category: Category
    targets: list[str] = field(metadata=_about("decomposition targets (category decomposable)"))
    rationale: str
    decided_at: datetime
    decided_by: list[str] = field(metadata=_about("the approving maintainers"))
    votes: list[dict[str, Any]] = field(metadata=_about("every vote: voter, approve, comment"))
    proposal: int | None = field(metadata=_about("the proposal it decided; null for an imported historical decision"))
    imported: bool = field(metadata=_about("a historical decision loaded from a decisions file"))
    source: str | None
    note: str | None = field(metadata=_about("why a recorded decision does not set the category (superseded)"))


@dataclass(frozen=True, kw_only=True)
class ProposalRef:
    """A proposal about the operator."""

    id: int
    kind: ProposalKind
    targets: list[str]
    status: ProposalStatus
    proposer: str
    created_at: datetime


@dataclass(frozen=True, kw_only=True)
class LifecycleStepView:
    """One lifecycle transition."""

    __pydantic_config__ = ALIASED

    from_state: Lifecycle = field(metadata={"alias": "from"})
    to_state: Lifecycle = field(metadata={"alias": "to"})
    at: datetime
    actor: str
    reason: str | None
    replacement: str | None


@dataclass(frozen=True, kw_only=True)
class OperatorFinding:
    """A compatibility finding of an import about this operator."""

    snapshot: str | None
    kind: str = field(metadata=_about("bc, fc, new, or policy (a governance tag the release added or dropped)"))
    rule: str
    severity: str = field(metadata=_about("error, warning, waived or info"))
    message: str
    old_schema: str | None
    new_schema: str | None


@dataclass(frozen=True, kw_only=True)
class OperatorDetail(OperatorSummary):
    """One operator's whole story (``opgov ops show``, ``GET /api/v1/operators/{name}``)."""

    lifecycle_since: datetime | None = field(metadata=_about("when it entered its lifecycle state"))
    first_seen: str | None = field(metadata=_about("label of the first snapshot holding it"))
    last_seen: str | None = field(metadata=_about("label of the last snapshot holding it"))
    history: list[HistoryEntry]
    decisions: list[DecisionView]
    proposals: list[ProposalRef]
    lifecycle_steps: list[LifecycleStepView]
    findings: list[OperatorFinding]
    sunset: datetime | None = field(default=None, metadata=_about(
        "deprecating/deprecated: the earliest time its entry may be deleted (after both lifecycle periods)"))
