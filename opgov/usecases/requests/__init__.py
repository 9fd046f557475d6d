"""The requests of the use cases (opgov.usecases), one module per area: what each asks, with the
constraints of its fields. The API takes them as its bodies, path and query parameters (or a
multipart form, for a request with files); the CLI builds them from its arguments and checks them
before it runs or sends one."""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Strict, field_validator

from opgov.core.text import UNSTORABLE, unstorable


def _unstorable_in(value: Any) -> str | None:
    """The first string in a field's value that no database stores (opgov.core.text), or None."""
    if isinstance(value, str):
        return value if UNSTORABLE.search(value) else None
    if isinstance(value, (list, tuple)):
        return next((bad for item in value if (bad := _unstorable_in(item)) is not None), None)
    return None


_KINDS = (int, bool)


def _strict_items(annotation: Any) -> Any:
    """``list[int]`` → ``list[Annotated[int, Strict()]]`` (likewise ``bool`` and optional lists);
    None for an annotation that holds no list of whole numbers or flags."""
    origin = typing.get_origin(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation) or (Any,)
        return list[Annotated[item, _mark(_bare(item))]] if _bare(item) in _KINDS else None
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(annotation)
        strict = [_strict_items(arg) for arg in args]
        if any(s is not None for s in strict):
            return typing.Union[tuple(s if s is not None else a for s, a in zip(strict, args))]  # noqa: UP007
    return None


def _mark(kind: Any) -> Any:
    """A flag is a JSON boolean (Strict); a whole number is a JSON integer, not ``true``, ``"1"`` nor
    ``11.0`` (JSON Schema would call 11.0 an integer; opgov refuses it, 422 naming the field: an id
    or a count is written as one)."""
    from pydantic import BeforeValidator

    from opgov.usecases.fields import _number

    return Strict() if kind is bool else BeforeValidator(_number)


def _bare(annotation: Any) -> Any:
    """``Annotated[int, Field(ge=1)]`` → ``int``."""
    return typing.get_args(annotation)[0] if typing.get_origin(annotation) is typing.Annotated else annotation


def _holds_kind(annotation: Any) -> bool:
    """Whether a field is a whole number or a flag, optional or not (``Annotated[int, ...] | None`` too)."""
    if annotation in _KINDS:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [_bare(arg) for arg in typing.get_args(annotation) if arg is not type(None)]
        return bool(args) and all(arg in _KINDS for arg in args)
    return False


class Request(BaseModel):
    """A use case's request. Its whole numbers and flags are strict, in every request model: an id is a
    JSON integer (not ``true``, ``11.0`` or ``"11"``), a flag a JSON boolean (not ``1`` or ``"yes"``).
    The fields carry the strictness (a ``Strict`` mark), so a JSON body built from them keeps it
    (opgov.api.usecases), and a path, query or form value, which is text, leaves it out
    (opgov.usecases.fields.textual). The OpenAPI document says ``integer`` and ``boolean`` as before."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True, extra="forbid")  # an unknown key is refused

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        changed = False
        for field in cls.model_fields.values():
            if _holds_kind(field.annotation):
                kinds = {_bare(a) for a in typing.get_args(field.annotation) if a is not type(None)} or {field.annotation}
                mark = _mark(bool if kinds == {bool} else int)
                if not any(isinstance(meta, Strict) or getattr(meta, "func", None) is getattr(mark, "func", 0)
                           for meta in field.metadata):
                    field.metadata.append(mark)
                    changed = True
            elif (items := _strict_items(field.annotation)) is not None:
                field.annotation = items
                changed = True
        if changed:
            cls.model_rebuild(force=True)

    @field_validator("*", mode="after")
    @classmethod
    def _storable(cls, value: Any) -> Any:
        """Every text field holds text every database stores: the same refusal on SQLite and
        PostgreSQL, before any service runs (the API refuses it earlier still: opgov.api.inputs)."""
        bad = _unstorable_in(value)
        if bad is not None:
            raise ValueError(f"{unstorable(bad)}: {bad[:40]!r}")
        return value
