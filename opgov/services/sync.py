"""The sync bot: write governance (``core``, ``deprecating``, ``deprecated``, deleted entries) back
into native_functions.yaml, changing nothing else. The text editing is :mod:`opgov.core.yamlsync`.

The desired state comes from the database: ``core`` for every operator whose category is core,
``deprecating`` / ``deprecated`` for the operators in that lifecycle state, and no entry at all
for deleted operators. Where the file and the database disagree in a way the bot cannot settle,
the operator is reported (a :class:`~opgov.core.yamlsync.Conflict`) and left untouched:

* the kinds :mod:`opgov.core.yamlsync` reports (``missing-in-file``, ``missing-in-database``,
  ``schema-differs``, ``autogen-tags``, ``autogen-blocked``), and
* ``family-split``: deleting the operator would leave a file PyTorch's code generator rejects
  or that keeps half a family. torchgen groups the functional, in-place and out= variants that
  share a signature; an out= variant whose functional variant is gone is an error there ("Found
  an out= operator that we could not find any other variants of"), and so is a
  ``structured_delegate:`` naming a missing operator. The bot then deletes none of that group's
  entries and reports each deleted member; marking the rest of the family deleted settles it.

This module uses only the Core tables (:mod:`opgov.db.tables`), never ``sqlalchemy.orm``, so
that ``opgov sync-yaml --check`` stays fast.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import or_, select

from opgov.db import tables
from opgov.core.errors import BadInput
from opgov.core.vocab import Lifecycle
from opgov.formats.files import Content, text_of
from opgov.formats.sync_files import sha256_of
from opgov.formats.tags import declared_tags, ensure_tags_declared
from opgov.reads.common import Ctx, latest_snapshot_id
from opgov.services.common import log_event, require

if TYPE_CHECKING:
    from opgov.core.yamlsync import Conflict, Desired, Entry
    from opgov.results.sync import SyncAnswer, SyncReport

LIFECYCLE_TAGS = {state.value: state.value for state in (Lifecycle.deprecating, Lifecycle.deprecated)}
_DELEGATE_RE = re.compile(r"\n  structured_delegate:[ \t]*([A-Za-z0-9_.]+)")
_OUTLIKE = frozenset({"out", "scratch"})
MODES = ("check", "diff", "write")


@dataclass
class SyncResult:
    """What one ``sync-yaml`` run found (and, for ``write``, will write), while it runs; the service
    returns it as a :class:`~opgov.results.sync.SyncReport`."""

    file: str
    mode: str  # check | diff | write
    changes: list = field(default_factory=list)  # yamlsync.Change, in file order
    conflicts: list = field(default_factory=list)  # yamlsync.Conflict
    tags_declared: list[str] = field(default_factory=list)
    tags_file: str | None = None
    tags_unchecked: bool = False  # no tags.yaml to check the tags against
    diff: str = ""
    written: bool = False

    @property
    def in_sync(self) -> bool:
        """Nothing to write (conflicts may remain: they are never written)."""
        return not self.changes and not self.tags_declared


def _desired_state(ctx: Ctx) -> dict[str, Desired]:
    """What governance wants for every ``aten`` operator the latest snapshot holds, or that was
    deleted, keyed by func name (``add.Tensor``)."""
    from opgov.core.yamlsync import Desired

    ops = tables.operators.c
    rows = ctx.session.execute(select(ops.qualname, ops.name, ops.overload, ops.schema, ops.category,
                                      ops.lifecycle, ops.autogen_of)
                               .where(ops.namespace == "aten")
                               .where(or_(ops.present, ops.lifecycle == "deleted"))).all()
    lifecycles = {row.qualname: row.lifecycle for row in rows}
    desired: dict[str, Desired] = {}
    core, none = frozenset({"core"}), frozenset()
    for _, name, overload, schema, category, lifecycle, autogen_of in rows:
        func_name = f"{name}.{overload}" if overload else name
        tags = core if category == "core" else none
        # an operator only autogen: declares moves with its declaring entry (a family moves
        # together), whose tag speaks for it
        if lifecycle in LIFECYCLE_TAGS and not (schema is None and lifecycles.get(autogen_of) == lifecycle):
            tags = tags | {LIFECYCLE_TAGS[lifecycle]}
        desired[func_name] = Desired(func_name, schema, tags, delete=lifecycle == "deleted")
    return desired


# --- families: what torchgen needs to stay together ------------------------------------------

def _base_name(func_name: str) -> str:
    from opgov.core.schema import OperatorName

    return OperatorName.parse(func_name).base


def family_conflicts(text: str, entries: list[Entry], deleting: set[str]) -> list[Conflict]:
    """``family-split`` conflicts for the entries in ``deleting`` (func names) whose deletion
    would split a torchgen group (see the module docstring). Only the families of deleted
    entries are parsed."""
    from opgov.core.schema import FunctionSchema, family_key
    from opgov.core.yamlsync import Conflict

    bases = {_base_name(name) for name in deleting}
    groups: dict[tuple, list[tuple[Entry, str]]] = {}
    for e in entries:
        if _base_name(e.name) not in bases:
            continue
        try:
            schema = FunctionSchema.parse(e.func)
        except BadInput:
            continue  # not a schema torchgen could group either
        groups.setdefault(family_key(schema), []).append((e, str(schema.kind)))

    # structured_delegate: lines, and the entry each belongs to
    starts = [e.line for e in entries]
    delegates: dict[str, str] = {}  # delegating entry -> the operator it names
    lineno, counted = 1, 0
    for m in _DELEGATE_RE.finditer("\n" + text):
        lineno += text.count("\n", counted, m.start())
        counted = m.start()
        owner = entries[bisect.bisect_right(starts, lineno) - 1] if starts and lineno >= starts[0] else None
        if owner is not None and lineno <= owner.end_line:
            delegates[owner.name] = m[1]

    conflicts: list[Conflict] = []
    for members in groups.values():
        gone = [(e, kind) for e, kind in members if e.name in deleting]
        kept = [(e, kind) for e, kind in members if e.name not in deleting]
        if not gone or not kept:
            continue
        why = None
        outs = [e.name for e, kind in kept if kind in _OUTLIKE]
        if outs and all(kind in _OUTLIKE for _, kind in kept):
            why = f"{outs[0]} would be left without any other variant, which torchgen rejects"
        elif outs and any(kind == "functional" for _, kind in gone):
            why = f"{outs[0]} would stay without its functional variant"
        else:
            gone_names = {e.name for e, _ in gone}
            for e, _ in kept:
                if delegates.get(e.name) in gone_names:
                    why = f"{e.name} would keep structured_delegate: {delegates[e.name]}, which torchgen rejects"
                    break
        if why is None:
            continue
        family = ", ".join(e.name for e, _ in members)
        for e, _ in gone:
            conflicts.append(Conflict(e.name, "family-split",
                                      f"deleting it alone splits its family ({family}): {why}; "
                                      "mark the whole family deleted", e.line))
    return conflicts


def _plan(text: str, desired: dict[str, Desired], path: str):
    """The edit plan, with the deletions that would split a family held back and reported."""
    from opgov.core import yamlsync

    plan = yamlsync.plan(text, desired, path=path)
    held: list = []
    entries: list | None = None
    while True:
        deleting = {c.operator for c in plan.changes if c.action == "delete-entry"}
        if not deleting:
            break
        if entries is None:
            entries = yamlsync.scan(text, path=path)
        splits = family_conflicts(text, entries, deleting)
        if not splits:
            break
        by_name = {e.name: e for e in entries}
        for c in splits:  # leave the entry as the file has it
            e = by_name[c.operator]
            desired[c.operator] = yamlsync.Desired(e.name, e.func, e.governed_tags)
        held.extend(splits)
        plan = yamlsync.plan(text, desired, path=path)
    if held:
        plan = yamlsync.SyncPlan(plan.new_text, plan.changes, plan.conflicts + tuple(held))
    return plan


_TAG_LINE_RE = re.compile(r"^-[ \t]+tag:[ \t]*([A-Za-z0-9_]+)[ \t]*(?:#.*)?$", re.M)


def _tag_lines(tags_text: str) -> set[str]:
    """The tags a tags.yaml declares, from its ``- tag: NAME`` lines (PyTorch's form)."""
    return set(_TAG_LINE_RE.findall(tags_text))


def _may_run(ctx: Ctx, mode: str) -> None:
    """A known mode; for ``write`` a bot or maintainer; a database with a snapshot to compare with."""
    if mode not in MODES:
        raise BadInput(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
    if mode == "write":
        require(ctx, "sync", "write native_functions.yaml")
    if latest_snapshot_id(ctx.session) is None:
        raise BadInput("the database holds no snapshot yet: run `opgov import` first")


def _written(ctx: Ctx, result: SyncResult, new_text: str | None = None, write_id: str | None = None) -> None:
    result.written = True
    after = {"changes": len(result.changes), "conflicts": len(result.conflicts), "tags_declared": result.tags_declared}
    if new_text is not None:  # what the file holds once written: a later run can tell it was
        after["sha256"] = sha256_of(new_text.encode("utf-8"))
        if write_id is not None:  # and that this write was logged, not an earlier one of the same bytes
            after["write"] = write_id
    log_event(ctx, "yaml.sync", f"file:{result.file}", after=after)


def _found_installed(ctx: Ctx, native_functions: Content, installed: str, write_id: str | None = None) -> None:
    """The crash window of a write closed on the next run: a run that installed native_functions and
    was stopped before its transaction (and so its ``yaml.sync`` event) committed left an intent
    recording the new content's SHA-256 and the write's id (the CLI's). If the file now holds exactly
    that and no ``yaml.sync`` of the file carries that write's id, the write is logged now, marked as
    found: once, whatever an earlier sync wrote (an earlier write of the same bytes has another id).
    An intent without an id (an older opgov's) is matched by its SHA-256 alone."""
    import json

    data = native_functions.data if isinstance(native_functions.data, bytes) else native_functions.data.encode()
    if sha256_of(data) != installed:
        return  # not installed (stopped before its rename): nothing happened to log
    subject = f"file:{native_functions.name}"
    rows = ctx.session.execute(select(tables.events.c.after).where(tables.events.c.action == "yaml.sync",
                                                                   tables.events.c.subject == subject))
    for (after,) in rows:
        after = json.loads(after) if isinstance(after, str) else after
        if not isinstance(after, dict):
            continue
        if (after.get("write") == write_id) if write_id is not None else (after.get("sha256") == installed):
            return  # logged: the run was stopped after its commit
    after = {"sha256": installed, "found": True} | ({"write": write_id} if write_id is not None else {})
    log_event(ctx, "yaml.sync", subject, after=after,
              reason="found installed on the next run: the run that wrote it was stopped before it logged it")


def sync_texts(ctx: Ctx, text: str, path: str, *, mode: str, tags_text: str | None = None,
               tags_yaml: str | None = None, found_beside: bool = False, dry_run: bool = False,
               write_id: str | None = None) -> SyncAnswer:
    """Compare ``text`` (``path``'s content, a native_functions.yaml) with the database; ``diff``
    also renders the edit, ``write`` (role: bot or maintainer) computes it. ``tags_text`` is the
    content of ``tags_yaml`` (``found_beside``: the tags.yaml found beside ``path``, which torchgen
    reads, not one the user named). Every governed tag the result uses must be declared there
    (missing declarations are added), and every other tag must be declared already
    (:class:`BadInput` otherwise). Without any tags.yaml, a write that adds a tag is refused (exit
    2): it could leave the tag undeclared, which torchgen rejects. Raises :class:`BadInput` for
    malformed files and when nothing was imported. Messages and the result name the files as
    given. Nothing is written here, whether the files are the CLI's own or uploaded to `opgov
    serve`: for ``write`` the answer holds the new texts, for the client to write
    (:func:`opgov.formats.sync_files.write_synced`), and the sync is logged (unless ``dry_run``: the client found it cannot
    write them)."""
    from opgov.results.sync import SyncAnswer

    _may_run(ctx, mode)
    result, contents = _sync(ctx, text, path, mode=mode, tags_text=tags_text, tags_yaml=tags_yaml,
                             defaulted=found_beside or tags_yaml is None)
    if contents and not dry_run:
        _written(ctx, result, dict(contents).get(path), write_id)
    new = dict(contents)
    return SyncAnswer(report=report(result), diff=result.diff, native_functions=new.get(path),
                      tags=new.get(tags_yaml) if tags_yaml is not None else None)


def check_files(ctx: Ctx, *, native_functions: Content, tags: Content | None = None, mode: str = "check",
                tags_beside: bool = False) -> SyncAnswer:
    """``opgov sync-yaml --check`` / ``--diff`` (``POST /api/v1/sync-yaml``): what is out of sync in
    ``native_functions`` (a native_functions.yaml, named as the user named it) and ``tags`` (the
    tags.yaml to check the tags against; ``tags_beside``: the one found beside the file, not one the
    user named). Writes nothing."""
    return _files(ctx, native_functions, tags, mode=mode, tags_beside=tags_beside)


def write_files(ctx: Ctx, *, native_functions: Content, tags: Content | None = None, tags_beside: bool = False,
                dry_run: bool = False, installed: str | None = None, installed_write: str | None = None,
                write_id: str | None = None) -> SyncAnswer:
    """``opgov sync-yaml --write`` (``POST /api/v1/sync-yaml/write``; bots and maintainers): the new
    texts of the files that change, for the client to write (:func:`opgov.formats.sync_files.write_synced`), and the sync
    logged unless ``dry_run`` (the client found it cannot write them: a lock left behind)."""
    require(ctx, "sync", "write native_functions.yaml")  # before reading what a member without the role sent
    if installed is not None:
        _found_installed(ctx, native_functions, installed, installed_write)
    return _files(ctx, native_functions, tags, mode="write", tags_beside=tags_beside, dry_run=dry_run,
                  write_id=write_id)


def _files(ctx: Ctx, native_functions: Content, tags: Content | None, *, mode: str, tags_beside: bool,
           dry_run: bool = False, write_id: str | None = None) -> SyncAnswer:
    # the bytes as they are (line endings kept: the bot rewrites files byte for byte)
    text = text_of(native_functions.data, native_functions.name, exact=True)
    tags_text = text_of(tags.data, tags.name, exact=True) if tags is not None else None
    return sync_texts(ctx, text, native_functions.name, mode=mode, tags_text=tags_text,
                      tags_yaml=tags.name if tags is not None else None, found_beside=tags_beside, dry_run=dry_run,
                      write_id=write_id)


def _sync(ctx: Ctx, text: str, path: str, *, mode: str, tags_text: str | None, tags_yaml: str | None,
          defaulted: bool) -> tuple[SyncResult, list[tuple[str, str]]]:
    """The run on texts: the result, and for ``write`` the files to write (``[(file, new text)]``,
    tags.yaml first; none when in sync)."""
    from opgov.core import yamlsync

    plan = _plan(text, _desired_state(ctx), path)
    result = SyncResult(file=path, mode=mode, changes=sorted(plan.changes, key=lambda c: c.line),
                        conflicts=list(plan.conflicts), tags_file=tags_yaml)
    new_tags_text = None
    if tags_text is not None:
        entries = yamlsync.scan(plan.new_text, path=path)
        used = {t for e in entries for t in e.governed_tags}
        # a tag opgov does not govern must already be declared: torchgen rejects the file otherwise.
        # `--check` against the tags.yaml found beside the file reads its `- tag:` lines without
        # PyYAML (the check stays fast); a given --tags-yaml, --diff and --write parse it fully.
        quick = defaulted and mode == "check"
        declared = _tag_lines(tags_text) if quick else declared_tags(tags_text, path=tags_yaml)
        for e in entries:
            stray = [t for t in e.tags if t not in declared and t not in used]
            if stray:
                raise BadInput(f"tag {stray[0]!r} of {e.name} is not declared in {tags_yaml} (torchgen rejects "
                               "the file)", file=path, line=e.line)
        if quick:
            result.tags_declared = sorted(used - declared)
        else:
            new_tags_text, result.tags_declared = ensure_tags_declared(tags_text, sorted(used), path=tags_yaml)
    elif mode == "write" and any(c.action == "add-tag" for c in result.changes):
        added = sorted({c.tag for c in result.changes if c.action == "add-tag"})
        raise BadInput(f"no tags.yaml beside {path} and no --tags-yaml: writing {', '.join(added)} could leave "
                       "a tag undeclared, which torchgen rejects; pass --tags-yaml")
    else:
        result.tags_unchecked = True
    if mode == "diff":
        result.diff = yamlsync.unified_diff(text, plan.new_text, path)
        if result.tags_declared:
            result.diff += yamlsync.unified_diff(tags_text, new_tags_text, tags_yaml)
    contents: list[tuple[str, str]] = []
    if mode == "write" and not result.in_sync:
        if result.tags_declared:
            contents.append((tags_yaml, new_tags_text))
        if result.changes:
            contents.append((path, plan.new_text))
    return result, contents


# --- rendering ------------------------------------------------------------------------------

_GROUPS = (  # (heading, predicate) in the order a reviewer reads them
    ("Moved into core: `core` added", lambda c: c.action == "add-tag" and c.tag == "core"),
    ("Moved out of core: `core` removed", lambda c: c.action == "remove-tag" and c.tag == "core"),
    ("Deprecating: `deprecating` added", lambda c: c.action == "add-tag" and c.tag == "deprecating"),
    ("No longer deprecating: `deprecating` removed",
     lambda c: c.action == "remove-tag" and c.tag == "deprecating"),
    ("Deprecated: `deprecated` added", lambda c: c.action == "add-tag" and c.tag == "deprecated"),
    ("No longer deprecated: `deprecated` removed",
     lambda c: c.action == "remove-tag" and c.tag == "deprecated"),
    ("Deleted (lifecycle complete): entry removed", lambda c: c.action == "delete-entry"),
    ("Deleted (lifecycle complete): removed from `autogen:`", lambda c: c.action == "remove-autogen"),
)


def _summary_markdown(result: SyncResult) -> str:
    """What is out of sync (``check``/``diff``) or what was written (``write``), as Markdown fit
    for the bot's pull-request description. Line numbers refer to the file before the edit."""
    n = len(result.changes)
    changes = f"{n} change{'' if n == 1 else 's'}"
    tags = len(result.tags_declared)
    declared = f" and {tags} tag declaration{'' if tags == 1 else 's'} in `{result.tags_file}`" if tags else ""
    if result.mode == "write":
        head = (f"opgov sync: wrote {changes} to `{result.file}`{declared}" if result.written
                else f"opgov sync: `{result.file}` is already in sync with the database; nothing written")
    elif result.in_sync and result.conflicts:
        head = (f"opgov sync: `{result.file}` needs no edit, but the file and the database disagree on "
                f"{len(result.conflicts)} operator{'' if len(result.conflicts) == 1 else 's'}")
    elif result.in_sync and result.tags_unchecked:
        head = (f"opgov sync: `{result.file}` needs no edit; its tags were not checked (no tags.yaml beside it; "
                "pass --tags-yaml)")
    elif result.in_sync:
        head = f"opgov sync: `{result.file}` is in sync with the database"
    else:
        head = f"opgov sync: `{result.file}` is out of sync with the database: {changes} needed{declared}"
    lines = [head]
    for title, wanted in _GROUPS:
        items = [c for c in result.changes if wanted(c)]
        if items:
            lines.append(f"\n**{title}** ({len(items)})")
            lines.extend(f"- `aten::{c.operator}`" + (f" (in `aten::{c.entry}`)" if c.entry != c.operator else "")
                         + f" (line {c.line})" for c in items)
    if result.tags_declared:
        lines.append(f"\n**Tags declared in `{result.tags_file}`** ({tags})")
        lines.extend(f"- `{t}`" for t in result.tags_declared)
    if result.conflicts:
        lines.append(f"\n**Not settled: the file and the database disagree; left untouched** "
                     f"({len(result.conflicts)})")
        lines.extend(f"- `aten::{c.operator}` ({c.kind}): {c.reason}" + (f" (line {c.line})" if c.line else "")
                     for c in result.conflicts)
    return "\n".join(lines)


def report(result: SyncResult) -> SyncReport:
    """The typed result of a run (the ``--json`` shape, and the diff)."""
    from opgov.results.sync import SyncChange, SyncConflict, SyncReport

    return SyncReport(
        file=result.file, mode=result.mode, in_sync=result.in_sync, written=result.written,
        changes=[SyncChange(operator=f"aten::{c.operator}", action=c.action, tag=c.tag, line=c.line,
                            entry=f"aten::{c.entry}") for c in result.changes],
        conflicts=[SyncConflict(operator=f"aten::{c.operator}", kind=c.kind, reason=c.reason, line=c.line)
                   for c in result.conflicts],
        tags_file=result.tags_file, tags_declared=list(result.tags_declared), tags_checked=not result.tags_unchecked,
        summary=_summary_markdown(result))
