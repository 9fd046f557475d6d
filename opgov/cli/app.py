"""The Typer application object and its global options."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated, Any, Optional

import click
import typer
from typer.core import TyperGroup

from opgov import __version__
from opgov.cli.runtime import GLOBALS

# the global options of `main` below that take a value; none of the commands has an option of these names
GLOBAL_VALUE_OPTIONS = frozenset({"--db", "--actor", "--now", "--server"})


def _takes_value(command: click.Command) -> set[str]:
    return {name for p in command.params if isinstance(p, click.Option) and not p.is_flag and not p.count
            for name in p.opts}


def globals_first(group: click.Group, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with the global options given after the command moved before it, as gh and kubectl
    take them anywhere (``opgov import FILE --actor x``). An option's value is never read as one
    (``--comment --db`` is a comment), nothing after ``--`` moves, and a command's own option of
    the same name would stay its own."""
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "--":  # the globals already first
        i += 2 if args[i] in GLOBAL_VALUE_OPTIONS else 1
    command = group.get_command(ctx, args[i]) if i < len(args) else None
    if command is None:
        return args
    moved: list[str] = []
    rest: list[str] = [args[i]]
    values = _takes_value(command)
    j = i + 1
    while j < len(args):
        arg = args[j]
        if arg == "--":
            rest.extend(args[j:])
            break
        name = arg.partition("=")[0]
        if name in GLOBAL_VALUE_OPTIONS and name not in values:
            step = 1 if "=" in arg else 2
            if j + step > len(args):
                raise click.UsageError(f"Option '{name}' requires an argument.", ctx)
            moved.extend(args[j:j + step])
            j += step
            continue
        if arg in values:  # an option of the command and its value
            rest.extend(args[j:j + 2])
            j += 2
            continue
        if not arg.startswith("-") and isinstance(command, click.Group):
            sub = command.get_command(ctx, arg)
            if sub is not None:  # `proposals show …`: the subcommand's options from here on
                command = sub
                values |= _takes_value(sub)
        rest.append(arg)
        j += 1
    return [*args[:i], *moved, *rest]


class WholeHelpGroup(TyperGroup):
    """A group whose `--help` lists each command with its whole first sentence, wrapped to the
    terminal, never cut with "..." (click cuts it to fit one line)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=10_000)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class _GlobalsAnywhere(WholeHelpGroup):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, globals_first(self, ctx, list(args)))


app = typer.Typer(
    cls=_GlobalsAnywhere,
    name="opgov",
    help="Governance of PyTorch's core ATen operator set: snapshots of native_functions.yaml, "
         "BC/FC checks, committee proposals and decisions, lifecycle timers, the sync bot and the "
         "weekly report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
# the lists every top-level command and group is registered in (opgov.cli.main's run swaps in
# shorter ones holding only the command it invokes): what opgov.cli.client.callers walks
REGISTERED = app.registered_commands, app.registered_groups

JsonOpt = typer.Option(False, "--json", help="Print JSON instead of text.")


class TableFormat(str, Enum):
    """How a list command prints its records (``--format``)."""

    auto = "auto"    # table on a terminal, tsv into a pipe or a file
    table = "table"  # a rich table, even into a pipe
    tsv = "tsv"      # a header line, then one record a line, tab-separated, even on a terminal
    json = "json"    # the command's typed result, as --json prints it


class _FormatChoice(click.Choice):
    """The values of ``--format``; a wrong one is the usual one line and exit 2 (not click's usage block)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if isinstance(value, TableFormat):
            return value.value
        if isinstance(value, str) and value.lower() in self.choices:
            return value.lower()
        from opgov.core.errors import BadInput

        raise BadInput(f"--format {value!r} is not one of {', '.join(self.choices)}")


# the one --format of every list command; resolve it with opgov.cli.runtime.output(fmt, json_out)
FormatOpt = Annotated[TableFormat, typer.Option(
    "--format", click_type=_FormatChoice([f.value for f in TableFormat]), show_default=True,
    help="auto: a table on a terminal, tsv into a pipe; table; tsv: a header line and one record a line, "
         "tab-separated; json: as --json.")]


# the one --columns of every list command: resolve it with opgov.cli.runtime.output(fmt, json_out, columns)
ColumnsOpt = Annotated[Optional[str], typer.Option(
    "--columns", metavar="A,B,C", show_default=False,
    help="The columns to show, comma-separated, in this order (table and tsv); without it a table leaves out "
         "the columns that do not fit the terminal.")]


class CheckFormat(str, Enum):
    """How the checks (check-bc, check-decomps, check-model) print their findings."""

    text = "text"
    json = "json"
    github = "github"  # GitHub Actions workflow commands: ::error file=…,line=…::…


def note_skipped_models(value: Optional[str]) -> Optional[str]:
    """``--models FOLDER``: say on stderr which files of the folder are not read, and why (only
    ``*_ops.json`` corpora and ``.pt2`` archives are models; a folder's README, LICENSE and hidden
    files are not expected to be)."""
    from pathlib import Path

    if value and Path(value).is_dir():
        skipped = sorted(p.name for p in Path(value).iterdir()
                         if p.is_file() and not p.name.endswith("_ops.json") and p.suffix != ".pt2"
                         and not p.name.startswith((".", "README", "LICENSE")))
        for name in skipped:
            sys.stderr.write(f"opgov: note: --models {value}: skipped {name} (not a corpus *_ops.json "
                             "nor a .pt2 archive)\n")
    return value


def _version(value: bool) -> None:
    if value:
        typer.echo(f"opgov {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    db: Optional[str] = typer.Option(None, "--db", metavar="URL",
                                     help="SQLAlchemy URL or SQLite path [env OPGOV_DATABASE_URL; "
                                          "default ~/.local/share/opgov/opgov.db]"),
    actor: Optional[str] = typer.Option(None, "--actor", help="Who runs the command [env OPGOV_ACTOR; "
                                        "default git user.email, else the OS user]"),
    now: Optional[str] = typer.Option(None, "--now", metavar="ISO8601",
                                      help="Claimed time; honoured only on a simulation database "
                                           "[env OPGOV_NOW]"),
    server: Optional[str] = typer.Option(None, "--server", metavar="URL",
                                         help="Ask an `opgov serve` server instead of a database; the token is "
                                              "OPGOV_TOKEN [env OPGOV_SERVER]"),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    GLOBALS.db, GLOBALS.actor, GLOBALS.now, GLOBALS.server = db, actor, now, server
