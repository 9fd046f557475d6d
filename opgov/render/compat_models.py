"""The pydantic models of a compatibility check's JSON (the service's response schema).

Loaded only where a typed report is needed (the service, the database-backed ``check-bc`` that
judges findings against upgraders): :mod:`opgov.render.compat` builds the same report as plain
dataclasses on the CLI's file-to-file path, whose JSON is the same text.
"""

from datetime import date

from pydantic import BaseModel, Field, ConfigDict

from opgov.core.vocab import FindingKind, Severity

# The models keep the module they were defined in before they moved here: the service's OpenAPI
# document names a schema by module when two share a name (opgov.render.decomps has a FindingOut
# too), e.g. ``opgov__render__compat__FindingOut``, and that name is part of the API. (No
# ``from __future__ import annotations`` here: pydantic would look the annotations up in that
# module, which holds the models only through its lazy ``__getattr__``.)
_MODULE = "opgov.render.compat"

__all__ = ["CheckReport", "ExceptionOut", "FindingOut", "RuleOut", "Summary"]


class FindingOut(BaseModel):
    """One finding: an operator, what kind of break (or a new operator) and how severe."""

    __module__ = _MODULE

    model_config = ConfigDict(frozen=True)

    operator: str
    kind: FindingKind
    rule: str
    severity: Severity
    message: str
    old_schema: str | None = None
    new_schema: str | None = None
    file: str | None = None
    line: int | None = None
    # a BC break of a non-core operator: the recorded upgrader that covers it, or the one to add
    upgrader: str | None = None
    suggested_upgrader: str | None = None
    version_map_entry: str | None = None


class Summary(BaseModel):
    """Counts by severity (``errors`` decides the exit code) and by kind."""

    __module__ = _MODULE

    errors: int = 0
    warnings: int = 0
    waived: int = 0
    infos: int = 0
    bc: int = 0
    fc: int = 0
    new: int = 0


class ExceptionOut(BaseModel):
    """A recorded BC exception (listed when it has expired)."""

    __module__ = _MODULE

    pattern: str
    reason: str
    created_by: str
    expires_on: date


class CheckReport(BaseModel):
    """``opgov check-bc --format json``: findings, a summary, and the exceptions that expired."""

    __module__ = _MODULE

    findings: list[FindingOut]
    summary: Summary
    expired_exceptions: list[ExceptionOut] = []
    not_compared: list[str] = Field(default=[], description=(
        "operators of NEW that only an autogen: line declares and OLD did not hold: they have no schema text to "
        "compare, so no finding counts them among `new` (`opgov import` lists them among its added ones)"))


class RuleOut(BaseModel):
    """One registered rule, as ``check-bc --list-rules --format json`` lists it."""

    __module__ = _MODULE

    id: str
    kind: str  # bc, fc or new
    purpose: str
