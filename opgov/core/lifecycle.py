"""The lifecycle policy as pure functions of state and time.

active → deprecating → deprecated → deleted, one step at a time. ``deprecating`` may become
``deprecated`` no sooner than ``deprecating_days`` (default 14) after it began; ``deprecated``
may become ``deleted`` no sooner than ``deprecated_days`` (default 180) after. ``undeprecate``
returns a deprecating or deprecated operator to active.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from opgov.core.errors import BadInput
from opgov.core.vocab import Lifecycle

STATES = tuple(Lifecycle)
NEXT = {Lifecycle.active: Lifecycle.deprecating, Lifecycle.deprecating: Lifecycle.deprecated,
        Lifecycle.deprecated: Lifecycle.deleted}
_TIMED = (Lifecycle.deprecating, Lifecycle.deprecated)


@dataclass(frozen=True)
class Periods:
    deprecating_days: int = 14
    deprecated_days: int = 180

    def wait(self, state: str) -> int:
        return {Lifecycle.deprecating: self.deprecating_days, Lifecycle.deprecated: self.deprecated_days}[state]


@dataclass(frozen=True)
class Due:
    """When the next timed step of an operator in ``state`` (entered at ``since``) may happen."""

    state: str
    to_state: str
    since: datetime
    due_at: datetime

    def is_due(self, now: datetime) -> bool:
        return now >= self.due_at

    def days_left(self, now: datetime) -> int:
        return max(0, math.ceil((self.due_at - now).total_seconds() / 86400))


def next_timed_step(state: str, since: datetime | None, periods: Periods) -> Due | None:
    """The timed step after ``state`` (deprecating → deprecated, deprecated → deleted), else None."""
    if state not in _TIMED or since is None:
        return None
    return Due(state=state, to_state=NEXT[state], since=since, due_at=since + timedelta(days=periods.wait(state)))


def check_step(state: str, to_state: str, since: datetime | None, now: datetime, periods: Periods) -> str | None:
    """Why ``state → to_state`` is not allowed now, or None when it is."""
    if to_state == Lifecycle.active:
        if state in _TIMED:
            return None
        return f"only a deprecating or deprecated operator can return to active (it is {state})"
    if NEXT.get(state) != to_state:
        if state == to_state:
            return f"it is already {state}"
        return f"it is {state}; the next step is {NEXT[state]}" if state in NEXT else f"it is {state}"
    due = next_timed_step(state, since, periods)
    if due is not None and not due.is_due(now):
        return (f"it has been {state} since {since:%Y-%m-%d %H:%M} UTC; it can become {to_state} from "
                f"{due.due_at:%Y-%m-%d %H:%M} UTC ({_days(due.days_left(now))} left)")
    return None


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def check_within(within_days: int) -> None:
    """How far ahead tick looks: 0 to 36500 days (the CLI asks before it sends one to a server)."""
    if not 0 <= within_days <= 36500:
        raise BadInput(f"--within must be between 0 and 36500 days, got {within_days}")
