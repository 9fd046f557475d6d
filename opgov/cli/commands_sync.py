"""The sync bot: `opgov sync-yaml`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from opgov.cli.app import JsonOpt, app
from opgov.cli.runtime import print_json


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
    from opgov.cli.client import ask
    from opgov.core.errors import BadInput
    from opgov.formats.files import read_content
    from opgov.formats.sync_files import tags_beside
    from opgov.usecases.sync import SYNC_YAML, SYNC_YAML_WRITE

    modes = [m for m, on in (("check", check), ("diff", diff), ("write", write)) if on]
    if len(modes) != 1:
        raise BadInput("give exactly one of --check, --diff or --write")
    mode, path = modes[0], native_functions_yaml
    beside = tags_yaml is None
    tags = tags_beside(path) if beside else tags_yaml  # the tags.yaml torchgen reads: on this machine
    # the files as the user named them, read here: the service takes them so in-process and on a server
    files = {"native_functions": read_content(path), "tags": read_content(tags) if tags is not None else None,
             "tags_beside": beside and tags is not None}
    if mode == "write":
        answer = _write_synced(SYNC_YAML_WRITE, files, path, tags)
    else:
        answer = ask(SYNC_YAML, **files, mode=mode)
    result = answer.report
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


def _write_synced(use_case, files: dict, path: str, tags: str | None):
    """sync-yaml --write: the files' locks held while the use case answers (no other writer
    meanwhile), then its new texts written here, tags.yaml first. A lock that cannot be taken (one
    left behind, a read-only file) asks for a dry run, which logs nothing; if anything is to be
    written, its error is then the answer (the locked file's own, if it is one of those written)."""
    from opgov.cli.client import call
    from opgov.core.errors import BadInput
    from opgov.formats.sync_files import (drop_intent, hold_lock, installed_by_stopped_run, new_write_id,
                                          record_intent, write_synced)

    held, unwritable = [], {}
    # a run stopped between installing the file and committing its event left an intent: the log learns of it now
    installed, installed_write = installed_by_stopped_run(path, files["native_functions"].data) or (None, None)
    write_id = new_write_id()  # in this write's intent and its event
    try:
        for file in [f for f in (tags, path) if f is not None and Path(f).is_file()]:
            try:
                held.append(hold_lock(file))
            except BadInput as err:
                unwritable[file] = err

        def write(answer) -> None:  # in-process, inside the use case's transaction: an error undoes the log
            for lock in held:  # released, as write_synced takes them again
                lock.abort()
            held.clear()
            contents = [(file, text) for file, text in ((tags, answer.tags), (path, answer.native_functions))
                        if text is not None]
            if contents and unwritable:
                raise next((unwritable[f] for f, _ in contents if f in unwritable), next(iter(unwritable.values())))
            if contents:
                if answer.native_functions is not None:
                    record_intent(path, answer.native_functions, write_id)  # before the rename; dropped once logged
                write_synced(contents, path)

        answer = call(use_case, use_case.ask(**files, dry_run=bool(unwritable), installed=installed,
                                               installed_write=installed_write, write_id=write_id), then=write)
        drop_intent(path)  # the event is committed (or nothing was written): nothing to find
        return answer
    finally:
        for lock in held:
            lock.abort()
