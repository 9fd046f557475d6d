"""Shared fixtures.

Real data lives outside the repository (``../shared`` beside the checkout, or wherever
``OPGOV_SHARED_DIR`` points); without it the tests read the copies in ``tests/data``. Tests that
need PostgreSQL, torch or Chromium skip when it is missing, unless the matching ``OPGOV_REQUIRE_*``
variable is set (``.ci/run`` sets them all), in which case they fail.

Fixtures and helpers: ``cli`` (the CLI in-process on a fresh migrated SQLite simulation database),
``make_cli(url)``, ``any_db_url`` (SQLite, then PostgreSQL), ``sqlite_url``, ``postgres_url``,
``nodb`` (no database configured), the real data (``shared_dir``, ``pytorch_release``,
``models_dir``, ``decisions_2023``), ``torch_mod``; ``refused``/``bad`` (exit 1/2, nothing
written); ``run_opgov`` (a module fixture's step, in-process); ``opgov_in_process(argv, env=,
cwd=)``: the program's exit code, stdout and stderr without starting a program — use it wherever a
test is not about the process (a new ``python -m opgov`` costs 0.6–1 s of CPU).

``python3 dev.py test`` runs the suite on a worker per core (pytest-xdist, ``--dist loadfile``: a
test file's module fixtures, servers and databases stay in one worker). Each worker is its own
session: session fixtures run once per worker, the throwaway PostgreSQL server (when
OPGOV_TEST_POSTGRES_URL is not set) is one per worker, databases have random names, servers take
a free port, and files go under ``tmp_path`` — never into the checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
# the real data the tests read: ../shared (or OPGOV_SHARED_DIR) when it is there, else the copies
# that ship with the tests (tests/data: PyTorch's and ExecuTorch's registries, the model corpora)
BUNDLED = REPO / "tests" / "data"
_GIVEN = Path(os.environ.get("OPGOV_SHARED_DIR", REPO.parent / "shared"))
SHARED = _GIVEN if _GIVEN.is_dir() else BUNDLED
PYTORCH_DATA = Path(os.environ.get("OPGOV_PYTORCH_DATA", SHARED / "pytorch"))
RELEASES = ["2.0.0", "2.6.0", "2.12.0", "2.13.0"]

# The suite reads what a terminal shows: tables as tables, in-process and in the programs it runs.
# What a pipe gets (tab-separated columns) is tests/cli/test_pipes.py's, which runs without it.
os.environ["OPGOV_FORCE_TTY"] = "1"


def _missing(what: str, env: str) -> None:
    """Skip, or fail when the environment says this prerequisite is mandatory."""
    if os.environ.get(env) == "1":
        pytest.fail(f"{what} is required ({env}=1) but missing", pytrace=False)
    pytest.skip(f"{what} not available")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        _missing(f"shared data at {SHARED}", "OPGOV_REQUIRE_REAL_DATA")
    return SHARED


@pytest.fixture(scope="session")
def pytorch_versions() -> list[str]:
    present = [v for v in RELEASES if (PYTORCH_DATA / v / "native_functions.yaml").is_file()]
    if present != RELEASES:
        _missing(f"PyTorch registries at {PYTORCH_DATA}", "OPGOV_REQUIRE_REAL_DATA")
    return present


@pytest.fixture(scope="session")
def pytorch_release(pytorch_versions):
    """``pytorch_release("2.13.0")`` → the folder holding that release's two yaml files."""

    def get(version: str) -> Path:
        return PYTORCH_DATA / version

    return get


@pytest.fixture(scope="session")
def models_dir(shared_dir) -> Path:
    path = shared_dir / "models"
    if not (path / "torchvision_ops.json").is_file():
        _missing(f"model corpora at {path}", "OPGOV_REQUIRE_REAL_DATA")
    return path


@pytest.fixture(scope="session")
def decisions_2023(shared_dir) -> Path:
    path = shared_dir / "decisions" / "core-aten-review-2023.yaml"
    if not path.is_file():
        _missing(f"2023 review facts at {path}", "OPGOV_REQUIRE_REAL_DATA")
    return path


