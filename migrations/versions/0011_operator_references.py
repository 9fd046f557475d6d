"""operator references and review reasons: what an entry's structured_delegate: names, and why an
operator waits for the committee

``delegate``: the canonical name of the operator an entry's ``structured_delegate:`` names (the
out= variant whose kernel it calls), so that deprecating or deleting an operator can name what
still refers to it. ``review_reason``: why an operator is in the review queue ("2.3.0 dropped the
`core` tag: it stays core until the committee decides"), set by the import that queued it and
cleared by the decision.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # in place, no batch copy: other tables' foreign keys point at operators
    op.add_column("operators", sa.Column("delegate", sa.String(300), nullable=True))
    op.add_column("operators", sa.Column("review_reason", sa.Text(), nullable=True))


def downgrade() -> None:
    # SQLite 3.35+ and PostgreSQL both drop a column in place
    op.execute("ALTER TABLE operators DROP COLUMN review_reason")
    op.execute("ALTER TABLE operators DROP COLUMN delegate")
