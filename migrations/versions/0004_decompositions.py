"""decompositions: operator → target operators, with where each rule came from

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "decomp_rules",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("operator", sa.String(300), nullable=False, unique=True),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("source", sa.String(20), nullable=False),
        sa.Column("source_detail", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("decomp_rules")
