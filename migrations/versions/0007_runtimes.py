"""runtimes: engines at a version and the operators they implement (what check-model checks against)

Revision ID: 0007
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0005"
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


def downgrade() -> None:
    op.drop_table("runtimes")
