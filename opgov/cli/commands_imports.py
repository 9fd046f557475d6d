"""Importing snapshots of native_functions.yaml: `opgov import`, `opgov snapshots`."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import minute, output, print_json, say


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
    from opgov.cli.client import ask
    from opgov.formats.files import read_content
    from opgov.usecases.imports import IMPORT

    # both files are read here, and uploaded with --server
    result = ask(IMPORT, {"label": "--label"}, native_functions=read_content(native_functions_yaml),
                         label=label, tags=None if tags_yaml is None else read_content(tags_yaml),
                         historical=historical)
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
def snapshots_cmd(json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Every imported snapshot, in the order of history (a release imported with --historical in
    its place)."""
    from opgov.cli.client import call
    from opgov.usecases.imports import SNAPSHOTS

    out = output(fmt, json_out, columns)
    views = call(SNAPSHOTS)
    if out.json:
        print_json(views)
        return
    out.table(f"{len(views)} snapshots", ["label", "imported", "by", "operators", "source"],
              [[v.label + (" (historical)" if v.historical else ""), minute(v.imported_at), v.actor, v.operators,
                v.source] for v in views])
