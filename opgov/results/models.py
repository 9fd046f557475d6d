"""The typed results of the services: what every use case returns.

Each is a frozen pydantic model with a documented shape. The CLI renders them as text and prints
``model_dump_json(by_alias=True)`` for ``--json``; the HTTP API (:mod:`opgov.api`) uses them as
response models, so the OpenAPI document shows exactly these shapes. Times are timezone-aware
UTC datetimes (JSON: ISO 8601 ending in ``Z``), dates are ``YYYY-MM-DD``.

The other areas have their modules beside this one: :mod:`opgov.results.runtimes`,
:mod:`~opgov.results.upgraders`, :mod:`~opgov.results.decomps`, :mod:`~opgov.results.pages`,
:mod:`~opgov.results.report` (the weekly report), and those declared as standard-library
dataclasses: :mod:`~opgov.results.compat` (check-bc), :mod:`~opgov.results.imports` (``opgov
import``) and :mod:`~opgov.results.prgate` (check-pr).

pydantic is imported here, and this module only by the services: ``opgov --help`` never loads it.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

Category = Literal["core", "decomposable", "custom"]
Lifecycle = Literal["active", "deprecating", "deprecated", "deleted"]
ProposalKind = Literal["core", "decompose", "custom"]
ProposalStatus = Literal["open", "approved", "rejected", "withdrawn"]
Role = Literal["maintainer", "developer", "bot"]


class Result(BaseModel):
    """Base of every result: immutable; fields whose JSON name is a Python keyword (``from``)
    have an alias, which is the name JSON uses."""

    # defer_build: a command builds the validators of the few results it returns, not of all of them
    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True, defer_build=True)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2, by_alias=True)


# --- operators ----------------------------------------------------------------------------------


class OperatorSummary(Result):
    """One operator as ``opgov ops list`` shows it."""

    name: str = Field(description="canonical name, e.g. aten::add.Tensor")
    schema_: str | None = Field(alias="schema", description="the func: text of its current schema; null for an "
                                                           "operator declared only by autogen:")
    kind: str = Field(description="functional, inplace, out, mutable or scratch")
    tags: list[str] = Field(description="its tags in native_functions.yaml")
    category: Category
    category_source: str = Field(description="decision (the committee), yaml-tag, or heuristic")
    lifecycle: Lifecycle
    present: bool = Field(description="whether the latest snapshot holds it")
    needs_review: bool = Field(description="waiting for a committee decision (in the review queue)")
    review_reason: str | None = Field(default=None, description=(
        "why it waits: new in a snapshot, or a `core` tag a release added or dropped (a core operator "
        "whose tag was dropped stays core until the committee decides)"))
    autogen_of: str | None = Field(description="the entry whose autogen: declares it")
    replacement: str | None = Field(description="what to use instead (deprecating operators)")


class HistoryChange(Result):
    """One change of the operator's record within a run of its history: its schema or tags (what the
    run's first snapshot changed), its category, its place in the review queue, its lifecycle (what
    an import, a decision or a lifecycle step changed while the run's snapshots were the latest)."""

    what: Literal["schema", "tags", "category", "review", "lifecycle"]
    before: str | None = Field(description="the old value (tags: those dropped, e.g. core)")
    after: str | None = Field(description="the new value (tags: those added); review: waits or decided")
    snapshot: str = Field(description="the snapshot that was the latest when it changed")
    at: AwareDatetime
    actor: str = Field(description="who changed it: the importer, the member whose vote decided, who stepped it")
    by: list[str] = Field(default_factory=list, description="category decisions: the maintainers who approved")
    reason: str | None = Field(description="why: the import's account, the committee's rationale, the step's reason")
    event: int | None = Field(default=None, description="the event of the log recording it (null: read from the "
                                                        "snapshots themselves, e.g. one imported --historical)")


class HistoryEntry(Result):
    """A run of consecutive snapshots, in the order of history, in which the operator's entry
    stayed the same (its schema and tags), or in which it was absent."""

    snapshot: str = Field(description="the label of the run's first snapshot")
    imported_at: AwareDatetime = Field(description="when the run's first snapshot was imported")
    last_snapshot: str = Field(description="the label of the run's last snapshot (the same for a run of one)")
    snapshots: int = Field(description="how many snapshots the run spans")
    present: bool
    schema_: str | None = Field(alias="schema")
    line: int | None = Field(description="line of its entry in the run's last snapshot's native_functions.yaml")
    tags: list[str]
    changed: bool = Field(description="its schema differs from the previous run holding it")
    tags_changed: list[str] = Field(default_factory=list, description=(
        "governance tags (core, deprecating, deprecated) this run added (+core) or dropped (-core) "
        "against the previous run holding it: why a run begins when the schema did not change"))
    changes: list[HistoryChange] = Field(default_factory=list, description=(
        "what changed in this run and why: schema, tags, category, review, lifecycle, oldest first"))


