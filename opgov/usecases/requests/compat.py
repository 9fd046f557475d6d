"""What the compatibility use cases ask (opgov.usecases.compat): two native_functions.yaml, each an
upload or the label of a snapshot the server holds, and the BC exceptions."""

from __future__ import annotations

from datetime import date
from typing import ClassVar

from pydantic import Field

from opgov.usecases.fields import NOT_BLANK, Text, Upload
from opgov.usecases.requests import Request

# form fields (the request is a multipart form), bounded as the hand-written route bounded them
_LABEL = {"default": None, "min_length": 1, "max_length": 200, "pattern": NOT_BLANK}


class CheckBcSides(Request):
    # exactly one field of each group is given (the OpenAPI document says so: x-one-of)
    ONE_OF: ClassVar[tuple[tuple[str, ...], ...]] = (("old", "old_snapshot"), ("new", "new_snapshot"))
    old: Upload | None = Field(default=None, description="the old native_functions.yaml (or old_snapshot)")
    new: Upload | None = Field(default=None, description="the new native_functions.yaml (or new_snapshot)")
    old_snapshot: str | None = Field(**_LABEL, description="the label of a snapshot the server holds, as OLD")
    new_snapshot: str | None = Field(**_LABEL, description="the label of a snapshot the server holds, as NEW")


class ExceptionRequest(Request):
    pattern: Text = Field(max_length=300, description="operator glob, e.g. aten::_foreach_*")
    reason: Text
    expires: date = Field(description="the last day it applies (a future date)")


class ExceptionQuery(Request):
    # a query parameter: a plain bool reads "true" and "1" as the hand-written route did
    all: bool = Field(default=False, description="removed ones too")


class ExceptionId(Request):
    # any whole number: one opgov never gave is an unknown exception (404), as the CLI says it
    exception_id: int = Field(description="an exception's id (`opgov exceptions list`)")
