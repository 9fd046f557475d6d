"""The governance settings' ranges: the values each may take (beyond them the lifecycle timers and
reports cannot compute dates). Standard library only: a request's fields (opgov.usecases.fields)
take them without loading the database layer."""

from __future__ import annotations

SETTING_RANGE: dict[str, tuple[int, int]] = {
    "quorum": (1, 100),
    "deprecating_days": (1, 36500),
    "deprecated_days": (1, 36500),
}
