"""The JSON of the results declared as frozen standard-library dataclasses, without pydantic.

The results of the commands that must stay fast (``opgov check-bc`` of two files, ``opgov
check-pr``, ``opgov import``) are dataclasses, not pydantic models, so that such a command never loads
pydantic (about 0.15 s with its first schema). The API serves the same dataclasses (FastAPI takes
them as response models) and the CLI parses them back with pydantic's ``TypeAdapter``; their
``--json`` is :func:`to_json`, whose text is that of ``TypeAdapter(type).dump_json(value,
indent=2)`` (tests/core/test_compat.py and test_prgate.py check that the two agree).
"""

from __future__ import annotations

import dataclasses
import json
from datetime import date, datetime
from typing import Any

__all__ = ["jsonable", "to_json"]


def jsonable(value: Any) -> Any:
    """``value`` as JSON values, as pydantic serializes it: a dataclass as an object of its fields
    in their order, an enum as its value, a date as ``YYYY-MM-DD``, a tuple as an array."""
    if value is None or isinstance(value, (str, bool, int)):
        return value  # a StrEnum is its value, an IntEnum its number
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    # a float or a datetime prints differently here and in pydantic: such results are pydantic models
    raise TypeError(f"{type(value).__name__} has no JSON form here (declare the result as a pydantic model)")


def to_json(value: Any) -> str:
    """The JSON text of a dataclass result (or a list of them), indented by two, as pydantic writes it."""
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False)
