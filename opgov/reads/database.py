"""The database itself as its readers see it: its revision and kind (:func:`database_status`), its
event log (:func:`read_log`, :func:`log_root`) and who a token names (:func:`authenticate`)."""

from __future__ import annotations

import hashlib
import hmac

from sqlalchemy import inspect, select

from opgov.core.clock import parse_time
from opgov.core.errors import BadInput, DatabaseBehind
from opgov.db.engine import HEAD_REVISION, current_revision, make_engine, resolve_url, transaction
from opgov.db.models import ApiToken, Event, Member
from opgov.reads.common import Ctx, is_simulation
from opgov.results.admin import DatabaseStatus, EventView


def database_status(db: str | None) -> DatabaseStatus:
    url = resolve_url(db)
    try:
        engine = make_engine(url)
    except DatabaseBehind:  # no file yet
        return DatabaseStatus(url=url, revision=None, head=HEAD_REVISION, up_to_date=False, simulation=False)
    try:
        revision = current_revision(engine)  # one line for a file or server that is no database
        simulation = False
        if revision is not None:
            with transaction(engine, write=False) as session:
                if "settings" in inspect(session.connection()).get_table_names():
                    simulation = is_simulation(session)
        return DatabaseStatus(url=engine.url.render_as_string(hide_password=True), revision=revision,
                              head=HEAD_REVISION, up_to_date=revision == HEAD_REVISION, simulation=simulation)
    finally:
        engine.dispose()


def read_log(ctx: Ctx, *, op: str | None = None, since: str | None = None, limit: int = 200,
             action: str | None = None, before_id: int | None = None) -> list[EventView]:
    """The newest ``limit`` events (0: all) matching the filters, oldest first. ``action`` is an
    action or a prefix ending in ``.`` (``proposal.``); ``before_id`` pages backwards."""
    query = select(Event)
    if op:
        from opgov.reads.common import find_operator

        query = query.where(Event.subject == find_operator(ctx.session, op).qualname)
    if since:
        query = query.where(Event.at >= parse_time(since, what="--since"))
    if action:
        query = query.where(Event.action.startswith(action) if action.endswith(".") else Event.action == action)
    if before_id is not None:
        query = query.where(Event.id < before_id)
    if not 0 <= limit <= 2**31 - 1:
        raise BadInput(f"--limit must be between 0 and {2**31 - 1}, got {limit}")
    query = query.order_by(Event.id.desc())
    if limit:
        query = query.limit(limit)
    events = list(ctx.session.scalars(query))[::-1]
    return [EventView(id=e.id, at=e.at, actor=e.actor, action=e.action, subject=e.subject, before=e.before,
                      after=e.after, reason=e.reason, token=e.token_id) for e in events]


def log_root(ctx: Ctx) -> str:
    """The hash of the log's first event: names this database's log (the Atom feed's ids)."""
    from opgov.core.eventlog import GENESIS
    from opgov.db import tables

    first = ctx.session.execute(select(tables.events.c.hash).order_by(tables.events.c.id).limit(1)).scalar()
    return first or GENESIS


PREFIX = "opgov_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def authenticate(session, token: str, now) -> tuple[str, int] | None:
    """(member, token id) for a valid token: known, not revoked, not expired, and the member record
    it was made for still a member (a member removed and added again is another record); else
    None. The hash found is compared with the presented one in constant time. The role is read
    afresh by every check, so a change takes effect on the next request."""
    if not token.startswith(PREFIX):
        return None
    digest = hash_token(token)
    row = session.execute(select(ApiToken.id, ApiToken.token_hash, ApiToken.expires_at, ApiToken.revoked_at,
                                 Member.name).join(Member, Member.id == ApiToken.member_id)
                          .where(ApiToken.token_hash == digest)).first()
    if row is None or not hmac.compare_digest(row.token_hash, digest):
        return None
    if row.revoked_at is not None or (row.expires_at is not None and row.expires_at <= now):
        return None
    return row.name, row.id
