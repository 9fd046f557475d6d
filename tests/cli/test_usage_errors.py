"""A mistyped command line gets what any other bad input gets: one line on stderr naming the option,
the value or the argument and the command's `--help`, exit 2, and nothing on stdout — never click's
usage block. Checked for every command of the tree in this process (``opgov_in_process``: what the
program prints, without starting one per command), and on the real `opgov` program for one command
of each depth, an unknown command and a group without its command."""

from __future__ import annotations

import re

import os
import subprocess

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app
from conftest import opgov_in_process
from tests.cli.test_help import command_tree, opgov_program

ENV = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}


def program(*args: str) -> subprocess.CompletedProcess:
    """The real `opgov` program."""
    return subprocess.run([*opgov_program(), *args], capture_output=True, text=True, env=ENV, timeout=120)


def in_process(*args: str) -> subprocess.CompletedProcess:
    return opgov_in_process(args, env=ENV)


def refused(done: subprocess.CompletedProcess) -> str:
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith("opgov: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Usage:" not in done.stderr and "Traceback" not in done.stderr
    return done.stderr


def unknown_option(path: tuple[str, ...], done: subprocess.CompletedProcess) -> None:
    # click may add its guess at a close name ("Did you mean '--torch-pin'?")
    assert re.fullmatch(r"opgov: error: No such option '--no-such-option'\.( Did you mean '--[\w-]+'\?)? "
                        + re.escape(f"(see `opgov {' '.join(path)} --help`)") + "\n", refused(done)), refused(done)


COMMANDS = [path for path, command in command_tree(typer.main.get_command(app))
            if path and not isinstance(command, click.Group)]


def test_an_unknown_option_of_every_command_is_one_line_naming_it():
    assert len(COMMANDS) > 40
    for path in COMMANDS:
        unknown_option(path, in_process(*path, "--no-such-option"))


BAD_LINES = [
    (("check-decomps", "--format", "xml"), "Invalid value for '--format': 'xml' is not one of 'text', 'json', 'github'."),
    (("ops", "show"), "Missing argument 'OP'."),
    (("proposals", "show", "three"), "'three' is not a valid integer"),
    (("no-such-command",), "No such command 'no-such-command'."),
    (("ops",), ""),  # a group without its command shows its help (on stderr, exit 2, as click does)
]


def said(done: subprocess.CompletedProcess, says: str) -> None:
    if not says:
        assert done.returncode == 2 and done.stderr.startswith("Usage: opgov ops") and "show" in done.stderr
        assert "Traceback" not in done.stderr
        return
    assert says in refused(done)


@pytest.mark.parametrize(("args", "says"), BAD_LINES)
def test_a_bad_value_or_a_missing_argument_is_one_line(args, says):
    said(in_process(*args), says)


def test_the_real_program_says_the_same():
    """The program itself (its exit code, its stderr): an unknown option of a command and of a
    group's command, an unknown command, and a group without its command."""
    for path in (("check-bc",), ("decomps", "import-torch")):
        assert path in COMMANDS
        unknown_option(path, program(*path, "--no-such-option"))
    for args, says in BAD_LINES[-2:]:
        said(program(*args), says)
