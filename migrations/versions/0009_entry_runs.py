"""Snapshots store what did not change once: entry runs, packed lines, positions in history

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24

Until now every import copied every operator's entry into ``snapshot_entries`` (about 400 KB a
snapshot on SQLite, whether or not anything changed). From here an entry is stored once for the
run of consecutive snapshots that hold it unchanged (``entry_runs``), the lines of a snapshot's
entries in one packed blob (``snapshot_lines``), and each snapshot has its place in history
(``snapshots.position``: imports in their order, each release stored with ``import --historical``
just before the snapshot it was placed before). The data moves both ways.
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def _positions(bind) -> dict[int, int]:
    """snapshot id → its place in history, as opgov ordered snapshots before this revision."""
    rows = bind.execute(sa.text("SELECT id, stats FROM snapshots")).all()

    def key(row):
        stats = row.stats
        if isinstance(stats, str):
            import json

            stats = json.loads(stats)
        stats = stats or {}
        return (stats["before"], 0, row.id) if stats.get("historical") else (row.id, 1, row.id)

    return {row.id: place for place, row in enumerate(sorted(rows, key=key), start=1)}


def upgrade() -> None:
    from opgov.db.entries import pack_lines

    bind = op.get_bind()
    op.add_column("snapshots", sa.Column("position", sa.Integer(), nullable=False, server_default="0"))
    op.create_index("ix_snapshots_position", "snapshots", ["position"])
    op.create_table(
        "entry_runs",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), nullable=False),
        sa.Column("schema", sa.Text(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("first_pos", sa.Integer(), nullable=False),
        sa.Column("last_pos", sa.Integer(), nullable=True),
    )
    op.create_index("ix_entry_runs_operator_id", "entry_runs", ["operator_id"])
    op.create_index("ix_entry_runs_last_pos", "entry_runs", ["last_pos"])
    op.create_table(
        "snapshot_lines",
        sa.Column("snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), primary_key=True),
        sa.Column("lines", sa.LargeBinary(), nullable=False),
    )

    positions = _positions(bind)
    if positions:
        bind.execute(sa.text("UPDATE snapshots SET position = :p WHERE id = :id"),
                     [{"p": p, "id": i} for i, p in positions.items()])
        latest = max(positions.values())
        entries = sa.table("snapshot_entries", sa.column("snapshot_id"), sa.column("operator_id"),
                           sa.column("schema"), sa.column("tags", sa.JSON()), sa.column("line"))
        by_op: dict[int, list] = {}
        by_snapshot: dict[int, list] = {}
        for row in bind.execute(sa.select(entries.c.snapshot_id, entries.c.operator_id, entries.c.schema,
                                          entries.c.tags, entries.c.line)):
            by_op.setdefault(row.operator_id, []).append((positions[row.snapshot_id], row.schema, list(row.tags)))
            by_snapshot.setdefault(row.snapshot_id, []).append((row.line, row.operator_id))
        runs = []
        for op_id, held in by_op.items():
            held.sort(key=lambda h: h[0])
            start = held[0]
            for prev, cur in zip(held, held[1:] + [None]):
                if cur is not None and cur[0] == prev[0] + 1 and cur[1:] == start[1:]:
                    continue
                runs.append({"operator_id": op_id, "schema": start[1], "tags": start[2], "first_pos": start[0],
                             "last_pos": None if prev[0] == latest else prev[0]})
                start = cur
        runs_table = sa.table("entry_runs", sa.column("operator_id"), sa.column("schema"),
                              sa.column("tags", sa.JSON()), sa.column("first_pos"), sa.column("last_pos"))
        if runs:
            bind.execute(sa.insert(runs_table), runs)
        lines_table = sa.table("snapshot_lines", sa.column("snapshot_id"), sa.column("lines", sa.LargeBinary()))
        if by_snapshot:
            bind.execute(sa.insert(lines_table), [
                {"snapshot_id": snap, "lines": pack_lines((op_id, line) for line, op_id in sorted(pairs))}
                for snap, pairs in by_snapshot.items()])
    op.drop_index("ix_snapshot_entries_operator_id", table_name="snapshot_entries")
    op.drop_table("snapshot_entries")


def downgrade() -> None:
    from opgov.db.entries import unpack_lines

    bind = op.get_bind()
    op.create_table(
        "snapshot_entries",
        sa.Column("snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), primary_key=True),
        sa.Column("schema", sa.Text(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
    )
    op.create_index("ix_snapshot_entries_operator_id", "snapshot_entries", ["operator_id"])
    runs_table = sa.table("entry_runs", sa.column("operator_id"), sa.column("schema"),
                          sa.column("tags", sa.JSON()), sa.column("first_pos"), sa.column("last_pos"))
    runs = bind.execute(sa.select(runs_table.c.operator_id, runs_table.c.schema, runs_table.c.tags,
                                  runs_table.c.first_pos, runs_table.c.last_pos)).all()
    lines_table = sa.table("snapshot_lines", sa.column("snapshot_id"), sa.column("lines", sa.LargeBinary()))
    lines = {row.snapshot_id: dict(unpack_lines(row.lines))
             for row in bind.execute(sa.select(lines_table.c.snapshot_id, lines_table.c.lines))}
    entries = sa.table("snapshot_entries", sa.column("snapshot_id"), sa.column("operator_id"),
                       sa.column("schema"), sa.column("tags", sa.JSON()), sa.column("line"))
    for snapshot_id, position in bind.execute(sa.text("SELECT id, position FROM snapshots")).all():
        where = lines.get(snapshot_id, {})
        rows = [{"snapshot_id": snapshot_id, "operator_id": r.operator_id, "schema": r.schema, "tags": list(r.tags),
                 "line": where.get(r.operator_id, 0)}
                for r in runs if r.first_pos <= position and (r.last_pos is None or position <= r.last_pos)]
        if rows:
            bind.execute(sa.insert(entries), rows)
    op.drop_table("snapshot_lines")
    op.drop_index("ix_entry_runs_last_pos", table_name="entry_runs")
    op.drop_index("ix_entry_runs_operator_id", table_name="entry_runs")
    op.drop_table("entry_runs")
    op.drop_index("ix_snapshots_position", table_name="snapshots")
    op.execute("ALTER TABLE snapshots DROP COLUMN position")
