"""The core ATen policy: give each raw finding a severity (error, warning, waived, info).

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from fnmatch import fnmatchcase

from opgov.core.compat.checker import RawFinding
from opgov.core.vocab import FindingKind, Severity

__all__ = ["BcException", "Finding", "apply_policy", "expired_exceptions"]


@dataclass(frozen=True, slots=True)
class BcException:
    """A recorded exception letting BC breaks of non-core operators through until it expires.

    ``pattern`` is an fnmatch glob over canonical names (``aten::_foreach_*``); a pattern without
    ``::`` matches the name without its namespace (``_foreach_*``). The exception applies through
    ``expires_on`` and is expired from the day after.
    """

    pattern: str
    reason: str
    created_by: str
    expires_on: date

    def covers(self, operator: str) -> bool:
        if "::" not in self.pattern:
            operator = operator.partition("::")[2] or operator
        return fnmatchcase(operator, self.pattern)

    def expired(self, today: date) -> bool:
        return today > self.expires_on


@dataclass(frozen=True, slots=True)
class Finding:
    """A finding with the policy applied. ``severity``: error, warning, waived or info."""

    operator: str
    kind: str
    rule: str
    severity: str
    message: str
    old_schema: str | None = None
    new_schema: str | None = None
    file: str | None = None
    line: int | None = None





def expired_exceptions(exceptions: Iterable[BcException], today: date) -> list[BcException]:
    """The exceptions that no longer apply (their expiry date has passed)."""
    return [e for e in exceptions if e.expired(today)]


def iter_policy(
    raw: Iterable[RawFinding],
    *,
    core: Callable[[str], bool] | Collection[str],
    exceptions: Sequence[BcException] = (),
    completed_deletions: Collection[str] = frozenset(),
    today: date,
    locate: Callable[[RawFinding], tuple[str | None, int | None]] | None = None,
) -> Iterator[Finding]:
    """Give each raw finding a severity under the core ATen policy.

    * BC break of a core operator (``core`` is judged on the old side): ``error``, never waived;
      the message says to add a new native function instead.
    * Removal of an operator in ``completed_deletions`` (it finished its deprecation lifecycle):
      ``info``.
    * BC break of another operator: ``error``, or ``waived`` when an unexpired exception covers
      it (the message names the exception). Expired exceptions do not apply; an error they would
      have covered says so. An error's message says how to let such a change through.
    * FC break: ``warning``. New operator: ``info``.

    ``locate`` gives each finding its file and line (e.g. the entry in the new yaml). One at a
    time, in the order of ``raw`` (:func:`apply_policy`: all of them).
    """
    is_core = core if callable(core) else core.__contains__
    active = [e for e in exceptions if not e.expired(today)]
    expired = [e for e in exceptions if e.expired(today)]
    for f in raw:
        message = f.message
        if f.kind == FindingKind.new:
            severity = Severity.info
        elif f.kind == FindingKind.fc:
            severity = Severity.warning
        elif f.rule == "operator-removed" and f.operator in completed_deletions:
            severity = Severity.info
            message += " The removal completes the operator's deprecation lifecycle."
        elif is_core(f.operator):
            severity = Severity.error
            message += (f" {f.operator} is a core ATen operator: BC-breaking changes to it are never "
                        "waived; add a new native function (a new operator or overload) instead.")
        else:
            cover = next((e for e in active if e.covers(f.operator)), None)
            if cover is not None:
                severity = Severity.waived
                message += (f" Waived by exception {cover.pattern!r} until {cover.expires_on.isoformat()} "
                            f"({cover.created_by}: {cover.reason}).")
            else:
                severity = Severity.error
                lapsed = next((e for e in expired if e.covers(f.operator)), None)
                if lapsed is not None:
                    message += (f" Exception {lapsed.pattern!r} expired on "
                                f"{lapsed.expires_on.isoformat()} and no longer applies.")
                if f.rule == "operator-removed":
                    message += (" Remove operators through the deprecation lifecycle (opgov deprecate), "
                                "or record an exception (opgov exceptions add).")
                else:
                    message += (f" {f.operator} is not core: if the break is intended, record an exception "
                                "(opgov exceptions add).")
        file, line = locate(f) if locate is not None else (None, None)
        yield Finding(f.operator, f.kind, f.rule, severity, message, f.old_schema, f.new_schema, file, line)


def apply_policy(raw: Iterable[RawFinding], **options) -> list[Finding]:
    """Every raw finding with its severity (:func:`iter_policy`), as a list."""
    return list(iter_policy(raw, **options))
