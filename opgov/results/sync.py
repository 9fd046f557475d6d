"""The sync bot's result: ``opgov sync-yaml`` and ``POST /api/v1/sync-yaml`` (``…/write``).

Frozen standard-library dataclasses, as every result: ``opgov sync-yaml --check`` runs, renders and
prints (:func:`opgov.results.plain.to_json`) without loading pydantic. The API serves these classes
as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["SyncAnswer", "SyncChange", "SyncConflict", "SyncReport"]


@dataclass(frozen=True)
class SyncChange:
    """One edit: ``action`` is add-tag, remove-tag, delete-entry or remove-autogen; ``line`` is its
    line in the file before the edit; ``entry`` the entry holding it (another for an autogen:
    operator)."""

    operator: str
    action: str
    tag: str | None
    line: int
    entry: str


@dataclass(frozen=True)
class SyncConflict:
    """What the bot cannot settle: ``kind`` is missing-in-file, missing-in-database,
    schema-differs, autogen-tags, autogen-blocked or family-split."""

    operator: str
    kind: str
    reason: str
    line: int | None


@dataclass(frozen=True)
class SyncReport:
    """What is out of sync, and for ``write`` what was written. ``in_sync``: nothing to write
    (conflicts may remain: they are never written); ``tags_checked``: false when there was no
    tags.yaml to check the tags against; ``summary``: Markdown, fit for the bot's pull request."""

    file: str
    mode: Literal["check", "diff", "write"]
    in_sync: bool
    written: bool
    changes: list[SyncChange]
    conflicts: list[SyncConflict]
    tags_file: str | None
    tags_declared: list[str]
    tags_checked: bool
    summary: str


@dataclass(frozen=True)
class SyncAnswer:
    """The report, the unified diff (mode diff), and for a write the new texts the client writes
    (None: that file stays as it is)."""

    report: SyncReport
    diff: str = ""
    native_functions: str | None = None
    tags: str | None = None
