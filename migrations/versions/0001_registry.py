"""registry: snapshots, operators, schema history and the append-only event log

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("label", sa.String(200), nullable=False, unique=True),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(64), nullable=False),
        sa.Column("imported_at", UTC, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("operator_count", sa.Integer(), nullable=False),
        sa.Column("stats", sa.JSON(), nullable=False),
    )
    op.create_table(
        "operators",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("qualname", sa.String(300), nullable=False, unique=True),
        sa.Column("namespace", sa.String(100), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("overload", sa.String(200), nullable=False),
        sa.Column("schema", sa.Text(), nullable=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("autogen_of", sa.String(300), nullable=True),
        sa.Column("composite_implicit", sa.Boolean(), nullable=False),
        sa.Column("present", sa.Boolean(), nullable=False),
        sa.Column("first_snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), nullable=False),
        sa.Column("last_snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), nullable=False),
        sa.Column("category", sa.String(20), nullable=False),
        sa.Column("category_source", sa.String(20), nullable=False),
        sa.Column("needs_review", sa.Boolean(), nullable=False),
        sa.Column("lifecycle", sa.String(20), nullable=False),
        sa.Column("lifecycle_since", UTC, nullable=True),
        sa.Column("replacement", sa.String(300), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.UniqueConstraint("namespace", "name", "overload", name="uq_operators_identity"),
    )
    op.create_table(
        "schema_versions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), nullable=False),
        sa.Column("snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), nullable=False),
        sa.Column("schema", sa.Text(), nullable=True),
        sa.UniqueConstraint("operator_id", "snapshot_id", name="uq_schema_versions_op_snap"),
    )
    op.create_index("ix_schema_versions_operator_id", "schema_versions", ["operator_id"])
    op.create_table(
        "snapshot_entries",
        sa.Column("snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), primary_key=True),
        sa.Column("schema", sa.Text(), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
    )
    op.create_index("ix_snapshot_entries_operator_id", "snapshot_entries", ["operator_id"])
    op.create_table(
        "events",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("at", UTC, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(60), nullable=False),
        sa.Column("subject", sa.String(300), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
    )
    op.create_index("ix_events_subject", "events", ["subject"])
    op.create_index("ix_events_at", "events", ["at"])
    if op.get_bind().dialect.name == "postgresql":
        # The log is append-only for everyone, not just for opgov's own code.
        op.execute(
            "CREATE FUNCTION opgov_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'the opgov event log is append-only'; END $$"
        )
        op.execute(
            "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events "
            "FOR EACH ROW EXECUTE FUNCTION opgov_events_append_only()"
        )
    else:
        for verb in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER events_no_{verb.lower()} BEFORE {verb} ON events "
                "BEGIN SELECT RAISE(ABORT, 'the opgov event log is append-only'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER events_append_only ON events")
        op.execute("DROP FUNCTION opgov_events_append_only()")
    op.drop_table("events")
    op.drop_table("snapshot_entries")
    op.drop_table("schema_versions")
    op.drop_table("operators")
    op.drop_table("snapshots")
