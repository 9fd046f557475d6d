"""What the check use cases ask (opgov.usecases.checks): BC exceptions, the sync bot's files, the weekly
report."""

from __future__ import annotations

from datetime import date
from typing import ClassVar, Literal

from pydantic import Field

from opgov.usecases.fields import DATE_TIME_PATTERN, Text, Upload
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
    # the texts a GET also answers besides the JSON, as ``format`` names them
    FORMATS: ClassVar[dict[str, str]] = {"md": "text/markdown", "html": "text/html"}
    as_of: str | None = Field(default=None, pattern=DATE_TIME_PATTERN, max_length=40,
                              description="end of the period (default now): ISO 8601 date or time")
    since: str | None = Field(default=None, pattern=DATE_TIME_PATTERN, max_length=40,
                              description="start (default 7 days earlier): ISO 8601 date or time")
    format: Literal["json", "md", "html"] = Field(default="json", description="json: the report; md: Markdown to "
                                                  "post; html: one page")


# form fields (the request is a multipart form): a plain bool reads "true" as the hand-written route did
_BESIDE = Field(default=False, description="tags is the tags.yaml found beside native_functions.yaml, not one the "
                                           "user named (a check then reads only its `- tag:` lines, as locally)")


class SyncFiles(Request):
    native_functions: Upload = Field(description="native_functions.yaml")
    tags: Upload | None = Field(default=None, description="tags.yaml: the one to check the tags against and declare "
                                                           "new ones in")
    tags_beside: bool = _BESIDE


class SyncCheck(SyncFiles):
    mode: Literal["check", "diff"] = Field(default="check", description="check: what is out of sync; diff: also the "
                                                                         "unified diff")


class SyncWrite(SyncFiles):
    dry_run: bool = Field(default=False, description="answer as for a write, but log nothing: the client cannot "
                                                     "write its files now (a lock left behind)")
    installed: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$",
                                  description="the SHA-256 a sync stopped between installing native_functions and "
                                              "logging it recorded (its intent file): if the file holds it and the "
                                              "log does not, the write is logged now, as found")
