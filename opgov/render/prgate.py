"""Renderings of a PR gate report (:class:`opgov.core.prgate.PrReport`): text, JSON, GitHub
Actions workflow commands (within GitHub's annotation limits), the markdown job summary, and the
reviewers/labels to request. SARIF and JUnit XML live in :mod:`opgov.render.sarif` and
:mod:`opgov.render.junit`. Every renderer is a pure function returning a string."""

from __future__ import annotations

import json

from opgov.core.prgate import PrFinding, PrReport
from opgov.core.vocab import Severity
from opgov.render.github import annotation
from opgov.results.plain import to_json
from opgov.results.prgate import PrFindingOut, PrReportOut, PrSummary

SEVERITY_ORDER = tuple(Severity)
_HEADING = {"error": "Errors", "warning": "Warnings", "waived": "Waived", "info": "Information"}
_MEANING = {"error": "the PR cannot merge as it is",
            "warning": "to look at (and reviewers to wait for)",
            "waived": "BC breaks an allow-list entry or exception lets through",
            "info": "for the record"}

#: GitHub shows at most this many annotations of each level per step.
GITHUB_LIMIT = 10
_LEVEL = {"error": "error", "warning": "warning", "waived": "notice", "info": "notice"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word if n == 1 else word + 's'}"


def _where(f: PrFinding) -> str:
    if f.file and f.line:
        return f"{f.file}:{f.line}"
    return f.file or ""


def summary_line(report: PrReport) -> str:
    return (f"{_plural(report.count('error'), 'error')}, {_plural(report.count('warning'), 'warning')}, "
            f"{report.count('waived')} waived, {_plural(report.count('info'), 'info')}")


def _not_compared(report: PrReport) -> str:
    """The new operators no finding counts (only an autogen: line declares them), as check-bc says."""
    shown = ", ".join(report.not_compared[:5]) + (f", … (+{len(report.not_compared) - 5})"
                                                   if len(report.not_compared) > 5 else "")
    return (f"Not counted as new: {_plural(len(report.not_compared), 'operator')} only an autogen: line declares, "
            f"with no schema to compare ({shown}).")


def render_text(report: PrReport, *, base: str = "", head: str = "") -> str:
    lines: list[str] = []
    if base or head:
        lines += [f"check-pr {base} → {head}", ""]
    for severity in SEVERITY_ORDER:
        group = [f for f in report.findings if f.severity == severity]
        if not group:
            continue
        lines.append(f"{_HEADING[severity]} ({len(group)}): {_MEANING[severity]}")
        for f in group:
            where = _where(f)
            subject = f" {f.operator}" if f.operator else ""
            lines.append(f"  {where + ': ' if where else ''}[{f.rule}]{subject}: {f.message}")
            if f.old_schema is not None and f.new_schema is not None and f.new_schema != f.old_schema:
                lines.append(f"      old: {f.old_schema}")
                lines.append(f"      new: {f.new_schema}")
        lines.append("")
    if report.not_compared:
        lines += [_not_compared(report), ""]
    if report.reviewers:
        lines.append("Reviewers requested: " + ", ".join(report.reviewers))
    if report.labels:
        lines.append("Labels: " + ", ".join(report.labels))
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def report_model(report: PrReport, *, base: str = "", head: str = "") -> PrReportOut:
    """The result of ``--format json`` (:class:`opgov.results.prgate.PrReportOut`)."""
    return PrReportOut(
        base=base, head=head,
        findings=[PrFindingOut(rule=f.rule, severity=f.severity, kind=f.kind, operator=f.operator, message=f.message,
                               file=f.file, line=f.line, old_schema=f.old_schema, new_schema=f.new_schema,
                               reviewers=list(f.reviewers), labels=list(f.labels)) for f in report.findings],
        summary=PrSummary(errors=report.count("error"), warnings=report.count("warning"),
                          waived=report.count("waived"), infos=report.count("info")),
        reviewers=list(report.reviewers), labels=list(report.labels), not_compared=list(report.not_compared))


def render_json(report: PrReport, *, base: str = "", head: str = "") -> str:
    """``--format json``: :func:`report_model`'s JSON, written without pydantic."""
    return to_json(report_model(report, base=base, head=head))


def render_requests(report: PrReport) -> str:
    """What to ask of the PR, for ``gh pr edit``: reviewers (logins and org/team slugs) and labels,
    and the arguments ready to pass."""
    args: list[str] = []
    for reviewer in report.reviewers:
        args += ["--add-reviewer", reviewer.lstrip("@")]
    for label in report.labels:
        args += ["--add-label", label]
    return json.dumps({"reviewers": [r.lstrip("@") for r in report.reviewers], "labels": list(report.labels),
                       "gh_pr_edit_args": args}, indent=2) + "\n"


# --- GitHub Actions -----------------------------------------------------------------------


def render_github(report: PrReport, *, limit: int = GITHUB_LIMIT) -> str:
    """One annotation per finding, at most ``limit`` per level: when a level has more, the first
    ``limit - 1`` are shown and the rest grouped into one annotation (at the first of them)."""
    lines: list[str] = []
    for level in ("error", "warning", "notice"):
        group = [f for f in report.findings if _LEVEL[f.severity] == level]
        shown = group if len(group) <= limit else group[:limit - 1]
        for f in shown:
            title = f"{f.rule}: {f.operator}" if f.operator else f.rule
            lines.append(annotation(level, f.message, file=f.file, line=f.line, title=title))
        rest = group[len(shown):]
        if rest:
            listed = "\n".join(f"{_where(f)}: [{f.rule}] {f.operator or ''}" for f in rest)
            lines.append(annotation(level, f"{len(rest)} more {level} findings (GitHub shows {limit} per step; "
                                  f"see the job summary):\n{listed}", file=rest[0].file, line=rest[0].line,
                                  title=f"opgov check-pr: {len(rest)} more"))
    return "\n".join(lines) + ("\n" if lines else "")


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def render_markdown(report: PrReport, *, base: str = "", head: str = "") -> str:
    """The job summary (``$GITHUB_STEP_SUMMARY``)."""
    verdict = "❌ the PR cannot merge as it is" if report.errors else "✅ no errors"
    lines = [f"## opgov check-pr: {verdict}", ""]
    if base or head:
        lines += [f"`{base}` → `{head}`: {summary_line(report)}.", ""]
    else:
        lines += [summary_line(report) + ".", ""]
    if report.findings:
        lines += ["| severity | rule | where | operator | what to do |", "|---|---|---|---|---|"]
        for f in report.findings:
            lines.append(f"| {f.severity} | `{f.rule}` | {_cell(_where(f))} | {_cell(f.operator)} | {_cell(f.message)} |")
        lines.append("")
    if report.not_compared:
        lines += [_not_compared(report), ""]
    if report.reviewers:
        lines.append("**Reviewers requested:** " + ", ".join(f"@{r.lstrip('@')}" for r in report.reviewers))
    if report.labels:
        lines.append("**Labels:** " + ", ".join(f"`{label}`" for label in report.labels))
    return "\n".join(lines).rstrip("\n") + "\n"

