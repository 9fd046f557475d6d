"""Compatibility use cases: findings of an import, ``check-bc`` between any two sources, and the
BC exceptions. The rules and the policy themselves live in :mod:`opgov.core.compat` (pure)."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, NamedTuple

from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.reads.policy import recorded_exceptions

if TYPE_CHECKING:
    from opgov.db.models import BcException
    from opgov.formats.files import Content
    from opgov.reads.common import Ctx
    from opgov.results.compat import CheckReport
    from opgov.results.compat import ExceptionAdded, ExceptionView

# SQLAlchemy, the tables and the ORM models are imported inside the functions that touch the
# database: `opgov check-bc` of two files needs none of them (about 0.1 s of imports).

DEFAULT_GIT_PATH = "aten/src/ATen/native/native_functions.yaml"


@dataclass
class Side:
    """One side of a comparison: operator → schema text, → line, and which operators are core."""

    label: str
    file: str | None
    schemas: dict[str, str]
    lines: dict[str, int]
    core: set[str]
    revision: str | None = None  # for git:REF sides: ``file`` is the path in the repository at REF
    autogen: dict[str, str] = field(default_factory=dict)  # operator declared by autogen: → declaring entry


def _decided(session) -> tuple[set[str], set[str], set[str]]:
    """(core by decision, not-core by decision, deleted) from the database."""
    from sqlalchemy import select

    from opgov.db import tables

    from sqlalchemy import or_

    c = tables.operators.c
    # only the operators these name (a few): not a row of each of the database's thousands
    rows = session.execute(select(c.qualname, c.category, c.category_source, c.lifecycle).where(
        or_(c.category_source == "decision", c.lifecycle == "deleted"))).all()
    core = {r.qualname for r in rows if r.category_source == "decision" and r.category == "core"}
    not_core = {r.qualname for r in rows if r.category_source == "decision" and r.category != "core"}
    deleted = {r.qualname for r in rows if r.lifecycle == "deleted"}
    return core, not_core, deleted


class _Field(Mapping):
    """A registry's operators → one field of each (``schema``: of those that have one), read from the
    registry (a view: an import's side of the comparison is not a copy of the file's thousands)."""

    def __init__(self, ops: dict, field: str) -> None:
        self._ops, self._field = ops, field
        self._all = field != "schema"  # every operator has a line; an autogen-declared one no schema
        self._size = len(ops) if self._all else sum(1 for op in ops.values() if op.schema is not None)

    def __getitem__(self, name: str):
        value = getattr(self._ops[name], self._field)
        if value is None and not self._all:
            raise KeyError(name)
        return value

    def __iter__(self):
        return iter(self._ops) if self._all else (n for n, op in self._ops.items() if op.schema is not None)

    def __len__(self) -> int:
        return self._size


class _Parsed(Mapping):
    """``names`` → their schemas parsed from ``texts``, each parsed when it is asked for (the parse
    is cached per text: opgov.core.schema), none held here."""

    def __init__(self, texts: dict[str, str], names: list[str]) -> None:
        self._texts, self._names = texts, names
        self._known = set(names)

    def __getitem__(self, name: str):
        from opgov.core.schema import FunctionSchema

        if name not in self._known:
            raise KeyError(name)
        return FunctionSchema.parse(self._texts[name])

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def raw_findings(old: Side, new: Side) -> list:
    """The rules' raw findings (before policy) between two sides (check-bc and check-pr share them)."""
    return list(iter_raw_findings(old, new))


