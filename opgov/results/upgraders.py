"""The results of the upgrader use cases (:mod:`opgov.services.upgraders`): recorded upgraders,
the version bumps they came with, and their 180-day timers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

__all__ = ["UpgraderAdded", "UpgraderList", "UpgraderTimer", "UpgraderTimers", "UpgraderView", "VersionBump"]


@dataclass(frozen=True, kw_only=True)
class VersionBump:
    version: int
    bumped_on: date
    reason: str


@dataclass(frozen=True, kw_only=True)
class UpgraderView:
    name: str
    operator: str
    start: int
    end: int
    old_schema: str
    bump: VersionBump | None
    version_map_entry: str
    follows_naming: bool  # <name>_<overload>_<start>_<end>
    replaceable_from: datetime | None
    replaced_by: str | None
    replaced_at: datetime | None
    added_at: datetime
    added_by: str


@dataclass(frozen=True, kw_only=True)
class UpgraderAdded:
    outcome: str  # added | unchanged
    upgrader: UpgraderView
    replaced: str | None


@dataclass(frozen=True, kw_only=True)
class UpgraderList:
    current_version: int  # the highest recorded operator version
    upgraders: list[UpgraderView]
    bumps: list[VersionBump]


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
