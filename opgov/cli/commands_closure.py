"""The closure proof of torch's default decomposition table: `opgov decomps closure`."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat
from opgov.cli.commands_decomps import decomps_app
from opgov.cli.runtime import output, print_json


@decomps_app.command("closure")
def decomps_closure(release: Optional[str] = typer.Option(None, "--release", help="A torch release whose facts opgov "
                                                          "holds (default: the latest imported)."),
                    snapshot: Optional[str] = typer.Option(None, "--snapshot", help="Whose core tags are the core "
                                                           "set (default: the release's snapshot, else the latest)."),
                    against: Optional[str] = typer.Option(None, "--against", metavar="OTHER", help="Compare: another "
                                                          "torch release held, else a snapshot's label."),
                    not_closed: bool = typer.Option(False, "--not-closed", help="List only the operators that do "
                                                    "not close."),
                    json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """The closure proof of torch's default decomposition table: each operator either ends only in
    core operators (following the table transitively, as `decomps import-torch` traced it) or is
    listed with why not. With --against, exit 1 when an operator stopped closing."""
    from opgov.cli.client import ask
    from opgov.usecases.closure import DECOMPS_CLOSURE

    out = output(fmt, json_out, columns)
    report = ask(DECOMPS_CLOSURE, {"release": "--release", "snapshot": "--snapshot", "against": "--against"},
                                  release=release, snapshot=snapshot, against=against)
    if out.json:
        print_json(report)
    else:
        items = [i for i in report.items if not (not_closed and i.closed)]
        title = (f"{report.facts}; its default table against the core tags of {report.snapshot} ({report.core}): "
                 f"{report.closed} of {report.operators} close, {report.not_closed} do not"
                 + ("" if report.complete else " (an --only import: not every decomposition was traced)"))
        out.table(title, ["op", "kind", "closed", "ends in", "why not"],
                  [[i.op, i.kind, "yes" if i.closed else "no", ", ".join(i.ends_in) or "(nothing)", i.why or ""]
                   for i in items])
        diff = report.against
        if diff is not None:
            other = f"torch {diff.other} against {diff.other_snapshot}"
            rows = [[op, "stopped closing"] for op in diff.stopped_closing]
            rows += [[op, "started closing"] for op in diff.started_closing]
            rows += [[op, "joined the table"] for op in diff.joined] + [[op, "left the table"] for op in diff.left]
            rows += [[op, "ends in other core operators"] for op in diff.ends_changed]
            if rows:
                out.table(f"since {other}: {len(diff.stopped_closing)} stopped closing, "
                          f"{len(diff.started_closing)} started", ["op", "change"], rows, section=True)
            else:
                out.note(f"no change since {other}")
    if report.against is not None and report.against.stopped_closing:
        raise typer.Exit(1)