def iter_raw_findings(old: Side, new: Side):
    """:func:`raw_findings` one at a time: the old file's, then new operators in the new file's order."""
    from opgov.core import compat
    from opgov.core.schema import FunctionSchema
    from opgov.core.vocab import FindingKind

    # Only changed or removed operators need parsing, and the new file's overloads of them (the
    # candidates a removed or changed overload may have moved to); an added operator of another
    # name is reported from its text (an import may add thousands: none parsed, none held)
    changed = [n for n, s in old.schemas.items() if new.schemas.get(n) != s]
    bases = {n.split(".")[0] for n in changed}
    old_map = {n: FunctionSchema.parse(old.schemas[n]) for n in changed}
    new_map = _Parsed(new.schemas, [n for n in new.schemas if n.split(".")[0] in bases])
    yield from (f for f in compat.iter_compare(old_map, new_map) if f.kind != FindingKind.new)
    for n, text in new.schemas.items():  # what iter_compare says of a new operator, in the new file's order
        if n not in old.schemas:
            if old.autogen and n in old.autogen:
                yield compat.RawFinding(n, FindingKind.new, "operator-own-entry",
                                        compat.own_entry_message(old.autogen[n]), None, text)
            else:
                yield compat.RawFinding(n, FindingKind.new, "operator-added", "New operator.", None, text)
    # An operator only `autogen:` declares has no schema text to compare, but its removal is a
    # removal all the same (the weekly report lists it with the others): one story.
    yield from (compat.RawFinding(n, FindingKind.bc, "operator-removed",
                                  "Operator was removed (it was generated by an entry's autogen: list).", None, None)
                for n in old.lines if n not in old.schemas and n not in new.lines)


def compare_sides(old: Side, new: Side, *, exceptions: list, deleted: set[str], today: date) -> CheckReport:
    """Run the rules over two sides and apply the policy (no pydantic: a check of two files
    needs none)."""
    from opgov.core import compat
    from opgov.results.compat import CheckReport

    findings = judged_findings(old, new, exceptions=exceptions, deleted=deleted, today=today)
    return CheckReport.of(findings, compat.expired_exceptions(exceptions, today),
                          not_compared=_autogen_added(old, new))


def _autogen_added(old: Side, new: Side) -> list[str]:
    """The operators ``new`` holds that ``old`` did not and that only an autogen: line declares:
    no schema text to compare, so no finding counts them (the import lists them among its added,
    as ``added_autogen``). In ``new``'s order."""
    return [n for n in new.lines if n not in new.schemas and n not in old.lines]


def judged_findings(old: Side, new: Side, *, exceptions: list, deleted: set[str], today: date) -> list:
    """The rules' findings between two sides with the policy applied (``opgov.core.compat.Finding``)."""
    return list(iter_judged(old, new, exceptions=exceptions, deleted=deleted, today=today))


def iter_judged(old: Side, new: Side, *, exceptions: list, deleted: set[str], today: date):
    """:func:`judged_findings` one at a time, in the same order."""
    from opgov.core import compat

    def locate(finding) -> tuple[str | None, int | None]:
        side = new if finding.operator in new.lines else old
        if side.revision is not None and side is old:
            # a removal seen at another git revision: name the file, not a line of a version the
            # reader (or GitHub's annotation) does not have
            return side.file, None
        return side.file, side.lines.get(finding.operator)

    return compat.iter_policy(iter_raw_findings(old, new), core=old.core, exceptions=exceptions,
                              completed_deletions=deleted, today=today, locate=locate)


@dataclass(frozen=True)
class RecordedFindings:
    """What :func:`record_import_findings` stored: how many findings, and how many of each severity
    (in the order the severities were first found, as the import's result lists them)."""

    stored: int
    by_severity: dict[str, int]


