"""The fields of the use cases' requests, with the constraints the server really applies.

The OpenAPI document is the contract (opgov.api.contract): a value the document calls valid is
one the server accepts, so each field says what opgov checks — an operator name's spelling, a
runtime's ``NAME@VERSION``, text that is not blank, a member name that fits its column, a whole
number that is a number (not ``true``). What no schema can say (the content of an uploaded file,
a schema string that must parse, a date that must be in the future) is refused with 400. The CLI
checks a request against the same fields before it runs it or sends it (opgov.usecases.invalid).
"""

from __future__ import annotations

import re
import types
import typing
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, Strict, WithJsonSchema

from opgov.core.names import NAME_PATTERN
from opgov.core.runtimes import RUNTIME_ID_PATTERN
from opgov.core.settings import SETTING_RANGE
from opgov.core.vocab import Role as _Role
from opgov.formats.files import Content
from opgov.resources import SHIPPED_DECISIONS

OperatorName = Annotated[str, Field(pattern=NAME_PATTERN, max_length=300,
                                    description="an operator, e.g. aten::add.Tensor (add.Tensor and aten.add.Tensor "
                                                "are read the same)")]
# what opgov.core.runtimes.parse_runtime_id accepts, ASCII only: a name the document allows is one
# the server reads (a JSON Schema's \w or a negated class would let other letters through)
RUNTIME_PATTERN = RUNTIME_ID_PATTERN
Runtime = Annotated[str, Field(pattern=RUNTIME_PATTERN, max_length=200,
                               description="a registered runtime NAME@VERSION, e.g. executorch@1.3.0")]
NOT_BLANK = r"[^\s\x85]"
Text = Annotated[str, Field(min_length=1, pattern=NOT_BLANK, description="text, not blank")]
# a member's name as the log records it: not blank, at most the column's 200 characters once stripped
MemberName = Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)]
Role = Literal[tuple(_Role)]  # type: ignore[valid-type]


def _number(value: object) -> object:
    """A JSON integer as written: not ``true``, not ``"1"``, and not ``11.0`` nor ``1e1`` (a number
    with a fraction or an exponent is refused even when it is whole: an id is never read from one)."""
    if isinstance(value, (bool, str, float)):
        raise ValueError("Input should be a whole number (a JSON integer, without a fraction or an exponent)")
    return value


_DIGITS = re.compile(r"-?[0-9]{1,30}")


def _number_text(value: object) -> object:
    """A whole number given as text (a path, query or form value): decimal digits, an optional
    minus, nothing else (not ``11.0``, ``1_000``, `` 11`` nor ``+11``)."""
    if isinstance(value, str) and not _DIGITS.fullmatch(value):
        raise ValueError("Input should be an integer written in decimal digits")
    return value


def _flag_text(value: object) -> object:
    """A flag given as text: ``true`` or ``false`` (not ``1``, ``yes`` nor ``on``)."""
    if isinstance(value, str) and value.lower() not in ("true", "false"):
        raise ValueError("Input should be true or false")
    return value


def textual(metadata: list[Any]) -> list[Any]:
    """A field's checks for a value given as text (a path, query or form value): a JSON value's kind
    (``"1"`` is not a number, ``"true"`` not a flag) would refuse every such value, so it is checked as
    text instead: a number in decimal digits, a flag ``true`` or ``false``."""
    out: list[Any] = []
    for m in metadata:
        if isinstance(m, Strict):
            out.append(BeforeValidator(_flag_text))
        elif isinstance(m, BeforeValidator) and m.func is _number:
            out.append(BeforeValidator(_number_text))
        else:
            out.append(m)
    return out


# (bounds before the validator: pydantic reads a Field after a BeforeValidator as no constraint)
Days = Annotated[int, Field(ge=1, le=36500), BeforeValidator(_number)]  # up to a century, as the timers
WithinDays = Annotated[int, Field(ge=0, le=36500), BeforeValidator(_number)]
Flag = Annotated[bool, Strict()]
# ISO 8601, in the years opgov keeps time in (1900 to 2999: opgov.core.clock)
_DATE = r"(19|2[0-9])[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
DATE_TIME_PATTERN = (rf"^{_DATE}"
                     r"([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])?)?$")

SettingKey = Literal[tuple(SETTING_RANGE)]  # type: ignore[valid-type]
# a setting's value: each setting has its own range within these, which the server checks (400)
SettingValue = Annotated[int, Field(ge=min(low for low, _ in SETTING_RANGE.values()),
                                    le=max(high for _, high in SETTING_RANGE.values()),
                                    description="a whole number within the setting's range: " + ", ".join(
                                        f"{key} {low} to {high}" for key, (low, high) in SETTING_RANGE.items())),
                        BeforeValidator(_number)]  # not true (a boolean is not a number)

# the name of a decisions file opgov ships (opgov.resources), which a server reads from its own install
ShippedDecisions = Literal[SHIPPED_DECISIONS]  # type: ignore[valid-type]

# a file the request carries: a part of a multipart form over HTTP, read by the CLI in-process; the
# service takes it as opgov.formats.files.Content (its bytes and the name the client gave it)
Upload = Annotated[Content, WithJsonSchema({"type": "string", "format": "binary"})]


def upload_kind(annotation: Any) -> str | None:
    """"one" for an ``Upload`` field (optional or not), "many" for a list of them, else None."""
    if typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if annotation is Content:
        return "one"
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds = {upload_kind(arg) for arg in typing.get_args(annotation) if arg is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    if origin is list:
        return "many" if upload_kind(typing.get_args(annotation)[0]) == "one" else None
    return None


class OnThisMachine:
    """A field only the CLI in-process can fill: it names something on the user's machine (a
    corpus folder) that a server cannot read. The route does not take it (the service gets its
    default); with ``--server`` the client refuses a request that sets it, in ``refusal``'s words."""

    def __init__(self, refusal: str) -> None:
        self.refusal = refusal


class HttpBound:
    """Bounds the server applies to a field and the CLI in-process does not (a request is not the
    place for an hour of work; a local run may take it): the route's schema says them, so a value
    past them is refused with 422 over HTTP alone."""

    def __init__(self, **bounds: float) -> None:
        for name, value in bounds.items():
            setattr(self, name, value)
        self.bounds = bounds


def marker(field: Any, kind: type) -> Any:
    """The ``kind`` marker among a request field's metadata (pydantic FieldInfo), or None."""
    return next((meta for meta in field.metadata if isinstance(meta, kind)), None)


# --models: a corpus JSON, a .pt2 archive or a folder of them, read in-process only
Corpus = Annotated[str | None, OnThisMachine("--models with --server: a corpus on this machine cannot be read by "
                                             "the server; run it with --db")]
