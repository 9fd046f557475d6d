"""What ``opgov import`` asks: a native_functions.yaml (and its tags.yaml) to record as a snapshot."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from opgov.usecases.fields import NOT_BLANK, Upload
from opgov.usecases.requests import Request


class ImportRequest(Request):
    native_functions: Upload = Field(description="native_functions.yaml")
    label: Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)] = Field(description="e.g. 2.13.0")
    tags: Upload | None = Field(default=None, description="tags.yaml: every tag used must be declared")
    historical: bool = Field(default=False, description="an older release (by its label as a version), stored in "
                                                        "its place in history")
