"""The JSON shape of a compatibility check, and its renderers (json, GitHub Actions, text).

Kept apart from :mod:`opgov.core.compat` so that the checker itself imports only the standard
library. The report's pydantic models (:class:`CheckReport` and its parts, the service's response
schema) live in :mod:`opgov.render.compat_models` and are loaded on first use: ``make_report(...,
typed=False)`` builds the same report as plain dataclasses (what ``opgov check-bc`` of two files
prints), whose :func:`render_json` is the same text as the model's ``model_dump_json(indent=2)``.
Every renderer is a pure function from a report (either form) to a string; the CLI adds colour to
the text form.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date

from opgov.core.compat import SEVERITIES, BcException, Finding
from opgov.core.vocab import FindingKind, Severity
from opgov.render.github import annotation

__all__ = ["CheckReport", "ExceptionOut", "FindingOut", "RuleOut", "Summary", "make_report", "render_github",
           "render_json", "render_rules", "render_text"]


_MODELS = frozenset({"CheckReport", "ExceptionOut", "FindingOut", "RuleOut", "Summary"})


def __getattr__(name: str):
    """The pydantic models, imported on first use (pydantic costs ~50 ms of start-up)."""
    if name in _MODELS:
        from opgov.render import compat_models

        return getattr(compat_models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- the report as plain dataclasses (same fields, same order, same JSON) ---------------------


@dataclass(frozen=True)
class PlainFinding:
    operator: str
    kind: FindingKind
    rule: str
    severity: Severity
    message: str
    old_schema: str | None = None
    new_schema: str | None = None
    file: str | None = None
    line: int | None = None
    upgrader: str | None = None
    suggested_upgrader: str | None = None
    version_map_entry: str | None = None


@dataclass
class PlainSummary:
    errors: int = 0
    warnings: int = 0
    waived: int = 0
    infos: int = 0
    bc: int = 0
    fc: int = 0
    new: int = 0


@dataclass
class PlainException:
    pattern: str
    reason: str
    created_by: str
    expires_on: date


@dataclass
class PlainReport:
    findings: list[PlainFinding]
    summary: PlainSummary
    expired_exceptions: list[PlainException] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)

    def json(self) -> str:
        """The text of :class:`CheckReport`'s ``model_dump_json(indent=2)`` for the same report."""
        data = {"findings": [vars(f) for f in self.findings], "summary": vars(self.summary),
                "expired_exceptions": [{**vars(e), "expires_on": e.expires_on.isoformat()}
                                       for e in self.expired_exceptions],
                "not_compared": list(self.not_compared)}
        return json.dumps(data, indent=2, ensure_ascii=False)


_COUNT_FIELD = {"error": "errors", "warning": "warnings", "waived": "waived", "info": "infos"}


def make_report(findings: Iterable[Finding], expired: Iterable[BcException] = (), *, typed: bool = True,
                not_compared: Iterable[str] = ()):
    """Build the report from policy-applied findings (and the expired exceptions to list, and the
    new operators left out because only an autogen: line declares them): a :class:`CheckReport`,
    or with ``typed=False`` the same as a :class:`PlainReport`."""
    if typed:
        from opgov.render.compat_models import CheckReport, ExceptionOut, FindingOut, Summary
    else:
        CheckReport, ExceptionOut, Summary = PlainReport, PlainException, PlainSummary

        def FindingOut(**fields):  # noqa: N802 - the model's stand-in; validates kind and severity alike
            fields["kind"], fields["severity"] = FindingKind(fields["kind"]), Severity(fields["severity"])
            return PlainFinding(**fields)
    outs = [FindingOut(operator=f.operator, kind=f.kind, rule=f.rule, severity=f.severity, message=f.message,
                       old_schema=f.old_schema, new_schema=f.new_schema, file=f.file, line=f.line)
            for f in findings]
    counts: dict[str, int] = {}
    for f in outs:
        counts[_COUNT_FIELD[f.severity]] = counts.get(_COUNT_FIELD[f.severity], 0) + 1
        counts[f.kind] = counts.get(f.kind, 0) + 1
    return CheckReport(
        findings=outs,
        summary=Summary(**counts),
        expired_exceptions=[ExceptionOut(pattern=e.pattern, reason=e.reason, created_by=e.created_by,
                                         expires_on=e.expires_on) for e in expired],
        not_compared=list(not_compared),
    )


def render_json(report) -> str:
    if isinstance(report, PlainReport):
        return report.json()
    return report.model_dump_json(indent=2)


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


def _by_severity(findings: Sequence[FindingOut]) -> list[FindingOut]:
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
        from pydantic import TypeAdapter

        from opgov.render.compat_models import RuleOut

        outs = [RuleOut(id=r.id, kind=r.kind, purpose=r.purpose) for r in rules]
        return TypeAdapter(list[RuleOut]).dump_json(outs, indent=2).decode() + "\n"
    return "".join(f"{r.id:34} {r.kind:3} {r.purpose}\n" for r in rules)