class DecisionView(Result):
    """A committee decision on the operator's category, with its rationale."""

    id: int
    category: Category
    targets: list[str] = Field(description="decomposition targets (category decomposable)")
    rationale: str
    decided_at: AwareDatetime
    decided_by: list[str] = Field(description="the approving maintainers")
    votes: list[dict[str, Any]] = Field(description="every vote: voter, approve, comment")
    proposal: int | None = Field(description="the proposal it decided; null for an imported historical decision")
    imported: bool = Field(description="a historical decision loaded from a decisions file")
    source: str | None
    note: str | None = Field(description="why a recorded decision does not set the category (superseded)")


class ProposalRef(Result):
    """A proposal about the operator."""

    id: int
    kind: ProposalKind
    targets: list[str]
    status: ProposalStatus
    proposer: str
    created_at: AwareDatetime


class LifecycleStepView(Result):
    """One lifecycle transition."""

    from_state: Lifecycle = Field(alias="from")
    to_state: Lifecycle = Field(alias="to")
    at: AwareDatetime
    actor: str
    reason: str | None
    replacement: str | None


class OperatorFinding(Result):
    """A compatibility finding of an import about this operator."""

    snapshot: str | None
    kind: str = Field(description="bc, fc, new, or policy (a governance tag the release added or dropped)")
    rule: str
    severity: str = Field(description="error, warning, waived or info")
    message: str
    old_schema: str | None
    new_schema: str | None


class OperatorDetail(OperatorSummary):
    """One operator's whole story (``opgov ops show``, ``GET /api/v1/operators/{name}``)."""

    lifecycle_since: AwareDatetime | None = Field(description="when it entered its lifecycle state")
    first_seen: str | None = Field(description="label of the first snapshot holding it")
    last_seen: str | None = Field(description="label of the last snapshot holding it")
    history: list[HistoryEntry]
    decisions: list[DecisionView]
    proposals: list[ProposalRef]
    lifecycle_steps: list[LifecycleStepView]
    findings: list[OperatorFinding]
    sunset: AwareDatetime | None = Field(
        default=None, description="deprecating/deprecated: the earliest time its entry may be deleted "
                                  "(after both lifecycle periods)")


# --- the event log, the database --------------------------------------------------------------------


class EventView(Result):
    """One entry of the append-only event log."""

    id: int
    at: AwareDatetime
    actor: str
    action: str = Field(description="e.g. proposal.vote, lifecycle.deprecating, snapshot.import")
    subject: str = Field(description="an operator name, or kind:name (member:…, snapshot:…, exception:…)")
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    reason: str | None
    token: int | None = Field(default=None, description="the API token the request was made with, if any")


class ChainBreak(Result):
    """The first broken link of the event log's hash chain."""

    event: int = Field(description="the id of the first event whose link is broken")
    problem: str = Field(description="what is wrong with it (changed, inserted, removed or not appended by opgov)")


class LogVerification(Result):
    """``opgov log verify``: the event log's hash chain, walked oldest first."""

    events: int = Field(description="events walked (up to and including a broken one)")
    intact: bool = Field(description="every event's prev_hash and hash match")
    head: str | None = Field(description="the hash of the last event when intact (64 zeros for an empty log)")
    broken: ChainBreak | None = Field(description="the first broken link, when not intact")


class DatabaseStatus(Result):
    """``opgov db current``."""

    url: str = Field(description="the database URL, password hidden")
    revision: str | None = Field(description="its migration revision; null for an empty database")
    head: str = Field(description="the revision this opgov needs")
    up_to_date: bool
    simulation: bool = Field(description="a simulation database, where a claimed time is honoured")


class RevisionChange(Result):
    """``opgov db upgrade`` / ``downgrade``: the revision before and after."""

    before: str | None
    after: str | None


# --- imports -------------------------------------------------------------------------------------------


