"""The results of the compatibility use cases: ``opgov check-bc``, ``POST /api/v1/check-bc``, the
rules registry (``check-bc --list-rules``) and the BC exceptions.

Frozen standard-library dataclasses, as every result: ``opgov check-bc`` of two files builds,
renders and prints (:func:`opgov.results.plain.to_json`) its report without loading pydantic. A
finding is core's :class:`~opgov.core.compat.Finding` with what the database adds (the upgrader
that covers a break, or the one to add); a listed exception is core's
:class:`~opgov.core.compat.BcException`. The API serves these classes as they are, so the OpenAPI
document shows their shapes.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime

from opgov.core.compat.policy import BcException, Finding
from opgov.core.vocab import FindingKind, Severity
from opgov.results.plain import about as _about

__all__ = [
    "CheckBcFinding", "CheckReport", "ExceptionAdded", "ExceptionOut", "ExceptionView", "RuleOut", "Summary",
]


@dataclass(frozen=True)
class CheckBcFinding(Finding):
    """One finding of check-bc: an operator, what kind of break (or a new operator) and how severe."""

    kind: FindingKind
    severity: Severity
    # a BC break of a non-core operator: the recorded upgrader that covers it, or the one to add
    upgrader: str | None = None
    suggested_upgrader: str | None = None
    version_map_entry: str | None = None

    def __post_init__(self) -> None:
        # kind and severity are their enums however they were given (core's Finding holds strings)
        object.__setattr__(self, "kind", FindingKind(self.kind))
        object.__setattr__(self, "severity", Severity(self.severity))


@dataclass(frozen=True)
class Summary:
    """Counts by severity (``errors`` decides the exit code) and by kind."""

    errors: int = 0
    warnings: int = 0
    waived: int = 0
    infos: int = 0
    bc: int = 0
    fc: int = 0
    new: int = 0


@dataclass(frozen=True)
class ExceptionOut(BcException):
    """A recorded BC exception (listed when it has expired)."""


_COUNT_FIELD = {"error": "errors", "warning": "warnings", "waived": "waived", "info": "infos"}


@dataclass(frozen=True)
class CheckReport:
    """``opgov check-bc --format json``: findings, a summary, and the exceptions that expired."""

    findings: list[CheckBcFinding]
    summary: Summary
    # the defaults are empty tuples, immutable as the report is (the schema shows them as []);
    # :meth:`of` gives lists, what pydantic reads back from JSON
    expired_exceptions: list[ExceptionOut] = ()  # type: ignore[assignment]
    not_compared: list[str] = field(default=(), metadata={"description": (  # type: ignore[arg-type]
        "operators of NEW that only an autogen: line declares and OLD did not hold: they have no schema text to "
        "compare, so no finding counts them among `new` (`opgov import` lists them among its added ones)")})

    @classmethod
    def of(cls, findings: Iterable[Finding], expired: Iterable[BcException] = (),
           not_compared: Iterable[str] = ()) -> "CheckReport":
        """The report of policy-applied findings (core's, or findings of a report), the expired
        exceptions to list, and the new operators left out because only an autogen: line declares them."""
        outs = [f if isinstance(f, CheckBcFinding) else
                CheckBcFinding(operator=f.operator, kind=f.kind, rule=f.rule, severity=f.severity, message=f.message,
                           old_schema=f.old_schema, new_schema=f.new_schema, file=f.file, line=f.line)
                for f in findings]
        counts: dict[str, int] = {}
        for f in outs:
            counts[_COUNT_FIELD[f.severity]] = counts.get(_COUNT_FIELD[f.severity], 0) + 1
            counts[f.kind] = counts.get(f.kind, 0) + 1
        return cls(findings=outs, summary=Summary(**counts),
                   expired_exceptions=[ExceptionOut(pattern=e.pattern, reason=e.reason, created_by=e.created_by,
                                                    expires_on=e.expires_on) for e in expired],
                   not_compared=list(not_compared))


@dataclass(frozen=True)
class RuleOut:
    """One registered rule, as ``check-bc --list-rules --format json`` lists it."""

    id: str
    kind: str  # bc, fc or new
    purpose: str


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