def record_import_findings(ctx: Ctx, previous_id: int, snapshot_id: int, *, held_before: dict,
                           registry) -> RecordedFindings:
    """Store the findings of snapshot ``snapshot_id`` against ``previous_id``; return how many, per
    severity. The import has both sides at hand: ``held_before``, the previous snapshot's entries
    (operator id → (schema, tags), the runs it found open), and ``registry``, the file
    (:class:`opgov.formats.registry.Registry`). Works on a Core connection (the import runs without
    the ORM). The findings are judged and written a chunk at a time: an import may add thousands
    of operators, each a finding."""
    from sqlalchemy import select

    from opgov.db import tables
    from opgov.db.bulk import insert_rows

    session = ctx.session
    decided = _decided(session)
    old = snapshot_side(session, previous_id, held=held_before, decided=decided)
    snap = tables.snapshots.c
    label, source = session.execute(select(snap.label, snap.source).where(snap.id == snapshot_id)).one()
    ops = registry.ops
    decided_core, decided_other, _ = decided
    # the file as a side, as stored_side reads the stored snapshot: core is the yaml's core tags as
    # the committee's decisions have it since; an autogen-declared operator has no schema
    core = {n for n, op in ops.items() if "core" in op.tags}
    new = Side(label=label, file=source, schemas=_Field(ops, "schema"), lines=_Field(ops, "line"),
               core=(core - decided_other) | {n for n in decided_core if n in ops},
               autogen={n: op.autogen_of or "another entry" for n, op in ops.items() if op.schema is None})
    today = ctx.now().date()
    counts: Counter = Counter()
    rows: list[dict] = []
    for f in iter_judged(old, new, exceptions=recorded_exceptions(session, today), deleted=decided[2], today=today):
        counts[str(f.severity)] += 1
        rows.append({"snapshot_id": snapshot_id, "base_snapshot_id": previous_id, "operator": f.operator,
                     "kind": str(f.kind), "rule": f.rule, "severity": str(f.severity), "message": f.message,
                     "old_schema": f.old_schema, "new_schema": f.new_schema, "line": f.line})
        if len(rows) >= 1000:
            insert_rows(session, tables.findings, rows)
            rows.clear()
    insert_rows(session, tables.findings, rows)
    return RecordedFindings(stored=sum(counts.values()), by_severity=dict(counts))


def exceptions_in_force(session, when) -> list:
    """The exceptions recorded by ``when`` and not removed by then (expiry is judged by the
    policy on ``when``'s date)."""
    from sqlalchemy import select

    from opgov.core.compat import BcException as Rule
    from opgov.db import tables

    e = tables.bc_exceptions.c
    rows = session.execute(select(e.pattern, e.reason, e.created_by, e.expires_on, e.created_at, e.removed_at)
                           .order_by(e.id)).all()
    return [Rule(pattern=r.pattern, reason=r.reason, created_by=r.created_by, expires_on=r.expires_on)
            for r in rows if _naive(r.created_at) <= _naive(when)
            and (r.removed_at is None or _naive(r.removed_at) > _naive(when))]


def _naive(moment):
    """Compare stored and given times alike (SQLite returns naive UTC datetimes)."""
    from datetime import timezone

    return moment.astimezone(timezone.utc).replace(tzinfo=None) if moment.tzinfo is not None else moment


# the sentences apply_policy appends to a rule's message (see opgov.core.compat.apply_policy)
_POLICY_MARKERS = (" Waived by exception ", " Exception '", " Exception \"",
                   " Remove operators through the deprecation lifecycle")


@dataclass(frozen=True)
class Judged:
    """A stored finding as :func:`judge_stored` judges it now."""

    severity: str
    message: str


def judge_stored(session, rows, when) -> list[Judged]:
    """The severity and message of each stored import finding judged now: against the exceptions in force
    at ``when`` and today's core operators, as ``check-bc`` judges. ``rows`` have
    ``base_snapshot_id, operator, kind, rule, severity, message``. A finding stored as info (a new
    operator, a completed deletion) or warning (FC) keeps its severity; a BC break of a core
    operator stays an error; another BC break is waived while an exception covers it."""
    from opgov.core import compat
    from opgov.core.vocab import FindingKind

    exceptions = exceptions_in_force(session, when)
    today = when.date()
    core_of: dict[int, set[str]] = {}
    out: list[Judged] = []
    for r in rows:
        if r.kind != FindingKind.bc or r.severity not in ("error", "waived"):
            out.append(Judged(severity=r.severity, message=r.message))
            continue
        if r.base_snapshot_id not in core_of:
            core_of[r.base_snapshot_id] = snapshot_side(session, r.base_snapshot_id).core
        core = core_of[r.base_snapshot_id]
        if r.operator in core and r.severity == "error":
            out.append(Judged(severity=r.severity, message=r.message))
            continue
        cuts = [i for i in (r.message.find(m) for m in (*_POLICY_MARKERS, f" {r.operator} is not core: ",
                                                         f" {r.operator} is a core ATen operator: ")) if i >= 0]
        raw = r.message[:min(cuts)] if cuts else r.message
        [judged] = compat.apply_policy([compat.RawFinding(r.operator, r.kind, r.rule, raw, None, None)],
                                       core=core, exceptions=exceptions, today=today)
        out.append(Judged(severity=judged.severity, message=judged.message))
    return out


