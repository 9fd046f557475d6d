"""What the check use cases ask (opgov.usecases.checks): BC exceptions, the weekly report."""

from __future__ import annotations

from datetime import date

from pydantic import Field

from opgov.usecases.fields import DATE_TIME_PATTERN, Text
from opgov.usecases.requests import Request


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


class WeeklyQuery(Request):
    as_of: str | None = Field(default=None, pattern=DATE_TIME_PATTERN, max_length=40,
                              description="end of the period (default now): ISO 8601 date or time")
    since: str | None = Field(default=None, pattern=DATE_TIME_PATTERN, max_length=40,
                              description="start (default 7 days earlier): ISO 8601 date or time")