class SnapshotView(Result):
    """An imported snapshot."""

    id: int
    label: str
    source: str
    content_hash: str = Field(description="sha256 of the file")
    imported_at: AwareDatetime
    actor: str
    operators: int
    position: int = Field(description="its place in history, 1 = the oldest")
    historical: bool = Field(description="an older release stored in its place with import --historical")


# --- members, settings -------------------------------------------------------------------------------


class MemberView(Result):
    """A member and their role."""

    name: str
    role: Role
    added_at: AwareDatetime | None = None
    added_by: str | None = None


class SettingChange(Result):
    """``opgov config set``."""

    key: str
    before: str
    value: str


class Settings(Result):
    """``opgov config list``."""

    quorum: int = Field(description="approvals a proposal needs to be decided")
    deprecating_days: int = Field(description="days deprecating before it may be marked deprecated")
    deprecated_days: int = Field(description="days deprecated before its entry may be deleted")
    simulation: bool = Field(description="a simulation database")


# --- proposals ------------------------------------------------------------------------------------------


class VoteView(Result):
    voter: str
    approve: bool
    comment: str
    at: AwareDatetime


class ProposalDecision(Result):
    """The decision an approved proposal made."""

    category: Category
    decided_at: AwareDatetime
    decided_by: list[str]
    rationale: str


class ProposalView(Result):
    """A proposal with its votes (``opgov proposals``, ``propose-*``, ``review``, ``withdraw``)."""

    id: int
    operator: str
    kind: ProposalKind
    targets: list[str] = Field(description="decomposition targets (kind decompose)")
    rationale: str
    proposer: str
    created_at: AwareDatetime
    status: ProposalStatus
    closed_at: AwareDatetime | None
    approvals: list[str] = Field(description="voters approving")
    rejections: list[str] = Field(description="voters rejecting")
    votes: list[VoteView]
    quorum: int | None = Field(description="approvals (or rejections) that decide it")
    decision: ProposalDecision | None = Field(default=None, description=(
        "the decision, once approved: in every answer (the vote that decided it, `proposals`, `proposals show`)"))
    confirms: str | None = Field(default=None, description="the category (and its source) the proposal confirms, "
                                                           "when it confirms the one an import placed")
    replaced: VoteView | None = Field(default=None, description=(
        "`review` only: the voter's earlier vote that this one replaces (kept in the event log)"))


class TriageResult(Result):
    """``opgov triage``: the review queue's operators a filter or a file selects, proposed in bulk."""

    kind: ProposalKind
    applied: bool = Field(description="false: a dry run, nothing written; true: one proposal (and event) each")
    selected: list[str] = Field(description="the queue's operators selected, by name")
    proposals: list[ProposalView] = Field(default_factory=list, description="the proposals opened (applied only)")


class DecisionsLoaded(Result):
    """``opgov decisions load``."""

    file: str
    decisions: int = Field(description="records in the file")
    recorded: int
    already_recorded: int
    superseded: list[str] = Field(description="operators whose decision is on record only: a newer snapshot "
                                              "tags them core")
    decomposition_errors: list[str] = Field(default_factory=list,
                                            description="check-decomps errors of the file's rules: rules that end "
                                                        "in operators neither core nor decomposed")


# --- lifecycle --------------------------------------------------------------------------------------------


class NextStep(Result):
    to: Lifecycle
    possible_from: AwareDatetime


class Reference(Result):
    """Something that still refers to an operator a lifecycle step moved, and stays behind it."""

    operator: str = Field(description="the operator that refers to it (or whose rule does)")
    relation: Literal["backward", "forward-mode derivative", "structured_delegate", "autogen",
                      "decomposition rule"] = Field(description=(
                          "backward: torchgen's name for its derivative (gelu_backward); structured_delegate: an "
                          "entry whose kernel is the moved out= variant; autogen: declared by a moved entry's "
                          "autogen:; decomposition rule: a rule that decomposes into it"))
    of: str = Field(description="the moved operator it refers to")
    lifecycle: Lifecycle | None = Field(description="its own lifecycle state (null: a rule of an unknown operator)")


