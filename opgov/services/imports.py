"""Import one snapshot of native_functions.yaml: a single transaction."""

from __future__ import annotations

import dataclasses
from collections import Counter
from itertools import chain
from typing import Callable, Iterator

from sqlalchemy import bindparam, case, insert, select, update

from opgov.db import entries as stored
from opgov.db.bulk import insert_rows
from opgov.db.tables import operators, schema_versions, snapshots
from opgov.core.errors import BadInput, PolicyRefusal
from opgov.core.names import from_func_name
from opgov.core.tags import judge_tags, next_category, tags_edited
from opgov.formats.files import Content
from opgov.formats.registry import Registry, read_registry
from opgov.results.imports import ImportResult
from opgov.reads.common import Ctx, latest_snapshot_id
from opgov.services.common import append_events_now, log_event, require, serialize

def list_snapshots(ctx: Ctx) -> list:
    """Every imported snapshot in the order of history, oldest first
    (:class:`~opgov.results.imports.SnapshotView`)."""
    from opgov.reads.common import is_historical
    from opgov.results.imports import SnapshotView

    s = snapshots.c
    return [SnapshotView(id=r.id, label=r.label, source=r.source, content_hash=r.content_hash,
                         imported_at=r.imported_at, actor=r.actor, operators=r.operator_count, position=r.position,
                         historical=is_historical(r.stats))
            for r in ctx.session.execute(select(s.id, s.label, s.source, s.content_hash, s.imported_at, s.actor,
                                                s.operator_count, s.position, s.stats).order_by(s.position))]


def _snapshot_stats(ctx: Ctx) -> dict:
    """Counts per category and lifecycle of the operators present now (stored per snapshot)."""
    c = operators.c
    rows = ctx.session.execute(select(c.category, c.lifecycle, c.kind).where(c.present)).all()
    return {"category": dict(Counter(r.category for r in rows)),
            "lifecycle": dict(Counter(r.lifecycle for r in rows)),
            "core_functional": sum(1 for r in rows if r.category == "core" and r.kind == "functional"),
            "present": len(rows)}


def version_of(label: str):
    """The release a label names (``2.6.0``, ``v2.13.0``, ``2.14.0rc1``) as a comparable
    :class:`packaging.version.Version`, or None when the label is not a version."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(label.strip())
    except InvalidVersion:
        return None


def _place(session, label: str, latest_id: int | None):
    """``(latest label, position)`` when ``label`` is an older release than the latest snapshot's
    (both labels read as versions): ``position`` is the place in history it takes, that of the
    oldest snapshot whose label is a newer release; else None. Labels decide, not file times or
    contents: a release's yaml carries neither a date nor a version."""
    if latest_id is None:
        return None
    s = snapshots.c
    mine = version_of(label)
    if mine is None:
        return None
    rows = session.execute(select(s.id, s.label, s.position)).all()
    latest_label = next(r.label for r in rows if r.id == latest_id)
    latest_version = version_of(latest_label)
    if latest_version is None or mine >= latest_version:
        return None
    newer = [r.position for r in rows if (v := version_of(r.label)) is not None and v > mine]
    return latest_label, min(newer)


