"""compatibility: findings of each import against the previous snapshot, BC exceptions

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "findings",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), nullable=False),
        sa.Column("base_snapshot_id", sa.Integer(), sa.ForeignKey("snapshots.id"), nullable=True),
        sa.Column("operator", sa.String(300), nullable=False),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("rule", sa.String(80), nullable=False),
        sa.Column("severity", sa.String(20), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("old_schema", sa.Text(), nullable=True),
        sa.Column("new_schema", sa.Text(), nullable=True),
        sa.Column("line", sa.Integer(), nullable=True),
    )
    op.create_index("ix_findings_snapshot_id", "findings", ["snapshot_id"])
    op.create_index("ix_findings_operator", "findings", ["operator"])
    op.create_table(
        "bc_exceptions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("pattern", sa.String(300), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("expires_on", sa.Date(), nullable=False),
        sa.Column("removed_at", UTC, nullable=True),
        sa.Column("removed_by", sa.String(200), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("bc_exceptions")
    op.drop_table("findings")
