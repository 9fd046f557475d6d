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

from sqlalchemy import Engine, create_engine, event, text

from opgov.core.errors import BadInput, DatabaseBehind, OpgovError
from opgov.resources import migrations_dir

# The newest migration. tests/db/test_migrations.py checks it against the migrations folder, so the
# "is the database behind?" check costs one query instead of loading Alembic on every command.
HEAD_REVISION = "0013"
MIGRATIONS_DIR = migrations_dir()


LOCK_TIMEOUT = 30.0  # seconds a SQLite command waits for another writer; `?timeout=N` in the URL changes it
READ_ONLY = "opgov_read_only"  # execution option: this transaction only reads


class DatabaseBusy(OpgovError):
    """Another writer held the database for longer than we would wait. Exit code 1: nothing is
    wrong with the command; run it again."""

    exit_code = 1


def default_url() -> str:
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return f"sqlite:///{base / 'opgov' / 'opgov.db'}"


def resolve_url(db: str | None) -> str:
    url = db or os.environ.get("OPGOV_DATABASE_URL") or default_url()
    if "://" not in url:  # a plain path means a SQLite file
        try:
            url = f"sqlite:///{Path(url).expanduser().resolve()}"
        except (RuntimeError, OSError):  # a loop of symbolic links (RuntimeError before Python 3.13)
            _sqlite_file(url)
            raise BadInput(f"cannot use database {url}") from None
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        url = "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def make_engine(url: str, *, create: bool = False, pool_size: int | None = None) -> Engine:
    """An engine for ``url``. A SQLite file is created only with ``create`` (``opgov db
    upgrade``); any other command on a missing file says to run ``opgov db upgrade`` and leaves
    nothing behind. ``pool_size``: keep that many connections open and open no more (a server's
    threads wait for one instead of opening and closing connections beyond the pool)."""
    pool = {"pool_size": pool_size, "max_overflow": 0} if pool_size else {}
    try:
        if url.startswith("sqlite"):
            path = url.split("///", 1)[1].split("?", 1)[0] if "///" in url else ""
            if path and path != ":memory:":
                _sqlite_file(path)
                if Path(path).is_dir():
                    raise BadInput(f"database {path} is a directory, not a SQLite file")
                if create:
                    Path(path).parent.mkdir(parents=True, exist_ok=True)
                elif not Path(path).is_file():
                    raise DatabaseBehind(f"database {path} does not exist: run `opgov db upgrade`")
            from sqlalchemy.engine import make_url

            timeout = _timeout(make_url(url).query.get("timeout"))
            engine = create_engine(url, connect_args={"timeout": timeout}, **pool)
            _sqlite_transactions(engine, timeout)
        else:
            engine = create_engine(url, pool_pre_ping=False, **pool)
        from opgov.db.limits import before_execute, check_parameters

        event.listen(engine, "before_execute", before_execute)  # values must fit their columns
        event.listen(engine, "before_cursor_execute", check_parameters)  # and be text a database stores
    except (DatabaseBehind, BadInput):
        raise
    except Exception as err:  # noqa: BLE001 - any driver or URL problem is bad input
        raise BadInput(f"cannot use database {url!r}: {err}") from None
    return engine


def _sqlite_file(path: str) -> None:
    """A SQLite database's path names a regular file or nothing yet: a loop of symbolic links, a
    FIFO or a device is one line of bad input, before SQLite opens (or waits on) it."""
    import errno
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise BadInput(f"database {path} is a loop of symbolic links that never reaches a file") from None
        raise BadInput(f"cannot use database {path}: {err.strerror or err}") from None
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or \
            stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a regular file"
        raise BadInput(f"database {path} is {kind}, not a SQLite file")


def _timeout(value: str | None) -> float:
    if value is None:
        return LOCK_TIMEOUT
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds <= 86400:
        raise BadInput(f"timeout={value!r} in the database URL must be a number of seconds (0 to 86400)")
    return seconds


def _sqlite_transactions(engine: Engine, timeout: float = LOCK_TIMEOUT) -> None:
    """Make pysqlite honour transactions: a writer begins with BEGIN IMMEDIATE, so concurrent
    writers queue up instead of losing updates; a reader (``READ_ONLY``) with a plain BEGIN, so it
    never waits for a writer's lock, only for a commit being written. Foreign keys on."""

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection):
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        # a reading transaction cannot write either (`opgov serve`'s GET requests, read commands)
        query_only = "ON" if read_only else "OFF"
        if connection.info.get("query_only") != query_only:  # kept with the pooled connection
            connection.exec_driver_sql(f"PRAGMA query_only={query_only}")
            connection.info["query_only"] = query_only
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def reader(engine: Engine) -> Engine:
    """The same engine, for transactions that only read. On PostgreSQL such a transaction is
    ``REPEATABLE READ, READ ONLY``: every statement of a read sees the same committed state, so a
    report, an operator's story or a snapshot read in several queries never mixes two moments (an
    import committing in between, a historical one moving positions). SQLite's reader already
    reads one snapshot from its first statement on."""
    if engine.dialect.name == "postgresql":
        return engine.execution_options(**{READ_ONLY: True}, isolation_level="REPEATABLE READ",
                                        postgresql_readonly=True)
    return engine.execution_options(**{READ_ONLY: True})


