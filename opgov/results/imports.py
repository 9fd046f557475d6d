"""The results of ``opgov import`` (``POST /api/v1/snapshots``) and ``opgov snapshots``.

A frozen standard-library dataclass, as every result: ``opgov import`` prints its text (and
its ``--json``, :func:`opgov.results.plain.to_json`) without loading pydantic. The import fills
its lists and counts while it runs; the API serves it as it is.
"""

from dataclasses import dataclass, field
from datetime import datetime

from opgov.results.plain import about as _about

__all__ = ["ImportResult", "SnapshotView"]


@dataclass(frozen=True)
class ImportResult:
    """``opgov import``: what the snapshot changed."""

    label: str
    operators: int = field(metadata=_about("entries in the file"))
    added: list[str] = field(default_factory=list, metadata=_about("new (or reappeared) operators"))
    removed: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list, metadata=_about("operators whose schema changed"))
    own_entry: dict[str, str] = field(default_factory=dict, metadata=_about(
        "operators another entry's autogen: declared that now have their own entry → the entry that declared "
        "them (not new, not a schema change)"))
    findings: dict[str, int] = field(default_factory=dict,
                                     metadata=_about("compatibility findings: severity → count"))
    added_autogen: list[str] = field(default_factory=list, metadata=_about(
        "of `added`, the operators only an autogen: line declares (no entry of their own; check-bc's and "
        "check-pr's `new` count entries and name these in `not_compared`)"))
    tags_changed: list[str] = field(default_factory=list, metadata=_about(
        "governance tags (core, deprecating, deprecated) the file added or dropped on operators it kept, e.g. "
        "`aten::roll: -core`: each is also a finding, an event and a line of the operator's history"))
    unchanged_file: bool = field(default=False, metadata=_about("the same label and content were imported before"))
    baseline: bool = field(default=False, metadata=_about("the first snapshot of the database"))
    historical: bool = field(default=False, metadata=_about(
        "an older release stored in its place in history (--historical): the latest snapshot stays the latest, "
        "no findings recorded"))


@dataclass(frozen=True, kw_only=True)
class SnapshotView:
    """An imported snapshot."""

    id: int
    label: str
    source: str
    content_hash: str = field(metadata=_about("sha256 of the file"))
    imported_at: datetime
    actor: str
    operators: int
    position: int = field(metadata=_about("its place in history, 1 = the oldest"))
    historical: bool = field(metadata=_about("an older release stored in its place with import --historical"))