class StoredEntry(NamedTuple):
    """An operator's entry in a stored snapshot."""

    qualname: str
    schema: str | None
    line: int
    tags: list


def snapshot_side(session, snapshot_id: int, *, held: dict | None = None, decided: tuple | None = None) -> Side:
    """One snapshot as a side of a comparison (Core only). ``held``: its entries (operator id →
    (schema, tags)) when the caller has read them already; ``decided``: :func:`_decided`, likewise."""
    from sqlalchemy import select

    from opgov.db import entries, tables

    snap = tables.snapshots.c
    label, source, position = session.execute(select(snap.label, snap.source, snap.position)
                                              .where(snap.id == snapshot_id)).one()
    if held is None:
        held = {r.operator_id: (r.schema, r.tags) for r in entries.entries_at(session, position)}
    o = tables.operators.c
    names = dict(session.execute(select(o.id, o.qualname).where(o.id.in_(list(held)))).all()) if held else {}
    lines = entries.lines_of(session, snapshot_id)
    rows = sorted((StoredEntry(names[op_id], schema, lines.get(op_id, 0), tags)
                   for op_id, (schema, tags) in held.items()), key=lambda e: e.line)
    return stored_side(label, source, rows, decided if decided is not None else _decided(session))


def stored_side(label: str, source: str, rows: list[StoredEntry], decided: tuple) -> Side:
    """A snapshot's entries as a side: core is the yaml's core tags, as the committee's decisions
    (``decided``: :func:`_decided`) have it since."""
    decided_core, decided_other, _ = decided
    core = {r.qualname for r in rows if "core" in (r.tags or [])}
    core = (core - decided_other) | (decided_core & {r.qualname for r in rows})
    # an autogen-declared operator is stored without a schema, at the line of the entry declaring it
    declaring = {r.line: r.qualname for r in rows if r.schema is not None}
    return Side(label=label, file=source,
                schemas={r.qualname: r.schema for r in rows if r.schema is not None},
                lines={r.qualname: r.line for r in rows}, core=core,
                autogen={r.qualname: declaring.get(r.line, "another entry") for r in rows if r.schema is None})


def _yaml_side(label: str, path: str, text: str | None = None) -> Side:
    from opgov.formats.registry import read_registry

    # a comparison, not a build: whether torchgen accepts each file is checked where it is built
    registry = read_registry(path, text=text, buildable=False)
    return Side(label=label, file=path, schemas={n: op.schema for n, op in registry.ops.items() if op.schema},
                lines={n: op.line for n, op in registry.ops.items()},
                core={n for n, op in registry.ops.items() if "core" in op.tags},
                autogen={n: op.autogen_of for n, op in registry.ops.items() if op.schema is None and op.autogen_of})


def _git_side(spec: str) -> Side:
    ref, _, path = spec[len("git:"):].partition(":")
    path = path or DEFAULT_GIT_PATH
    if not ref:
        raise BadInput(f"{spec!r}: expected git:REF[:PATH]")
    if ref.startswith("-"):  # git would read it as an option (--output=FILE writes a file)
        raise BadInput(f"{spec!r}: a git ref cannot begin with '-'")
    if "\x00" in spec:
        raise BadInput(f"{spec!r}: a git ref cannot hold a NUL byte")
    try:
        # --end-of-options: whatever follows is a revision, never an option, even if it looks like one
        shown = subprocess.run(["git", "show", "--end-of-options", f"{ref}:{path}"], capture_output=True,
                               timeout=60)
    except (OSError, subprocess.SubprocessError) as err:
        raise BadInput(f"{spec}: cannot run git ({err})") from None
    stderr = shown.stderr.decode("utf-8", "replace").strip()
    if shown.returncode != 0:
        raise BadInput(f"{spec}: {stderr.splitlines()[-1] if stderr else 'git show failed'}")
    try:
        text = shown.stdout.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason} at byte {err.start})", file=f"{ref}:{path}") from None
    side = _yaml_side(spec, f"{ref}:{path}", text=text)
    side.file, side.revision = path, ref
    return side


