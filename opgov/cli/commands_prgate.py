"""The PR gate: ``check-pr``, ``allowlist convert`` and ``decisions export``."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from opgov.cli.app import app
from opgov.cli.runtime import GLOBALS

allowlist_app = typer.Typer(help="The allow-list of .opgov.toml (BC waivers for non-core operators).",
                            no_args_is_help=True)
app.add_typer(allowlist_app, name="allowlist")


class PrFormat(str, Enum):
    text = "text"
    json = "json"
    github = "github"
    markdown = "markdown"
    sarif = "sarif"
    junit = "junit"
    requests = "requests"


def _write(path: Path, text: str, what: str) -> None:
    from opgov.core.errors import BadInput
    from opgov.formats.atomic import atomic_write_text

    if path.is_dir() or not path.parent.is_dir():
        raise BadInput(f"{what} {path}: " + ("is a directory" if path.is_dir() else f"no directory {path.parent}"))
    try:
        atomic_write_text(path, text)
    except OSError as err:
        raise BadInput(f"{what} {path}: cannot write ({err.strerror or err})") from None


@app.command("check-pr")
def check_pr_cmd(
    base: Optional[str] = typer.Option(None, "--base", metavar="REF|FILE",
                                       help="Base: a git revision, git:REF[:PATH] or a yaml file "
                                            "[default: the merge base of HEAD with the default branch]"),
    head: Optional[str] = typer.Option(None, "--head", metavar="REF|FILE",
                                       help="Head: a git revision, git:REF[:PATH] or a yaml file "
                                            "[default: the working tree's file]"),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE",
                                         help="The policy file [default: .opgov.toml, from the working "
                                              "directory up]"),
    fmt: PrFormat = typer.Option(PrFormat.text, "--format",
                                 help="text, json, github (annotations), markdown, sarif, junit, or requests "
                                      "(reviewers and labels for `gh pr edit`)."),
    sarif: Optional[Path] = typer.Option(None, "--sarif", metavar="FILE", help="Also write SARIF 2.1.0 here."),
    junit: Optional[Path] = typer.Option(None, "--junit", metavar="FILE", help="Also write JUnit XML here."),
    requests: Optional[Path] = typer.Option(None, "--requests", metavar="FILE",
                                            help="Also write the reviewers and labels to request (JSON) here."),
    list_rules: bool = typer.Option(False, "--list-rules", help="List the rules and exit."),
) -> None:
    """The core ATen policy's PR gate: check-bc's verdicts plus the policy's rules, from git or files.

    Reports new native functions (category 3 until the committee decides), `core` tags added or
    removed without a decision on record, lifecycle tags edited by hand, schema changes of core
    operators, decomposition rules leaving core and expired allow-list entries, each with a rule id
    and file:line, and the reviewers to request. The policy is the repository's .opgov.toml; no
    database is needed (with --db, its decisions and exceptions count too). A markdown summary is
    appended to $GITHUB_STEP_SUMMARY when it is set.

    Exit 0: no errors; 1: errors; 2: bad input.
    """
    if list_rules:
        _list_rules()
        return
    gate = _run(base, head, config)
    names = _side_names(gate, head)
    _write_extras(gate.report, names, sarif=sarif, junit=junit, requests=requests)
    sys.stdout.write(_rendered(gate.report, fmt, names))
    if gate.report.errors:
        raise typer.Exit(1)


def _list_rules() -> None:
    """Every rule of the gate, check-bc's first, with its purpose."""
    from opgov.core import compat
    from opgov.core.prgate import PR_RULES

    seen = set()
    for rule in compat.RULES:
        if rule.id not in seen:
            seen.add(rule.id)
            sys.stdout.write(f"{rule.id:34} check-bc  {rule.purpose}\n")
    for rule in PR_RULES.values():
        sys.stdout.write(f"{rule.id:34} {rule.severity:9} {rule.purpose}\n")


def _run(base: Optional[str], head: Optional[str], config: Optional[str]):
    """The gate, with the database's decisions and exceptions when there is a database."""
    from datetime import datetime, timezone

    from opgov.formats.policy_config import load_config
    from opgov.reads.policy import database_facts
    from opgov.services.prgate import run_check_pr

    cfg = load_config(config)
    if GLOBALS.db or os.environ.get("OPGOV_DATABASE_URL"):
        from opgov.cli.runtime import command

        with command(write=False) as ctx:
            today = ctx.now().date()
            return run_check_pr(cfg, base, head, today=today, facts=database_facts(ctx.session, today))
    return run_check_pr(cfg, base, head, today=datetime.now(timezone.utc).date())


def _shown(revision: str | None, label: str) -> str:
    if revision is None:
        return label
    short = revision[:12] if len(revision) == 40 and all(c in "0123456789abcdef" for c in revision) else revision
    return f"{short}:{label}"


def _side_names(gate, head: Optional[str]) -> dict[str, str]:
    """How the report names the two sides (a revision shortened, the working tree's file said so)."""
    names = {"base": _shown(gate.base.revision, gate.base.label), "head": _shown(gate.head.revision, gate.head.label)}
    if gate.head.revision is None and head is None:
        names["head"] = f"{gate.head.label} (working tree)"
    return names


