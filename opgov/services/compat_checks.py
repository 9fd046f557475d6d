"""Compatibility use cases: findings of an import, ``check-bc`` between any two sources, and the
BC exceptions. The rules and the policy themselves live in :mod:`opgov.core.compat` (pure)."""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from dataclasses import dataclass
from datetime import date

from typing import TYPE_CHECKING

from opgov.core.errors import BadInput

if TYPE_CHECKING:
    from opgov.db.models import BcException
    from opgov.services.common import Ctx
    from opgov.services.results import ExceptionAdded, ExceptionView

# SQLAlchemy, the ORM models and pydantic are imported inside the functions that use them:
# `opgov check-bc` of two files needs none of them (docs/performance.md).

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


def _exceptions(session, today: date) -> list:
    from sqlalchemy import select

    from opgov.core.compat import BcException as Rule
    from opgov.db import tables

    e = tables.bc_exceptions.c
    return [Rule(pattern=r.pattern, reason=r.reason, created_by=r.created_by, expires_on=r.expires_on)
            for r in session.execute(select(e.pattern, e.reason, e.created_by, e.expires_on)
                                     .where(e.removed_at.is_(None)).order_by(e.id))]


def _decided(session) -> tuple[set[str], set[str], set[str]]:
    """(core by decision, not-core by decision, deleted) from the database."""
    from sqlalchemy import select

    from opgov.db import tables

    c = tables.operators.c
    rows = session.execute(select(c.qualname, c.category, c.category_source, c.lifecycle)).all()
    core = {r.qualname for r in rows if r.category_source == "decision" and r.category == "core"}
    not_core = {r.qualname for r in rows if r.category_source == "decision" and r.category != "core"}
    deleted = {r.qualname for r in rows if r.lifecycle == "deleted"}
    return core, not_core, deleted


def raw_findings(old: Side, new: Side) -> list:
    """The rules' raw findings (before policy) between two sides (check-bc and check-pr share them)."""
    from opgov.core import compat
    from opgov.core.schema import FunctionSchema

    # Only changed or removed operators need parsing; dicts keep each file's order, so the
    # findings come out in a stable order (the old file's, then new operators in the new file's).
    changed = [n for n, s in old.schemas.items() if new.schemas.get(n) != s]
    added = {n for n in new.schemas if n not in old.schemas}
    bases = {n.split(".")[0] for n in changed}
    old_map = {n: FunctionSchema.parse(old.schemas[n]) for n in changed}
    new_map = {n: FunctionSchema.parse(s) for n, s in new.schemas.items() if n in added or n.split(".")[0] in bases}
    return [f for f in compat.compare(old_map, new_map) if f.kind != "new" or f.operator in added]


def compare_sides(old: Side, new: Side, *, exceptions: list, deleted: set[str], today: date):
    """Run the rules over two sides and apply the policy; returns a ``CheckReport``."""
    from opgov.core import compat
    from opgov.render.compat import make_report

    raw = raw_findings(old, new)

    def locate(finding) -> tuple[str | None, int | None]:
        side = new if finding.operator in new.lines else old
        if side.revision is not None and side is old:
            # a removal seen at another git revision: name the file, not a line of a version the
            # reader (or GitHub's annotation) does not have
            return side.file, None
        return side.file, side.lines.get(finding.operator)

    findings = compat.apply_policy(raw, core=old.core, exceptions=exceptions, completed_deletions=deleted,
                                   today=today, locate=locate)
    return make_report(findings, compat.expired_exceptions(exceptions, today))


def record_import_findings(ctx: Ctx, previous_id: int, snapshot_id: int) -> dict[str, int]:
    """Store the findings of snapshot ``snapshot_id`` against ``previous_id``; return counts per
    severity. Works on a Core connection (the import runs without the ORM)."""
    from sqlalchemy import insert

    from opgov.db import tables

    session = ctx.session
    old, new = snapshot_side(session, previous_id), snapshot_side(session, snapshot_id)
    today = ctx.now().date()
    _, _, deleted = _decided(session)
    report = compare_sides(old, new, exceptions=_exceptions(session, today), deleted=deleted, today=today)
    rows = [{"snapshot_id": snapshot_id, "base_snapshot_id": previous_id, "operator": f.operator, "kind": f.kind,
             "rule": f.rule, "severity": f.severity, "message": f.message, "old_schema": f.old_schema,
             "new_schema": f.new_schema, "line": f.line} for f in report.findings]
    if rows:
        session.execute(insert(tables.findings), rows)
    return dict(Counter(f.severity for f in report.findings))


