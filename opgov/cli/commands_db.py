"""The database itself: `opgov db upgrade|downgrade|current` (no use case: they run before one can)."""

from __future__ import annotations


import typer

from opgov.cli.app import JsonOpt, app
from opgov.cli.runtime import GLOBALS, print_json, say, server

db_app = typer.Typer(help="Create and migrate the database.", no_args_is_help=True)
app.add_typer(db_app, name="db")


def _database_only() -> None:
    """The db commands change or inspect a database itself: never through a server."""
    if server():
        from opgov.core.errors import BadInput

        raise BadInput("the db commands work on a database only (--db / OPGOV_DATABASE_URL), not with --server "
                       "or OPGOV_SERVER")


def _migrations():
    """The service that migrates the database (opgov.services.admin), once :func:`_database_only` holds:
    upgrade and downgrade run before any use case can, so no declaration names them and they call
    it directly, through this one door."""
    _database_only()
    from opgov.services import admin

    return admin


@db_app.command("upgrade")
def db_upgrade(
    revision: str = typer.Argument("head", help="Target revision."),
    simulation: bool = typer.Option(False, "--simulation",
                                    help="Create a simulation database, where --now/OPGOV_NOW set the clock."),
) -> None:
    """Apply the Alembic migrations (the only way opgov's schema is made or changed)."""
    done = _migrations().upgrade_database(GLOBALS.db, revision, simulation=simulation)
    say(f"database at revision {done.after} (was {done.before or 'empty'})"
        + (" — simulation database" if simulation else ""))


@db_app.command("downgrade")
def db_downgrade(revision: str = typer.Argument(..., help="Target revision, e.g. 0003 or base."),
                 force: bool = typer.Option(False, "--force",
                                            help="Downgrade even though governance data would be lost.")) -> None:
    """Undo migrations down to REVISION (base removes every table). Maintainers only; refused
    while the database holds governance data unless --force."""
    from opgov.cli.runtime import resolve_actor

    done = _migrations().downgrade_database(GLOBALS.db, revision, actor=resolve_actor(GLOBALS.actor), force=force)
    say(f"database at revision {done.after or 'base'} (was {done.before})")


@db_app.command("current")
def db_current(json_out: bool = JsonOpt) -> None:
    """Show the database URL, its revision and whether it is a simulation database."""
    _database_only()
    from opgov.results.plain import jsonable
    from opgov.reads.database import database_status

    status = database_status(GLOBALS.db)
    if json_out:
        print_json(status)
    else:
        for key, value in jsonable(status).items():
            say(f"{key}: {value}")
