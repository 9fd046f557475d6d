"""The committee's workbench: ``opgov queue``, ``GET /api/v1/queue``, the ``/queue`` page, and
``opgov triage`` (with and without ``--suggested``).

Frozen standard-library dataclasses (the API serves them as they are; ``--json`` is
:func:`opgov.results.plain.to_json`). The evidence is core's (:mod:`opgov.core.queue`).

No ``from __future__ import annotations``: pydantic reads these annotations as objects.
"""

from dataclasses import dataclass, field

from opgov.core.queue import Evidence
from opgov.results.governance import ProposalView
from opgov.results.plain import about as _about
from opgov.results.vocab import ProposalKind

__all__ = [
    "Agenda", "AgendaItem", "OpenProposalRef", "QueueItem", "QueueView", "SuggestedProposal", "SuggestedTriage",
    "TriageResult",
]


@dataclass(frozen=True)
class OpenProposalRef:
    """The open proposal an operator waits on."""

    id: int
    kind: str
    proposer: str


@dataclass(frozen=True)
class QueueItem:
    """One operator waiting for the committee: why and since when, its evidence, and the decision
    the evidence suggests (``suggestion``: decompose, custom, core or human) with its reason in
    words (``because``); ``targets``: the decomposition a decompose would record; ``impact``: how
    many registered runtimes implement it plus how many models use it."""

    operator: str
    schema: str
    waiting_since: str
    reasons: tuple[str, ...]
    category: str
    category_source: str
    proposal: OpenProposalRef | None
    evidence: Evidence
    suggestion: str
    because: str
    targets: tuple[str, ...]
    impact: int


@dataclass(frozen=True)
class QueueView:
    """The queue, filtered (``reason``, ``match``, ``snapshot``, ``suggestion``), sorted (``sort``)
    and paged (``offset``, ``limit``; 0: no limit): ``total`` items match the filters, ``items``
    is the page; ``counts``: the matching items by suggestion; ``torch``: the torch release whose
    facts the evidence holds (None: none recorded); ``runtimes``: the registered runtimes;
    ``models``: where the model corpora were read from (None: none configured)."""

    total: int
    offset: int
    limit: int
    sort: str
    counts: dict[str, int]
    items: tuple[QueueItem, ...]
    torch: str | None
    runtimes: tuple[str, ...]
    models: str | None


@dataclass(frozen=True)
class SuggestedProposal:
    """A proposal ``triage --suggested`` opens (or, in a dry run, would open): its id once opened."""

    operator: str
    kind: str
    targets: tuple[str, ...]
    rationale: str
    id: int | None


@dataclass(frozen=True)
class SuggestedTriage:
    """``opgov triage --suggested``: a proposal for each suggestion the filters select (``applied``:
    opened, one event each, in one transaction; else a dry run that wrote nothing); ``skipped``:
    the selected operators it cannot propose, each with why (a human's call, a proposal already
    open, a decomposition with no known targets, a proposal the policy refuses)."""

    applied: bool
    proposals: tuple[SuggestedProposal, ...]
    skipped: dict[str, str]


@dataclass(frozen=True)
class AgendaItem:
    """A queued operator as the weekly report's agenda names it."""

    operator: str
    waiting_since: str
    suggestion: str
    because: str
    runtimes: int
    models: int


@dataclass(frozen=True)
class Agenda:
    """The queue for the committee's meeting (the weekly report): how many wait (``total``), how many
    of each suggestion, the oldest waiting and those with the most runtime or model impact (at most
    ``shown`` each); ``torch``: the release whose facts the suggestions hold (None: none recorded)."""

    total: int
    counts: dict[str, int]
    oldest: tuple[AgendaItem, ...]
    most_impact: tuple[AgendaItem, ...]
    shown: int
    torch: str | None


@dataclass(frozen=True, kw_only=True)
class TriageResult:
    """``opgov triage``: the review queue's operators a filter or a file selects, proposed in bulk."""

    kind: ProposalKind
    applied: bool = field(metadata=_about("false: a dry run, nothing written; true: one proposal (and event) each"))
    selected: list[str] = field(metadata=_about("the queue's operators selected, by name"))
    proposals: list[ProposalView] = field(default_factory=list, metadata=_about("the proposals opened (applied only)"))
