"""Commands about operator upgraders: `upgraders add|list|show`."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.client import ask  # a declared use case (opgov.usecases.<area>), in-process or of the server
from opgov.cli.runtime import output, print_json, say

upgraders_app = typer.Typer(help="Operator upgraders and version bumps (the operator versioning guide).",
                            no_args_is_help=True)
app.add_typer(upgraders_app, name="upgraders")


def _lines(view) -> list[str]:
    bump = view.bump
    lines = [f"{view.name}: {view.operator} versions {view.start}-{view.end}"
             + (f", version bump {bump.version} on {bump.bumped_on} ({bump.reason})" if bump else ""),
             f"  old schema: {view.old_schema}",
             f"  version map: {view.version_map_entry}"]
    if not view.follows_naming:
        lines.append("  note: the name does not follow <name>_<overload>_<start>_<end>")
    if view.replaced_by:
        lines.append(f"  replaced by {view.replaced_by} on {view.replaced_at:%Y-%m-%d}")
    elif view.replaceable_from:
        lines.append(f"  may be replaced from {view.replaceable_from:%Y-%m-%d} (180 days after its version bump)")
    return lines


@upgraders_app.command("add")
def upgraders_add(
    operator: str = typer.Argument(..., metavar="OP"),
    versions: str = typer.Option(..., "--versions", metavar="START-END",
                                 help="The operator versions the upgrader applies to, e.g. 0-3."),
    old_schema: str = typer.Option(..., "--old-schema", metavar="SCHEMA",
                                   help="The operator's schema at those versions."),
    bumped_on: Optional[str] = typer.Option(None, "--bumped-on", metavar="DATE",
                                            help="When the version was bumped to END+1 (unless recorded)."),
    reason: Optional[str] = typer.Option(None, "--reason", help="Why it was bumped (unless recorded)."),
    name: Optional[str] = typer.Option(None, "--name", help="Default: <name>_<overload>_<start>_<end>."),
    replaces: Optional[str] = typer.Option(None, "--replaces", metavar="UPGRADER",
                                           help="Take over from this upgrader (180 days after its bump)."),
    json_out: bool = JsonOpt,
) -> None:
    """Record an upgrader of OP and the version bump to END+1 it came with (as versions.h records
    it). check-bc then reports a BC break from the old schema as covered. Replacing an upgrader is
    refused (exit 1) until 180 days after its version bump."""
    from opgov.core.clock import parse_time
    from opgov.core.upgraders import parse_range
    from opgov.usecases.upgraders import UPGRADERS_ADD

    day = parse_time(bumped_on, what="--bumped-on").date() if bumped_on else None
    start, end = parse_range(versions)  # 0-3, 0..3 or [0, 3], as START-END
    result = ask(UPGRADERS_ADD, operator=operator, versions=f"{start}-{end}", old_schema=old_schema, bumped_on=day,
                  reason=reason, name=name, replaces=replaces)
    if json_out:
        print_json(result)
        return
    lines = _lines(result.upgrader)
    say(f"{result.outcome} {lines[0]}" + (f"; replaces {result.replaced}" if result.replaced else ""))
    for line in lines[1:]:
        say(line)


@upgraders_app.command("list")
def upgraders_list(json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Every upgrader, and the version bumps on record."""
    from opgov.usecases.upgraders import UPGRADERS_LIST

    out = output(fmt, json_out, columns)
    result = ask(UPGRADERS_LIST)
    if out.json:
        print_json(result)
        return
    columns = ["upgrader", "operator", "versions", "bump", "bumped on", "replaceable from", "replaced by"]
    if not result.upgraders:
        out.empty("no upgraders recorded (opgov upgraders add)", columns)
        return
    out.table(f"operator version {result.current_version}", columns,
              [[u.name, u.operator, f"{u.start}-{u.end}", u.end + 1, u.bump.bumped_on if u.bump else "",
                f"{u.replaceable_from:%Y-%m-%d}" if u.replaceable_from else "", u.replaced_by or ""]
               for u in result.upgraders])


@upgraders_app.command("show")
def upgraders_show(name: str = typer.Argument(..., metavar="UPGRADER"), json_out: bool = JsonOpt) -> None:
    """One upgrader: its operator and versions, the bump and why, its version-map entry."""
    from opgov.usecases.upgraders import UPGRADERS_SHOW

    view = ask(UPGRADERS_SHOW, name=name)
    if json_out:
        print_json(view)
        return
    for line in _lines(view):
        say(line)