@pytest.fixture(scope="session")
def torch_mod():
    try:
        import torch  # noqa: PLC0415
    except ImportError:
        _missing("torch", "OPGOV_REQUIRE_TORCH")
    return torch


# --- databases and the CLI --------------------------------------------------------------------------

# PostgreSQL where the database's behaviour is the point: the schema and its migrations, text and
# column bounds, locking, races and killed writers, the import's bulk statements, the committee's
# votes under concurrency, and one served module (test_api_serve: every route over PostgreSQL).
# Elsewhere a test parametrized over both databases runs on SQLite only: the same assertions, at a
# fraction of the time (a PostgreSQL database, a server and an import per module). Set
# OPGOV_TEST_BOTH_DATABASES=1 to run every such test on both.
POSTGRES_IS_THE_POINT = (
    "db/",
    "api/test_api_concurrency.py", "api/test_api_serve.py", "api/test_bulk_review.py", "api/test_unstorable_text.py",
    "services/test_bulk_review_races.py", "services/test_governance.py", "services/test_import.py",
    "services/test_killed_import.py", "services/test_member_names.py", "services/test_races.py",
)


def pytest_collection_modifyitems(config, items):
    """Leave out the PostgreSQL variant of a test parametrized over both databases, outside the
    files of POSTGRES_IS_THE_POINT, and the tests marked ``ci`` outside CI's run (:data:`CI_ONLY`;
    both reported as deselected, never as skipped); then put the files in the order the workers
    should start them (:func:`longest_first`)."""
    if os.environ.get("OPGOV_TEST_BOTH_DATABASES") != "1":
        _deselect_postgres_twins(config, items)
    if os.environ.get(CI_ONLY) != "1":
        _deselect(config, items, lambda item: item.get_closest_marker("ci") is not None)
    items[:] = longest_first(items)


# The tests marked ``ci`` run where this is 1: CI's run (.ci/run) and `python3 dev.py test --all`.
# They ask what no other test asks, at a cost the everyday run (ten minutes on two cores) cannot
# pay: fuzzing (schemathesis on every operation of the served document, tests/api/test_openapi_contract*.py;
# every synthesized edit of every schema of a release against torch's verdicts, tests/core/test_compat_torch.py),
# a wheel built and installed into a fresh venv (tests/cli/test_wheel_install.py), a server killed
# up to ten times in the middle of a bulk triage (tests/api/test_bulk_review.py).
CI_ONLY = "OPGOV_TEST_ALL"


# The files that take longest, in CPU seconds on one worker (OPGOV_TEST_TIMES, below, measures
# them; the figures of docs/performance.md). The workers start them first: a file that is one test
# of a minute or more (schemathesis, the ExecuTorch runtime's programs) started last is the run's
# tail while the other worker idles.
LONGEST = {
    "services/test_executorch_runtime.py": 400,  # only where ExecuTorch is installed (CI)
    "api/test_openapi_contract_workbench.py": 70,
    "api/test_bulk_review.py": 57,
    "api/test_openapi_contract.py": 45,
    "formats/test_shipped_torch_facts.py": 40,
    "api/test_api_remote.py": 39,
    "web/test_pages.py": 38,
    "cli/test_narrow_tables.py": 37,
    "api/test_write_answers.py": 36,
    "api/test_openapi_contract_governance.py": 30,
    "web/test_opset_cases_torch.py": 30,
    "services/test_opset_against_torch_export.py": 29,
    "api/test_api_serve.py": 29,
}


def longest_first(items: list) -> list:
    """The files longest first, each file's tests in their own order: those of LONGEST by their
    seconds, then the rest by how many tests they hold. pytest-xdist (``--dist loadfile
    --no-loadscope-reorder``, as dev.py runs it) hands the files to the workers in this order, so a
    file that takes minutes in one or two tests starts first instead of last, while the other
    worker runs the short files beside it."""
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.partition("::")[0], []).append(item)

    def cost(entry: tuple[str, list]) -> tuple[float, int]:
        path, tests = entry
        return (LONGEST.get(path.removeprefix("tests/"), 0), len(tests))

    return [item for _, tests in sorted(files.items(), key=cost, reverse=True) for item in tests]


