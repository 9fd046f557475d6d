"""The typed results of the services: what every use case returns.

Each is a frozen standard-library dataclass with a documented shape (a field's description is its
``metadata``). The CLI renders them as text and prints :func:`opgov.results.plain.to_json` for
``--json``; the HTTP API (:mod:`opgov.api`) uses them as response models (FastAPI serves and
documents dataclasses as they are), so the OpenAPI document shows exactly these shapes. Times are
timezone-aware UTC datetimes (JSON: ISO 8601 ending in ``Z``), dates are ``YYYY-MM-DD``. A field
whose JSON name is a Python keyword (``from``) has an ``alias``, the name JSON uses, and its class
the config :data:`~opgov.results.plain.ALIASED`.

The other areas have their modules beside this one: :mod:`opgov.results.runtimes`,
:mod:`~opgov.results.upgraders`, :mod:`~opgov.results.decomps`, :mod:`~opgov.results.pages`,
:mod:`~opgov.results.report` (the weekly report), :mod:`~opgov.results.compat` (check-bc),
:mod:`~opgov.results.imports` (``opgov import``), :mod:`~opgov.results.prgate` (check-pr) and
:mod:`~opgov.results.sync` (the sync bot). None imports pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal

from opgov.core import vocab
from opgov.results.plain import ALIASED, about as _about

# core/vocab.py's closed lists as the words a field holds (an inline enum in the OpenAPI document)
Category = Literal[tuple(vocab.Category)]  # type: ignore[valid-type]
Lifecycle = Literal[tuple(vocab.Lifecycle)]  # type: ignore[valid-type]
ProposalKind = Literal[tuple(vocab.ProposalKind)]  # type: ignore[valid-type]
ProposalStatus = Literal[tuple(vocab.ProposalStatus)]  # type: ignore[valid-type]
Role = Literal[tuple(vocab.Role)]  # type: ignore[valid-type]


# --- operators ----------------------------------------------------------------------------------


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


# --- the event log, the database --------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class EventView:
    """One entry of the append-only event log."""

    id: int
    at: datetime
    actor: str
    action: str = field(metadata=_about("e.g. proposal.vote, lifecycle.deprecating, snapshot.import"))
    subject: str = field(metadata=_about("an operator name, or kind:name (member:…, snapshot:…, exception:…)"))
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str | None
    token: int | None = field(default=None, metadata=_about("the API token the request was made with, if any"))


@dataclass(frozen=True, kw_only=True)
class ChainBreak:
    """The first broken link of the event log's hash chain."""

    event: int = field(metadata=_about("the id of the first event whose link is broken"))
    problem: str = field(metadata=_about("what is wrong with it (changed, inserted, removed or not appended by opgov)"))


@dataclass(frozen=True, kw_only=True)
class LogVerification:
    """``opgov log verify``: the event log's hash chain, walked oldest first."""

    events: int = field(metadata=_about("events walked (up to and including a broken one)"))
    intact: bool = field(metadata=_about("every event's prev_hash and hash match"))
    head: str | None = field(metadata=_about("the hash of the last event when intact (64 zeros for an empty log)"))
    broken: ChainBreak | None = field(metadata=_about("the first broken link, when not intact"))


@dataclass(frozen=True, kw_only=True)
class DatabaseStatus:
    """``opgov db current``."""

    url: str = field(metadata=_about("the database URL, password hidden"))
    revision: str | None = field(metadata=_about("its migration revision; null for an empty database"))
    head: str = field(metadata=_about("the revision this opgov needs"))
    up_to_date: bool
    simulation: bool = field(metadata=_about("a simulation database, where a claimed time is honoured"))


@dataclass(frozen=True, kw_only=True)
class RevisionChange:
    """``opgov db upgrade`` / ``downgrade``: the revision before and after."""

    before: str | None
    after: str | None


# --- imports -------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SnapshotView:
    """An imported snapshot."""

    id: int
    label: str
    source: str
    content_hash: str = field(metadata=_about("sha256 of the file"))
    imported_at: datetime
    actor: str
    operators: int
    position: int = field(metadata=_about("its place in history, 1 = the oldest"))
    historical: bool = field(metadata=_about("an older release stored in its place with import --historical"))


# --- members, settings -------------------------------------------------------------------------------


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


# --- proposals ------------------------------------------------------------------------------------------


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
class TriageResult:
    """``opgov triage``: the review queue's operators a filter or a file selects, proposed in bulk."""

    kind: ProposalKind
    applied: bool = field(metadata=_about("false: a dry run, nothing written; true: one proposal (and event) each"))
    selected: list[str] = field(metadata=_about("the queue's operators selected, by name"))
    proposals: list[ProposalView] = field(default_factory=list, metadata=_about("the proposals opened (applied only)"))


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


# --- lifecycle --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class NextStep:
    to: Lifecycle
    possible_from: datetime


@dataclass(frozen=True, kw_only=True)
class Reference:
    """Something that still refers to an operator a lifecycle step moved, and stays behind it."""

    operator: str = field(metadata=_about("the operator that refers to it (or whose rule does)"))
    relation: Literal["backward", "forward-mode derivative", "structured_delegate", "autogen",
                      "decomposition rule"] = field(metadata=_about(
        "backward: torchgen's name for its derivative (gelu_backward); structured_delegate: an entry whose kernel is "
        "the moved out= variant; autogen: declared by a moved entry's autogen:; decomposition rule: a rule that "
        "decomposes into it"))
    of: str = field(metadata=_about("the moved operator it refers to"))
    lifecycle: Lifecycle | None = field(metadata=_about(
        "its own lifecycle state (null: a rule of an unknown operator)"))


