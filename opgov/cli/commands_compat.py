"""Compatibility: `opgov check-bc` and the BC exceptions (`opgov exceptions add|list|remove`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import typer

from opgov.cli.app import CheckFormat, ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import GLOBALS, command, output, print_json, say

exceptions_app = typer.Typer(help="Recorded exceptions to the BC policy for non-core operators.",
                             no_args_is_help=True)
app.add_typer(exceptions_app, name="exceptions")


def default_database_file() -> Path:
    """The default SQLite file, ``$XDG_DATA_HOME/opgov/opgov.db`` (see :mod:`opgov.db.engine`)."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "opgov" / "opgov.db"


def _sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL or path (as opgov.db.engine.resolve_url reads it), else None."""
    if "://" not in url:
        return Path(url).expanduser()
    if url.startswith("sqlite:///"):
        path = url.split("///", 1)[1].split("?", 1)[0]
        return Path(path) if path and path != ":memory:" else None
    return None


def _database_configured(old: str, new: str) -> bool:
    """Does check-bc read a database? Two files (or git refs) never open one unless ``--db`` names
    it on the command line: an ambient one (``OPGOV_DATABASE_URL``, the default file) is left alone,
    said in one line on stderr (its decisions, exceptions and upgraders are not applied), and a
    named SQLite file that does not exist is skipped the same way, never created. A snapshot label
    needs the database."""
    default = default_database_file()  # opgov.db.engine.default_url()'s, without importing SQLAlchemy
    ambient = bool(os.environ.get("OPGOV_DATABASE_URL")) or (default.is_file() and default.stat().st_size > 0)
    if not all(Path(side).exists() or side.startswith("git:") for side in (old, new)):
        return bool(GLOBALS.db) or ambient  # a label (or a missing file, said as such without a database)
    if GLOBALS.db:
        file = _sqlite_file(GLOBALS.db)
        if file is None or (file.is_file() and file.stat().st_size > 0):
            return True
        sys.stderr.write(f"opgov: note: database {file} does not exist; compared the two files without "
                         "one (OLD's core tags; no decisions, exceptions or upgraders)\n")
        return False
    if ambient:
        sys.stderr.write("opgov: note: compared the two files without a database (OLD's core tags); give --db "
                         "to apply a database's decisions, exceptions and upgraders\n")
    return False


@app.command("check-bc")
def check_bc_cmd(
    old: Optional[str] = typer.Argument(None, metavar="OLD", help="yaml path, snapshot label, or git:REF[:PATH]"),
    new: Optional[str] = typer.Argument(None, metavar="NEW", help="yaml path, snapshot label, or git:REF[:PATH]"),
    fmt: CheckFormat = typer.Option(CheckFormat.text, "--format", help="text, json, or github (workflow commands)."),
    list_rules: bool = typer.Option(False, "--list-rules",
                                    help="List the compatibility rules and exit (JSON with --format json)."),
) -> None:
    """Backward/forward compatibility of OLD → NEW with PyTorch's semantics and the core policy.

    Exit 0: no errors; 1: errors (BC breaks not waived); 2: bad input. Without a database,
    core-ness comes from OLD's `core` tags; with one, its decisions, exceptions and completed
    deletions apply too. Two files never open a database unless --db names one; a snapshot label
    reads it.
    """
    from datetime import datetime, timezone

    from opgov.core import compat
    from opgov.render import compat as compat_report
    from opgov.core.errors import BadInput
    from opgov.services.compat import check_bc

    if list_rules:  # JSON with --format json; the aligned table otherwise
        sys.stdout.write(compat_report.render_rules(compat.RULES, "json" if fmt is CheckFormat.json else "text"))
        return
    if old is None or new is None:
        raise BadInput("check-bc needs OLD and NEW")
    from opgov.cli.runtime import server

    if server():
        report = _check_bc_on_server(old, new)
    elif _database_configured(old, new):
        with command(write=False) as ctx:
            report = check_bc(old, new, session=ctx.session, today=ctx.now().date())
    else:
        report = check_bc(old, new, session=None, today=datetime.now(timezone.utc).date())
    if fmt is CheckFormat.json:
        sys.stdout.write(compat_report.render_json(report) + "\n")
    elif fmt is CheckFormat.github:
        sys.stdout.write(compat_report.render_github(report))
    else:
        _print_colored(compat_report.render_text(report))
    if report.summary.errors:
        raise typer.Exit(1)


def _check_bc_on_server(old: str, new: str):
    """The check asked of the server (``--server``): a file here is uploaded, anything else names a
    snapshot the server holds; a git ref is read only on this machine."""
    from opgov.cli.client import ask
    from opgov.core.errors import BadInput
    from opgov.formats.files import read_content
    from opgov.usecases.compat import CHECK_BC

    sides = {}
    for key, side in (("old", old), ("new", new)):
        if side.startswith("git:"):
            raise BadInput(f"{side}: with --server, OLD and NEW are native_functions.yaml files or snapshot "
                           "labels the server holds (git: refs work only with --db or without a database)")
        if Path(side).exists():
            sides[key] = read_content(side)
        else:
            sides[f"{key}_snapshot"] = side
    return ask(CHECK_BC, **sides)


def _print_colored(text: str) -> None:
    if not sys.stdout.isatty():
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    out = Console(highlight=False)
    styles = {"error": "bold red", "warning": "yellow", "info": "cyan", "waived": "dim"}
    for line in text.splitlines():
        lowered = line.lstrip().lower()
        style = next((s for key, s in styles.items() if lowered.startswith(key)), None)
        out.print(Text(line, style=style or ""))


@exceptions_app.command("add")
def exceptions_add(pattern: str = typer.Argument(..., help="Operator glob, e.g. 'aten::_foreach_*'."),
                   reason: str = typer.Option(..., "--reason"),
                   expires: str = typer.Option(..., "--expires", metavar="DATE",
                                               help="Last day it applies (a future date); it expires the day after."),
                   json_out: bool = JsonOpt) -> None:
    """Record an exception: BC breaks of matching non-core operators are not errors until it expires."""
    from opgov.cli.client import ask
    from opgov.core.clock import parse_time
    from opgov.usecases.compat import EXCEPTIONS_ADD

    last_day = parse_time(expires, what="--expires").date()
    view = ask(EXCEPTIONS_ADD, pattern=pattern, reason=reason, expires=last_day)
    if json_out:
        print_json(view)
        return
    matches = view.matches
    text = (f"exception {view.id}: {view.pattern} through {view.expires_on.isoformat()}: "
            f"matches {matches} present operator{'' if matches == 1 else 's'}")
    if view.core_matches:
        text += f", {view.core_matches} of them core (BC breaks of core operators are never waived)"
    say(text)


@exceptions_app.command("list")
def exceptions_list(include_removed: bool = typer.Option(False, "--all", help="Include removed ones."),
                    json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Exceptions in force, and expired ones (which no longer apply)."""
    from opgov.cli.client import ask
    from opgov.usecases.compat import EXCEPTIONS_LIST

    out = output(fmt, json_out, columns)
    views = ask(EXCEPTIONS_LIST, all=include_removed)
    if out.json:
        print_json(views)
        return
    columns = ["id", "pattern", "last day", "state", "by", "reason"]
    if not views:
        out.empty("no exceptions", columns)
        return
    out.table(None, columns,
              [[v.id, v.pattern, v.expires_on.isoformat(),
                "removed" if v.removed else ("EXPIRED" if v.expired else "in force"), v.created_by, v.reason]
               for v in views])
    expired = sum(1 for v in views if v.expired and not v.removed)
    if expired:
        one = expired == 1
        out.note(f"{expired} expired exception{'' if one else 's'} no longer appl{'ies' if one else 'y'}; "
                 f"remove {'it' if one else 'them'} or record a new one")


@exceptions_app.command("remove")
def exceptions_remove(exception_id: int = typer.Argument(..., metavar="ID")) -> None:
    """Remove an exception (kept in the log)."""
    from opgov.cli.client import ask
    from opgov.usecases.compat import EXCEPTIONS_REMOVE

    view = ask(EXCEPTIONS_REMOVE, exception_id=exception_id)
    say(f"removed exception {view.id} ({view.pattern})")
