"""What the operator use cases ask (opgov.usecases.ops)."""

from __future__ import annotations

from pydantic import Field

from opgov.results.vocab import Category, Lifecycle
from opgov.usecases.fields import OperatorName
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