def _deselect_postgres_twins(config, items) -> None:
    """The PostgreSQL variants outside POSTGRES_IS_THE_POINT, deselected (reported as such)."""
    tests = REPO / "tests"

    def twin(item) -> bool:
        params = getattr(getattr(item, "callspec", None), "params", {})
        where = Path(str(item.path)).resolve().relative_to(tests).as_posix()
        return any(value == "postgres" for value in params.values()) and not where.startswith(POSTGRES_IS_THE_POINT)

    _deselect(config, items, twin)


def _deselect(config, items, left_out) -> None:
    """The items ``left_out`` says, deselected (reported as such)."""
    kept, out = [], []
    for item in items:
        (out if left_out(item) else kept).append(item)
    if out:
        config.hook.pytest_deselected(items=out)
        items[:] = kept


import uuid  # noqa: E402
from dataclasses import dataclass  # noqa: E402

SAMPLE = REPO / "data" / "sample"


def _postgres_admin_url() -> str | None:
    """OPGOV_TEST_POSTGRES_URL, else a throwaway server of this test run when PostgreSQL's
    binaries are on the machine, else None (the PostgreSQL tests skip)."""
    return os.environ.get("OPGOV_TEST_POSTGRES_URL") or _throwaway_server()


_SERVER: list[str | None] = []  # the throwaway server's admin URL, once tried


def _postgres_binaries() -> Path | None:
    import glob
    import shutil

    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _throwaway_server() -> str | None:
    """A PostgreSQL server for this test run only: initdb in a temporary folder, pg_ctl on a free
    port of 127.0.0.1 (trust authentication, no other address), stopped and removed at exit. As
    root it runs as the ``postgres`` user, since PostgreSQL refuses to run as root."""
    if _SERVER:
        return _SERVER[0]
    _SERVER.append(None)
    binaries = _postgres_binaries()
    if binaries is None:
        return None
    import atexit
    import shutil
    import socket
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="opgov-test-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        import pwd

        try:
            account = pwd.getpwnam("postgres")
        except KeyError:
            return None
        os.chown(folder, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data, log = folder / "data", folder / "server.log"
    try:
        subprocess.run([*as_user, str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                        "-E", "UTF8", "--no-sync"], check=True, capture_output=True, timeout=120)
        subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
                        "-o", f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        shutil.rmtree(folder, ignore_errors=True)
        return None

    def stop() -> None:
        subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    url = f"postgresql://postgres@127.0.0.1:{port}/postgres"
    os.environ["OPGOV_TEST_POSTGRES_URL"] = url  # the programs the tests run see it too
    _SERVER[0] = url
    return url


@pytest.fixture(scope="session")
def postgres_admin_url() -> str:
    url = _postgres_admin_url()
    if url is None:
        _missing("PostgreSQL (OPGOV_TEST_POSTGRES_URL)", "OPGOV_REQUIRE_POSTGRES")
    return url


def _throwaway_postgres(admin_url: str):
    """Create a database, yield its URL, drop it."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from opgov.db.engine import resolve_url

    admin = make_url(resolve_url(admin_url))
    name = f"opgov_test_{uuid.uuid4().hex[:12]}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as err:  # noqa: BLE001
        engine.dispose()
        _missing(f"PostgreSQL at {admin_url} ({err.__class__.__name__})", "OPGOV_REQUIRE_POSTGRES")
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


@pytest.fixture
def postgres_url(postgres_admin_url):
    yield from _throwaway_postgres(postgres_admin_url)


@pytest.fixture(params=["sqlite", "postgres"])
def any_db_url(request, tmp_path):
    """An empty database URL on SQLite, and on PostgreSQL when it is configured."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'opgov.db'}"
    else:
        admin = _postgres_admin_url()
        if admin is None:
            _missing("PostgreSQL (OPGOV_TEST_POSTGRES_URL)", "OPGOV_REQUIRE_POSTGRES")
        yield from _throwaway_postgres(admin)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'opgov.db'}"


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        import json

        return json.loads(self.out)


