"""The request fields of the hand-written routes: those of the use cases' requests
(opgov.usecases.fields, where the constraints are explained), and the same as query and path
parameters."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query

from opgov.core.names import NAME_PATTERN

from opgov.usecases.fields import (DATE_TIME_PATTERN, NOT_BLANK, RUNTIME_PATTERN, Days, Flag,  # noqa: F401
                                   MemberName, OperatorName, Role, SettingKey, SettingValue, Text, WithinDays)

# the same, as query and path parameters
OperatorPath = Annotated[str, Path(pattern=NAME_PATTERN, max_length=300,
                                   description="an operator, e.g. aten::add.Tensor, URL-encoded")]
OperatorQuery = Annotated[str | None, Query(pattern=NAME_PATTERN, max_length=300,
                                            description="an operator, e.g. aten::add.Tensor")]
# any integer: one opgov did not give is unknown (404), as the CLI says it
IdPath = Annotated[int, Path(description="an id opgov gave")]
