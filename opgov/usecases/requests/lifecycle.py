"""What the lifecycle use cases ask (opgov.usecases.lifecycle): a step, the tick, the upgraders' timers."""

from __future__ import annotations

from pydantic import Field

from opgov.usecases.fields import Flag, OperatorName, Text, WithinDays
from opgov.usecases.requests import Request


class DeprecateRequest(Request):
    name: OperatorName = Field(description="an operator, e.g. aten::add.Tensor, URL-encoded")
    reason: Text
    replacement: OperatorName | None = Field(default=None, description="the operator to use instead (required for "
                                                                       "core)")


class StepRequest(Request):
    name: OperatorName = Field(description="an operator, e.g. aten::add.Tensor, URL-encoded")
    reason: Text | None = None


class UndeprecateRequest(Request):
    name: OperatorName = Field(description="an operator, e.g. aten::add.Tensor, URL-encoded")
    reason: Text


class TickRequest(Request):
    apply: Flag = Field(default=True, description="perform the due transitions (bots and maintainers)")
    within_days: WithinDays = Field(default=0, description="also list those coming due within this many days")

    @property
    def reads_only(self) -> bool:
        """Without ``apply`` a tick only reads (in-process: a read transaction, which honours ``--now``)."""
        return not self.apply


class TimersQuery(Request):
    within_days: WithinDays = Field(default=0, description="also list those that may be replaced within this many "
                                                           "days")
