"""What the closure proof asks (opgov.usecases.closure)."""

from __future__ import annotations

from pydantic import Field

from opgov.usecases.requests import Request


class ClosureQuery(Request):
    release: str | None = Field(default=None, max_length=200,
                                description="a torch release whose facts opgov holds (2.13.0 or 2.13.0+cpu); "
                                            "default the latest imported")
    snapshot: str | None = Field(default=None, max_length=200,
                                 description="the snapshot whose core tags are the core set; default the one "
                                             "labelled as the release, else the latest")
    against: str | None = Field(default=None, max_length=200,
                                description="compare with this closure: another torch release held (against its "
                                            "snapshot), else a snapshot's label (this table against its core tags)")