def import_snapshot(ctx: Ctx, path: str, *, label: str, tags_yaml: str | None = None,
                    progress: Callable[[str], None] | None = None, registry: Registry | None = None,
                    historical: bool = False) -> ImportResult:
    """Record a snapshot: operators added, removed and schema-changed since the previous one.

    ``ctx.session`` may be a Core connection: this use case needs no ORM. ``registry`` is the
    file already read (:func:`opgov.formats.registry.parse_registry` of what a command read or a client
    uploaded: :func:`import_file`), else it is read here.

    A release older than the latest snapshot (by their labels read as versions: ``2.6.0`` after
    ``2.13.0``) is refused (exit 1): it would become the latest and report the newer operators as
    removed. With ``historical=True`` it is stored in its place in history instead
    (:func:`_import_historical`).

    Returns an :class:`~opgov.results.imports.ImportResult` (a dataclass: no pydantic).
    """
    require(ctx, "import", "import snapshots")
    serialize(ctx, "import")
    if not label.strip():
        raise BadInput("the label must not be empty")
    say = progress or (lambda _msg: None)
    say(f"reading {path}")
    if registry is None:
        registry = read_registry(path, tags_yaml=tags_yaml)
    session = ctx.session

    existing = session.execute(select(snapshots.c.content_hash, snapshots.c.operator_count)
                               .where(snapshots.c.label == label)).first()
    if existing is not None:
        if existing.content_hash == registry.content_hash:
            return ImportResult(label=label, operators=existing.operator_count, unchanged_file=True)
        raise BadInput(f"snapshot {label!r} already exists with different content; choose another label")

    previous_id = latest_snapshot_id(session)
    place = _place(session, label, previous_id)
    if historical:
        if place is None:
            raise BadInput(f"--historical places an older release in history, but {label!r} is not older than "
                           "the latest snapshot (labels are compared as versions, e.g. 2.6.0 < 2.13.0)")
        return _import_historical(ctx, registry, path, label, position=place[1])
    if place is not None:
        raise PolicyRefusal(f"snapshot {label} is older than the latest snapshot {place[0]}: importing it as the "
                            f"latest would report {place[0]}'s operators as removed; pass --historical to store "
                            "it in its place in history", subject=label)
    position = stored.latest_position(session) + 1
    snapshot_id = session.execute(insert(snapshots).returning(snapshots.c.id), [{
        "label": label, "source": str(path), "content_hash": registry.content_hash, "imported_at": ctx.now(),
        "actor": ctx.actor, "operator_count": len(registry.ops), "stats": {}, "position": position}]).scalar_one()
    say(f"comparing {len(registry.ops)} operators with the database")
    current = stored.latest_entries(session)  # the previous snapshot's entries
    result = _apply(ctx, registry, snapshot_id, position, label, previous_id=previous_id, current=current)
    if previous_id is not None:
        from opgov.services.compat import record_import_findings

        say("checking compatibility against the previous snapshot")
        # both sides from what the import holds already: the previous entries and the file
        recorded = record_import_findings(ctx, previous_id, snapshot_id, held_before=current, registry=registry)
        counts = dict(recorded.by_severity)
        for severity, n in result.findings.items():  # the tag findings _apply recorded
            counts[severity] = counts.get(severity, 0) + n
        result.findings.clear()  # the rules' counts first, then the tags'
        result.findings.update(counts)
    session.execute(update(snapshots).where(snapshots.c.id == snapshot_id).values(stats=_snapshot_stats(ctx)))
    log_event(ctx, "snapshot.import", f"snapshot:{label}",
              after={"source": str(path), "content_hash": registry.content_hash,
                     "operators": len(registry.ops), "added": len(result.added),
                     "removed": len(result.removed), "changed": len(result.changed)})
    return result


def import_file(ctx: Ctx, *, native_functions: Content, label: str, tags: Content | None = None,
                historical: bool = False) -> ImportResult:
    """:func:`import_snapshot` of a native_functions.yaml (and its tags.yaml) already read: the
    files a command read, or those uploaded to `opgov serve`. Messages and the snapshot's source
    name them as the user did."""
    from opgov.formats.registry import parse_registry

    require(ctx, "import", "import snapshots")  # before reading what a member without the role sent
    registry = parse_registry(native_functions.data, native_functions.name, tags=tags)
    native_functions.release()  # the registry holds what the import needs of it
    return import_snapshot(ctx, native_functions.name, label=label, registry=registry, historical=historical)