def _is_locked(err: BaseException) -> bool:
    return "database is locked" in str(getattr(err, "orig", None) or err)


def busy(engine: Engine, waited: float) -> DatabaseBusy:
    seconds = max(1, round(waited))
    return DatabaseBusy(f"database {engine.url.render_as_string(hide_password=True)} is locked by another writer; "
                        f"waited {seconds} s (run the command again when it is done)")


def current_revision(engine: Engine) -> str | None:
    """The database's Alembic revision; None for a database ``opgov db upgrade`` never ran on."""
    import time

    from sqlalchemy import inspect

    started = time.monotonic()
    try:
        with reader(engine).connect() as connection:
            if "alembic_version" not in inspect(connection).get_table_names():
                return None
            return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except Exception as err:  # noqa: BLE001 - not a database, an unreachable server, a lock
        if _is_locked(err):
            raise busy(engine, time.monotonic() - started) from None
        raise unusable(engine, err) from None


def known_revisions() -> set[str]:
    """The revisions this opgov's migrations know (from their file names, without loading Alembic)."""
    versions = MIGRATIONS_DIR / "versions"
    return {path.name.split("_", 1)[0] for path in versions.glob("*.py") if path.name[:1].isdigit()}


def ensure_current(engine: Engine) -> None:
    """Refuse to work on a database whose schema is not at this opgov's head revision."""
    revision = current_revision(engine)  # BadInput (not a database) or DatabaseBusy (locked) itself
    if revision == HEAD_REVISION:
        return
    where = engine.url.render_as_string(hide_password=True)
    if revision is None:
        raise DatabaseBehind(f"database {where} is not initialised: run `opgov db upgrade`")
    if revision not in known_revisions():
        raise DatabaseBehind(f"database {where} is at revision {revision}, which this opgov does not know: it was "
                             f"made by a newer opgov (this one goes up to {HEAD_REVISION}); upgrade opgov")
    raise DatabaseBehind(f"database {where} is at revision {revision}, this opgov needs {HEAD_REVISION}: "
                         "run `opgov db upgrade`")


def unusable(engine: Engine, err: BaseException) -> BadInput:
    """A driver's error (not a database file, a directory, a server that does not answer) as the
    one line the user sees: the URL without its password and the driver's own words."""
    reason = getattr(err, "orig", None) or err  # without SQLAlchemy's SQL and footer
    reason = "; ".join(line.strip() for line in str(reason).splitlines() if line.strip())
    return BadInput(f"cannot open database {engine.url.render_as_string(hide_password=True)}: {reason}")


def sqlite_paths_to_create(url: str) -> list[Path]:
    """The SQLite file of ``url`` and those of its folders that do not exist yet, deepest first:
    what `opgov db upgrade` would leave behind, and removes again when it fails."""
    if not url.startswith("sqlite") or "///" not in url:
        return []
    path = url.split("///", 1)[1].split("?", 1)[0]
    if not path or path == ":memory:":
        return []
    missing, candidate = [], Path(path)
    while not candidate.exists() and candidate != candidate.parent:
        missing.append(candidate)
        candidate = candidate.parent
    return missing


def remove_created(paths: list[Path]) -> None:
    """Undo what a failed first `db upgrade` created (the file, its journal, empty folders)."""
    for path in paths:
        for leftover in (path, path.with_name(path.name + "-journal"), path.with_name(path.name + "-wal"),
                         path.with_name(path.name + "-shm")):
            if leftover.is_file():
                leftover.unlink()
        if path.is_dir():
            try:
                path.rmdir()
            except OSError:  # not empty: something else put a file there
                pass


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
def transaction(engine: Engine, *, orm: bool = True, write: bool = True) -> Iterator:
    """One command, one transaction: commit on success, roll back on any error. The events the
    command logged are appended to the log as the transaction's last write (opgov.db.events).

    Yields an ORM ``Session``, or with ``orm=False`` a Core ``Connection`` (for the hot paths
    that never import ``sqlalchemy.orm``). Both have ``execute``, ``scalar`` and ``scalars``.
    ``write=False`` is for commands that only read: on SQLite they do not take the write lock.
    Waiting too long for another writer's lock raises :class:`DatabaseBusy`.
    """
    import time

    from sqlalchemy.exc import OperationalError

    from opgov.db.events import append_logged, discard_logged

    bind = engine if write else reader(engine)
    started = time.monotonic()
    try:
        if not orm:
            with bind.begin() as connection:
                try:
                    yield connection
                    append_logged(connection)  # the events it logged: the last write before the commit
                finally:
                    discard_logged(connection)  # a pooled connection's info outlives the transaction
            return
        from sqlalchemy.orm import Session

        with Session(bind, expire_on_commit=False) as session:
            with session.begin():
                yield session
                append_logged(session)  # the events it logged: the last write before the commit
    except OperationalError as err:
        if _is_locked(err):
            raise busy(engine, time.monotonic() - started) from None
        raise

