"""docs/user-guide.md cannot fall behind the command line.

1. Every command and subcommand of ``opgov`` (as ``opgov --help`` and each group's ``--help``
   list them) is documented: a heading names it, or an example runs it.
2. Every example line ``$ … opgov …`` in the guide parses with the real command tree: the global
   options, the command path, every option and argument (click's own parser, with the real
   types and choices; nothing is run).

Both read the Typer application only; no database, no subprocess.
"""

from __future__ import annotations

import shlex
import warnings
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
import typer

import opgov.cli.main  # noqa: F401 - registers every command on the app
from opgov.cli.app import app

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
# Tokens that end the opgov part of a shell line.
SHELL_OPERATORS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1", "&"}


@dataclass(frozen=True)
class Example:
    line_no: int
    text: str
    args: tuple[str, ...]  # what follows `opgov`, up to the first shell operator


@pytest.fixture(scope="module")
def root() -> click.Group:
    command = typer.main.get_command(app)
    assert isinstance(command, click.Group)
    return command


@pytest.fixture(scope="module")
def guide() -> str:
    return GUIDE.read_text(encoding="utf-8")


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every visible command path: leaves, and groups that run without a subcommand."""
    paths: list[tuple[str, ...]] = []
    for name, command in group.commands.items():
        if command.hidden:
            continue
        path = (*prefix, name)
        if isinstance(command, click.Group):
            if command.invoke_without_command:
                paths.append(path)
            paths.extend(commands(command, path))
        else:
            paths.append(path)
    return paths


def examples(text: str) -> list[Example]:
    """The ``$ …`` lines that run opgov (also through ``env …``), split into arguments."""
    found = []
    for line_no, line in enumerate(text.splitlines(), 1):
        if not line.startswith("$ "):
            continue
        try:
            tokens = shlex.split(line[2:], comments=True)
        except ValueError as err:
            raise AssertionError(f"user-guide.md:{line_no}: cannot split {line!r}: {err}") from None
        if "opgov" not in tokens:
            continue
        start = tokens.index("opgov")
        if start and tokens[0] != "env":  # `cat x | opgov` is not how the guide runs it
            continue
        args = []
        for token in tokens[start + 1:]:
            if token in SHELL_OPERATORS:
                break
            args.append(token)
        found.append(Example(line_no, line, tuple(args)))
    return found


def _unparsed(ctx: click.Context) -> list[str]:
    """What a group left for its subcommand (Click 8 keeps the subcommand's name apart)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [*getattr(ctx, "protected_args", []), *ctx.args]


def parse(root: click.Group, args: tuple[str, ...]) -> tuple[str, ...]:
    """Parse ``args`` the way ``opgov`` would, without invoking anything; return the command
    path. Raises click's own errors for an unknown command, option, or a bad value."""
    eager = {"--help", "--version"}
    if eager & set(args):  # eager options print and exit while parsing; check they exist
        known = {opt for p in root.params for opt in p.opts} | {"--help"}
        assert eager & set(args) <= known
        return ()
    ctx = root.make_context("opgov", list(args), resilient_parsing=False)
    path: list[str] = []
    group: click.Command = root
    rest = _unparsed(ctx)
    while isinstance(group, click.Group) and rest:
        name, rest = rest[0], rest[1:]
        command = group.get_command(ctx, name)
        if command is None:
            raise click.UsageError(f"no such command {' '.join((*path, name))!r}")
        path.append(name)
        ctx = command.make_context(name, rest, parent=ctx, resilient_parsing=False)
        group = command
        rest = _unparsed(ctx) if isinstance(command, click.Group) else []
    if isinstance(group, click.Group) and not group.invoke_without_command:
        raise click.UsageError(f"{' '.join(path) or 'opgov'} needs a subcommand")
    return tuple(path)


def test_every_command_is_documented(root, guide):
    headings = [line for line in guide.splitlines() if line.startswith("#")]
    used = set()
    for example in examples(guide):
        try:
            used.add(parse(root, example.args))
        except click.ClickException:
            pass  # test_every_example_parses reports it
    missing = []
    for path in commands(root):
        name = " ".join(path)
        in_heading = any(f"`{name}`" in h or f"`opgov {name}`" in h for h in headings)
        if not in_heading and path not in used:
            missing.append(name)
    assert not missing, f"commands with no heading and no example in {GUIDE.name}: {', '.join(missing)}"


def test_every_example_parses(root, guide):
    found = examples(guide)
    assert len(found) >= 50, f"only {len(found)} `$ opgov …` examples found in {GUIDE.name}"
    problems = []
    for example in found:
        try:
            parse(root, example.args)
        except click.ClickException as err:
            problems.append(f"{GUIDE.name}:{example.line_no}: {example.text}\n    {err.format_message()}")
    assert not problems, "examples that opgov would reject:\n" + "\n".join(problems)


def test_the_checks_catch_what_they_are_for(root):
    """The helpers above must fail on a wrong example and a missing command."""
    assert parse(root, ("--actor", "bob", "proposals", "show", "1", "--json")) == ("proposals", "show")
    assert parse(root, ("proposals", "--open")) == ("proposals",)
    for wrong in [("ops", "lst"), ("ops", "list", "--categroy", "core"), ("report", "weekly", "--format", "pdf"),
                  ("review", "one", "--approve", "--comment", "x"), ("db",)]:
        with pytest.raises(click.ClickException):
            parse(root, wrong)
    paths = commands(root)
    assert ("db", "upgrade") in paths and ("proposals",) in paths and ("db",) not in paths
    assert [e.args for e in examples("$ env -u X opgov --db x ops list | head\n$ cat f | opgov x\n")] == [
        ("--db", "x", "ops", "list")]


def test_the_docs_name_the_current_database_revision():
    """docs/service.md quotes what `GET /healthz` answers, and the user guide what `db upgrade`
    prints: both the head revision of the migrations themselves."""
    repo = Path(__file__).resolve().parents[2]
    head = max(p.name.split("_", 1)[0] for p in (repo / "migrations" / "versions").glob("0*.py"))
    service = (repo / "docs" / "service.md").read_text(encoding="utf-8")
    assert f'"revision": "{head}"' in service
    assert "\"revision\": \"0" not in service.replace(f'"revision": "{head}"', "")
    guide = GUIDE.read_text(encoding="utf-8")
    assert f"database at revision {head}" in guide, "regenerate docs/user-guide.md (scripts/build_user_guide.py)"