def snapshot_side(session, snapshot_id: int) -> Side:
    """One snapshot as a side of a comparison (Core only)."""
    from sqlalchemy import select

    from opgov.db import tables

    op, entry, snap = tables.operators.c, tables.snapshot_entries.c, tables.snapshots.c
    label, source = session.execute(select(snap.label, snap.source).where(snap.id == snapshot_id)).one()
    rows = session.execute(select(op.qualname, entry.schema, entry.line, entry.tags)
                           .join(tables.operators, op.id == entry.operator_id)
                           .where(entry.snapshot_id == snapshot_id)).all()
    decided_core, decided_other, _ = _decided(session)
    core = {r.qualname for r in rows if "core" in (r.tags or [])}
    core = (core - decided_other) | (decided_core & {r.qualname for r in rows})
    return Side(label=label, file=source,
                schemas={r.qualname: r.schema for r in rows if r.schema is not None},
                lines={r.qualname: r.line for r in rows}, core=core)


def _yaml_side(label: str, path: str, text: str | None = None) -> Side:
    from opgov.formats.registry import read_registry

    # a comparison, not a build: whether torchgen accepts each file is checked where it is built
    registry = read_registry(path, text=text, buildable=False)
    return Side(label=label, file=path, schemas={n: op.schema for n, op in registry.ops.items() if op.schema},
                lines={n: op.line for n, op in registry.ops.items()},
                core={n for n, op in registry.ops.items() if "core" in op.tags})


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
    from sqlalchemy import select

    from opgov.db import tables

    snap = tables.snapshots.c
    snapshot_id = session.scalar(select(snap.id).where(snap.label == spec))
    if snapshot_id is None:
        labels = session.scalars(select(snap.label).order_by(snap.id)).all()
        raise BadInput(f"{spec}: no such file, and no snapshot of that label (known: {', '.join(labels) or 'none'})")
    return snapshot_side(session, snapshot_id)


def check_bc(old_spec: str, new_spec: str, *, session=None, today: date):
    """Compare two sources. With a database: its decisions (core-ness), exceptions and completed
    deletions apply too; without one, core-ness comes from the old side's ``core`` tags."""
    old, new = resolve_side(old_spec, session), resolve_side(new_spec, session)
    exceptions, deleted = [], set()
    if session is not None:
        decided_core, decided_other, deleted = _decided(session)
        old.core = (old.core - decided_other) | (decided_core & set(old.schemas))
        exceptions = _exceptions(session, today)
    report = compare_sides(old, new, exceptions=exceptions, deleted=deleted, today=today)
    if session is not None:  # BC breaks of non-core operators: covered by an upgrader, or the one to add
        from opgov.services.upgraders import cover_findings

        report = cover_findings(session, report, old.core)
    return report


def check_bc_texts(old: tuple[str, str], new: tuple[str, str], *, session, today: date):
    """:func:`check_bc` of two native_functions.yaml given as (name, text), e.g. uploaded to the
    service; findings name the files by ``name``."""
    old_side, new_side = _yaml_side(old[0], old[0], text=old[1]), _yaml_side(new[0], new[0], text=new[1])
    decided_core, decided_other, deleted = _decided(session)
    old_side.core = (old_side.core - decided_other) | (decided_core & set(old_side.schemas))
    return compare_sides(old_side, new_side, exceptions=_exceptions(session, today), deleted=deleted, today=today)


# --- exceptions ---------------------------------------------------------------------------------------


def add_exception(ctx: Ctx, pattern: str, *, reason: str, expires: date) -> ExceptionAdded:
    from sqlalchemy import select

    from opgov.db.models import BcException, Operator
    from opgov.services.common import log_event, require, require_text
    from opgov.services.results import ExceptionAdded

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
    from opgov.services.results import ExceptionView

    return ExceptionView(**_view_fields(row, today))


def list_exceptions(ctx: Ctx, *, include_removed: bool = False) -> list[ExceptionView]:
    from sqlalchemy import select

    from opgov.db.models import BcException

    query = select(BcException).order_by(BcException.id)
    if not include_removed:
        query = query.where(BcException.removed_at.is_(None))
    today = ctx.now().date()
    return [exception_view(row, today) for row in ctx.session.scalars(query)]


def remove_exception(ctx: Ctx, exception_id: int) -> ExceptionView:
    from opgov.db.models import BcException
    from opgov.services.common import log_event, require

    row = ctx.session.get(BcException, exception_id)
    if row is None:
        from opgov.core.errors import NotFound

        raise NotFound(f"unknown exception {exception_id} (see `opgov exceptions list`)")
    if row.removed_at is not None:
        raise BadInput(f"exception {exception_id} ({row.pattern}) was already removed by {row.removed_by}")
    require(ctx, "exceptions", "remove BC exceptions")
    row.removed_at, row.removed_by = ctx.now(), ctx.actor
    log_event(ctx, "exception.remove", f"exception:{row.id}", before={"pattern": row.pattern})
    return exception_view(row, ctx.now().date())