class Cli:
    """Runs ``opgov`` in-process against one database, as a given actor."""

    def __init__(self, url: str, capsys, monkeypatch):
        self.url, self.capsys, self.monkeypatch = url, capsys, monkeypatch
        self.actor = "alice@example.com"

    def __call__(self, *args: str, actor: str | None = None, now: str | None = None) -> Result:
        from opgov.cli.main import run

        argv = ["--db", self.url, "--actor", actor or self.actor]
        if now:
            argv += ["--now", now]
        self.capsys.readouterr()
        code = 0
        try:
            run(argv + [str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        captured = self.capsys.readouterr()
        return Result(code, captured.out, captured.err)

    def ok(self, *args: str, **kw) -> Result:
        result = self(*args, **kw)
        assert result.code == 0, f"opgov {' '.join(map(str, args))} exited {result.code}: {result.err}{result.out}"
        return result


_MIGRATED: dict[tuple[str, bool], str] = {}  # (sqlite|postgres, simulation) → this session's migrated template


def _migrated_template(kind: str, simulation: bool, cli: Cli) -> str:
    """This session's (this worker's) migrated database of ``kind``, made once by ``opgov db
    upgrade [--simulation]``: a SQLite file, or a PostgreSQL database to copy with ``CREATE
    DATABASE … TEMPLATE``. Removed at exit."""
    key = (kind, simulation)
    if key not in _MIGRATED:
        import atexit
        import shutil
        import tempfile

        if kind == "sqlite":
            folder = tempfile.mkdtemp(prefix="opgov-test-migrated-")
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            url = f"sqlite:///{folder}/opgov.db"
        else:
            from sqlalchemy import create_engine, text
            from sqlalchemy.engine import make_url

            from opgov.db.engine import resolve_url

            admin = make_url(resolve_url(_postgres_admin_url()))
            name = f"opgov_template_{uuid.uuid4().hex[:12]}"
            engine = create_engine(admin, isolation_level="AUTOCOMMIT")
            with engine.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))

            def drop(engine=engine, name=name) -> None:
                with engine.connect() as conn:
                    conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                engine.dispose()

            atexit.register(drop)
            url = admin.set(database=name).render_as_string(hide_password=False)
        Cli(url, cli.capsys, cli.monkeypatch).ok("db", "upgrade", *(["--simulation"] if simulation else []))
        _MIGRATED[key] = url
    return _MIGRATED[key]


