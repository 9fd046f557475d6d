"""Every command that prints a table is grep-able through a pipe: a header line, one record a line,
tab-separated, nothing wrapped or cut, no box characters. Each also takes ``--format
table|tsv|json``: tsv is what a pipe gets, json is what ``--json`` prints (the same records),
table is the terminal's table even into a pipe. The commands run in this process with stdout not a
terminal, as a pipe is not; the real program, stdout a pipe, prints the same (the last test)."""

from __future__ import annotations

import functools
import inspect
import json
import os
import subprocess
import sys

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app
from tests.api.test_api_serve import opgov
from tests.conftest import opgov_in_process

BOX = set("│┃─━┏┓┗┛┡┩╇╈┼├┤┬┴╭╮╯╰═║")
LONG = "aten::_fused_moving_avg_obs_fq_helper_functional"  # longer than any terminal column

# how each table-printing command is run on the database below
INVOCATIONS: dict[str, list[str]] = {
    "ops list": ["ops", "list"],
    "ops show": ["ops", "show", LONG],
    "snapshots": ["snapshots"],
    "log": ["log"],
    "members list": ["members", "list"],
    "proposals": ["proposals"],
    "proposals list": ["proposals", "list"],
    "exceptions list": ["exceptions", "list"],
    "decomps list": ["decomps", "list"],
    "runtimes list": ["runtimes", "list"],
    "tokens list": ["tokens", "list"],
    "upgraders list": ["upgraders", "list"],
    "queue": ["queue"],
    "decomps closure": ["decomps", "closure"],  # 2.13.0's shipped facts: no torch needed
}


def _prints_table(function) -> bool:
    """Its code prints a table, itself or through a helper of its module (``_list_proposals``)."""
    import re

    function = inspect.unwrap(function)  # Typer's wrapper of the command's function
    source = inspect.getsource(function)
    if "table(" in source or "section(" in source:
        return True
    helpers = (function.__globals__.get(name) for name in re.findall(r"\b(_\w+)\(", source))
    return any(inspect.isfunction(h) and h.__module__ == function.__module__ and "table(" in inspect.getsource(h)
               for h in helpers)


def table_commands() -> set[str]:
    """Every command (or group with its own output) whose code prints a table."""
    found = set()

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        if group.callback is not None and prefix and _prints_table(group.callback):
            found.add(" ".join(prefix))
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, (*prefix, name))
            elif command.callback is not None and _prints_table(command.callback):
                found.add(" ".join((*prefix, name)))

    walk(typer.main.get_command(app), ())
    return found


def test_every_table_command_is_piped_below():
    assert table_commands() == set(INVOCATIONS)


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, executorch_registries):
    url = f"sqlite:///{tmp_path_factory.mktemp('pipes') / 'opgov.db'}"
    folder = pytorch_release("2.13.0")
    opgov(url, "db", "upgrade")
    opgov(url, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
          "--label", "2.13.0")
    opgov(url, "members", "add", "alice", "--role", "maintainer", actor="alice")
    opgov(url, "tokens", "create", "alice", actor="alice")
    opgov(url, "decomps", "load", "export-composites", actor="alice")
    opgov(url, "propose-core", LONG, "--rationale", "a long name, and a rationale\twith a tab", actor="alice")
    opgov(url, "exceptions", "add", "aten::_fused_moving_avg_obs_fq_helper*", "--reason", "a test", "--expires", "2099-01-01", actor="alice")
    opgov(url, "runtimes", "add", "executorch@1.3.0", "--ops", str(executorch_registries / "portable-functions.yaml"),
          actor="alice")
    opgov(url, "upgraders", "add", "aten::linspace", "--versions", "0-7", "--old-schema",
          "linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, "
          "Device? device=None, bool? pin_memory=None) -> Tensor", "--bumped-on", "2022-01-24",
          "--reason", "linspace errors out when steps is not given", actor="alice")
    return url


@pytest.fixture(scope="module")
def executorch_registries(shared_dir):
    folder = shared_dir / "executorch" / "1.3.0"
    if not (folder / "portable-functions.yaml").is_file():
        pytest.skip("ExecuTorch registries not available")
    return folder


