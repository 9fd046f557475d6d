"""Commands that check and write back: check-bc, exceptions, sync-yaml, the weekly report."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from opgov.cli.app import CheckFormat, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import GLOBALS, command, output, print_json, say

exceptions_app = typer.Typer(help="Recorded exceptions to the BC policy for non-core operators.",
                             no_args_is_help=True)
report_app = typer.Typer(help="Reports for the committee.", no_args_is_help=True)
app.add_typer(exceptions_app, name="exceptions")
app.add_typer(report_app, name="report")


def default_database_file() -> Path:
    """The default SQLite file, ``$XDG_DATA_HOME/opgov/opgov.db`` (see :mod:`opgov.db.engine`)."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "opgov" / "opgov.db"


def _database_configured() -> bool:
    """check-bc uses a database only when one is named or the default file exists and holds
    something: an absent or empty (0-byte) default file never breaks a check of two files."""
    if GLOBALS.db or os.environ.get("OPGOV_DATABASE_URL"):
        return True
    # opgov.db.engine.default_url()'s file, without importing SQLAlchemy (tests/cli/test_check_bc.py
    # checks that the two agree)
    default = default_database_file()
    return default.is_file() and default.stat().st_size > 0


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
    deletions apply too.
    """
    from datetime import datetime, timezone

    from opgov.core import compat
    from opgov.render import compat as compat_report
    from opgov.core.errors import BadInput
    from opgov.services.compat_checks import check_bc

    if list_rules:  # JSON with --format json; the aligned table otherwise
        sys.stdout.write(compat_report.render_rules(compat.RULES, "json" if fmt is CheckFormat.json else "text"))
        return
    if old is None or new is None:
        raise BadInput("check-bc needs OLD and NEW")
    from opgov.cli.remote import server as remote

    server = remote()
    if server is not None:
        # a file here is uploaded; anything else names a snapshot the server holds
        files, fields = [], {}
        for key, side in (("old", old), ("new", new)):
            if side.startswith("git:"):
                raise BadInput(f"{side}: with --server, OLD and NEW are native_functions.yaml files or snapshot "
                               "labels the server holds (git: refs work only with --db or without a database)")
            if Path(side).exists():
                files.append((key, side))
            else:
                fields[f"{key}_snapshot"] = side
        from opgov.results.compat import CheckReport

        report = server.post("/api/v1/check-bc", CheckReport, files=files, fields=fields)
    elif _database_configured():
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
    from opgov.core.clock import parse_time
    from opgov.services.compat_checks import add_exception

    from opgov.cli.remote import send
    from opgov.results.models import ExceptionAdded

    last_day = parse_time(expires, what="--expires").date()
    view = send("/api/v1/exceptions", ExceptionAdded,
                json_body={"pattern": pattern, "reason": reason, "expires": last_day.isoformat()},
                local=lambda ctx: add_exception(ctx, pattern, reason=reason, expires=last_day))
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
                    json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto) -> None:
    """Exceptions in force, and expired ones (which no longer apply)."""
    from opgov.cli.remote import fetch
    from opgov.services.compat_checks import list_exceptions
    from opgov.results.models import ExceptionView

    out = output(fmt, json_out)
    views = fetch("/api/v1/exceptions", list[ExceptionView], all=include_removed,
                  local=lambda ctx: list_exceptions(ctx, include_removed=include_removed))
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
    from opgov.cli.remote import send
    from opgov.services.compat_checks import remove_exception
    from opgov.results.models import ExceptionView

    view = send(f"/api/v1/exceptions/{exception_id}", ExceptionView, method="DELETE",
                local=lambda ctx: remove_exception(ctx, exception_id))
    say(f"removed exception {view.id} ({view.pattern})")


@app.command("sync-yaml")
def sync_yaml_cmd(
    native_functions_yaml: str = typer.Argument(..., metavar="NATIVE_FUNCTIONS_YAML"),
    tags_yaml: Optional[str] = typer.Option(None, "--tags-yaml", metavar="TAGS_YAML",
                                            help="Declare every tag written in this tags.yaml."),
    check: bool = typer.Option(False, "--check", help="List what is out of sync; exit 1 if anything is."),
    diff: bool = typer.Option(False, "--diff", help="Print the edit as a unified diff."),
    write: bool = typer.Option(False, "--write", help="Write the edit atomically (bots and maintainers)."),
    json_out: bool = JsonOpt,
) -> None:
    """Write governance back into native_functions.yaml: core, deprecating, deprecated, deletions.

    Only governed tags and deleted entries change; every other byte stays. A deleted operator's
    entry goes with the comment lines directly above it (a comment block separated from it by a
    blank line stays). Exit 0: in sync (or written); 1: out of sync (--check), or operators the
    bot cannot settle (reported, left untouched); 2: bad input.
    """
    from opgov.core.errors import BadInput
    from opgov.services.sync import summary_markdown, sync_run, sync_yaml

    modes = [m for m, on in (("check", check), ("diff", diff), ("write", write)) if on]
    if len(modes) != 1:
        raise BadInput("give exactly one of --check, --diff or --write")
    from opgov.cli.remote import server

    remote = server()
    if remote is not None:
        _sync_remotely(remote, native_functions_yaml, tags_yaml, modes[0], json_out)
        return
    with command(write=modes[0] == "write", orm=False) as ctx:
        # the typed result (pydantic) only for --json: the text comes from the plain one
        run = sync_yaml if json_out else sync_run
        result = run(ctx, native_functions_yaml, mode=modes[0], tags_yaml=tags_yaml)
    if json_out:
        print_json(result)
    elif result.mode == "diff":
        sys.stdout.write(result.diff)
        if result.conflicts:  # stdout stays a clean patch
            sys.stderr.write(f"opgov: {len(result.conflicts)} operator(s) not settled (left untouched):\n")
            sys.stderr.writelines(f"  aten::{c.operator} ({c.kind}): {c.reason}\n" for c in result.conflicts)
    else:
        sys.stdout.write(summary_markdown(result) + "\n")
    if (result.mode == "check" and not result.in_sync) or result.conflicts:
        raise typer.Exit(1)


def _sync_remotely(remote, path: str, tags_yaml: str | None, mode: str, json_out: bool) -> None:
    """sync-yaml with --server: the files are uploaded, the server compares them with its database,
    and this prints what the local command prints; --write writes the server's new texts here,
    as the local command writes."""
    from opgov.core.errors import BadInput
    from opgov.results.models import SyncAnswer
    from opgov.services.sync import hold_lock, tags_beside, write_synced

    beside = tags_yaml is None
    tags = tags_beside(path) if beside else tags_yaml  # the tags.yaml torchgen reads: on this machine
    files = [("native_functions", path)] + ([("tags", tags)] if tags is not None else [])
    fields = {"tags_beside": beside and tags is not None, **({} if mode == "write" else {"mode": mode})}
    held, unwritable = [], None
    try:
        if mode == "write":  # the files' locks, held while the server answers: no other writer meanwhile
            for file in [f for f in (tags, path) if f is not None and Path(f).is_file()]:
                try:
                    held.append(hold_lock(file))
                except BadInput as err:  # a lock left behind, a read-only file: the server then logs nothing
                    unwritable = (file, err)
                    fields["dry_run"] = True
                    break
        answer = remote.post("/api/v1/sync-yaml/write" if mode == "write" else "/api/v1/sync-yaml", SyncAnswer,
                             files=files, fields=fields)
    finally:
        for lock in held:
            lock.abort()
    result = answer.report
    if mode == "write":
        contents = [(file, text) for file, text in ((tags, answer.tags), (path, answer.native_functions))
                    if text is not None]  # tags.yaml first, as locally
        if unwritable is not None and unwritable[0] in dict(contents):
            raise unwritable[1]  # what the local command says when it comes to write that file
        if contents:
            write_synced(contents, path)
    if json_out:
        print_json(result)
    elif mode == "diff":
        sys.stdout.write(answer.diff)
        if result.conflicts:  # stdout stays a clean patch
            sys.stderr.write(f"opgov: {len(result.conflicts)} operator(s) not settled (left untouched):\n")
            sys.stderr.writelines(f"  {c.operator} ({c.kind}): {c.reason}\n" for c in result.conflicts)
    else:
        sys.stdout.write(result.summary + "\n")
    if (mode == "check" and not result.in_sync) or result.conflicts:
        raise typer.Exit(1)


class ReportFormat(str, Enum):
    md = "md"
    json = "json"
    html = "html"


@report_app.command("weekly")
def report_weekly(
    as_of: Optional[str] = typer.Option(None, "--as-of", metavar="DATE",
                                        help="End of the period (default now); a date alone means its midnight UTC."),
    since: Optional[str] = typer.Option(None, "--since", metavar="DATE", help="Start (default 7 days earlier)."),
    fmt: ReportFormat = typer.Option(ReportFormat.md, "--format"),
    out: Optional[Path] = typer.Option(None, "--out", metavar="PATH", help="Write to a file instead of stdout."),
) -> None:
    """The weekly committee report: what to decide, what is due, what broke.

    The period is (since, as_of]; everything is shown as it stood at --as-of.
    """
    from opgov.render import report as render
    from opgov.core.clock import parse_time
    from opgov.core.errors import BadInput
    from opgov.services.reports import weekly_report

    end = parse_time(as_of, what="--as-of") if as_of else None
    start = parse_time(since, what="--since") if since else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        raise BadInput(f"--out {out}: " + ("is a directory" if out.is_dir() else f"no directory {out.parent}"))
    from opgov.cli.remote import fetch

    data = fetch("/api/v1/report/weekly", render.WeeklyReport, as_of=end.isoformat() if end else None,
                 since=start.isoformat() if start else None,
                 local=lambda ctx: weekly_report(ctx, as_of=end, since=start))
    text = {"md": render.render_markdown, "json": render.render_json, "html": render.render_html}[fmt.value](data)
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        from opgov.formats.atomic import atomic_write_text

        try:
            atomic_write_text(out, text)
        except OSError as err:
            raise BadInput(f"--out {out}: cannot write ({err.strerror or err})") from None
        sys.stdout.write(f"wrote {out}\n")
