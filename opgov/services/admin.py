"""The database itself (migrations, simulation mode) and the event log."""

from __future__ import annotations

from typing import Any

from sqlalchemy import inspect, select

from opgov.core.clock import SystemClock, parse_time
from opgov.db.engine import (HEAD_REVISION, current_revision, downgrade, make_engine, resolve_url,
                             transaction, upgrade)
from opgov.db.models import Event, Setting
from opgov.core.errors import BadInput, DatabaseBehind, PolicyRefusal
from opgov.services.common import Ctx, is_simulation, log_event


def upgrade_database(db: str | None, revision: str = "head", *, simulation: bool = False) -> tuple[str | None, str | None]:
    """Migrate to ``revision``. ``simulation`` only on a new database: it marks the database as
    one where a claimed time is honoured, which an existing database can never become."""
    engine = make_engine(resolve_url(db), create=True)
    try:
        before = current_revision(engine)
        if simulation and before is not None:
            with transaction(engine) as session:
                if "settings" not in inspect(session.connection()).get_table_names() or not is_simulation(session):
                    raise PolicyRefusal("--simulation applies only when creating a database; this one already "
                                        "exists and is not a simulation database")
        try:
            upgrade(engine, revision)
        except Exception as err:  # noqa: BLE001 - an unknown revision or an unreachable server
            if err.__class__.__module__.startswith("alembic"):
                raise BadInput(f"cannot upgrade to {revision!r}: {err}") from None
            raise
        if simulation and before is None:
            with transaction(engine) as session:
                session.merge(Setting(key="simulation", value="true"))
                log_event(Ctx(session, "opgov", SystemClock()), "db.simulation", "database",
                          after={"simulation": True})
        return before, current_revision(engine)
    finally:
        engine.dispose()


def downgrade_database(db: str | None, revision: str) -> tuple[str | None, str | None]:
    engine = make_engine(resolve_url(db))
    try:
        before = current_revision(engine)
        try:
            downgrade(engine, revision)
        except Exception as err:  # noqa: BLE001
            if err.__class__.__module__.startswith("alembic"):
                raise BadInput(f"cannot downgrade to {revision!r}: {err}") from None
            raise
        return before, current_revision(engine)
    finally:
        engine.dispose()


def database_status(db: str | None) -> dict[str, Any]:
    url = resolve_url(db)
    try:
        engine = make_engine(url)
    except DatabaseBehind:  # no file yet
        return {"url": url, "revision": None, "head": HEAD_REVISION, "up_to_date": False, "simulation": False}
    try:
        revision = current_revision(engine)
        simulation = False
        if revision is not None:
            with transaction(engine) as session:
                simulation = is_simulation(session)
        return {"url": engine.url.render_as_string(hide_password=True), "revision": revision,
                "head": HEAD_REVISION, "up_to_date": revision == HEAD_REVISION, "simulation": simulation}
    finally:
        engine.dispose()


def read_log(ctx: Ctx, *, op: str | None = None, since: str | None = None, limit: int = 200) -> list[dict[str, Any]]:
    query = select(Event)
    if op:
        from opgov.services.common import find_operator

        query = query.where(Event.subject == find_operator(ctx.session, op).qualname)
    if since:
        query = query.where(Event.at >= parse_time(since, what="--since"))
    if limit < 0:
        raise BadInput("--limit must be 0 or more")
    query = query.order_by(Event.id.desc())
    if limit:
        query = query.limit(limit)
    events = list(ctx.session.scalars(query))[::-1]
    return [{"id": e.id, "at": e.at.isoformat(), "actor": e.actor, "action": e.action, "subject": e.subject,
             "before": e.before, "after": e.after, "reason": e.reason} for e in events]


def verify_log(ctx: Ctx) -> dict[str, Any]:
    """Walk the event log's hash chain, oldest first; the first broken link, if any."""
    from opgov.core.eventlog import verify_chain
    from opgov.db import tables

    events = tables.events
    rows = ctx.session.execute(select(events.c.id, events.c.at, events.c.actor, events.c.action, events.c.subject,
                                      events.c.before, events.c.after, events.c.reason, events.c.prev_hash,
                                      events.c.hash).order_by(events.c.id).execution_options(yield_per=2000))
    report = verify_chain(row._mapping for row in rows)
    intact = report.broken is None
    return {"events": report.events, "intact": intact, "head": report.head if intact else None,
            "broken": None if report.broken is None else {"event": report.broken.event_id,
                                                          "problem": report.broken.problem}}
