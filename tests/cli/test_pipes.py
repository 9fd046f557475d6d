"""Every command that prints a table is grep-able through a pipe: a header line, one record a line,
tab-separated, nothing wrapped or cut, no box characters (the real program, stdout a pipe)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app
from tests.api.test_api_serve import opgov

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
    "exceptions list": ["exceptions", "list"],
    "decomps list": ["decomps", "list"],
    "runtimes list": ["runtimes", "list"],
    "tokens list": ["tokens", "list"],
    "upgraders list": ["upgraders", "list"],
}


def table_commands() -> set[str]:
    """Every command (or group with its own output) whose code prints a table."""
    found = set()

    def walk(group: click.Group, prefix: tuple[str, ...]) -> None:
        if group.callback is not None and prefix and "table(" in inspect.getsource(group.callback):
            found.add(" ".join(prefix))
        for name, command in group.commands.items():
            if isinstance(command, click.Group):
                walk(command, (*prefix, name))
            elif command.callback is not None and ("table(" in inspect.getsource(command.callback)
                                                   or "section(" in inspect.getsource(command.callback)):
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


@pytest.mark.parametrize("command", sorted(INVOCATIONS))
def test_a_piped_table_is_plain_columns(db, command):
    argv = [sys.executable, "-m", "opgov", "--db", db, "--actor", "alice", *INVOCATIONS[command]]
    env = {k: v for k, v in os.environ.items() if k != "OPGOV_FORCE_TTY"}  # as a pipe is, by default
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env={**env, "COLUMNS": "60"})  # a narrow terminal must not matter
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert not BOX & set(done.stdout), done.stdout[:500]
    tables: list[list[str]] = []  # a titled part ("# history") starts a new table
    for line in lines:
        if line.startswith("# ") or not tables:
            tables.append([])
        if not line.startswith("# "):
            tables[-1].append(line)
    tabular = [t for t in tables if t and "\t" in t[0]]
    assert tabular, done.stdout[:500]
    for rows in tabular:
        width = rows[0].count("\t")
        assert all(row.count("\t") == width for row in rows), rows[:5]
    if command in ("ops list", "proposals", "log"):  # a long name is one whole cell, never wrapped
        assert any(LONG in line.split("\t") for line in lines), done.stdout[:500]
