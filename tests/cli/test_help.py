"""`--help` reads cleanly with the versions pip resolves: the help for the root and every group and
command (printed in this process; the real `opgov` program's, into a pipe, is checked to be the
same for one of each depth) shows `[required]` and `[default: …]` as they are (never the `\\[`
escapes Typer writes for rich when rich does not render the help), and every parameter's row
carries its help text."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app


def command_tree(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = [(prefix, group)]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += command_tree(command, (*prefix, name))
        else:
            found.append(((*prefix, name), command))
    return found


def opgov_program() -> list[str]:
    """The installed console script beside this interpreter (what a user runs)."""
    script = Path(sys.executable).parent / "opgov"
    return [str(script)] if script.exists() else [shutil.which("opgov") or "opgov"]


@pytest.fixture(scope="module")
def helps() -> dict[tuple[str, ...], tuple[click.Command, str]]:
    """Every help of the tree, printed in this process (``opgov_in_process``: what the program
    prints, without a program per command); the real program's are checked against them below."""
    from conftest import opgov_in_process

    tree = command_tree(typer.main.get_command(app))
    outputs = {}
    for path, command in tree:
        done = opgov_in_process([*path, "--help"], env=HELP_ENV)
        assert done.returncode == 0, f"opgov {' '.join(path)} --help: {done.stderr}"
        assert done.stderr == ""
        outputs[path] = (command, done.stdout)
    return outputs


HELP_ENV = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}


def test_the_real_program_prints_the_same_help(helps):
    """The installed `opgov` program, into a pipe: the root, a group and a command of each depth."""
    for path in ((), ("decomps",), ("check-bc",), ("decomps", "import-torch")):
        done = subprocess.run([*opgov_program(), *path, "--help"], capture_output=True, text=True, env=HELP_ENV,
                              timeout=120)
        assert (done.returncode, done.stderr) == (0, ""), f"opgov {' '.join(path)} --help: {done.stderr}"
        assert done.stdout == helps[path][1], f"opgov {' '.join(path)} --help differs from in-process"


def flat(text: str) -> str:
    return " ".join(text.split())


def squeezed(text: str) -> str:
    """Without any whitespace: click may wrap a long word (a path) in the middle."""
    return "".join(text.split())


def test_every_help_is_plain_text_without_escapes(helps):
    assert len(helps) > 40  # the root, the groups and every command
    for path, (_, out) in helps.items():
        where = f"opgov {' '.join(path)} --help"
        assert out.startswith("Usage: opgov"), where
        assert "\\[" not in out and "\\]" not in out, f"{where} shows escaped brackets:\n{out}"
        assert "\x1b[" not in out, where  # no terminal codes when piped


def test_every_parameter_row_shows_its_help_required_and_default(helps):
    checked_required = checked_default = 0
    for path, (command, out) in helps.items():
        where = f"opgov {' '.join(path)} --help"
        for param in command.params:
            if getattr(param, "hidden", False):
                continue
            shown = param.opts[0] if isinstance(param, click.Option) else (param.metavar or param.name.upper())
            assert shown in out, f"{where}: no row for {shown}"
            if getattr(param, "help", None):
                assert squeezed(param.help) in squeezed(out), f"{where}: the help of {shown} is missing:\n{out}"
            if param.required and isinstance(param, click.Option):
                row = flat(out.split(shown, 1)[1].split("\n  -", 1)[0])
                assert "[required]" in row, f"{where}: {shown} is required but its row does not say so:\n{out}"
                checked_required += 1
        if re.search(r"(?<!\()default:", out):  # "(default: never)" is prose in a help text
            assert "[default: " in out, where
            checked_default += 1
    assert checked_required > 5 and checked_default > 5  # the test saw what it is about


def test_the_command_list_is_readable(helps):
    _, out = helps[()]
    for name in ("import", "check-bc", "report", "db"):
        assert f"\n  {name} " in out


def test_arguments_show_their_help(helps):
    # click 8.5 resets an argument's help that Typer below 0.26 set: the rows went blank
    _, out = helps[("check-bc",)]
    rows = [line.split() for line in out.split("Arguments:", 1)[1].split("Options:", 1)[0].splitlines() if line.strip()]
    assert [row[0] for row in rows] == ["[OLD]", "[NEW]"]
    assert all(" ".join(row[1:]) == "yaml path, snapshot label, or git:REF[:PATH]" for row in rows), out
