"""The database itself (migrations, simulation mode) and the event log."""

from __future__ import annotations

from sqlalchemy import inspect, select

from opgov.core.clock import SystemClock
from opgov.db.engine import (HEAD_REVISION, current_revision, known_revisions, make_engine, remove_created,
                             resolve_url, sqlite_paths_to_create, transaction, unusable, upgrade)
from opgov.db.models import Setting
from opgov.core.errors import BadInput, PolicyRefusal
from opgov.core.identity import SYSTEM_ACTOR
from opgov.reads.common import Ctx, is_simulation
from opgov.reads.database import read_log
from opgov.services.common import log_event
from opgov.results.admin import EventsPage, LogVerification, RevisionChange


def upgrade_database(db: str | None, revision: str = "head", *, simulation: bool = False) -> RevisionChange:
    """Migrate to ``revision``. ``simulation`` only on a new database: it marks the database as
    one where a claimed time is honoured, which an existing database can never become."""
    url = resolve_url(db)
    created = sqlite_paths_to_create(url)  # removed again if this fails: a failed upgrade leaves nothing
    try:
        engine = make_engine(url, create=True)
    except BaseException:
        remove_created(created)
        raise
    try:
        before = current_revision(engine)  # one line for a file or server that is no database
        if before is not None and before not in known_revisions():
            raise BadInput(f"the database is at revision {before}, which this opgov does not know: it was made by "
                           f"a newer opgov (this one goes up to {HEAD_REVISION}); upgrade opgov")
        if simulation and before is None and _was_created(engine):
            raise PolicyRefusal("--simulation applies only when creating a database; this one was created "
                                "before and downgraded: its kind is fixed (create a new database instead)")
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
            if err.__class__.__module__.startswith("sqlalchemy"):
                raise unusable(engine, err) from None
            raise
        if simulation and before is None:
            with transaction(engine) as session:
                session.merge(Setting(key="simulation", value="true"))
                log_event(Ctx(session, SYSTEM_ACTOR, SystemClock()), "db.simulation", "database",
                          after={"simulation": True})
        return RevisionChange(before=before, after=current_revision(engine))
    except BaseException:
        engine.dispose()
        remove_created(created)
        raise
    finally:
        engine.dispose()


def _was_created(engine) -> bool:
    """Has ``opgov db upgrade`` run here before? Alembic's version table outlives a downgrade to base."""
    with engine.connect() as connection:
        return "alembic_version" in inspect(connection).get_table_names()


# what a downgrade would destroy: rows beyond those a new database starts with
GOVERNANCE_DATA = {
    "members": "SELECT count(*) - 1 FROM members",  # the first maintainer bootstraps the database
    "proposals": "SELECT count(*) FROM proposals",
    "decisions": "SELECT count(*) FROM decisions",
    "lifecycle_steps": "SELECT count(*) FROM lifecycle_steps",
    "events": "SELECT count(*) FROM events WHERE action NOT LIKE 'db.%'",
}


def _governance_data(connection) -> dict[str, int]:
    """How many rows of governance data the database holds, per table (only tables with some)."""
    from sqlalchemy import text

    present = set(inspect(connection).get_table_names())
    counts = {table: connection.execute(text(sql)).scalar() or 0
              for table, sql in GOVERNANCE_DATA.items() if table in present}
    return {table: n for table, n in counts.items() if n > 0}


def downgrade_database(db: str | None, revision: str, *, actor: str, force: bool = False) -> RevisionChange:
    """Undo migrations down to ``revision``: for maintainers only, and refused while the database
    holds governance data (which the dropped tables and columns would take with them) unless
    ``force``. The downgrade is logged first, in the same transaction."""
    from alembic import command

    from opgov.db.engine import alembic_config
    from opgov.services.common import flush_events, require

    engine = make_engine(resolve_url(db))
    try:
        before = current_revision(engine)
        if before is None:
            raise BadInput("the database is not initialised: there is nothing to downgrade")
        with engine.begin() as connection:
            ctx = Ctx(connection, actor, SystemClock())
            if revision != before:
                if "members" in inspect(connection).get_table_names():
                    require(ctx, "downgrade", "downgrade the database (maintainers only)")
                held = _governance_data(connection)
                if held and not force:
                    listed = ", ".join(f"{n} {table.replace('_', ' ')[:None if n > 1 else -1]}" for table, n in held.items())
                    raise PolicyRefusal(f"the database holds governance data ({listed}); downgrading to "
                                        f"{revision} may drop it: pass --force to downgrade anyway")
                if before == HEAD_REVISION:  # an older events table is not this opgov's to append to
                    log_event(ctx, "db.downgrade", "database", before={"revision": before},
                              after={"revision": revision, "forced": force, "governance_data": held})
                    flush_events(ctx)  # written before the migrations change the events table
            try:
                command.downgrade(alembic_config(engine, connection), revision)
            except Exception as err:  # noqa: BLE001
                if err.__class__.__module__.startswith("alembic"):
                    raise BadInput(f"cannot downgrade to {revision!r}: {err}") from None
                raise
        return RevisionChange(before=before, after=current_revision(engine))
    finally:
        engine.dispose()


def events_page(ctx: Ctx, *, operator: str | None = None, action: str | None = None, since: str | None = None,
                limit: int = 100, before: int | None = None) -> EventsPage:
    """A page of the log: the newest ``limit`` events matching the filters (older than the event
    ``before``), oldest first, and where the older page begins (``next_before``; None at the start)."""
    events = read_log(ctx, op=operator, since=since, limit=limit, action=action, before_id=before)
    return EventsPage(events=events, next_before=events[0].id if len(events) == limit else None)


def verify_log(ctx: Ctx) -> LogVerification:
    """Walk the event log's hash chain, oldest first; the first broken link, if any."""
    from opgov.core.eventlog import verify_chain
    from opgov.db import tables
    from opgov.results.admin import ChainBreak

    events = tables.events
    rows = ctx.session.execute(select(events.c.id, events.c.at, events.c.actor, events.c.action, events.c.subject,
                                      events.c.before, events.c.after, events.c.reason, events.c.token_id,
                                      events.c.prev_hash, events.c.hash)
                               .order_by(events.c.id).execution_options(yield_per=2000))
    report = verify_chain(row._mapping for row in rows)
    intact = report.broken is None
    return LogVerification(events=report.events, intact=intact, head=report.head if intact else None,
                           broken=None if report.broken is None else ChainBreak(event=report.broken.event_id,
                                                                                problem=report.broken.problem))