@dataclass(frozen=True, kw_only=True)
class LifecycleStepResult:
    """A lifecycle step taken (deprecate, mark-deprecated, delete, undeprecate)."""

    __pydantic_config__ = ALIASED

    operator: str
    from_state: Lifecycle = field(metadata={"alias": "from"})
    to_state: Lifecycle = field(metadata={"alias": "to"})
    at: datetime
    replacement: str | None
    next: NextStep | None = field(metadata=_about("the next timed step and when it becomes possible"))
    family: list[str] = field(default_factory=list, metadata=_about(
        "the other members of its torchgen family (in-place, out=, autogen) that moved with it"))
    left_behind: list[Reference] = field(default_factory=list, metadata=_about(
        "what still refers to it in the same native_functions.yaml (its backward, an entry's structured_delegate, an "
        "autogen: declaration) or in a decomposition rule, and did not move with it: deprecate or change those too, "
        "so nothing is left dangling"))


@dataclass(frozen=True, kw_only=True)
class TickItem:
    """A lifecycle transition due now or soon."""

    __pydantic_config__ = ALIASED

    operator: str
    from_state: Lifecycle = field(metadata={"alias": "from"})
    to_state: Lifecycle = field(metadata={"alias": "to"})
    since: datetime
    due_at: datetime
    days_left: int


@dataclass(frozen=True, kw_only=True)
class TickResult:
    """``opgov tick``: due transitions, those coming within the horizon, and those applied."""

    now: datetime
    due: list[TickItem]
    within: list[TickItem]
    applied: list[TickItem]


# --- exceptions -----------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ExceptionView:
    """A BC exception: BC breaks of matching non-core operators are not errors until it expires."""

    id: int
    pattern: str = field(metadata=_about("operator glob, e.g. aten::_foreach_*"))
    reason: str
    created_by: str
    created_at: datetime
    expires_on: date = field(metadata=_about("the last day it applies"))
    expired: bool
    removed: bool


@dataclass(frozen=True, kw_only=True)
class ExceptionAdded(ExceptionView):
    """``opgov exceptions add``: the exception and what it matches now."""

    matches: int = field(metadata=_about("present operators it matches"))
    core_matches: int = field(metadata=_about("of those, core ones (never waived)"))


# --- sync-yaml ----------------------------------------------------------------------------------------


# --- decompositions -------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PreviousRule:
    source: str
    detail: str | None
    into: list[str]


@dataclass(frozen=True, kw_only=True)
class RuleOutcome:
    operator: str
    outcome: Literal["added", "updated", "unchanged", "kept"]
    previous: PreviousRule | None


@dataclass(frozen=True, kw_only=True)
class RulesLoaded:
    """``opgov decomps load``."""

    file: str
    source: str
    rules: int
    added: int
    updated: int
    unchanged: int
    kept: int
    precedence: str
    changes: list[RuleOutcome] = field(metadata=_about("every rule not simply added"))


@dataclass(frozen=True, kw_only=True)
class Untraced:
    operator: str
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class TorchRulesImported:
    """``opgov decomps import-torch``."""

    torch: str
    table: int
    not_in_table: list[str]
    added: int
    updated: int
    unchanged: int
    kept: int
    precedence: str
    changes: list[RuleOutcome]
    untraced: list[Untraced]
    not_in_registry: list[str]
    dropped_targets: dict[str, list[str]]
    errors_introduced: int
    first_errors: list[str]


@dataclass(frozen=True, kw_only=True)
class RuleView:
    """A decomposition rule and where it came from."""

    operator: str
    into: list[str]
    source: str = field(metadata=_about("decision, file or torch"))
    detail: str | None
    recorded_at: datetime
    by: str


# --- tokens ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TokenView:
    """An API token (never its secret)."""

    id: int
    member: str
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    revoked_at: datetime | None
    state: Literal["active", "revoked", "expired"] = field(metadata=_about("at the time of the request"))


@dataclass(frozen=True, kw_only=True)
class TokenCreated(TokenView):
    """``opgov tokens create``: the secret is shown this once and stored only as a hash."""

    token: str = field(metadata=_about("the bearer token; shown once"))


EVENTS_PAGE_MAX = 1000  # the most events one page of /api/v1/events holds (?limit=)


@dataclass(frozen=True, kw_only=True)
class EventsPage:
    """A page of the event log, oldest first; ``next_before`` fetches the older page."""

    events: list[EventView]
    next_before: int | None = field(metadata=_about(
        "pass as ?before= for the previous (older) page; null at the start"))


@dataclass(frozen=True, kw_only=True)
class Problem:
    """An error response of the service (RFC 9457, ``application/problem+json``)."""

    type: str = field(default="about:blank")
    title: str = field(metadata=_about("the HTTP status phrase"))
    status: int
    detail: str = field(metadata=_about("the one-line message the CLI prints for the same error"))


@dataclass(frozen=True, kw_only=True)
class StatusReport:
    """``opgov status``: the database at a glance."""

    revision: str | None = field(metadata=_about("the database's migration revision"))
    snapshots: int = field(metadata=_about("snapshots imported, historical ones included"))
    latest_snapshot: str | None = field(metadata=_about(
        "the label of the latest snapshot; null before the first import"))
    operators: dict[Category, int] = field(metadata=_about("operators in the latest snapshot, by category"))
    open_proposals: int
    members: int = field(metadata=_about("members; 0 is single-user mode"))
