"""The results of the lifecycle use cases (:mod:`opgov.services.lifecycle`): a step, the tick, and the
upgraders' 180-day timers it reports beside them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

from opgov.results.plain import about as _about, ALIASED
from opgov.results.vocab import Lifecycle


@dataclass(frozen=True, kw_only=True)
class NextStep:
    to: Lifecycle
    possible_from: datetime


@dataclass(frozen=True, kw_only=True)
class Reference:
    """Something that still refers to an operator a lifecycle step moved, and stays behind it."""

    operator: str = field(metadata=_about("the operator that refers to it (or whose rule does)"))
    relation: Literal["backward", "forward-mode derivative", "structured_delegate", "autogen",
                      "decomposition rule"] = field(metadata=_about(
        "backward: torchgen's name for its derivative (gelu_backward); structured_delegate: an entry whose kernel is "
        "the moved out= variant; autogen: declared by a moved entry's autogen:; decomposition rule: a rule that "
        "decomposes into it"))
    of: str = field(metadata=_about("the moved operator it refers to"))
    lifecycle: Lifecycle | None = field(metadata=_about(
        "its own lifecycle state (null: a rule of an unknown operator)"))


@dataclass(frozen=True, kw_only=True)
class LifecycleStepResult:
    """A lifecycle step taken (deprecate, mark-deprecated, delete, undeprecate)."""

    __pydantic_config__ = ALIASED

    operator: str
    from_state: Lifecycle = field(metadata={"alias": "from"})
    to_state: Lifecycle = field(metadata={"alias": "to"})
    at: datetime
    replacement: str | None
    next: NextStep | None = field(metadata=_about("the next timed step and when it becomes possible"))
    family: list[str] = field(default_factory=list, metadata=_about(
        "the other members of its torchgen family (in-place, out=, autogen) that moved with it"))
    left_behind: list[Reference] = field(default_factory=list, metadata=_about(
        "what still refers to it in the same native_functions.yaml (its backward, an entry's structured_delegate, an "
        "autogen: declaration) or in a decomposition rule, and did not move with it: deprecate or change those too, "
        "so nothing is left dangling"))


@dataclass(frozen=True, kw_only=True)
class TickItem:
    """A lifecycle transition due now or soon."""

    __pydantic_config__ = ALIASED

    operator: str
    from_state: Lifecycle = field(metadata={"alias": "from"})
    to_state: Lifecycle = field(metadata={"alias": "to"})
    since: datetime
    due_at: datetime
    days_left: int


@dataclass(frozen=True, kw_only=True)
class TickResult:
    """``opgov tick``: due transitions, those coming within the horizon, and those applied."""

    now: datetime
    due: list[TickItem]
    within: list[TickItem]
    applied: list[TickItem]


@dataclass(frozen=True, kw_only=True)
class UpgraderTimer:
    name: str
    operator: str
    bump: int
    bumped_on: date
    replaceable_from: datetime
    days_left: int


@dataclass(frozen=True, kw_only=True)
class UpgraderTimers:
    due: list[UpgraderTimer]  # may be replaced now
    within: list[UpgraderTimer]  # may be replaced within the horizon
