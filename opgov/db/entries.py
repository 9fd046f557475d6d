"""What each snapshot holds, stored without repeating what did not change (revision 0009).

An operator's entry — its schema and tags — is stored once for the run of consecutive snapshots
(in the order of history, ``snapshots.position``) that hold it unchanged: a row of ``entry_runs``
with ``first_pos`` and ``last_pos`` (``NULL`` while the run reaches the latest snapshot). An
import of the latest snapshot therefore writes only the entries that appeared, changed or left,
and an unchanged import writes no run at all. Where each entry stands in its file moves with every
edit above it, so the lines are kept apart, one packed blob per snapshot (``snapshot_lines``).

Everything here is Core (no ORM), shared by the import, the readers of snapshots and
migration 0009.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import and_, delete, func, insert, or_, select, update

from opgov.db.bulk import insert_rows
from opgov.db.tables import entry_runs, operators, snapshot_lines, snapshots

_FORMAT = 1  # the first byte of a packed blob


def pack_lines(pairs: Iterable[tuple[int, int]]) -> bytes:
    """``(operator id, line)`` pairs in file order as a small blob: the differences between
    consecutive ids and lines (mostly 1 and a few lines) as little-endian 32-bit integers, deflated."""
    ids, lines = array("i"), array("i")
    last_id = last_line = 0
    for op_id, line in pairs:
        ids.append(op_id - last_id)
        lines.append(line - last_line)
        last_id, last_line = op_id, line
    data = array("i", [len(ids)]) + ids + lines
    if sys.byteorder != "little":
        data.byteswap()
    return bytes([_FORMAT]) + zlib.compress(data.tobytes(), 9)


def unpack_lines(blob: bytes) -> list[tuple[int, int]]:
    """The pairs :func:`pack_lines` packed, in the same order."""
    if not blob or blob[0] != _FORMAT:
        raise ValueError("not a packed line table of a known format")
    data = array("i")
    data.frombytes(zlib.decompress(blob[1:]))
    if sys.byteorder != "little":
        data.byteswap()
    count = data[0]
    pairs, op_id, line = [], 0, 0
    for d_id, d_line in zip(data[1:1 + count], data[1 + count:1 + 2 * count]):
        op_id += d_id
        line += d_line
        pairs.append((op_id, line))
    return pairs


# --- reading ---------------------------------------------------------------------------------


def latest_position(session) -> int:
    """The latest snapshot's position (0 when there is none)."""
    return session.execute(select(func.max(snapshots.c.position))).scalar() or 0


def _at(position: int):
    r = entry_runs.c
    return and_(r.first_pos <= position, or_(r.last_pos.is_(None), r.last_pos >= position))


def entries_at(session, position: int) -> list:
    """The entries of the snapshot at ``position``: rows of (operator_id, schema, tags)."""
    r = entry_runs.c
    return session.execute(select(r.operator_id, r.schema, r.tags).where(_at(position))).all()


def operator_ids_at(session, position: int) -> set[int]:
    r = entry_runs.c
    return set(session.scalars(select(r.operator_id).where(_at(position))))


def lines_of(session, snapshot_id: int) -> dict[int, int]:
    """operator id → the line of its entry in that snapshot's file."""
    blob = session.execute(select(snapshot_lines.c.lines)
                           .where(snapshot_lines.c.snapshot_id == snapshot_id)).scalar_one_or_none()
    return dict(unpack_lines(blob)) if blob is not None else {}


@dataclass(frozen=True)
class Run:
    operator_id: int
    schema: str | None
    tags: tuple[str, ...]
    first_pos: int
    last_pos: int | None  # None: up to the latest snapshot


def runs_of(session, operator_ids: Iterable[int]) -> list[Run]:
    """The runs of these operators, by operator and position."""
    r = entry_runs.c
    ids = list(operator_ids)
    if not ids:
        return []
    return [Run(row.operator_id, row.schema, tuple(row.tags or ()), row.first_pos, row.last_pos)
            for row in session.execute(select(r.operator_id, r.schema, r.tags, r.first_pos, r.last_pos)
                                       .where(r.operator_id.in_(ids)).order_by(r.operator_id, r.first_pos))]


def holders(session, operator_ids: Iterable[int]) -> dict[int, list[tuple[int, int | None]]]:
    """operator id → the position ranges ``(first, last or None)`` of the snapshots holding it."""
    held: dict[int, list[tuple[int, int | None]]] = {}
    for run in runs_of(session, operator_ids):
        spans = held.setdefault(run.operator_id, [])
        if spans and spans[-1][1] is not None and spans[-1][1] + 1 == run.first_pos:
            spans[-1] = (spans[-1][0], run.last_pos)  # a change of schema or tags, not a gap
        else:
            spans.append((run.first_pos, run.last_pos))
    return held


def held_at(spans: Sequence[tuple[int, int | None]], position: int) -> bool:
    return any(first <= position and (last is None or position <= last) for first, last in spans)


# --- writing ---------------------------------------------------------------------------------

Entry = tuple[int, "str | None", list]  # (operator id, schema, tags)


def latest_entries(session) -> dict[int, tuple[str | None, list]]:
    """operator id → (schema, tags) of the latest snapshot's entries: the runs still open."""
    r = entry_runs.c
    return {row.operator_id: (row.schema, list(row.tags or ()))
            for row in session.execute(select(r.operator_id, r.schema, r.tags).where(r.last_pos.is_(None)))}


