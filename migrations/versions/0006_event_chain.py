"""event log hash chain: prev_hash and hash on every event; REPLACE (SQLite) and TRUNCATE
(PostgreSQL) refused like UPDATE and DELETE

Existing events get their hashes here, oldest first, so `opgov log verify` checks the whole log.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

import sqlalchemy as sa
from alembic import op

from opgov.core.eventlog import GENESIS, event_hash
from opgov.db.tables import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

REFUSE = "SELECT RAISE(ABORT, 'the opgov event log is append-only')"

# the events table as this revision knows it (later revisions may add columns)
events = sa.table("events", sa.column("id", sa.Integer()), sa.column("at", UTCDateTime()),
                  sa.column("actor", sa.String()), sa.column("action", sa.String()),
                  sa.column("subject", sa.String()), sa.column("before", sa.JSON()),
                  sa.column("after", sa.JSON()), sa.column("reason", sa.Text()),
                  sa.column("prev_hash", sa.String()), sa.column("hash", sa.String()))


def _chain_existing_events(bind) -> None:
    rows = bind.execute(sa.select(events.c.id, events.c.at, events.c.actor, events.c.action, events.c.subject,
                                  events.c.before, events.c.after, events.c.reason).order_by(events.c.id)).all()
    previous, updates = GENESIS, []
    for row in rows:
        digest = event_hash(dict(row._mapping), previous)
        updates.append({"_id": row.id, "_prev": previous, "_hash": digest})
        previous = digest
    if updates:
        bind.execute(events.update().where(events.c.id == sa.bindparam("_id"))
                     .values(prev_hash=sa.bindparam("_prev"), hash=sa.bindparam("_hash")), updates)


def upgrade() -> None:
    bind = op.get_bind()
    postgres = bind.dialect.name == "postgresql"
    op.add_column("events", sa.Column("prev_hash", sa.String(64), nullable=True))
    op.add_column("events", sa.Column("hash", sa.String(64), nullable=True))
    # the hashes of the events already there are written once, here, with the guard lifted
    if postgres:
        op.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
        _chain_existing_events(bind)
        op.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
        op.execute("CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events "
                   "FOR EACH STATEMENT EXECUTE FUNCTION opgov_events_append_only()")
    else:
        op.execute("DROP TRIGGER events_no_update")
        _chain_existing_events(bind)
        op.execute(f"CREATE TRIGGER events_no_update BEFORE UPDATE ON events BEGIN {REFUSE}; END")
        # INSERT OR REPLACE deletes the old row without firing DELETE triggers: refuse any insert
        # that would meet an existing event
        op.execute("CREATE TRIGGER events_no_replace BEFORE INSERT ON events "
                   "WHEN NEW.id IS NOT NULL AND EXISTS (SELECT 1 FROM events WHERE id = NEW.id) "
                   f"BEGIN {REFUSE}; END")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER events_no_truncate ON events")
        op.drop_column("events", "hash")
        op.drop_column("events", "prev_hash")
        return
    op.execute("DROP TRIGGER events_no_replace")
    with op.batch_alter_table("events") as batch:
        batch.drop_column("hash")
        batch.drop_column("prev_hash")
    # rebuilding the table (older SQLite) drops its triggers: make sure revision 0001's are there
    for verb in ("UPDATE", "DELETE"):
        op.execute(f"CREATE TRIGGER IF NOT EXISTS events_no_{verb.lower()} BEFORE {verb} ON events "
                   f"BEGIN {REFUSE}; END")