def _argv_env(db: str, command: str, extra: tuple[str, ...], columns: int) -> tuple[list[str], dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k != "OPGOV_FORCE_TTY"}  # as a pipe is, by default
    return ["--db", db, "--actor", "alice", *INVOCATIONS[command], *extra], {**env, "COLUMNS": str(columns)}


@functools.cache
def run(db: str, command: str, *extra: str, columns: int = 60) -> subprocess.CompletedProcess:
    """``opgov`` on ``db`` in this process, stdout not a terminal as a pipe is not (``COLUMNS``: a
    terminal's width must not matter to tsv)."""
    argv, env = _argv_env(db, command, extra, columns)
    return opgov_in_process(argv, env=env)


def piped(db: str, command: str, *extra: str, columns: int = 60) -> subprocess.CompletedProcess:
    """The real program on ``db``, stdout a pipe."""
    argv, env = _argv_env(db, command, extra, columns)
    return subprocess.run([sys.executable, "-m", "opgov", *argv], capture_output=True, text=True, timeout=120, env=env)


def parts(stdout: str) -> dict[str, list[list[str]]]:
    """Plain columns by part: ``""`` for a list (or the lines before ``ops show``'s first ``# title``),
    else the title; each a list of rows split at tabs, the header first."""
    found: dict[str, list[list[str]]] = {"": []}
    current = ""
    for line in stdout.splitlines():
        if line.startswith("# "):
            current = line[2:]
            found[current] = []
        else:
            found[current].append(line.split("\t"))
    return found


# the records of each list command's JSON, and (tsv column, JSON field) that hold the same value
RECORDS = {
    "ops list": (lambda j: j, ("name", "name")),
    "snapshots": (lambda j: j, ("label", "label")),
    "log": (lambda j: j, ("action", "action"), ("subject", "subject")),
    "members list": (lambda j: j, ("name", "name"), ("role", "role")),
    "proposals": (lambda j: j, ("id", "id"), ("operator", "operator")),
    "proposals list": (lambda j: j, ("id", "id"), ("operator", "operator")),
    "exceptions list": (lambda j: j, ("id", "id"), ("pattern", "pattern")),
    "decomps list": (lambda j: j, ("operator", "operator")),
    "runtimes list": (lambda j: j["runtimes"], ("runtime", "runtime")),
    "tokens list": (lambda j: j, ("id", "id"), ("member", "member")),
    "upgraders list": (lambda j: j["upgraders"], ("upgrader", "name"), ("operator", "operator")),
    "queue": (lambda j: j["items"], ("operator", "operator"), ("suggestion", "suggestion"), ("because", "because")),
    "decomps closure": (lambda j: j["items"], ("op", "op"), ("kind", "kind")),
}
# ops show: each titled part of its tsv and the JSON list that holds the same records
SHOW_PARTS = {
    "history": lambda j: j["history"],
    "what changed, and why": lambda j: [c for h in j["history"] for c in h["changes"]],
    "decisions": lambda j: j["decisions"],
    "proposals": lambda j: j["proposals"],
    "lifecycle": lambda j: j["lifecycle_steps"],
    "compatibility findings": lambda j: j["findings"],
}


def test_every_list_command_says_how_its_json_matches_its_columns():
    assert set(RECORDS) | {"ops show"} == set(INVOCATIONS)


@pytest.mark.parametrize("fmt", ["auto", "tsv"])
@pytest.mark.parametrize("command", sorted(INVOCATIONS))
def test_a_piped_table_is_plain_columns(db, command, fmt):
    done = run(db, command, *(["--format", fmt] if fmt != "auto" else []))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not BOX & set(done.stdout), done.stdout[:500]
    tabular = [rows for rows in parts(done.stdout).values() if rows and len(rows[0]) > 1]
    assert tabular, done.stdout[:500]
    for rows in tabular:  # a header, then records with as many cells
        assert all(len(row) == len(rows[0]) for row in rows), rows[:5]
    if command != "ops show":  # a list is its columns and nothing else
        assert len(tabular) == 1 and len(tabular[0]) == len(lines), done.stdout[:500]
    if command in ("ops list", "proposals", "log"):  # a long name is one whole cell, never wrapped
        assert any(LONG in line.split("\t") for line in lines), done.stdout[:500]
    if command == "ops show":
        assert lines[0].startswith(f"{LONG}  "), lines[0]


