"""The Typer application object and its global options."""

from __future__ import annotations

from enum import Enum
from typing import Optional

import typer

from opgov import __version__
from opgov.cli.runtime import GLOBALS

app = typer.Typer(
    name="opgov",
    help="Governance of PyTorch's core ATen operator set: snapshots of native_functions.yaml, "
         "BC/FC checks, committee proposals and decisions, lifecycle timers, the sync bot and the "
         "weekly report.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

JsonOpt = typer.Option(False, "--json", help="Print JSON instead of text.")


class CheckFormat(str, Enum):
    """How the checks (check-bc, check-decomps, check-model) print their findings."""

    text = "text"
    json = "json"
    github = "github"  # GitHub Actions workflow commands: ::error file=…,line=…::…


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
