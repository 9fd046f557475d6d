"""What the admin use cases ask (opgov.usecases.admin): a page of the event log."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opgov.results.admin import EVENTS_PAGE_MAX
from opgov.usecases.fields import DATE_TIME_PATTERN, OperatorName
from opgov.usecases.requests import Request


class EventsQuery(Request):
    operator: OperatorName | None = Field(default=None, description="only events about this operator")
    action: str | None = Field(default=None, description="an action, or a prefix ending in '.': proposal.")
    since: Annotated[str, Field(pattern=DATE_TIME_PATTERN, max_length=40)] | None = Field(
        default=None, description="ISO 8601 date or time")
    limit: Annotated[int, Field(ge=1, le=EVENTS_PAGE_MAX)] = Field(default=100, description="the newest this many")
    before: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = Field(default=None,
                                                                    description="event id: only older events")
