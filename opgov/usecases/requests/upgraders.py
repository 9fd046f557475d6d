"""What the upgrader use cases ask (opgov.usecases.upgraders)."""

from __future__ import annotations

from datetime import date

from pydantic import Field

from opgov.usecases.fields import OperatorName, Text
from opgov.usecases.requests import Request


class UpgraderRequest(Request):
    operator: OperatorName = Field(description="e.g. aten::linspace")
    versions: str = Field(pattern=r"^\d{1,9}-\d{1,9}$", description="START-END: the operator versions it applies to, "
                                                                    "e.g. 0-7")
    old_schema: str = Field(description="the operator's schema at those versions")
    bumped_on: date | None = Field(default=None, description="when the version was bumped to END+1 (unless recorded)")
    reason: Text | None = Field(default=None, description="why it was bumped (unless recorded)")
    name: str | None = Field(default=None, description="default <name>_<overload>_<start>_<end>")
    replaces: str | None = Field(default=None, description="take over from this upgrader (180 days after its bump)")


class UpgraderName(Request):
    name: str = Field(description="an upgrader, <name>_<overload>_<start>_<end>")
