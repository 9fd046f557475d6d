"""The JSON shape of ``opgov check-pr --format json`` (pydantic models; imported only for JSON, by
:func:`opgov.render.prgate.render_json`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class PrFindingOut(BaseModel):
    """One finding: a rule id, a severity, where (file and line) and what the PR author can do."""

    model_config = ConfigDict(frozen=True)

    rule: str
    severity: Literal["error", "warning", "waived", "info"]
    kind: Literal["bc", "fc", "new", "policy"]  # check-bc's kinds, or one of the PR gate's policy rules
    operator: str | None
    message: str
    file: str | None
    line: int | None
    old_schema: str | None = None
    new_schema: str | None = None
    reviewers: list[str] = []
    labels: list[str] = []


class PrSummary(BaseModel):
    """Counts by severity; ``errors`` decides the exit code."""

    errors: int
    warnings: int
    waived: int
    infos: int


class PrReportOut(BaseModel):
    """``opgov check-pr --format json``: both sides, the findings, and what to request of the PR."""

    base: str
    head: str
    findings: list[PrFindingOut]
    summary: PrSummary
    reviewers: list[str]
    labels: list[str]
    not_compared: list[str] = Field(default=[], description=(
        "operators the head added that only an autogen: line declares: no schema text to compare, so no "
        "finding counts them (as check-bc's `not_compared`)"))
