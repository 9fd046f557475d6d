"""What the committee's use cases ask (opgov.usecases.governance): proposals and votes, lifecycle
steps, the tick, upgraders, historical decisions."""

from __future__ import annotations

from pydantic import Field

from opgov.usecases.fields import ShippedDecisions, Upload
from opgov.usecases.requests import Request


class DecisionsRequest(Request):
    # one of the two (the declaration's one_of); the service refuses neither and both
    decisions: Upload | None = Field(default=None, description="a decisions file (format in the user guide)")
    shipped: ShippedDecisions | None = Field(default=None, description="instead of a file, the name of one opgov "
                                                                       "ships")