def _import_historical(ctx: Ctx, registry: Registry, path: str, label: str, *, position: int) -> ImportResult:
    """Store an older release in its place in history, at ``position`` (the newer releases move up
    one): its
    entries (each operator's history gains it), and rows for operators the database never saw
    (not present now). The latest snapshot, every operator's current state and the findings stay:
    nothing was added or removed *now*, so no finding is recorded."""
    session = ctx.session
    c = operators.c
    ids = dict(session.execute(select(c.qualname, c.id)).all())
    before = session.execute(select(snapshots.c.id).where(snapshots.c.position == position)).scalar_one()
    stored.make_room(session, position)
    snapshot_id = session.execute(insert(snapshots).returning(snapshots.c.id), [{
        "label": label, "source": str(path), "content_hash": registry.content_hash, "imported_at": ctx.now(),
        "actor": ctx.actor, "operator_count": len(registry.ops), "position": position,
        "stats": {"historical": True, "before": before,
                  "category": dict(Counter(op.suggested_category for op in registry.ops.values())),
                  "lifecycle": {"active": len(registry.ops)},
                  "core_functional": sum(1 for op in registry.ops.values()
                                         if op.suggested_category == "core" and op.kind == "functional"),
                  "present": len(registry.ops)}}]).scalar_one()
    unseen = [name for name in registry.ops if name not in ids]
    if unseen:
        rows = []
        for name in unseen:
            op = registry.ops[name]
            parts = from_func_name(op.func_name)
            category = op.suggested_category
            rows.append({"qualname": name, "namespace": parts.namespace, "name": parts.name,
                         "overload": parts.overload, "schema": op.schema, "kind": op.kind, "tags": list(op.tags),
                         "autogen_of": op.autogen_of, "composite_implicit": op.composite_implicit, "present": False,
                         "first_snapshot_id": snapshot_id, "last_snapshot_id": snapshot_id, "category": category,
                         "category_source": "yaml-tag" if category == "core" else "heuristic",
                         "needs_review": False, "lifecycle": "active", "lifecycle_since": None,
                         "replacement": None, "version": 1, "delegate": op.delegate})
        insert_rows(session, operators, rows)
        ids.update(session.execute(select(c.qualname, c.id).where(c.first_snapshot_id == snapshot_id)).all())
    stored.insert_historical(session, snapshot_id, position,
                             [(ids[name], op.schema, list(op.tags)) for name, op in registry.ops.items()],
                             [(ids[name], op.line) for name, op in registry.ops.items()])
    log_event(ctx, "snapshot.import", f"snapshot:{label}",
              after={"source": str(path), "content_hash": registry.content_hash, "operators": len(registry.ops),
                     "historical": True, "before": before})
    return ImportResult(label=label, operators=len(registry.ops), historical=True)


def _category_reason(label: str, category: str, source: str) -> str:
    """Why an import moved an undecided operator to ``category`` (the file says so)."""
    if category == "core":
        return f"{label} tags it core"
    if category == "decomposable":
        return f"{label} gives it a CompositeImplicitAutograd kernel (a decomposition)"
    return f"{label} neither tags it core nor gives it a CompositeImplicitAutograd kernel"


@dataclasses.dataclass
class _Changes:
    """What an import writes, gathered as the registry is compared with the operator rows: the
    operators new to the database, one small tuple each (name, category, its source, review, why),
    whose rows, schema versions and events are built and written a chunk at a time (CHUNK), never all
    at once: an upload may add thousands (issue 42: an import costs a small multiple of its file);
    the rows to update, the schema versions, the events and the governance tag findings."""

    session: object
    snapshot_id: int
    previous_id: int | None
    label: str
    result: ImportResult
    fresh: list[str] = dataclasses.field(default_factory=list)
    # and for each, its (category, source, review, why): a few distinct ones, each held once
    records: list[tuple[str, str, bool, str | None]] = dataclasses.field(default_factory=list)
    distinct: dict[tuple, tuple] = dataclasses.field(default_factory=dict)
    updates: list[dict] = dataclasses.field(default_factory=list)
    versions: list[dict] = dataclasses.field(default_factory=list)
    events: list[dict] = dataclasses.field(default_factory=list)
    tag_findings: list[dict] = dataclasses.field(default_factory=list)

    def finding(self, name: str, op, old_schema, f) -> None:
        self.tag_findings.append({"snapshot_id": self.snapshot_id, "base_snapshot_id": self.previous_id,
                                  "operator": name, "kind": "policy", "rule": f.rule, "severity": f.severity,
                                  "message": f.message, "old_schema": old_schema, "new_schema": op.schema,
                                  "line": op.line})
        if len(self.tag_findings) >= CHUNK:
            self.write_findings()

    def write_findings(self) -> None:
        from opgov.db.tables import findings

        insert_rows(self.session, findings, self.tag_findings)
        for f in self.tag_findings:
            self.result.findings[f["severity"]] = self.result.findings.get(f["severity"], 0) + 1
        self.tag_findings.clear()