@pytest.mark.parametrize("command", sorted(INVOCATIONS))
def test_json_is_what_json_prints_and_holds_the_records_of_the_columns(db, command):
    done = run(db, command, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stdout == run(db, command, "--json").stdout  # --json is the same thing
    data = json.loads(done.stdout)
    columns = parts(run(db, command, "--format", "tsv").stdout)
    if command == "ops show":
        assert data["name"] == LONG
        shown = {title: rows for title, rows in columns.items() if title}
        assert set(shown) == {title for title, records in SHOW_PARTS.items() if records(data)}
        for title, rows in shown.items():
            assert len(rows) - 1 == len(SHOW_PARTS[title](data)), title  # one line a record, under its header
        return
    header, *rows = columns[""]
    records, *pairs = RECORDS[command]
    assert rows and len(rows) == len(records(data))
    for column, field in pairs:
        assert [row[header.index(column)] for row in rows] == [str(r[field]) for r in records(data)], column


@pytest.mark.parametrize("command", sorted(INVOCATIONS))
def test_table_into_a_pipe_is_still_the_table(db, command):
    done = run(db, command, "--format", "table", columns=400)  # wide enough that no short cell folds
    assert done.returncode == 0, done.stderr
    assert BOX & set(done.stdout), done.stdout[:500]
    assert "\t" not in done.stdout
    for title, rows in parts(run(db, command, "--format", "tsv").stdout).items():
        header, *records = rows or [[]]
        if title:
            assert title in done.stdout
        if len(header) < 2:  # the lines over ops show's tables, as they are
            assert all(line[0].strip() in done.stdout for line in rows)
            continue
        for record in records:  # every record is there, each cell that fits a column as it is
            assert any(f" {record[0]} " in line for line in done.stdout.splitlines()), (record, done.stdout[:2000])
            assert all(cell in done.stdout for cell in record if len(cell) < 60 and "\\" not in cell), record


@pytest.mark.parametrize("command", sorted(INVOCATIONS))
def test_an_unknown_format_is_one_line_and_exit_2(db, command):
    done = run(db, command, "--format", "xml")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "opgov: error: --format 'xml' is not one of auto, table, tsv, json\n"


def test_json_and_another_format_disagree(db):
    done = run(db, "ops list", "--json", "--format", "tsv")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and "--json" in done.stderr and "--format tsv" in done.stderr


EMPTY = {  # a list command on a database holding nothing, and what it says about that
    "members list": "no members: single-user mode",
    "proposals": "no proposals",
    "exceptions list": "no exceptions",
    "runtimes list": "no runtimes registered",
    "tokens list": "no tokens",
    "upgraders list": "no upgraders recorded",
}


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('empty') / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    return url


@pytest.mark.parametrize("command", sorted(EMPTY))
def test_an_empty_list_is_its_header_as_tsv_and_a_sentence_on_a_table(empty_db, command):
    tsv = run(empty_db, command, "--format", "tsv")
    assert tsv.returncode == 0, tsv.stderr
    assert len(tsv.stdout.splitlines()) == 1 and "\t" in tsv.stdout  # the header, no records
    assert tsv.stderr.startswith(EMPTY[command]) and tsv.stderr.count("\n") == 1
    shown = run(empty_db, command, "--format", "table")
    assert (shown.returncode, shown.stderr) == (0, "") and shown.stdout.startswith(EMPTY[command])


@pytest.mark.parametrize(("command", "extra"), [("ops show", ()), ("queue", ()), ("log", ("--format", "table")),
                                                ("runtimes list", ("--format", "xml"))])
def test_the_real_program_into_a_pipe_prints_what_the_tests_above_read(db, command, extra):
    """The tests above run the commands in this process; the program, stdout a real pipe, prints
    the same, and exits the same (a list, the show command's parts, a table, a refusal)."""
    real, here = piped(db, command, *extra), run(db, command, *extra)
    assert (real.returncode, real.stdout, real.stderr) == (here.returncode, here.stdout, here.stderr)
