"""API tokens for `opgov serve`, and the token each logged event was made with

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23

A token belongs to a member; only its sha256 is stored. ``events.token_id`` names the token a
request of the service was made with (null for the CLI). The column is added with a plain
ALTER TABLE (no batch copy), so the append-only triggers on ``events`` stay in place.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("member", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("created_by", sa.String(200), nullable=False),
        sa.Column("expires_at", UTC),
        sa.Column("revoked_at", UTC),
        sa.Column("revoked_by", sa.String(200)),
    )
    op.create_index("ix_api_tokens_member", "api_tokens", ["member"])
    op.add_column("events", sa.Column("token_id", sa.Integer(), nullable=True))


def downgrade() -> None:
    # SQLite 3.35+ and PostgreSQL both drop a column in place (a batch copy would lose the triggers)
    op.execute("ALTER TABLE events DROP COLUMN token_id")
    op.drop_index("ix_api_tokens_member", table_name="api_tokens")
    op.drop_table("api_tokens")
