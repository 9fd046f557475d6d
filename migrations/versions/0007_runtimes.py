"""runtimes and upgraders: engines at a version and the operators they implement (what check-model
checks against); operator version bumps and the upgraders that came with them

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "runtimes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("released", sa.Date(), nullable=True),
        sa.Column("kernels", sa.JSON(), nullable=False),
        sa.Column("sources", sa.JSON(), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("added_by", sa.String(200), nullable=False),
        sa.UniqueConstraint("name", "version", name="uq_runtimes_name_version"),
    )
    op.create_table(
        "operator_version_bumps",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("version", sa.Integer(), nullable=False, unique=True),
        sa.Column("bumped_on", sa.Date(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("recorded_by", sa.String(200), nullable=False),
    )
    op.create_table(
        "upgraders",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(300), nullable=False, unique=True),
        sa.Column("operator", sa.String(300), nullable=False),
        sa.Column("start_version", sa.Integer(), nullable=False),
        sa.Column("end_version", sa.Integer(), nullable=False),
        sa.Column("old_schema", sa.Text(), nullable=False),
        sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("added_by", sa.String(200), nullable=False),
        sa.Column("replaced_by", sa.String(300), nullable=True),
        sa.Column("replaced_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_index("ix_upgraders_operator", "upgraders", ["operator"])


def downgrade() -> None:
    op.drop_index("ix_upgraders_operator", table_name="upgraders")
    op.drop_table("upgraders")
    op.drop_table("operator_version_bumps")
    op.drop_table("runtimes")
