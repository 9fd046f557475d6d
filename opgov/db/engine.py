"""Engines, sessions and the migration runtime.

The database URL comes from ``--db URL``, else ``OPGOV_DATABASE_URL``, else the default SQLite
file ``$XDG_DATA_HOME/opgov/opgov.db`` (``~/.local/share/opgov/opgov.db``). A bare path is taken
as a SQLite file.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # SQLAlchemy is imported by the functions that use it: `check-bc` of two files,
    from sqlalchemy import Engine  # which only asks default_url(), never loads it


from opgov.core.errors import BadInput, DatabaseBehind

# The newest migration. tests/db/test_migrations.py checks it against the migrations folder, so the
# "is the database behind?" check costs one query instead of loading Alembic on every command.
HEAD_REVISION = "0008"
MIGRATIONS_DIR = Path(__file__).resolve().parent.parent.parent / "migrations"


def default_url() -> str:
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'opgov' / 'opgov.db'}"


def resolve_url(db: str | None) -> str:
    url = db or os.environ.get("OPGOV_DATABASE_URL") or default_url()
    if "://" not in url:  # a plain path means a SQLite file
        url = f"sqlite:///{Path(url).expanduser().resolve()}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str, *, create: bool = False) -> Engine:
    """An engine for ``url``. A SQLite file is created only with ``create`` (``opgov db
    upgrade``); any other command on a missing file says to run ``opgov db upgrade`` and leaves
    nothing behind."""
    from sqlalchemy import create_engine

    try:
        if url.startswith("sqlite"):
            path = url.split("///", 1)[1].split("?", 1)[0] if "///" in url else ""
            if path and path != ":memory:":
                if create:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                elif not Path(path).is_file():
                    raise DatabaseBehind(f"database {path} does not exist: run `opgov db upgrade`")
            engine = create_engine(url, connect_args={"timeout": 30})
            _sqlite_transactions(engine)
        else:
            engine = create_engine(url, pool_pre_ping=False)
    except DatabaseBehind:
        raise
    except Exception as err:  # noqa: BLE001 - any driver or URL problem is bad input
        raise BadInput(f"cannot use database {url!r}: {err}") from None
    return engine


def _sqlite_transactions(engine: Engine) -> None:
    """Make pysqlite honour transactions: BEGIN IMMEDIATE so concurrent writers queue up
    instead of losing updates, foreign keys on."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def current_revision(engine: Engine) -> str | None:
    from sqlalchemy import text

    with engine.connect() as connection:
        try:
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except Exception:  # noqa: BLE001 - no table yet: an empty database
            return None


def ensure_current(engine: Engine) -> None:
    """Refuse to work on a database whose schema is not at this opgov's head revision."""
    try:
        revision = current_revision(engine)
    except Exception as err:  # noqa: BLE001
        reason = getattr(err, "orig", None) or err  # the driver's own words, without SQLAlchemy's footer
        reason = "; ".join(line.strip() for line in str(reason).splitlines() if line.strip())
        raise BadInput(f"cannot open database {engine.url.render_as_string(hide_password=True)}: {reason}") from None
    if revision == HEAD_REVISION:
        return
    where = engine.url.render_as_string(hide_password=True)
    if revision is None:
        raise DatabaseBehind(f"database {where} is not initialised: run `opgov db upgrade`")
    raise DatabaseBehind(f"database {where} is at revision {revision}, this opgov needs {HEAD_REVISION}: "
                         "run `opgov db upgrade`")


def alembic_config(engine: Engine, connection=None):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(engine: Engine, revision: str = "head") -> None:
    from alembic import command

    with engine.begin() as connection:
        command.upgrade(alembic_config(engine, connection), revision)


def downgrade(engine: Engine, revision: str) -> None:
    from alembic import command

    with engine.begin() as connection:
        command.downgrade(alembic_config(engine, connection), revision)


@contextmanager
def transaction(engine: Engine, *, orm: bool = True) -> Iterator:
    """One command, one transaction: commit on success, roll back on any error.

    Yields an ORM ``Session``, or with ``orm=False`` a Core ``Connection`` (for the hot paths
    that never import ``sqlalchemy.orm``). Both have ``execute``, ``scalar`` and ``scalars``.
    """
    if not orm:
        with engine.begin() as connection:
            yield connection
        return
    from sqlalchemy.orm import Session

    with Session(engine, expire_on_commit=False) as session:
        with session.begin():
            yield session

