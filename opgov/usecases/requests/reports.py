"""What the report use cases ask (opgov.usecases.reports): the weekly report's period and format."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from opgov.usecases.fields import DATE_TIME_PATTERN
from opgov.usecases.requests import Request


class WeeklyQuery(Request):
    # the texts a GET also answers besides the JSON, as ``format`` names them
    FORMATS: ClassVar[dict[str, str]] = {"md": "text/markdown", "html": "text/html"}
    as_of: str | None = Field(default=None, pattern=DATE_TIME_PATTERN, max_length=40,
                              description="end of the period (default now): ISO 8601 date or time")
    since: str | None = Field(default=None, pattern=DATE_TIME_PATTERN, max_length=40,
                              description="start (default 7 days earlier): ISO 8601 date or time")
    format: Literal["json", "md", "html"] = Field(default="json", description="json: the report; md: Markdown to "
                                                  "post; html: one page")
