"""Commands over the registry: the database itself, imports, operators, the event log."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import GLOBALS, day, minute, output, print_json, say, second, server

db_app = typer.Typer(help="Create and migrate the database.", no_args_is_help=True)
ops_app = typer.Typer(help="List and show operators.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(ops_app, name="ops")


def _database_only() -> None:
    """The db commands change or inspect a database itself: never through a server."""
    if server():
        from opgov.core.errors import BadInput

        raise BadInput("the db commands work on a database only (--db / OPGOV_DATABASE_URL), not with --server "
                       "or OPGOV_SERVER")


@db_app.command("upgrade")
def db_upgrade(
    revision: str = typer.Argument("head", help="Target revision."),
    simulation: bool = typer.Option(False, "--simulation",
                                    help="Create a simulation database, where --now/OPGOV_NOW set the clock."),
) -> None:
    """Apply the Alembic migrations (the only way opgov's schema is made or changed)."""
    _database_only()
    from opgov.services.admin import upgrade_database

    done = upgrade_database(GLOBALS.db, revision, simulation=simulation)
    say(f"database at revision {done.after} (was {done.before or 'empty'})"
        + (" — simulation database" if simulation else ""))


@db_app.command("downgrade")
def db_downgrade(revision: str = typer.Argument(..., help="Target revision, e.g. 0003 or base."),
                 force: bool = typer.Option(False, "--force",
                                            help="Downgrade even though governance data would be lost.")) -> None:
    """Undo migrations down to REVISION (base removes every table). Maintainers only; refused
    while the database holds governance data unless --force."""
    _database_only()
    from opgov.cli.runtime import resolve_actor
    from opgov.services.admin import downgrade_database

    done = downgrade_database(GLOBALS.db, revision, actor=resolve_actor(GLOBALS.actor), force=force)
    say(f"database at revision {done.after or 'base'} (was {done.before})")


@db_app.command("current")
def db_current(json_out: bool = JsonOpt) -> None:
    """Show the database URL, its revision and whether it is a simulation database."""
    _database_only()
    from opgov.results.plain import jsonable
    from opgov.services.admin import database_status

    status = database_status(GLOBALS.db)
    if json_out:
        print_json(status)
    else:
        for key, value in jsonable(status).items():
            say(f"{key}: {value}")


@app.command("import")
def import_cmd(
    native_functions_yaml: str = typer.Argument(..., metavar="NATIVE_FUNCTIONS_YAML"),
    label: str = typer.Option(..., "--label", help="Name of this snapshot, e.g. 2.13.0."),
    tags_yaml: Optional[str] = typer.Option(None, "--tags-yaml", help="Check every tag is declared here."),
    historical: bool = typer.Option(False, "--historical",
                                    help="Store an older release (by its label as a version) in its place in "
                                         "history, without making it the latest."),
    json_out: bool = JsonOpt,
) -> None:
    """Record a snapshot: operators added, removed and schema-changed since the previous one.

    An older release than the latest snapshot (labels compared as versions) is refused unless
    --historical is given."""
    from opgov.cli.client import call
    from opgov.formats.files import read_content
    from opgov.usecases import named

    use_case = named("import")  # both files are read here, and uploaded with --server
    result = call(use_case, use_case.ask({"label": "--label"}, native_functions=read_content(native_functions_yaml),
                                         label=label, tags=None if tags_yaml is None else read_content(tags_yaml),
                                         historical=historical))
    _imported(result, json_out)


def _imported(result, json_out: bool) -> None:
    if json_out:
        print_json(result)
        return
    if result.historical:
        say(f"snapshot {result.label}: {result.operators} operators, stored in its place in history "
            "(the latest snapshot stays the latest; no findings)")
        return
    if result.unchanged_file:
        say(f"snapshot {result.label} was already imported with identical content: no changes")
        return
    autogen = f" ({len(result.added_autogen)} declared by autogen:)" if result.added_autogen and not result.baseline else ""
    say(f"snapshot {result.label}: {result.operators} operators; {len(result.added)} added{autogen}, "
        f"{len(result.removed)} removed, {len(result.changed)} schema-changed"
        + (f", {len(result.own_entry)} now with their own entry" if result.own_entry else "")
        + (" (baseline)" if result.baseline else ""))
    own = [f"{name} (was autogen of {of})" for name, of in result.own_entry.items()]
    for title, names in (("added", result.added), ("removed", result.removed), ("changed", result.changed),
                         ("now has its own entry", own), ("tags changed", result.tags_changed)):
        if names and not result.baseline:
            shown = ", ".join(names[:12]) + (f", … (+{len(names) - 12})" if len(names) > 12 else "")
            say(f"  {title}: {shown}")
    if result.findings:
        plural = {"error": "errors", "warning": "warnings", "info": "infos", "waived": "waived"}
        say("  compatibility findings: " + ", ".join(f"{n} {s if n == 1 else plural.get(s, s)}"
                                                  for s, n in sorted(result.findings.items()))
            + " (opgov ops show OP lists them)")


@app.command("snapshots")
def snapshots_cmd(json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto) -> None:
    """Every imported snapshot, in the order of history (a release imported with --historical in
    its place)."""
    from opgov.cli.client import call

    out = output(fmt, json_out)
    views = call("snapshots")
    if out.json:
        print_json(views)
        return
    out.table(f"{len(views)} snapshots", ["label", "imported", "by", "operators", "source"],
              [[v.label + (" (historical)" if v.historical else ""), minute(v.imported_at), v.actor, v.operators,
                v.source] for v in views])


@ops_app.command("list")
def ops_list(
    category: Optional[str] = typer.Option(None, "--category", help="core, decomposable or custom."),
    lifecycle: Optional[str] = typer.Option(None, "--lifecycle",
                                            help="active, deprecating, deprecated or deleted."),
    tag: Optional[str] = typer.Option(None, "--tag", help="Only operators carrying this yaml tag."),
    include_all: bool = typer.Option(False, "--all", help="Every operator ever seen, not just present ones."),
    json_out: bool = JsonOpt,
    fmt: FormatOpt = TableFormat.auto,
) -> None:
    """Operators present in the latest snapshot."""
    from opgov.cli.client import call
    from opgov.usecases import named

    out = output(fmt, json_out)
    use_case = named("ops list")
    ops = call(use_case, use_case.ask(category=category, lifecycle=lifecycle, tag=tag, all=include_all))
    if out.json:
        print_json(ops)
        return
    out.table(f"{len(ops)} operators", ["name", "kind", "category", "lifecycle", "tags", "schema"],
              [[o.name, o.kind, o.category + (" *" if o.needs_review else ""),
                o.lifecycle + ("" if o.present else " (absent)"), ", ".join(o.tags), o.schema]
               for o in ops])
    if any(o.needs_review for o in ops):
        out.note("* needs a committee decision")


@ops_app.command("show")
def ops_show(op: str = typer.Argument(..., metavar="OP"), json_out: bool = JsonOpt,
             fmt: FormatOpt = TableFormat.auto) -> None:
    """One operator: schema history (a row per change), decisions, lifecycle, compatibility findings."""
    from opgov.cli.client import call
    from opgov.usecases import named

    out = output(fmt, json_out)
    use_case = named("ops show")
    info = call(use_case, use_case.ask(name=op))
    if out.json:
        print_json(info)
        return
    since = f" since {info.lifecycle_since.isoformat()}" if info.lifecycle_since else ""
    say(f"  {info.kind}, {info.category} ({info.category_source})"
        f"{', needs review' if info.needs_review else ''}"
        f"{f' ({info.review_reason})' if info.needs_review and info.review_reason else ''}, {info.lifecycle}{since}"
        f"{'' if info.present else ', not in the latest snapshot'}", bold=info.name, plain=out.format == "tsv")
    if info.replacement:
        say(f"replacement: {info.replacement}")
    if info.autogen_of:
        say(f"generated by autogen of {info.autogen_of}")
    say(f"tags: {', '.join(info.tags) or '-'}")
    say(f"schema: {info.schema}")
    out.section("history", ["snapshots", "line", "tags", "schema"],
              [[h.snapshot if h.snapshots == 1 else f"{h.snapshot} … {h.last_snapshot} ({h.snapshots})", h.line,
                ", ".join(h.tags) + (f" [{' '.join(h.tags_changed)}]" if h.tags_changed else "") if h.present else "",
                (h.schema or "(autogen)") + (" [changed]" if h.changed else "") if h.present else "(absent)"]
               for h in info.history])
    changes = [c for h in info.history for c in h.changes]
    if changes:
        out.section("what changed, and why", ["snapshot", "when", "what", "change", "by", "why"],
                  [[c.snapshot, day(c.at), c.what, _change_text(c), ", ".join(c.by) or c.actor, c.reason or ""]
                   for c in changes])
    if info.decisions:
        out.section("decisions", ["when", "category", "by", "rationale"],
                  [[day(d.decided_at), d.category + (f" into {', '.join(d.targets)}" if d.targets else ""),
                    ", ".join(d.decided_by) + (" (imported)" if d.imported else ""),
                    d.rationale + (f" [{d.note}]" if d.note else "")]
                   for d in info.decisions])
    if info.proposals:
        out.section("proposals", ["id", "kind", "status", "by", "created"],
                  [[p.id, p.kind, p.status, p.proposer, day(p.created_at)] for p in info.proposals])
    if info.lifecycle_steps:
        out.section("lifecycle", ["when", "step", "by", "reason"],
                  [[second(s.at), f"{s.from_state} → {s.to_state}", s.actor, s.reason] for s in info.lifecycle_steps])
    if info.findings:
        out.section("compatibility findings", ["snapshot", "kind", "severity", "rule", "message"],
                  [[f.snapshot, f.kind, f.severity, f.rule, f.message] for f in info.findings])


def _change_text(change) -> str:
    """One history change in a few words: ``-core``, ``core → custom``, ``deprecating → deprecated``."""
    if change.what == "tags":
        from opgov.core.tags import tags_edited

        split = (lambda text: [t.strip() for t in (text or "").split(",") if t.strip()])  # noqa: E731
        return " ".join(tags_edited(split(change.before), split(change.after)))
    if change.what == "schema":
        return "schema changed" if change.before else "first schema"
    return f"{change.before or '-'} → {change.after or '-'}"


@app.command("log")
def log_cmd(
    op: Optional[str] = typer.Argument(None, metavar="[OP | verify]",
                                       help="Only events about this operator; `verify` checks the hash chain."),
    since: Optional[str] = typer.Option(None, "--since", metavar="DATE"),
    limit: int = typer.Option(200, "--limit", help="Newest N events (0: all)."),
    json_out: bool = JsonOpt,
    fmt: FormatOpt = TableFormat.auto,
) -> None:
    """The append-only event log, oldest first. `opgov log verify` checks that no event was changed,
    removed or inserted since it was written: exit 1 naming the first broken link."""
    out = output(fmt, json_out)
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
    from opgov.cli.client import call
    from opgov.core.errors import BadInput
    from opgov.results.models import EVENTS_PAGE_MAX
    from opgov.usecases import named

    if not 0 <= limit <= 2**31 - 1:  # what the service refuses, in its words
        raise BadInput(f"--limit must be between 0 and {2**31 - 1}, got {limit}")
    use_case = named("log")
    pages: list[list] = []
    left, before = limit, None
    while True:
        page = call(use_case, use_case.ask(operator=op, since=since, before=before,
                                           limit=min(left, EVENTS_PAGE_MAX) if limit else EVENTS_PAGE_MAX))
        pages.append(page.events)
        left -= len(page.events)
        if page.next_before is None or not page.events or (limit and left <= 0):
            break
        before = page.next_before
    return [event for events in reversed(pages) for event in events]


def _log_verify(json_out: bool) -> None:
    from opgov.cli.client import call

    report = call("log verify")
    if json_out:
        print_json(report)
    elif report.intact:
        say(f"{report.events} events, chain intact (head {report.head})")
    else:
        say(f"chain broken at event {report.broken.event}: {report.broken.problem}")
    if not report.intact:
        raise typer.Exit(1)
