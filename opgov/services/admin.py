"""The database itself (migrations, simulation mode) and the event log."""

from __future__ import annotations

from sqlalchemy import inspect, select

from opgov.core.clock import SystemClock, parse_time
from opgov.db.engine import (HEAD_REVISION, current_revision, downgrade, make_engine, remove_created,
                             resolve_url, sqlite_paths_to_create, transaction, unusable, upgrade)
from opgov.db.models import Event, Setting
from opgov.core.errors import BadInput, DatabaseBehind, PolicyRefusal
from opgov.services.common import Ctx, is_simulation
from opgov.services.results import DatabaseStatus, EventView, RevisionChange


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
        try:
            before = current_revision(engine)
        except Exception as err:  # noqa: BLE001 - not a database, a directory, a server that does not answer
            raise unusable(engine, err) from None
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
                session.add(Event(at=SystemClock().now(), actor="opgov", action="db.simulation",
                                  subject="database", after={"simulation": True}, reason=None))
        return RevisionChange(before=before, after=current_revision(engine))
    except BaseException:
        engine.dispose()
        remove_created(created)
        raise
    finally:
        engine.dispose()


def downgrade_database(db: str | None, revision: str) -> RevisionChange:
    engine = make_engine(resolve_url(db))
    try:
        try:
            before = current_revision(engine)
        except Exception as err:  # noqa: BLE001 - not a database, a server that does not answer
            raise unusable(engine, err) from None
        try:
            downgrade(engine, revision)
        except Exception as err:  # noqa: BLE001
            if err.__class__.__module__.startswith("alembic"):
                raise BadInput(f"cannot downgrade to {revision!r}: {err}") from None
            raise
        return RevisionChange(before=before, after=current_revision(engine))
    finally:
        engine.dispose()


def database_status(db: str | None) -> DatabaseStatus:
    url = resolve_url(db)
    try:
        engine = make_engine(url)
    except DatabaseBehind:  # no file yet
        return DatabaseStatus(url=url, revision=None, head=HEAD_REVISION, up_to_date=False, simulation=False)
    try:
        try:
            revision = current_revision(engine)
        except Exception as err:  # noqa: BLE001 - not a database, a server that does not answer
            raise unusable(engine, err) from None
        simulation = False
        if revision is not None:
            with transaction(engine) as session:
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
        from opgov.services.common import find_operator

        query = query.where(Event.subject == find_operator(ctx.session, op).qualname)
    if since:
        query = query.where(Event.at >= parse_time(since, what="--since"))
    if action:
        query = query.where(Event.action.startswith(action) if action.endswith(".") else Event.action == action)
    if before_id is not None:
        query = query.where(Event.id < before_id)
    if limit < 0:
        raise BadInput("--limit must be 0 or more")
    query = query.order_by(Event.id.desc())
    if limit:
        query = query.limit(limit)
    events = list(ctx.session.scalars(query))[::-1]
    return [EventView(id=e.id, at=e.at, actor=e.actor, action=e.action, subject=e.subject, before=e.before,
                      after=e.after, reason=e.reason, token=e.token_id) for e in events]
