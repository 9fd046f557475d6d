"""A request that does not match its schema, as one line: what the API answers with 422 and the
CLI prints before it runs or sends the request, so both say the same."""

from __future__ import annotations

import re
from typing import Any, Iterable


# request fields bounded by a column's length (opgov.db.limits refuses the same value in those words)
COLUMNS = {"name": "members.name", "member": "members.name", "pattern": "bc_exceptions.pattern",
           "label": "snapshots.label"}


def message(error: dict[str, Any], shown: dict[str, str] | None = None) -> str:
    """One schema error as the CLI says it where the CLI checks the same (a blank text, an operator
    name), else as pydantic does, after the field's path (or its name in ``shown``: a CLI option)."""
    from opgov.core.names import NAME_PATTERN
    from opgov.usecases.fields import DATE_TIME_PATTERN, NOT_BLANK, RUNTIME_PATTERN

    loc = [str(p) for p in error.get("loc", ()) if p not in ("body", "query", "path", "form")]
    field = next((p for p in reversed(loc) if not p.isdigit()), "")
    ctx, kind, value = error.get("ctx") or {}, error.get("type"), error.get("input")
    if (kind == "string_pattern_mismatch" and ctx.get("pattern") == NOT_BLANK) or (
            kind == "string_too_short" and ctx.get("min_length") == 1):
        if field in ("name", "member"):  # a member's name, as services.governance says it
            return "member name must not be empty"
        return f"the {field.replace('_', ' ')} must not be empty"
    if kind == "string_too_long" and field in COLUMNS and isinstance(value, str):  # as opgov.db.limits says it
        return (f"{field} is {len(value)} characters long; at most {ctx.get('max_length')} fit "
                f"({COLUMNS[field]}): {value[:40]!r}…")
    if kind == "literal_error" and field in ("role", "key", "category", "lifecycle"):  # as the CLI says it
        choices = ", ".join(re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
        return f"unknown {'setting' if field == 'key' else field} {value!r} (one of {choices})"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == DATE_TIME_PATTERN:  # as the CLI's option
        return f"--{field.replace('_', '-')} {value!r} is not an ISO 8601 date or time"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == RUNTIME_PATTERN:
        return f"{value!r} is not a runtime (expected NAME@VERSION, e.g. executorch@1.3.0)"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == NAME_PATTERN:
        return f"{value!r} is not an operator name (expected e.g. aten::add.Tensor)"
    if kind == "value_error" and "no database stores" in str(error.get("msg")):  # opgov.core.text's words
        name = shown.get(loc[0], field) if shown and loc else field
        return f"{name} {str(error.get('msg')).removeprefix('Value error, ')}"
    if shown and loc and loc[0] in shown:
        loc = [shown[loc[0]], *loc[1:]]
    where = ".".join(loc)
    return f"{where}: {error.get('msg')}" if where else str(error.get("msg"))


def describe(errors: Iterable[dict[str, Any]], shown: dict[str, str] | None = None) -> str:
    """Every error of a request, in one line (``shown``: names to give fields, as :func:`message`)."""
    return "; ".join(message(e, shown) for e in errors) or "invalid request"