def _apply(ctx: Ctx, registry: Registry, snapshot_id: int, position: int, label: str, *,
           previous_id: int | None, current: dict) -> ImportResult:
    """Bring the operator rows up to ``registry`` and record what the snapshot holds (``current``:
    the previous snapshot's entries). Only rows whose entry appeared, changed or left are written:
    an unchanged import writes no operator row.

    Nothing about an operator changes silently: each operator whose record the import changes
    (present, schema, tags, category, review) gets an event of this import naming the snapshot,
    and each governance tag edit (:mod:`opgov.core.tags`) is also a finding with check-pr's rule id."""
    session = ctx.session
    baseline = previous_id is None
    changes = _Changes(session, snapshot_id, previous_id, label,
                       ImportResult(label=label, operators=len(registry.ops), baseline=baseline))
    c = operators.c
    known = {row.qualname: row for row in session.execute(
        select(c.id, c.qualname, c.schema, c.present, c.category_source, c.category, c.lifecycle,
               c.autogen_of, c.kind, c.composite_implicit, c.needs_review, c.review_reason, c.delegate))}
    # the last tags of operators absent from the previous snapshot (few): what a reappearance changes
    last_tags = dict(session.execute(select(c.id, c.tags).where(c.present.is_(False))).all()) if not baseline else {}
    # a present operator's tags are its entry's in the previous snapshot (operators.tags is not
    # read for them: decoding every row's JSON costs more than the whole comparison)
    new_reason = f"new in {label}"  # one string for every new functional operator's review
    for name, op in registry.ops.items():
        row = known.get(name)
        if row is None:
            _compare_new(changes, name, op, baseline, new_reason)
        else:
            _compare_known(changes, name, op, row, current, last_tags)
    removed = [row for name, row in known.items() if row.present and name not in registry.ops]
    changes.result.removed.extend(row.qualname for row in removed)
    _update_rows(session, changes.updates, removed, previous_id)
    ids = {row.qualname: row.id for row in known.values()}
    del known
    _insert_rows(changes, ids, registry.ops)
    stored.append_latest(session, snapshot_id, position,
                         ((ids[name], op.schema, op.tags) for name, op in registry.ops.items()),
                         ((ids[name], op.line) for name, op in registry.ops.items()), current)
    # the first snapshot is one event; afterwards every change is its own, appended a chunk at a time
    append_events_now(ctx, chain(changes.events, _removal_events(removed, label),
                                 () if baseline else _added_events(changes, registry.ops)))
    return changes.result


def _compare_new(changes: _Changes, name: str, op, baseline: bool, new_reason: str) -> None:
    """An operator new to the database: its category, review and why, its tag findings."""
    functional = op.kind == "functional"
    label, result = changes.label, changes.result
    if baseline:
        # the first snapshot's functional operators PyTorch does not tag core are undecided:
        # the category is the import's guess until the committee decides (so a history
        # that starts at any release can be reviewed); a core tag is PyTorch's own record
        category, source = next_category(None, None, op.suggested_category)
        review = functional and category != "core"
        reason = f"new in {label} (the first snapshot)" if review else None
    else:
        verdict = judge_tags(name, label, None, op.tags, category=None, category_source=None,
                             suggested=op.suggested_category, needs_review=functional,
                             review_reason=new_reason if functional else None, functional=functional)
        category, source = verdict.category, verdict.category_source
        review, reason = verdict.needs_review, verdict.review_reason
        for f in verdict.findings:
            changes.finding(name, op, None, f)
        if verdict.governance:
            result.tags_changed.append(f"{name}: {' '.join(verdict.governance)}")
    changes.fresh.append(name)
    record = (category, source, review, reason)
    changes.records.append(changes.distinct.setdefault(record, record))
    result.added.append(name)
    if op.schema is None:
        result.added_autogen.append(name)


def _compare_known(changes: _Changes, name: str, op, row, current: dict, last_tags: dict) -> None:
    """An operator the database has: its record judged again, an event for each change, its row
    updated when anything of it changed."""
    functional = op.kind == "functional"
    kept = row.present and row.id in current
    tags_before = current[row.id][1] if kept else None
    verdict = judge_tags(name, changes.label, tags_before, op.tags, category=row.category,
                         category_source=row.category_source, suggested=op.suggested_category,
                         lifecycle=row.lifecycle, needs_review=row.needs_review, review_reason=row.review_reason,
                         decided=row.category if row.category_source == "decision" else None,
                         functional=functional)
    if not functional and verdict.needs_review and (verdict.review_reason or "").startswith("new in "):
        # it became a variant (rrelu_with_noise now writes to noise): it follows its functional
        # operator's category, nothing for the committee to decide of it alone
        verdict = dataclasses.replace(verdict, needs_review=False, review_reason=None)
    change: dict = {"_id": row.id, "schema": op.schema, "tags": list(op.tags), "present": True,
                    "last_snapshot_id": changes.snapshot_id, "kind": op.kind,
                    "composite_implicit": op.composite_implicit, "autogen_of": op.autogen_of,
                    "category": verdict.category, "category_source": verdict.category_source,
                    "needs_review": verdict.needs_review, "review_reason": verdict.review_reason,
                    "delegate": op.delegate}
    for f in verdict.findings:
        changes.finding(name, op, row.schema, f)
    if verdict.governance:
        changes.result.tags_changed.append(f"{name}: {' '.join(verdict.governance)}")
    _record_event(changes, name, op, row, verdict, tags_before, last_tags)
    _entry_event(changes, name, op, row)
    if (row.present, row.schema, tags_before, row.kind, row.composite_implicit, row.autogen_of, row.category,
            row.category_source, row.needs_review, row.review_reason, row.delegate) != (
            True, op.schema, change["tags"], op.kind, op.composite_implicit, op.autogen_of, change["category"],
            change["category_source"], change["needs_review"], change["review_reason"], op.delegate):
        changes.updates.append(change)


