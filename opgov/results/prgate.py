"""The result of ``opgov check-pr --format json``: both sides, the findings, and what to request
of the PR (built from core's :class:`~opgov.core.prgate.PrReport` by
:func:`opgov.render.prgate.report_model`).

Frozen standard-library dataclasses, as every result: ``check-pr`` never loads pydantic, and
:func:`opgov.results.plain.to_json` writes their JSON, the same text as pydantic's.
"""

from dataclasses import dataclass, field

from opgov.results.vocab import FindingKind, Severity

__all__ = ["PrFindingOut", "PrReportOut", "PrSummary"]


@dataclass(frozen=True)
class PrFindingOut:
    """One finding: a rule id, a severity, where (file and line) and what the PR author can do."""

    rule: str
    severity: Severity
    kind: FindingKind  # check-bc's kinds, or a policy rule's
    operator: str | None
    message: str
    file: str | None
    line: int | None
    old_schema: str | None = None
    new_schema: str | None = None
    reviewers: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PrSummary:
    """Counts by severity; ``errors`` decides the exit code."""

    errors: int
    warnings: int
    waived: int
    infos: int


@dataclass(frozen=True)
class PrReportOut:
    """``opgov check-pr --format json``: both sides, the findings, and what to request of the PR."""

    base: str
    head: str
    findings: list[PrFindingOut]
    summary: PrSummary
    reviewers: list[str]
    labels: list[str]
    not_compared: list[str] = field(default_factory=list, metadata={"description": (
        "operators the head added that only an autogen: line declares: no schema text to compare, so no "
        "finding counts them (as check-bc's `not_compared`)")})
