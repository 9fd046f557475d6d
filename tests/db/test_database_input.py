"""Databases a user gets wrong: a failed `db upgrade` leaves nothing behind, an absent or empty
default database never breaks a command that needs none, and a database URL or path that is no
database is one line and exit 2."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from conftest import SAMPLE, Result

V1, V2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"


@pytest.fixture
def opgov(capsys, monkeypatch, tmp_path):
    """The CLI in-process with the default database under tmp_path/xdg (no --db, no env URL)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("OPGOV_DATABASE_URL", raising=False)
    monkeypatch.delenv("OPGOV_NOW", raising=False)
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> Result:
        from opgov.cli.main import run as main

        capsys.readouterr()
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 0 if done.code is None else 2
        out = capsys.readouterr()
        return Result(code, out.out, out.err)

    return run


def one_line_bad_input(result: Result, *words: str) -> None:
    assert result.code == 2, result
    assert "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1, result.err
    for word in words:
        assert word in result.err, result.err


def test_failed_upgrade_of_the_default_database_creates_nothing(opgov, tmp_path):
    one_line_bad_input(opgov("db", "upgrade", "no-such-revision"), "no-such-revision")
    assert not (tmp_path / "xdg").exists()  # not the file, not ~/.local/share/opgov
    # and a database-free check still works afterwards
    result = opgov("check-bc", V1, V2)
    assert result.code == 1 and "BC" in result.out, result


def test_failed_upgrade_of_a_new_path_creates_nothing(opgov, tmp_path):
    one_line_bad_input(opgov("--db", tmp_path / "new" / "sub" / "x.db", "db", "upgrade", "9999"), "9999")
    assert not (tmp_path / "new").exists()


def test_empty_default_database_does_not_break_a_check_of_two_files(opgov, tmp_path):
    default = tmp_path / "xdg" / "opgov" / "opgov.db"
    default.parent.mkdir(parents=True)
    default.touch()  # what older versions left after a failed upgrade
    result = opgov("check-bc", V1, V2, "--format", "json")
    assert result.code == 1, result
    assert '"errors"' in result.out
    assert default.stat().st_size == 0  # and it is left alone


def test_a_text_file_is_not_a_database(opgov, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    one_line_bad_input(opgov("--db", notes, "db", "upgrade"), "notes.txt", "not a database")
    assert notes.read_text() == "not a database\n"


def test_a_directory_is_not_a_database(opgov, tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    one_line_bad_input(opgov("--db", folder, "db", "upgrade"), "folder", "directory")
    assert list(folder.iterdir()) == []
    one_line_bad_input(opgov("--db", folder, "ops", "list"), "folder", "directory")


def test_an_unreachable_server_is_one_line(opgov):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = opgov("--db", f"postgresql://opgov:s3cret@127.0.0.1:{port}/opgov", "db", "upgrade")
    one_line_bad_input(result, f"127.0.0.1:{port}")
    assert "s3cret" not in result.err


def test_a_database_that_is_not_one_for_other_commands(opgov, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    one_line_bad_input(opgov("--db", notes, "ops", "list"), "notes.txt", "not a database")
    assert Path(notes).read_text() == "not a database\n"


@pytest.mark.parametrize("command", [("db", "current"), ("db", "downgrade", "base"), ("check-bc", V1, V2)])
def test_every_database_command_says_one_line_for_a_file_that_is_no_database(opgov, tmp_path, command):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    one_line_bad_input(opgov("--db", notes, *command), "notes.txt", "not a database")
    assert notes.read_text() == "not a database\n"
