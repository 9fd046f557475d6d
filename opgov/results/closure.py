"""The result of ``opgov decomps closure``: the closure proof of a torch release's default
decomposition table (:mod:`opgov.core.closure`), as frozen standard-library dataclasses (FastAPI
serves and documents them as they are)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ClosureOp:
    """One operator of the table. ``closed``: every operator it ends in is core (or a graph
    operator: an assertion, a symbolic size). ``ends_in``: the operators it ends in, following the
    table transitively as traced. ``why``: for one not closed, what stops it; ``not_core`` and
    ``path`` (to the first operator that stops it) say the same as data."""

    op: str
    kind: str
    closed: bool
    ends_in: list[str]
    why: str | None = None
    not_core: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ClosureDiff:
    """A change between two closures (``--against``): a finding. ``stopped_closing``: closed in
    ``other``, not now (a regression); ``started_closing``: the reverse; ``joined``/``left``: the
    table's operators that only this one / only the other holds; ``ends_changed``: closed in both,
    ending in other operators."""

    other: str
    other_snapshot: str | None
    stopped_closing: list[str]
    started_closing: list[str]
    joined: list[str]
    left: list[str]
    ends_changed: list[str]


@dataclass(frozen=True)
class ClosureReport:
    """``torch``: the release whose facts were followed; ``facts``: which facts, from where (those
    ``decomps import-torch`` recorded, or opgov's shipped ones, and for which snapshot); ``snapshot``: the snapshot whose
    ``core`` tags are the core set (``core``: how many); ``complete``: every decomposition of the
    release was traced (not an ``--only`` import alone). ``releases``: every torch release whose
    facts opgov holds."""

    torch: str
    facts: str
    snapshot: str | None
    core: int
    complete: bool
    operators: int
    closed: int
    not_closed: int
    items: list[ClosureOp]
    releases: list[str]
    against: ClosureDiff | None = None


@dataclass(frozen=True)
class ClosureRow:
    """One row of the weekly report's closure section: an operator of torch's default table that
    does not close (``status`` "does not close"), or whose closure changed from the previous torch
    release opgov holds facts of ("stopped closing", a regression, or "started closing")."""

    torch: str
    snapshot: str | None
    operator: str
    status: str
    why: str
    since: str | None = None  # the release it is compared with, for a change
