"""The governance settings: what each is for, the values each may take (beyond them the lifecycle
timers and reports cannot compute dates) and a value given as text checked against them. Standard
library only: a request's fields (opgov.usecases.fields) and the CLI take them without loading the
database layer."""

from __future__ import annotations

from opgov.core.errors import BadInput

SETTING_RANGE: dict[str, tuple[int, int]] = {
    "quorum": (1, 100),
    "deprecating_days": (1, 36500),
    "deprecated_days": (1, 36500),
}
SETTING_HELP = {
    "quorum": "approvals a proposal needs to be decided",
    "deprecating_days": "days an operator stays deprecating before it may be marked deprecated",
    "deprecated_days": "days an operator stays deprecated before its entry may be deleted",
}


def setting_value(key: str, value: str | int) -> int:
    """``value`` as setting ``key``'s whole number within its range, or BadInput saying why (the CLI
    asks this before it sends a value to a server, so both say the same)."""
    if key not in SETTING_HELP:
        raise BadInput(f"unknown setting {key!r} (one of {', '.join(SETTING_HELP)})")
    try:
        number = int(value)
    except ValueError:
        raise BadInput(f"{key} must be a whole number, got {value!r}") from None
    low, high = SETTING_RANGE[key]
    if not low <= number <= high:
        raise BadInput(f"{key} must be between {low} and {high}, got {number}")
    return number