def _record_event(changes: _Changes, name: str, op, row, verdict, tags_before, last_tags: dict) -> None:
    """The event of a change to an operator's record (its presence, tags, category, review), if any."""
    label = changes.label
    record_before = {"category": row.category, "category_source": row.category_source,
                     "needs_review": row.needs_review}
    record_after = {"category": verdict.category, "category_source": verdict.category_source,
                    "needs_review": verdict.needs_review}
    if not row.present:
        changes.result.added.append(name)
        old_tags = list(last_tags.get(row.id) or ())
        changes.events.append({"action": "operator.reappeared", "subject": name,
                               "before": {"tags": old_tags, **record_before},
                               "after": {"schema": op.schema, "tags": list(op.tags), **record_after,
                                         "snapshot": label},
                               "reason": " ".join([f"back in {label}", *tags_edited(old_tags, op.tags)])
                                         + (f"; {verdict.review_reason}" if verdict.review_reason
                                            and verdict.review_reason != row.review_reason else "")})
    elif verdict.edits:
        reason = f"{label} {' '.join(verdict.edits)}"
        if verdict.governance and verdict.review_reason and verdict.review_reason != row.review_reason:
            others = [e for e in verdict.edits if e not in verdict.governance]
            reason = verdict.review_reason + (f" (and {' '.join(others)})" if others else "")
        elif verdict.governance:
            reason += " — " + "; ".join(f.message for f in verdict.findings)
        elif record_after["category"] != record_before["category"]:
            reason += f" — {_category_reason(label, verdict.category, verdict.category_source)}"
        changes.events.append({"action": "operator.tags_changed", "subject": name,
                               "before": {"tags": list(tags_before or ()), **record_before},
                               "after": {"tags": list(op.tags), **record_after, "snapshot": label},
                               "reason": reason})
    elif record_after != record_before:  # the file's kernels moved an undecided operator
        changes.events.append({"action": "operator.category_changed", "subject": name, "before": record_before,
                               "after": {**record_after, "snapshot": label},
                               "reason": _category_reason(label, verdict.category, verdict.category_source)})


def _entry_event(changes: _Changes, name: str, op, row) -> None:
    """The schema version and event of a change to an operator's entry (its schema, its own entry
    where torchgen generated it, its kind), if any."""
    label = changes.label
    if row.schema != op.schema:
        changes.versions.append({"operator_id": row.id, "snapshot_id": changes.snapshot_id, "schema": op.schema})
        if row.present and row.schema is None and row.autogen_of is not None and op.schema is not None:
            # not a schema change: torchgen generated it from another entry until now
            changes.result.own_entry[name] = row.autogen_of
            changes.events.append({"action": "operator.own_entry", "subject": name,
                                   "before": {"autogen_of": row.autogen_of},
                                   "after": {"schema": op.schema, "snapshot": label}})
        elif row.present:
            changes.result.changed.append(name)
            changes.events.append({"action": "operator.schema_changed", "subject": name,
                                   "before": {"schema": row.schema},
                                   "after": {"schema": op.schema, "snapshot": label}})
    elif row.present and (row.kind, row.autogen_of) != (op.kind, op.autogen_of):
        changes.events.append({"action": "operator.entry_changed", "subject": name,
                               "before": {"kind": row.kind, "autogen_of": row.autogen_of},
                               "after": {"kind": op.kind, "autogen_of": op.autogen_of, "snapshot": label}})