def _copy_migrated(cli: Cli, simulation: bool) -> bool:
    """Make ``cli``'s database a copy of this session's migrated one, when it is a new SQLite file
    or an empty PostgreSQL database of this test run (``any_db_url``, ``postgres_url``): what
    ``opgov db upgrade`` would make, in a file copy or a ``CREATE DATABASE … TEMPLATE`` instead
    of a migration per test. Else (another URL, a database holding anything) False."""
    from sqlalchemy.engine import make_url

    url = make_url(cli.url)
    if url.drivername == "sqlite":
        path = Path(url.database or "")
        if url.query or not url.database or url.database == ":memory:" or path.exists() or not path.parent.is_dir():
            return False
        import shutil

        template = make_url(_migrated_template("sqlite", simulation, cli)).database
        shutil.copyfile(template, path)
        return True
    if not url.drivername.startswith("postgres") or not (url.database or "").startswith("opgov_test_"):
        return False
    from sqlalchemy import create_engine, inspect, text

    from opgov.db.engine import resolve_url

    engine = create_engine(resolve_url(cli.url))
    try:
        with engine.connect() as conn:
            if inspect(conn).get_table_names():
                return False
    finally:
        engine.dispose()
    template = make_url(resolve_url(_migrated_template("postgres", simulation, cli))).database
    admin = create_engine(make_url(resolve_url(_postgres_admin_url())), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE "{url.database}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{url.database}" TEMPLATE "{template}"'))
    finally:
        admin.dispose()
    return True


@pytest.fixture
def make_cli(capsys, monkeypatch):
    """``make_cli(url)``: a CLI on ``url``, migrated (``upgrade=False``: as it is), a simulation
    database with ``simulation=True``. A new SQLite file or an empty PostgreSQL database of this
    run is a copy of the session's migrated one (see :func:`_copy_migrated`)."""
    monkeypatch.delenv("OPGOV_NOW", raising=False)
    monkeypatch.setenv("COLUMNS", "200")

    def make(url: str, *, upgrade: bool = True, simulation: bool = False) -> Cli:
        cli = Cli(url, capsys, monkeypatch)
        if upgrade and not _copy_migrated(cli, simulation):
            cli.ok("db", "upgrade", *(["--simulation"] if simulation else []))
        return cli

    return make


@pytest.fixture
def cli(make_cli, sqlite_url) -> Cli:
    """A CLI on a fresh, migrated SQLite simulation database."""
    return make_cli(sqlite_url, simulation=True)


def db_fingerprint(url: str) -> dict[str, list]:
    """Every row of every opgov table: to show that a refused command wrote nothing."""
    from sqlalchemy import create_engine, inspect, text

    from opgov.db.engine import resolve_url

    engine = create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            tables = sorted(inspect(conn).get_table_names())
            return {t: [tuple(r) for r in conn.execute(text(f"SELECT * FROM {t} ORDER BY 1"))] for t in tables}
    finally:
        engine.dispose()


def _unchanged(cli, code: int, what: str, args, actor, now, words) -> Result:
    before = db_fingerprint(cli.url)
    result = cli(*args, actor=actor, now=now)
    assert result.code == code, f"expected {what}, got {result.code}: {result.err}{result.out}"
    for word in words:
        assert word in result.err, result.err
    assert db_fingerprint(cli.url) == before, "a refused command changed the database"
    return result


def refused(cli, *args, actor=None, now=None, words=()) -> Result:
    """The command is refused by policy (exit 1) with the reason, and writes nothing."""
    return _unchanged(cli, 1, "a refusal", args, actor, now, words)


def bad(cli, *args, actor=None, now=None, words=()) -> Result:
    """The command is bad input (exit 2) with the reason, and writes nothing."""
    return _unchanged(cli, 2, "bad input", args, actor, now, words)


# --- check-bc without a database (tests/cli/test_check_bc.py and the tests of what it reads) ---------


def registry(path: Path, *entries: str | tuple[str, str]) -> Path:
    """A tiny native_functions.yaml: each entry a schema, or (schema, tags)."""
    lines = []
    for entry in entries:
        schema, tags = entry if isinstance(entry, tuple) else (entry, None)
        lines.append(f"- func: {schema}\n" + (f"  tags: {tags}\n" if tags else "") + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(lines), encoding="utf-8")
    return path


@pytest.fixture
def nodb(capsys, monkeypatch, tmp_path):
    """``opgov`` in-process with no database configured: no --db, no OPGOV_DATABASE_URL, and a
    HOME whose default database file does not exist (how PyTorch CI runs check-bc)."""
    home = tmp_path / "home"
    home.mkdir()
    for var in ("OPGOV_DATABASE_URL", "XDG_DATA_HOME", "OPGOV_NOW"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))

    def run(*args) -> Result:
        from opgov.cli.main import run as main

        capsys.readouterr()
        code = 0
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        out = capsys.readouterr()
        return Result(code, out.out, out.err)

    run.home = home
    return run


def check(run, *args, code: int, **kw) -> Result:
    result = run("check-bc", *args, **kw)
    assert result.code == code, f"check-bc exited {result.code}, expected {code}: {result.err}{result.out}"
    return result


def check_json(run, *args, code: int, **kw) -> dict:
    return check(run, *args, "--format", "json", code=code, **kw).json()


def by_key(report: dict) -> dict[tuple[str, str], dict]:
    return {(f["operator"], f["kind"]): f for f in report["findings"]}


