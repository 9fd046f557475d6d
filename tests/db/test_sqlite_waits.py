"""SQLite: readers never wait for a writer's lock, a wait that runs out says so, and a database
from a newer opgov says that (not "not initialised")."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, text

from conftest import SAMPLE, db_fingerprint


def _opgov(url: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPGOV_ACTOR": "alice", "OPGOV_DATABASE_URL": url}
    env.pop("OPGOV_NOW", None)
    return subprocess.run([sys.executable, "-m", "opgov", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _held(path: Path, mode: str) -> sqlite3.Connection:
    """Another process's transaction on the file: IMMEDIATE is a writer at work (an import before
    its commit), EXCLUSIVE a writer writing its commit."""
    other = sqlite3.connect(path, isolation_level=None)
    other.execute(f"BEGIN {mode}")
    if mode == "IMMEDIATE":
        other.execute("INSERT INTO settings (key, value) VALUES ('quorum', '5')")  # not committed yet
    return other


def test_readers_do_not_wait_for_a_writer(make_cli, sqlite_url):
    cli = make_cli(sqlite_url)
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "v1")
    path = Path(sqlite_url.split("///", 1)[1])
    other = _held(path, "IMMEDIATE")
    try:
        short = f"{sqlite_url}?timeout=1"
        for args in (["ops", "list", "--category", "core"], ["config", "list", "--json"], ["log", "verify"],
                     ["db", "current"], ["tick"]):
            result = _opgov(short, *args)
            assert result.returncode == 0, f"{args}: {result.stderr}"
        assert '"quorum": 2' in _opgov(short, "config", "list", "--json").stdout  # the committed state
        # a writer does wait, and says what it waited for
        before = db_fingerprint(sqlite_url)
        result = _opgov(short, "deprecate", "aten::glu", "--reason", "r")
        assert result.returncode == 1
        assert result.stderr.startswith(f"opgov: refused: database {short} is locked by another writer; waited 1 s")
        assert "Traceback" not in result.stderr
    finally:
        other.rollback()
        other.close()
    assert db_fingerprint(sqlite_url) == before


def test_a_read_that_cannot_get_in_says_so(make_cli, sqlite_url):
    make_cli(sqlite_url)
    path = Path(sqlite_url.split("///", 1)[1])
    other = _held(path, "EXCLUSIVE")
    try:
        for args in (["ops", "list"], ["log", "verify"], ["db", "upgrade"]):
            result = _opgov(f"{sqlite_url}?timeout=1", *args)
            assert result.returncode == 1, f"{args}: {result.stderr}"
            assert "is locked by another writer; waited 1 s" in result.stderr
            assert "not initialised" not in result.stderr and "Traceback" not in result.stderr
    finally:
        other.rollback()
        other.close()


def test_reads_during_a_real_import(make_cli, sqlite_url, pytorch_release):
    """Readers running while a full PyTorch registry is imported all succeed."""
    cli = make_cli(sqlite_url)
    cli.ok("import", pytorch_release("2.12.0") / "native_functions.yaml", "--label", "2.12.0")
    env = {**os.environ, "OPGOV_ACTOR": "bot", "OPGOV_DATABASE_URL": sqlite_url}
    importer = subprocess.Popen([sys.executable, "-m", "opgov", "import",
                                 str(pytorch_release("2.13.0") / "native_functions.yaml"), "--label", "2.13.0"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reads = []
    while importer.poll() is None and len(reads) < 20:
        reads.append(_opgov(sqlite_url, "ops", "show", "aten::add.Tensor", "--json"))
    _, err = importer.communicate(timeout=300)
    assert importer.returncode == 0, err
    assert reads and all(r.returncode == 0 for r in reads), [r.stderr for r in reads if r.returncode]


def test_a_database_from_a_newer_opgov(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    engine = create_engine(any_db_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    finally:
        engine.dispose()
    for args in (("ops", "list"), ("db", "upgrade"), ("import", SAMPLE / "native_functions.v1.yaml", "--label", "x")):
        result = cli(*args)
        assert result.code == 2, result.err
        assert "at revision 0099, which this opgov does not know: it was made by a newer opgov" in result.err
        assert "upgrade opgov" in result.err


def test_a_file_that_is_not_a_database(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("hello\n")
    for args in (["db", "current"], ["db", "upgrade"], ["ops", "list"], ["log", "verify"]):
        result = _opgov(f"sqlite:///{path}", *args)
        assert result.returncode == 2, f"{args}: {result.stderr}"
        assert result.stderr == f"opgov: error: cannot open database sqlite:///{path}: file is not a database\n"
    assert path.read_text() == "hello\n"
