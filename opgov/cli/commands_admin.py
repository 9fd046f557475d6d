"""The append-only event log: `opgov log`, and `opgov log verify` (its hash chain)."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import output, print_json, say, second


@app.command("log")
def log_cmd(
    op: Optional[str] = typer.Argument(None, metavar="[OP | verify]",
                                       help="Only events about this operator; `verify` checks the hash chain."),
    since: Optional[str] = typer.Option(None, "--since", metavar="DATE"),
    limit: int = typer.Option(200, "--limit", help="Newest N events (0: all)."),
    json_out: bool = JsonOpt,
    fmt: FormatOpt = TableFormat.auto,
    columns: ColumnsOpt = None,
) -> None:
    """The append-only event log, oldest first. `opgov log verify` checks that no event was changed,
    removed or inserted since it was written: exit 1 naming the first broken link."""
    out = output(fmt, json_out, columns)
    if op == "verify":
        _log_verify(out.json)
        return
    events = _read_log(op=op, since=since, limit=limit)
    if out.json:
        print_json(events)
        return
    out.table(None, ["when", "actor", "action", "subject", "reason"],
              [[second(e.at), e.actor, e.action, e.subject, e.reason] for e in events])


def _read_log(*, op: str | None, since: str | None, limit: int) -> list:
    """The newest ``limit`` events (0: all), oldest first, from the log's pages: a page holds at
    most EVENTS_PAGE_MAX events, so older ones are asked for (``before``) until ``limit`` is
    reached or the log starts. Each page is older than the one before it, so an event written
    meanwhile is neither repeated nor skipped."""
    from opgov.cli.client import ask
    from opgov.core.errors import BadInput
    from opgov.results.admin import EVENTS_PAGE_MAX
    from opgov.usecases.admin import LOG

    if not 0 <= limit <= 2**31 - 1:  # what the service refuses, in its words
        raise BadInput(f"--limit must be between 0 and {2**31 - 1}, got {limit}")
    pages: list[list] = []
    left, before = limit, None
    while True:
        page = ask(LOG, operator=op, since=since, before=before,
                        limit=min(left, EVENTS_PAGE_MAX) if limit else EVENTS_PAGE_MAX)
        pages.append(page.events)
        left -= len(page.events)
        if page.next_before is None or not page.events or (limit and left <= 0):
            break
        before = page.next_before
    return [event for events in reversed(pages) for event in events]


def _log_verify(json_out: bool) -> None:
    from opgov.cli.client import call
    from opgov.usecases.admin import LOG_VERIFY

    report = call(LOG_VERIFY)
    if json_out:
        print_json(report)
    elif report.intact:
        say(f"{report.events} events, chain intact (head {report.head})")
    else:
        say(f"chain broken at event {report.broken.event}: {report.broken.problem}")
    if not report.intact:
        raise typer.Exit(1)