class LifecycleStepResult(Result):
    """A lifecycle step taken (deprecate, mark-deprecated, delete, undeprecate)."""

    operator: str
    from_state: Lifecycle = Field(alias="from")
    to_state: Lifecycle = Field(alias="to")
    at: AwareDatetime
    replacement: str | None
    next: NextStep | None = Field(description="the next timed step and when it becomes possible")
    family: list[str] = Field(default_factory=list,
                              description="the other members of its torchgen family (in-place, out=, autogen) "
                                          "that moved with it")
    left_behind: list[Reference] = Field(default_factory=list, description=(
        "what still refers to it in the same native_functions.yaml (its backward, an entry's structured_delegate, "
        "an autogen: declaration) or in a decomposition rule, and did not move with it: deprecate or change those "
        "too, so nothing is left dangling"))


class TickItem(Result):
    """A lifecycle transition due now or soon."""

    operator: str
    from_state: Lifecycle = Field(alias="from")
    to_state: Lifecycle = Field(alias="to")
    since: AwareDatetime
    due_at: AwareDatetime
    days_left: int


class TickResult(Result):
    """``opgov tick``: due transitions, those coming within the horizon, and those applied."""

    now: AwareDatetime
    due: list[TickItem]
    within: list[TickItem]
    applied: list[TickItem]


# --- exceptions -----------------------------------------------------------------------------------------


class ExceptionView(Result):
    """A BC exception: BC breaks of matching non-core operators are not errors until it expires."""

    id: int
    pattern: str = Field(description="operator glob, e.g. aten::_foreach_*")
    reason: str
    created_by: str
    created_at: AwareDatetime
    expires_on: date = Field(description="the last day it applies")
    expired: bool
    removed: bool


class ExceptionAdded(ExceptionView):
    """``opgov exceptions add``: the exception and what it matches now."""

    matches: int = Field(description="present operators it matches")
    core_matches: int = Field(description="of those, core ones (never waived)")


# --- sync-yaml ----------------------------------------------------------------------------------------


# --- decompositions -------------------------------------------------------------------------------------


class PreviousRule(Result):
    source: str
    detail: str | None
    into: list[str]


class RuleOutcome(Result):
    operator: str
    outcome: Literal["added", "updated", "unchanged", "kept"]
    previous: PreviousRule | None


class RulesLoaded(Result):
    """``opgov decomps load``."""

    file: str
    source: str
    rules: int
    added: int
    updated: int
    unchanged: int
    kept: int
    precedence: str
    changes: list[RuleOutcome] = Field(description="every rule not simply added")


class Untraced(Result):
    operator: str
    reason: str | None


class TorchRulesImported(Result):
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


class RuleView(Result):
    """A decomposition rule and where it came from."""

    operator: str
    into: list[str]
    source: str = Field(description="decision, file or torch")
    detail: str | None
    recorded_at: AwareDatetime
    by: str


# --- tokens ----------------------------------------------------------------------------------------------


class TokenView(Result):
    """An API token (never its secret)."""

    id: int
    member: str
    created_at: AwareDatetime
    created_by: str
    expires_at: AwareDatetime | None
    revoked_at: AwareDatetime | None
    state: Literal["active", "revoked", "expired"] = Field(description="at the time of the request")


class TokenCreated(TokenView):
    """``opgov tokens create``: the secret is shown this once and stored only as a hash."""

    token: str = Field(description="the bearer token; shown once")


def dump_list(items: list[Result]) -> str:
    """A list of results as a JSON array (the CLI's --json of list commands)."""
    from pydantic_core import to_json

    return to_json(items, indent=2, by_alias=True).decode()


EVENTS_PAGE_MAX = 1000  # the most events one page of /api/v1/events holds (?limit=)


class EventsPage(Result):
    """A page of the event log, oldest first; ``next_before`` fetches the older page."""

    events: list[EventView]
    next_before: int | None = Field(description="pass as ?before= for the previous (older) page; null at the start")


class Problem(BaseModel):
    """An error response of the service (RFC 9457, ``application/problem+json``)."""

    type: str = Field(default="about:blank")
    title: str = Field(description="the HTTP status phrase")
    status: int
    detail: str = Field(description="the one-line message the CLI prints for the same error")


class StatusReport(Result):
    """``opgov status``: the database at a glance."""

    revision: str | None = Field(description="the database's migration revision")
    snapshots: int = Field(description="snapshots imported, historical ones included")
    latest_snapshot: str | None = Field(description="the label of the latest snapshot; null before the first import")
    operators: dict[Category, int] = Field(description="operators in the latest snapshot, by category")
    open_proposals: int
    members: int = Field(description="members; 0 is single-user mode")
