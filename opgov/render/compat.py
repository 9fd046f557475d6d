"""The renderings of a compatibility check's report (:class:`opgov.results.compat.CheckReport`): JSON,
GitHub Actions workflow commands, text, and the rules registry.

Kept apart from :mod:`opgov.core.compat` so that the checker itself imports only the standard
library. Every renderer is a pure function from a report to a string; the CLI adds colour to the
text form. None loads pydantic: ``opgov check-bc`` of two files never does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from opgov.core.compat import SEVERITIES
from opgov.render.github import annotation
from opgov.results.compat import CheckReport, CheckBcFinding, RuleOut
from opgov.results.plain import to_json

__all__ = ["render_github", "render_json", "render_rules", "render_text", "summary_line"]


def render_json(report: CheckReport) -> str:
    """The report's JSON (the API's shape: ``POST /api/v1/check-bc``)."""
    return to_json(report)


# --- GitHub Actions workflow commands -----------------------------------------------------

_LEVEL = {"error": "error", "warning": "warning", "waived": "notice", "info": "notice"}


def render_github(report: CheckReport) -> str:
    """One workflow command per finding (``::error file=…,line=…,title=…::message``), errors
    first, then one ``::warning`` per expired exception."""
    lines = []
    for f in _by_severity(report.findings):
        title = f"{_KIND_TITLE[f.kind]} {f.rule}: {f.operator}"
        lines.append(annotation(_LEVEL[f.severity], f.message, file=f.file, line=f.line, title=title))
    for e in report.expired_exceptions:
        lines.append(annotation("warning", f"BC exception {e.pattern!r} expired on {e.expires_on.isoformat()} "
                              f"({e.created_by}: {e.reason}); it no longer applies.",
                              title="expired BC exception"))
    return "\n".join(lines) + ("\n" if lines else "")


# --- text ---------------------------------------------------------------------------------

_KIND_TITLE = {"bc": "BC break", "fc": "FC break", "new": "new operator", "policy": "governance tag"}
_HEADING = {"error": "Errors", "warning": "Warnings", "waived": "Waived", "info": "Information"}
_MEANING = {"error": "backward-compatibility breaks the policy does not allow",
            "warning": "forward-compatibility breaks (calls made with the new schema may fail on older releases)",
            "waived": "backward-compatibility breaks covered by a recorded exception or upgrader",
            "info": "new operators, operators now with their own entry, and completed deletions"}


def _by_severity(findings: Sequence[CheckBcFinding]) -> list[CheckBcFinding]:
    order = {s: i for i, s in enumerate(SEVERITIES)}
    return sorted(findings, key=lambda f: order[f.severity])  # stable within a severity


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def summary_line(report: CheckReport) -> str:
    s = report.summary
    return (f"{_plural(s.errors, 'error')}, {_plural(s.warnings, 'warning')}, {s.waived} waived, "
            f"{_plural(s.infos, 'info')} ({s.bc} BC, {s.fc} FC, {s.new} new)")


def render_text(report: CheckReport) -> str:
    """Findings grouped by severity (errors first), then expired exceptions and a summary line."""
    lines: list[str] = []
    for severity in SEVERITIES:
        group = [f for f in report.findings if f.severity == severity]
        if not group:
            continue
        lines.append(f"{_HEADING[severity]} ({len(group)}): {_MEANING[severity]}")
        for f in group:
            where = f"{f.file}:{f.line}: " if f.file and f.line else (f"{f.file}: " if f.file else "")
            lines.append(f"  {where}{f.operator} [{f.kind} {f.rule}] {f.message}")
            if f.old_schema is not None and f.kind != "new":
                lines.append(f"      old: {f.old_schema}")
            if f.new_schema is not None:
                lines.append(f"      new: {f.new_schema}")
        lines.append("")
    if report.expired_exceptions:
        lines.append(f"Expired exceptions ({len(report.expired_exceptions)})")
        for e in report.expired_exceptions:
            lines.append(f"  {e.pattern}: last day {e.expires_on.isoformat()}, no longer applies "
                         f"({e.created_by}: {e.reason})")
        lines.append("")
    if report.not_compared:
        shown = ", ".join(report.not_compared[:5]) + (f", … (+{len(report.not_compared) - 5})"
                                                       if len(report.not_compared) > 5 else "")
        lines.append(f"Not counted as new: {_plural(len(report.not_compared), 'operator')} only an autogen: line "
                     f"declares, with no schema to compare ({shown}); `opgov import` counts them among its added.")
        lines.append("")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


# --- the rules themselves (check-bc --list-rules) ---------------------------------------------


def render_rules(rules: Iterable, fmt: str) -> str:
    """The rules registry: a JSON list for ``json``, one aligned line per rule otherwise."""
    if fmt == "json":
        return to_json([RuleOut(id=r.id, kind=r.kind, purpose=r.purpose) for r in rules]) + "\n"
    return "".join(f"{r.id:34} {r.kind:3} {r.purpose}\n" for r in rules)
