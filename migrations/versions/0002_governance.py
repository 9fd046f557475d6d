"""governance: members and roles, settings, proposals and votes, decisions, lifecycle steps

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UTC = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "members",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("added_at", UTC, nullable=False),
        sa.Column("added_by", sa.String(200), nullable=False),
    )
    op.create_table(
        "settings",
        sa.Column("key", sa.String(100), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
    )
    op.create_table(
        "proposals",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.Column("proposer", sa.String(200), nullable=False),
        sa.Column("created_at", UTC, nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("closed_at", UTC, nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
    )
    op.create_index("ix_proposals_operator_id", "proposals", ["operator_id"])
    op.create_table(
        "votes",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("proposal_id", sa.Integer(), sa.ForeignKey("proposals.id"), nullable=False),
        sa.Column("voter", sa.String(200), nullable=False),
        sa.Column("approve", sa.Boolean(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("at", UTC, nullable=False),
        sa.UniqueConstraint("proposal_id", "voter", name="uq_votes_proposal_voter"),
    )
    op.create_table(
        "decisions",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), nullable=False),
        sa.Column("proposal_id", sa.Integer(), sa.ForeignKey("proposals.id"), nullable=True),
        sa.Column("category", sa.String(20), nullable=False),
        sa.Column("targets", sa.JSON(), nullable=False),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.Column("decided_at", UTC, nullable=False),
        sa.Column("decided_by", sa.JSON(), nullable=False),
        sa.Column("votes", sa.JSON(), nullable=False),
        sa.Column("imported", sa.Boolean(), nullable=False),
        sa.Column("source", sa.Text(), nullable=True),
    )
    op.create_index("ix_decisions_operator_id", "decisions", ["operator_id"])
    op.create_table(
        "lifecycle_steps",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("operator_id", sa.Integer(), sa.ForeignKey("operators.id"), nullable=False),
        sa.Column("from_state", sa.String(20), nullable=False),
        sa.Column("to_state", sa.String(20), nullable=False),
        sa.Column("at", UTC, nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("replacement", sa.String(300), nullable=True),
    )
    op.create_index("ix_lifecycle_steps_operator_id", "lifecycle_steps", ["operator_id"])


def downgrade() -> None:
    op.drop_table("lifecycle_steps")
    op.drop_table("decisions")
    op.drop_table("votes")
    op.drop_table("proposals")
    op.drop_table("settings")
    op.drop_table("members")