def resolve_side(spec: str, session=None) -> Side:
    """A yaml path, ``git:REF[:PATH]``, or (with a database) a snapshot label."""
    if spec.startswith("git:"):
        return _git_side(spec)
    if os.path.exists(spec):
        return _yaml_side(spec, spec)
    if session is None:
        raise BadInput(f"{spec}: no such file (and no database configured to look up a snapshot of that label)")
    return snapshot_by_label(session, spec, also="no such file, and ")


def snapshot_by_label(session, spec: str, *, also: str = "") -> Side:
    """The side of the snapshot labelled ``spec``; an unknown label is one line naming the known ones."""
    from sqlalchemy import select

    from opgov.db import tables

    snap = tables.snapshots.c
    snapshot_id = session.scalar(select(snap.id).where(snap.label == spec))
    if snapshot_id is None:
        labels = session.scalars(select(snap.label).order_by(snap.position)).all()
        raise NotFound(f"{spec}: {also}no snapshot of that label (known: {', '.join(labels) or 'none'})")
    return snapshot_side(session, snapshot_id)


def check_bc(old_spec: str, new_spec: str, *, session=None, today: date) -> CheckReport:
    """Compare two sources. With a database: its decisions (core-ness), exceptions and completed
    deletions apply too; without one, core-ness comes from the old side's ``core`` tags."""
    old, new = resolve_side(old_spec, session), resolve_side(new_spec, session)
    exceptions, deleted = [], set()
    if session is not None:
        decided_core, decided_other, deleted = _decided(session)
        old.core = (old.core - decided_other) | (decided_core & set(old.schemas))
        exceptions = recorded_exceptions(session, today)
    report = compare_sides(old, new, exceptions=exceptions, deleted=deleted, today=today)
    if session is not None:  # BC breaks of non-core operators: covered by an upgrader, or the one to add
        from opgov.services.upgraders import cover_findings

        report = cover_findings(session, report, old.core)
    return report


def check_bc_texts(old: tuple[str, str] | str, new: tuple[str, str] | str, *, session, today: date) -> CheckReport:
    """:func:`check_bc` of two sides given to the service: each a native_functions.yaml as
    (name, text) (an upload; findings name it by ``name``), or the label of a snapshot the
    database holds. Never a path or a git ref: the service reads no file of its own machine."""
    old_side, new_side = (_yaml_side(s[0], s[0], text=s[1]) if isinstance(s, tuple) else snapshot_by_label(session, s)
                          for s in (old, new))
    decided_core, decided_other, deleted = _decided(session)
    old_side.core = (old_side.core - decided_other) | (decided_core & set(old_side.schemas))
    report = compare_sides(old_side, new_side, exceptions=recorded_exceptions(session, today), deleted=deleted, today=today)
    from opgov.services.upgraders import cover_findings  # as check_bc: breaks an upgrader covers

    return cover_findings(session, report, old_side.core)


def check_bc_sides(ctx: Ctx, old: Content | None = None, new: Content | None = None, old_snapshot: str | None = None,
                   new_snapshot: str | None = None) -> CheckReport:
    """``check-bc`` asked of the service (``opgov check-bc --server``, POST /api/v1/check-bc): each
    side an uploaded native_functions.yaml (findings name it as the client named it) or the label
    of a snapshot the database holds, exactly one of the two (:func:`check_bc_texts`)."""
    from opgov.core.errors import Unprocessable
    from opgov.formats.files import plain_bytes, text_of

    sides: list[tuple[str, str] | str] = []
    for name, upload, label in (("old", old, old_snapshot), ("new", new, new_snapshot)):
        if (upload is None) == (label is None):  # as a form that does not match its schema: 422
            raise Unprocessable(f"{name}: give either the file `{name}` or the snapshot label `{name}_snapshot`")
        # line endings as they are, as the upload was read before; plain ASCII is read as bytes (no copy)
        sides.append((upload.name, upload.data if plain_bytes(upload.data) else
                      text_of(upload.data, upload.name, exact=True)) if upload is not None else label)
    return check_bc_texts(sides[0], sides[1], session=ctx.session, today=ctx.now().date())


