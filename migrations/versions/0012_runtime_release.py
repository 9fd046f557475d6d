"""runtimes: the operators a runtime serves outside its kernel registries, and the torch release
its kernels follow

``served``: canonical names of the operators the runtime answers without a kernel yaml entry
(ExecuTorch's prim ops: ``aten::_local_scalar_dense``, ``aten::sym_size.int``, scalar
arithmetic), so a model calling one is not told it is missing. ``torch_release``: the PyTorch
release whose schemas its kernels follow (ExecuTorch's PyTorch pin, ``2.12``), against which a
model's arguments are checked.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("runtimes", sa.Column("served", sa.JSON(), nullable=True))
    op.add_column("runtimes", sa.Column("torch_release", sa.String(100), nullable=True))


def downgrade() -> None:
    # SQLite 3.35+ and PostgreSQL both drop a column in place
    op.execute("ALTER TABLE runtimes DROP COLUMN torch_release")
    op.execute("ALTER TABLE runtimes DROP COLUMN served")
