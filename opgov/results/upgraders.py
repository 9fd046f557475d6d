"""The results of the upgrader use cases (:mod:`opgov.services.upgraders`): recorded upgraders
and the version bumps they came with (their 180-day timers are the lifecycle's,
:mod:`opgov.results.lifecycle`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

__all__ = ["UpgraderAdded", "UpgraderList", "UpgraderView", "VersionBump"]


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