def _write_extras(report, names: dict[str, str], *, sarif: Optional[Path], junit: Optional[Path],
                  requests: Optional[Path]) -> None:
    """The files asked for beside the output (--sarif, --junit, --requests), and the markdown
    summary appended to $GITHUB_STEP_SUMMARY when it is set."""
    from opgov.render import prgate as render

    if sarif is not None:
        from opgov.render.sarif import render_sarif

        _write(sarif, render_sarif(report), "--sarif")
    if junit is not None:
        from opgov.render.junit import render_junit

        _write(junit, render_junit(report), "--junit")
    if requests is not None:
        _write(requests, render.render_requests(report), "--requests")
    summary_path = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_path:
        try:
            with open(summary_path, "a", encoding="utf-8") as out:
                out.write(render.render_markdown(report, **names))
        except OSError as err:
            sys.stderr.write(f"opgov: cannot append to $GITHUB_STEP_SUMMARY ({err.strerror or err})\n")


def _rendered(report, fmt: PrFormat, names: dict[str, str]) -> str:
    """The report in the chosen format."""
    from opgov.render import prgate as render

    if fmt is PrFormat.json:
        return render.render_json(report, **names) + "\n"
    if fmt is PrFormat.github:
        return render.render_github(report)
    if fmt is PrFormat.markdown:
        return render.render_markdown(report, **names)
    if fmt is PrFormat.sarif:
        from opgov.render.sarif import render_sarif

        return render_sarif(report)
    if fmt is PrFormat.junit:
        from opgov.render.junit import render_junit

        return render_junit(report)
    if fmt is PrFormat.requests:
        return render.render_requests(report)
    return render.render_text(report, **names)


@allowlist_app.command("convert")
def allowlist_convert(
    file: str = typer.Argument(..., metavar="CHECK_FORWARD_BACKWARD_COMPATIBILITY_PY",
                               help="PyTorch's test/forward_backward_compatibility/"
                                    "check_forward_backward_compatibility.py"),
    config: Optional[str] = typer.Option(None, "--config", metavar="FILE",
                                         help="The .opgov.toml to add to [default: found from the working "
                                              "directory up, else ./.opgov.toml]"),
    owner: str = typer.Option("pytorch-bc-allowlist", "--owner", help="Owner recorded on every entry."),
    link: Optional[str] = typer.Option(None, "--link", help="Link recorded on every entry."),
    include_expired: bool = typer.Option(False, "--include-expired",
                                         help="Keep entries whose date has passed (PyTorch ignores them; "
                                              "check-pr reports them as errors)."),
    write: bool = typer.Option(False, "--write", help="Append the entries to the config (atomically); "
                                                     "otherwise print them."),
) -> None:
    """Convert PyTorch's ALLOW_LIST into [[allow]] entries of .opgov.toml.

    The Python file is parsed, never run. Each (name_regex, date[, schema_regex]) tuple becomes an
    entry with `regex`, `schema`, `expires`, the owner, and the comment above it as the reason.
    Duplicates are merged (the later date wins); entries already in the config are skipped.
    """
    from datetime import datetime, timezone

    from opgov.core.errors import BadInput
    from opgov.formats.policy_config import CONFIG_NAME, find_config, read_policy_config
    from opgov.formats.torch_allowlist import convert, read_torch_allowlist, to_toml

    target = Path(config) if config else (find_config() or Path.cwd() / CONFIG_NAME)
    existing_text = ""
    existing: set[tuple[str, str | None]] = set()
    if target.is_file():
        current = read_policy_config(target)
        existing = {(e.regex, e.schema) for e in current.policy.allow if e.regex is not None}
        existing_text = target.read_text(encoding="utf-8")
    elif config:
        raise BadInput("no such file", file=config)
    entries = read_torch_allowlist(file)
    kept, stats = convert(entries, today=datetime.now(timezone.utc).date(), include_expired=include_expired,
                          existing=existing)
    toml = to_toml(kept, source=Path(file).name, owner=owner, link=link)
    note = (f"{stats['read']} ALLOW_LIST entries: {stats['written']} converted, {stats['duplicates']} duplicates "
            f"merged, {stats['expired']} expired left out, {stats['already_present']} already in {target.name}")
    if not write:
        sys.stdout.write(toml)
        sys.stderr.write(note + "\n")
        return
    if not kept:
        sys.stdout.write(f"{note}; nothing to write\n")
        return
    joined = existing_text + ("\n" if existing_text and not existing_text.endswith("\n") else "")
    joined += ("\n" if existing_text else "") + toml
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:  # the result must read back before it is written
        probe = Path(scratch) / CONFIG_NAME
        probe.write_text(joined, encoding="utf-8")
        read_policy_config(probe)
    _write(target, joined, "--config")
    sys.stdout.write(f"{note}; wrote {target}\n")



def _register_decisions_export() -> None:
    from opgov.cli.commands_governance import decisions_app

    @decisions_app.command("export")
    def decisions_export(file: Path = typer.Argument(..., metavar="FILE")) -> None:
        """Write the decisions in force (one per operator) to a decisions file, for .opgov.toml's
        `decisions_file`: check-pr then knows them without a database."""
        from opgov.cli.runtime import command
        from opgov.formats.decisions import dump_decisions
        from opgov.reads.policy import export_decisions

        with command(write=False) as ctx:
            records = export_decisions(ctx.session)
        _write(file, dump_decisions(records, source="opgov decisions export"), "FILE")
        sys.stdout.write(f"wrote {len(records)} decision{'' if len(records) == 1 else 's'} to {file}\n")


_register_decisions_export()
