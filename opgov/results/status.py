"""The result of ``opgov status`` (:mod:`opgov.services.status`): the database at a glance."""

from __future__ import annotations

from dataclasses import dataclass, field

from opgov.results.plain import about as _about
from opgov.results.vocab import Category


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
