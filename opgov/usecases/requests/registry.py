"""What the registry's use cases ask (opgov.usecases.registry): an import, operators, the event log."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opgov.results.models import EVENTS_PAGE_MAX, Category, Lifecycle
from opgov.usecases.fields import DATE_TIME_PATTERN, OperatorName
from opgov.usecases.requests import Request


class OperatorsQuery(Request):
    category: Category | None = Field(default=None, description="core, decomposable or custom")
    lifecycle: Lifecycle | None = Field(
        default=None, description="active, deprecating, deprecated or deleted")
    q: str | None = Field(default=None, description="a part of the name (case-insensitive)")
    tag: str | None = Field(default=None, description="only operators carrying this yaml tag")
    all: bool = Field(default=False, description="every operator ever seen, not just those present")


class OperatorRef(Request):
    name: OperatorName


class EventsQuery(Request):
    operator: OperatorName | None = Field(default=None, description="only events about this operator")
    action: str | None = Field(default=None, description="an action, or a prefix ending in '.': proposal.")
    since: Annotated[str, Field(pattern=DATE_TIME_PATTERN, max_length=40)] | None = Field(
        default=None, description="ISO 8601 date or time")
    limit: Annotated[int, Field(ge=1, le=EVENTS_PAGE_MAX)] = Field(default=100, description="the newest this many")
    before: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = Field(default=None,
                                                                    description="event id: only older events")
