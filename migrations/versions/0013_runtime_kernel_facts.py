"""runtimes: what each kernel accepts

``kernel_facts``: for each kernel entry of the runtime (``aten::gelu.out``), what its sources say
it accepts (the dtypes per argument, rank and dtype checks; opgov.formats.et_sources), so that
``check-model`` checks a model's calls down to their tensors' dtypes and ranks. Null for a runtime
registered without them (its calls' dtypes are then not checked).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runtimes", sa.Column("kernel_facts", sa.JSON(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE runtimes DROP COLUMN kernel_facts")
