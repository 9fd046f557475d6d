"""The requests of the use cases (opgov.usecases), one module per area: what each asks, with the
constraints of its fields. The API takes them as its bodies, path and query parameters (or a
multipart form, for a request with files); the CLI builds them from its arguments and checks them
before it runs or sends one."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from opgov.core.text import UNSTORABLE, unstorable


def _unstorable_in(value: Any) -> str | None:
    """The first string in a field's value that no database stores (opgov.core.text), or None."""
    if isinstance(value, str):
        return value if UNSTORABLE.search(value) else None
    if isinstance(value, (list, tuple)):
        return next((bad for item in value if (bad := _unstorable_in(item)) is not None), None)
    return None


class Request(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")  # an unknown key is refused

    @field_validator("*", mode="after")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        """Every text field holds text every database stores: the same refusal on SQLite and
        PostgreSQL, before any service runs (the API refuses it earlier still: opgov.api.inputs)."""
        bad = _unstorable_in(value)
        if bad is not None:
            raise ValueError(f"{unstorable(bad)}: {bad[:40]!r}")
        return value