def _update_rows(session, updates: list[dict], removed: list, previous_id: int | None) -> None:
    """The rows of the operators that changed, and of those that left."""
    table = operators
    if updates:
        session.execute(
            update(table).where(table.c.id == bindparam("_id")).values(
                schema=bindparam("schema"), tags=bindparam("tags"), present=bindparam("present"),
                last_snapshot_id=bindparam("last_snapshot_id"), kind=bindparam("kind"),
                composite_implicit=bindparam("composite_implicit"), autogen_of=bindparam("autogen_of"),
                # re-checked as the row is written, not as it was read: a decision made by then stays
                category=case((table.c.category_source == "decision", table.c.category),
                              else_=bindparam("category")),
                category_source=case((table.c.category_source == "decision", table.c.category_source),
                                     else_=bindparam("category_source")),
                needs_review=bindparam("needs_review"), review_reason=bindparam("review_reason"),
                delegate=bindparam("delegate"), version=table.c.version + 1),
            updates, execution_options={"synchronize_session": False})
    if removed:
        # last_snapshot_id: the last snapshot that held it (kept up to date only once it has left)
        session.execute(update(table).where(table.c.id == bindparam("_id")).values(
            present=False, last_snapshot_id=previous_id, version=table.c.version + 1),
            [{"_id": r.id} for r in removed], execution_options={"synchronize_session": False})


def _insert_rows(changes: _Changes, ids: dict[str, int], ops: dict) -> None:
    """The rows of the operators new to the database (their ids added to ``ids``), the schema
    versions and the findings left to write."""
    session, snapshot_id, fresh = changes.session, changes.snapshot_id, changes.fresh
    for start in range(0, len(fresh), CHUNK):  # plain executemany: faster than RETURNING rows
        insert_rows(session, operators, [_new_row(name, ops[name], snapshot_id, *record) for name, record
                                         in zip(fresh[start:start + CHUNK], changes.records[start:start + CHUNK])])
    if fresh:
        ids.update((qualname, op_id) for op_id, qualname in session.execute(
            select(operators.c.id, operators.c.qualname).where(operators.c.first_snapshot_id == snapshot_id)))
    insert_rows(session, schema_versions, changes.versions)
    for start in range(0, len(fresh), CHUNK):
        insert_rows(session, schema_versions, [{"operator_id": ids[name], "snapshot_id": snapshot_id,
                                                "schema": ops[name].schema} for name in fresh[start:start + CHUNK]])
    if changes.tag_findings:
        changes.write_findings()


def _removal_events(removed: list, label: str) -> Iterator[dict]:
    """The events of the operators that left, built as they are appended."""
    for row in removed:
        yield {"action": "operator.removed", "subject": row.qualname,
               "before": {"schema": row.schema, "category": row.category, "lifecycle": row.lifecycle},
               "after": {"snapshot": label},
               "reason": None if row.lifecycle == "deleted" else "removed without completing deprecation"}


def _added_events(changes: _Changes, ops: dict) -> Iterator[dict]:
    """The events of the operators new to the database, built as they are appended."""
    for name, (category, source, review, reason) in zip(changes.fresh, changes.records):
        op = ops[name]
        yield {"action": "operator.added", "subject": name,
               "after": {"schema": op.schema, "tags": list(op.tags), "category": category,
                         "category_source": source, "needs_review": review, "snapshot": changes.label},
               "reason": reason}


# operators written, events appended, findings stored a chunk at a time (an import of thousands
# of new operators holds a chunk of each, not all of them)
CHUNK = 500


def _new_row(name: str, op, snapshot_id: int, category: str, source: str, review: bool,
             reason: str | None) -> dict:
    """The row of an operator new to the database."""
    parts = from_func_name(op.func_name)
    return {"qualname": name, "namespace": parts.namespace, "name": parts.name, "overload": parts.overload,
            "schema": op.schema, "kind": op.kind, "tags": list(op.tags), "autogen_of": op.autogen_of,
            "composite_implicit": op.composite_implicit, "present": True,
            "first_snapshot_id": snapshot_id, "last_snapshot_id": snapshot_id, "category": category,
            "category_source": source,
            # new functional operators wait for the committee; out=/in-place variants follow them
            "needs_review": review, "review_reason": reason,
            "lifecycle": "active", "lifecycle_since": None, "replacement": None, "version": 1,
            "delegate": op.delegate}