def opgov_in_process(argv, *, env=None, cwd=None, timeout: float | None = None):
    """``opgov ARGV`` as the program would run, in this process: ``env`` is the whole environment
    the program would get (default: this one), ``cwd`` its working folder, stdin is empty, and it returns a
    ``subprocess.CompletedProcess`` with the exit code, stdout and stderr (text, ``\\n`` newlines);
    an exception that escapes ``run`` is a traceback on stderr and exit 1, as in the program.

    For the steps a test is not about the process (setting up a database, the CLI's remote mode,
    comparing outputs): a new ``python -m opgov`` costs 0.6–1 s of CPU, this a few milliseconds
    more than the command. Called from another thread than the main one (sys.stdout and
    os.environ are the process's), or with ``timeout``, it runs the real program instead."""
    import io
    import subprocess
    import sys
    import threading
    import traceback

    argv = [str(a) for a in argv]
    if threading.current_thread() is not threading.main_thread() or timeout is not None:
        return subprocess.run([sys.executable, "-m", "opgov", *argv], capture_output=True, text=True,
                              env=env, cwd=cwd, timeout=timeout or 120)
    from opgov.cli.main import run

    streams = {name: io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", write_through=True)
               for name in ("stdout", "stderr")}
    saved = {name: getattr(sys, name) for name in ("stdin", "stdout", "stderr")}
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    code = 0
    try:
        if cwd is not None:
            os.chdir(cwd)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(""), streams["stdout"], streams["stderr"]
        try:
            run(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except Exception:  # noqa: BLE001 - what the program would print before exiting 1
            traceback.print_exc()
            code = 1
    finally:
        for name, stream in saved.items():
            setattr(sys, name, stream)
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
    out = {name: stream.buffer.getvalue().decode("utf-8", errors="replace").replace("\r\n", "\n")
           for name, stream in streams.items()}
    return subprocess.CompletedProcess(["opgov", *argv], code, out["stdout"], out["stderr"])


def run_opgov(*argv) -> None:
    """The CLI in-process, for module fixtures (which cannot use the per-test ``cli``); it must succeed."""
    from opgov.cli.main import run

    try:
        run([str(a) for a in argv])
    except SystemExit as exc:
        assert exc.code in (0, None), f"opgov {' '.join(map(str, argv))} exited {exc.code}"


def replay_history(url: str, pytorch_release, now: str, *, releases=RELEASES, review: bool = True,
                   runtimes=("0.2.0", "0.5.0", "1.0.0", "1.3.0")) -> None:
    """PyTorch's real ``releases`` imported in order on a new simulation database at ``url`` (all
    at ``now``), then the 2023 core ATen review (``review``) and ExecuTorch's ``runtimes`` by name:
    the history a committee replays, as a user has it out of the box."""
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    for version in releases:
        folder = pytorch_release(version)
        run_opgov("--db", url, "--now", now, "import", folder / "native_functions.yaml", "--tags-yaml",
                  folder / "tags.yaml", "--label", version)
    if review:
        run_opgov("--db", url, "--now", now, "decisions", "load", "core-aten-review-2023")
    for version in runtimes:
        run_opgov("--db", url, "--now", now, "runtimes", "add", f"executorch@{version}")


# --- where the suite's time goes ------------------------------------------------------------------
# OPGOV_TEST_TIMES=FILE: each worker appends a line per test file it ran: the file, its wall seconds
# and its CPU seconds (the worker's own and that of the programs it started and waited for: servers,
# schemathesis, the CLI). Read by docs/performance.md's tables and by the `long` marks.
_TIMES: dict[str, object] = {}


def _cpu() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _file_done() -> None:
    import time

    if _TIMES.get("file"):
        with open(os.environ["OPGOV_TEST_TIMES"], "a") as out:
            out.write(f"{_TIMES['file']}\t{time.monotonic() - _TIMES['wall']:.1f}\t{_cpu() - _TIMES['cpu']:.1f}\n")
    _TIMES.clear()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):  # where the test runs (a worker), before its fixtures are set up
    import time

    file = item.nodeid.partition("::")[0]
    if not os.environ.get("OPGOV_TEST_TIMES") or file == _TIMES.get("file"):
        return
    _file_done()
    _TIMES.update(file=file, wall=time.monotonic(), cpu=_cpu())


def pytest_sessionfinish(session):
    if os.environ.get("OPGOV_TEST_TIMES"):
        _file_done()