# --- exceptions ---------------------------------------------------------------------------------------


def add_exception(ctx: Ctx, pattern: str, *, reason: str, expires: date) -> ExceptionAdded:
    from sqlalchemy import select

    from opgov.db.models import BcException, Operator
    from opgov.core.text import require_text
    from opgov.services.common import log_event, require
    from opgov.results.compat import ExceptionAdded

    pattern = require_text(pattern, "the operator pattern")
    reason = require_text(reason, "the reason")
    require(ctx, "exceptions", "record BC exceptions")
    if expires <= ctx.now().date():
        raise BadInput(f"--expires {expires} is not in the future")
    from opgov.core.compat import BcException as Rule

    rule = Rule(pattern=pattern, reason=reason, created_by=ctx.actor, expires_on=expires)
    rows = ctx.session.execute(select(Operator.qualname, Operator.category).where(Operator.present)).all()
    matched = [r for r in rows if rule.covers(r.qualname)]
    row = BcException(pattern=pattern, reason=reason, created_by=ctx.actor, created_at=ctx.now(), expires_on=expires)
    ctx.session.add(row)
    ctx.session.flush()
    log_event(ctx, "exception.add", f"exception:{row.id}", after={"pattern": pattern, "expires_on": expires.isoformat()},
              reason=reason)
    # Core operators are never waived: say how many matches the exception cannot cover.
    return ExceptionAdded(**_view_fields(row, ctx.now().date()), matches=len(matched),
                          core_matches=sum(1 for r in matched if r.category == "core"))


def _view_fields(row: BcException, today: date) -> dict:
    return {"id": row.id, "pattern": row.pattern, "reason": row.reason, "created_by": row.created_by,
            "created_at": row.created_at, "expires_on": row.expires_on,
            "expired": row.expires_on < today, "removed": row.removed_at is not None}


def exception_view(row: BcException, today: date) -> ExceptionView:
    from opgov.results.compat import ExceptionView

    return ExceptionView(**_view_fields(row, today))


def list_exceptions(ctx: Ctx, *, include_removed: bool = False) -> list[ExceptionView]:
    from sqlalchemy import select

    from opgov.db.models import BcException

    query = select(BcException).order_by(BcException.id)
    if not include_removed:
        query = query.where(BcException.removed_at.is_(None))
    today = ctx.now().date()
    return [exception_view(row, today) for row in ctx.session.scalars(query)]


def exceptions(ctx: Ctx, *, all: bool = False) -> list[ExceptionView]:  # noqa: A002 - the API's query parameter
    """``opgov exceptions list`` (``GET /api/v1/exceptions``): :func:`list_exceptions`, ``all`` with the
    removed ones."""
    return list_exceptions(ctx, include_removed=all)


def remove_exception(ctx: Ctx, exception_id: int) -> ExceptionView:
    from opgov.db.models import BcException
    from opgov.services.common import log_event, require

    from opgov.db.limits import MAX_INTEGER

    row = ctx.session.get(BcException, exception_id) if 0 < exception_id <= MAX_INTEGER else None
    if row is None:
        from opgov.core.errors import NotFound

        raise NotFound(f"unknown exception {exception_id} (see `opgov exceptions list`)")
    if row.removed_at is not None:
        raise PolicyRefusal(f"exception {exception_id} ({row.pattern}) was already removed by {row.removed_by}")
    require(ctx, "exceptions", "remove BC exceptions")
    row.removed_at, row.removed_by = ctx.now(), ctx.actor
    log_event(ctx, "exception.remove", f"exception:{row.id}", before={"pattern": row.pattern})
    return exception_view(row, ctx.now().date())
