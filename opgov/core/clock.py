"""Time enters opgov through a clock object; nothing else calls the system clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc)


@dataclass(frozen=True)
class FixedClock:
    at: datetime

    def now(self) -> datetime:
        return self.at


def parse_time(text: str, *, what: str = "time") -> datetime:
    """Parse an ISO 8601 date or datetime; naive values are taken as UTC; result is UTC."""
    from opgov.core.errors import BadInput

    raw = text.strip()
    if raw.endswith("Z"):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        value = value.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise BadInput(f"{what} {text!r} is not an ISO 8601 date or time") from None
    # the timers add up to 100 years to a time, and the reports look back from it: keep clear of
    # the calendar's ends (years 1 and 9999)
    if not 1900 <= value.year <= 2999:
        raise BadInput(f"{what} {text!r} is outside the years opgov keeps time in (1900 to 2999)")
    return value

