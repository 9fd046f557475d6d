"""A mistyped command line gets what any other bad input gets: one line on stderr naming the option,
the value or the argument and the command's `--help`, exit 2, and nothing on stdout — never click's
usage block. Checked on the real `opgov` program, for every command of the tree."""

from __future__ import annotations

import re

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app
from tests.cli.test_help import command_tree, opgov_program

ENV = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}


def opgov(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*opgov_program(), *args], capture_output=True, text=True, env=ENV, timeout=120)


def refused(done: subprocess.CompletedProcess) -> str:
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr.startswith("opgov: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert "Usage:" not in done.stderr and "Traceback" not in done.stderr
    return done.stderr


def test_an_unknown_option_of_every_command_is_one_line_naming_it():
    commands = [path for path, command in command_tree(typer.main.get_command(app))
                if path and not isinstance(command, click.Group)]
    assert len(commands) > 40
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(lambda path: (path, opgov(*path, "--no-such-option")), commands))
    for path, done in answers:  # click may add its guess at a close name ("Did you mean '--torch-pin'?")
        assert re.fullmatch(r"opgov: error: No such option '--no-such-option'\.( Did you mean '--[\w-]+'\?)? "
                            + re.escape(f"(see `opgov {' '.join(path)} --help`)") + "\n", refused(done)), refused(done)


@pytest.mark.parametrize(("args", "says"), [
    (("check-decomps", "--format", "xml"), "Invalid value for '--format': 'xml' is not one of 'text', 'json', 'github'."),
    (("ops", "show"), "Missing argument 'OP'."),
    (("proposals", "show", "three"), "'three' is not a valid integer"),
    (("no-such-command",), "No such command 'no-such-command'."),
    (("ops",), ""),  # a group without its command shows its help (on stderr, exit 2, as click does)
])
def test_a_bad_value_or_a_missing_argument_is_one_line(args, says):
    done = opgov(*args)
    if not says:
        assert done.returncode == 2 and done.stderr.startswith("Usage: opgov ops") and "show" in done.stderr
        return
    assert says in refused(done)
