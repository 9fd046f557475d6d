"""API tokens belong to a member record, not a name

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25

Until now a token named its member by name, so removing a member and adding the name again (say,
as a maintainer) brought the old token back with the new role. ``api_tokens.member_id`` names
the member record the token was made for. Existing tokens are attached to the member of their
name when that member was added before the token was made; a token whose member is gone, or
whose name belongs to a member added after it (a removed member added again), is revoked here,
with an event in the log. Downgrading drops the column; revoked tokens stay revoked.
"""

from datetime import datetime, timezone

import sqlalchemy as sa
from alembic import op

from opgov.core.eventlog import GENESIS, event_hash
from opgov.db.tables import UTCDateTime

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

ACTOR = "opgov"  # opgov's own events (a reserved name no member can take)

# the events table as this revision knows it
events = sa.table("events", sa.column("id", sa.Integer()), sa.column("at", UTCDateTime()),
                  sa.column("actor", sa.String()), sa.column("action", sa.String()),
                  sa.column("subject", sa.String()), sa.column("before", sa.JSON()),
                  sa.column("after", sa.JSON()), sa.column("reason", sa.Text()),
                  sa.column("prev_hash", sa.String()), sa.column("hash", sa.String()))


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("member_id", sa.Integer(), nullable=True))
    op.create_index("ix_api_tokens_member_id", "api_tokens", ["member_id"])
    bind = op.get_bind()
    members = {row.name: row for row in bind.execute(sa.text("SELECT id, name, added_at FROM members"))}
    tokens = bind.execute(sa.text("SELECT id, member, created_at, revoked_at FROM api_tokens ORDER BY id")).all()
    now = datetime.now(timezone.utc)
    orphans = []
    for token in tokens:
        member = members.get(token.member)
        if member is not None and _moment(member.added_at) <= _moment(token.created_at):
            bind.execute(sa.text("UPDATE api_tokens SET member_id = :m WHERE id = :t"), {"m": member.id, "t": token.id})
        elif token.revoked_at is None:
            orphans.append(token)
    previous = bind.execute(sa.select(events.c.id, events.c.hash).order_by(events.c.id.desc()).limit(1)).first()
    next_id, prev_hash = (previous.id + 1, previous.hash or GENESIS) if previous is not None else (1, GENESIS)
    for token in orphans:
        bind.execute(sa.text("UPDATE api_tokens SET revoked_at = :now, revoked_by = :who WHERE id = :t"),
                     {"now": now, "who": ACTOR, "t": token.id})
        event = {"id": next_id, "at": now, "actor": ACTOR, "action": "token.revoke",
                 "subject": f"member:{token.member}", "before": {"token": token.id}, "after": None,
                 "reason": "its member was removed (revision 0010: a token belongs to a member record)"}
        event["prev_hash"] = prev_hash
        event["hash"] = prev_hash = event_hash(event, prev_hash)
        bind.execute(events.insert().values(**event))
        next_id += 1
    if orphans and bind.dialect.name == "postgresql":  # keep the id sequence past the ids given here
        bind.execute(sa.text("SELECT setval(pg_get_serial_sequence('events', 'id'), :last)"), {"last": next_id - 1})


def downgrade() -> None:
    op.drop_index("ix_api_tokens_member_id", table_name="api_tokens")
    # SQLite 3.35+ and PostgreSQL both drop a column in place
    op.execute("ALTER TABLE api_tokens DROP COLUMN member_id")


def _moment(value) -> datetime:
    """A stored time as an aware datetime (SQLite hands back text or naive values)."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