def append_latest(session, snapshot_id: int, position: int, entries: Sequence[Entry],
                  lines: Iterable[tuple[int, int]], current: dict[int, tuple[str | None, list]] | None = None) -> None:
    """Record the snapshot at ``position`` (the new latest, right after the previous latest): close
    the runs whose entry changed or left, open runs for the entries that appeared or changed.
    ``current`` is :func:`latest_entries` if the caller read it already."""
    if current is None:
        current = latest_entries(session)
    opened, closed = [], []
    seen = set()
    for op_id, schema, tags in entries:
        seen.add(op_id)
        before = current.get(op_id)
        if before == (schema, list(tags)):
            continue
        if before is not None:
            closed.append(op_id)
        opened.append({"operator_id": op_id, "schema": schema, "tags": list(tags), "first_pos": position,
                       "last_pos": None})
        if len(opened) >= _CHUNK:  # the new runs a chunk at a time: an import may open thousands
            _close(session, closed, position)
            insert_rows(session, entry_runs, opened)
            opened.clear()
    closed.extend(op_id for op_id in current if op_id not in seen)
    _close(session, closed, position)
    insert_rows(session, entry_runs, opened)
    _record_lines(session, snapshot_id, lines)


_CHUNK = 1000


def _close(session, closed: list[int], position: int) -> None:
    """End at ``position - 1`` the open runs of the operators ``closed`` names (and forget them)."""
    r = entry_runs.c
    if closed:
        session.execute(update(entry_runs).where(r.operator_id.in_(closed), r.last_pos.is_(None))
                        .values(last_pos=position - 1))
        closed.clear()


def _record_lines(session, snapshot_id: int, lines: Iterable[tuple[int, int]]) -> None:
    session.execute(insert(snapshot_lines), [{"snapshot_id": snapshot_id, "lines": pack_lines(lines)}])


def make_room(session, position: int) -> None:
    """Move every snapshot and run at ``position`` or later up one, leaving ``position`` free for a
    release placed in history (each run that spanned it spans the new place too, until
    :func:`insert_historical` says otherwise)."""
    r, s = entry_runs.c, snapshots.c
    session.execute(update(snapshots).where(s.position >= position).values(position=s.position + 1))
    session.execute(update(entry_runs).where(r.first_pos >= position).values(first_pos=r.first_pos + 1))
    session.execute(update(entry_runs).where(r.last_pos >= position).values(last_pos=r.last_pos + 1))


def insert_historical(session, snapshot_id: int, position: int, entries: Sequence[Entry],
                      lines: Iterable[tuple[int, int]]) -> None:
    """Record the snapshot at ``position`` (made free by :func:`make_room`) between the snapshots at
    ``position - 1`` and ``position + 1``: split the runs that spanned it where its entry differs
    or is missing, extend or join the neighbouring runs where its entry is the same."""
    r = entry_runs.c
    rows = session.execute(select(r.id, r.operator_id, r.schema, r.tags, r.first_pos, r.last_pos).where(
        r.first_pos <= position + 1, or_(r.last_pos.is_(None), r.last_pos >= position - 1))).all()
    spanning, left, right = {}, {}, {}
    for row in rows:
        if row.first_pos < position and (row.last_pos is None or row.last_pos > position):
            spanning[row.operator_id] = row
        elif row.last_pos == position - 1:
            left[row.operator_id] = row
        elif row.first_pos == position + 1:
            right[row.operator_id] = row

    def split(row) -> None:
        session.execute(update(entry_runs).where(r.id == row.id).values(last_pos=position - 1))
        new_runs.append({"operator_id": row.operator_id, "schema": row.schema, "tags": list(row.tags or ()),
                         "first_pos": position + 1, "last_pos": row.last_pos})

    new_runs: list[dict] = []
    seen = set()
    for op_id, schema, tags in entries:
        seen.add(op_id)
        entry = (schema, list(tags))

        def same(row) -> bool:
            return row is not None and (row.schema, list(row.tags or ())) == entry

        alone = {"operator_id": op_id, "schema": schema, "tags": list(tags), "first_pos": position,
                 "last_pos": position}
        run = spanning.get(op_id)
        if run is not None:  # held on both sides: the same entry lies within the run, another splits it
            if not same(run):
                split(run)
                new_runs.append(alone)
            continue
        before, after = left.get(op_id), right.get(op_id)
        if same(before) and same(after):  # the gap between two equal runs closes
            session.execute(update(entry_runs).where(r.id == before.id).values(last_pos=after.last_pos))
            session.execute(delete(entry_runs).where(r.id == after.id))
        elif same(before):
            session.execute(update(entry_runs).where(r.id == before.id).values(last_pos=position))
        elif same(after):
            session.execute(update(entry_runs).where(r.id == after.id).values(first_pos=position))
        else:
            new_runs.append(alone)
    for op_id, run in spanning.items():
        if op_id not in seen:  # absent here: the run stops before and starts again after
            split(run)
    insert_rows(session, entry_runs, new_runs)
    _record_lines(session, snapshot_id, lines)


def snapshots_holding(session, names: Iterable[str]) -> list[tuple[str, set[str]]]:
    """``(label, which of names it holds)`` for every snapshot, in the order of history."""
    c = operators.c
    wanted = set(names)
    ids = dict(session.execute(select(c.id, c.qualname).where(c.qualname.in_(wanted))).all()) if wanted else {}
    spans = holders(session, ids)
    return [(label, {ids[op_id] for op_id, ranges in spans.items() if held_at(ranges, position)})
            for position, label in session.execute(select(snapshots.c.position, snapshots.c.label)
                                                   .order_by(snapshots.c.position))]
