"""The JSON of a result, with the standard library: every result is a frozen dataclass.

The CLI's ``--json`` (and ``--format json``), the weekly report's JSON and the pages' data are
:func:`to_json` of a result (or a list of them), so no command loads pydantic to print one. The API
serves the same dataclasses through FastAPI, whose pydantic serializer writes the same values: a
field's JSON name is its ``alias`` (``metadata={"alias": "from"}``) or its name, in the order the
class declares its fields; an enum is its value, a date ``YYYY-MM-DD``, a UTC time ends in ``Z``
(tests/services/test_service_results.py checks that the two agree).
"""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime, timedelta
from typing import Any

__all__ = ["ALIASED", "about", "jsonable", "to_json"]

ALIASED = {"serialize_by_alias": True}
"""``__pydantic_config__`` of a result with an aliased field: the API writes the alias too (a plain
dict: pydantic's ``ConfigDict`` is a TypedDict)."""


def about(description: str, **more: Any) -> dict[str, Any]:
    """A field's ``metadata``: its description in the API's schema (and its ``alias``, if any)."""
    return {"description": description, **more}


def jsonable(value: Any) -> Any:
    """``value`` as JSON values, as pydantic serializes it: a dataclass as an object of its fields
    in their order (each under its alias, if it has one), an enum as its value, a tuple as an array,
    a time in ISO 8601 (``Z`` for UTC)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value  # a StrEnum is its value, an IntEnum its number
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.metadata.get("alias", f.name): jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if value.utcoffset() == timedelta(0) else text
    if isinstance(value, date):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} has no JSON form in a result")


def to_json(value: Any, indent: int | None = 2) -> str:
    """The JSON text of a result (or a list of them): indented by ``indent``, or compact with
    ``indent=None``, non-ASCII characters as they are. A float is written as Python writes it (the
    same text as pydantic's from 1e-4 up, the range of the results' shares)."""
    separators = None if indent is not None else (",", ":")
    return json.dumps(jsonable(value), indent=indent, separators=separators, ensure_ascii=False)
