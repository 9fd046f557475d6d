"""Commands about decompositions: rules, their check, the build-your-own opset."""

from __future__ import annotations

import sys
from enum import Enum
from typing import List, Optional

import typer

from opgov.cli.app import CheckFormat, ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app, note_skipped_models
from opgov.cli.runtime import output, print_json, say
from opgov.core.vocab import Preset


decomps_app = typer.Typer(help="Decomposition rules: operator → target operators.", no_args_is_help=True)
opset_app = typer.Typer(help="The operators a backend must implement.", no_args_is_help=True)
app.add_typer(decomps_app, name="decomps")
app.add_typer(opset_app, name="opset")


class OpsetFmt(str, Enum):
    text = "text"
    json = "json"
    selective_build = "selective-build"
    python = "python"


def _counts(result) -> str:
    counts = {"added": result.added, "updated": result.updated, "unchanged": result.unchanged, "kept": result.kept}
    return ", ".join(f"{n} {k}" for k, n in counts.items() if n) or "none"


def _precedence_lines(result, source: str) -> list[str]:
    """Say which rules of other sources were kept or replaced, and why (decision > file > torch)."""
    lines = []
    for outcome, verb in (("kept", "kept"), ("updated", "replaced")):
        changed = [c for c in result.changes if c.outcome == outcome]
        by_source: dict[str, list] = {}
        for c in changed:
            by_source.setdefault(c.previous.source, []).append(c)
        for previous, items in sorted(by_source.items()):
            if outcome == "kept":
                why = f"a {previous}'s rule outranks {source}'s"
            elif previous == source:
                why = f"the latest {source} wins"
            else:
                why = f"{source} outranks {previous}"
            names = "; ".join(f"{c.operator} ← {c.previous.detail}" for c in items[:3])
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            lines.append(f"{verb} {len(items)} rule(s) from {previous} ({why}; {result.precedence}): "
                         f"{names}{more}")
    return lines


@decomps_app.command("load")
def decomps_load(file: str = typer.Argument(..., metavar="FILE"), json_out: bool = JsonOpt) -> None:
    """Record the rules of a rules file (format in docs/user-guide.md). The facts file of the 2023
    review (../shared/decisions/core-aten-review-2023.yaml, with its `decomposed:` list) works too.

    Refused (exit 1, nothing recorded) when a rule would make a decomposition produce a non-core
    operator, a cycle or a deprecated target; the message shows the path. A committee decision's
    rule is kept over a file's; a file's replaces torch's (decision > file > torch). FILE may name
    a shipped file: export-composites (opgov's rules for the composites torch.export decomposes)."""
    from opgov.cli.client import ask
    from opgov.formats.files import read_content
    from opgov.resources import data_argument
    from opgov.usecases.decomps import DECOMPS_LOAD

    # a shipped name is resolved here, and read as the file it names
    result = ask(DECOMPS_LOAD, rules=read_content(data_argument(file)))
    if json_out:
        print_json(result)
        return
    for line in [f"{result.rules} rules from {result.source}: {_counts(result)}",
                 *_precedence_lines(result, "file")]:
        say(line)


@decomps_app.command("import-torch")
def decomps_import_torch(budget: float = typer.Option(50.0, "--budget", help="Seconds to spend tracing."),
                         only: Optional[List[str]] = typer.Option(None, "--only", metavar="OP",
                                                                  help="Trace only OP (repeatable)."),
                         json_out: bool = JsonOpt) -> None:
    """Record which operators torch.export's default decomposition table decomposes, and into what
    (found by tracing each decomposition on small meta tensors). Needs torch installed.

    torch's rules are facts about PyTorch: they are recorded even when `opgov check-decomps`
    then reports them; rules from decisions and files are kept (decision > file > torch)."""
    from opgov.cli.client import ask
    from opgov.usecases.decomps import DECOMPS_IMPORT_TORCH

    # torch traces between two write transactions
    result = ask(DECOMPS_IMPORT_TORCH, {"budget": "--budget", "only": "--only"}, budget=budget, only=only or [])
    if json_out:
        print_json(result)
        return
    lines = [f"torch {result.torch}'s default decomposition table: {result.table} operators read, "
             f"rules {_counts(result)}", *_precedence_lines(result, "torch")]
    if result.not_in_table:
        lines.append("not in torch's table (no rule): " + ", ".join(result.not_in_table))
    if result.untraced:
        lines.append(f"{len(result.untraced)} could not be traced (no rule recorded; --json says why), e.g. "
                     + ", ".join(u.operator for u in result.untraced[:5]))
    if result.not_in_registry:
        lines.append(f"{len(result.not_in_registry)} are not in the registry (no rule recorded): "
                     + ", ".join(result.not_in_registry[:5]))
    if result.dropped_targets:
        lines.append(f"{len(result.dropped_targets)} rule(s) lost targets the registry does not know "
                     "(--json lists them)")
    if result.errors_introduced:
        lines.append(f"{result.errors_introduced} new decomposition error(s), e.g. {result.first_errors[0]}; "
                     "run `opgov check-decomps`")
    for line in lines:
        say(line)


@decomps_app.command("list")
def decomps_list(json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Every rule with where it came from."""
    from opgov.cli.client import call
    from opgov.usecases.decomps import DECOMPS_LIST

    out = output(fmt, json_out, columns)
    rules = call(DECOMPS_LIST)
    if out.json:
        print_json(rules)
    else:
        out.table(f"{len(rules)} rules", ["operator", "into", "source"],
                  [[r.operator, ", ".join(r.into) or "(nothing)", f"{r.source}: {r.detail}"]
                   for r in rules])


@app.command("check-decomps")
def check_decomps_cmd(fmt: CheckFormat = typer.Option(CheckFormat.text, "--format"),
                      models: Optional[str] = typer.Option(
                          None, "--models", metavar="CORPUS", callback=note_skipped_models,
                          help="A corpus JSON, a .pt2 archive, a folder of *_ops.json corpora and .pt2 archives, or a shipped corpus by name (shipped, torchvision, transformers): report the operators "
                               "its models use that are neither core nor decomposed.")) -> None:
    """Every rule of a non-core operator ends in core operators; no cycles; no dead targets; drift.

    Exit 1 on errors. Warnings are drift to look at, each with its own rule id: a core operator
    that is not functional, or whose CompositeImplicitAutograd kernel export decomposes, or that
    has a rule; a `core` yaml tag that disagrees with the category; a rule whose targets are not
    all core; a decomposable operator with neither a rule nor a CompositeImplicitAutograd kernel;
    with --models, an operator real models use that is neither core nor decomposed.
    `--format github` stays within GitHub's 10 annotations per level (the rest in one summary)."""
    from opgov.cli.client import ask
    from opgov.core.decomps import Violation
    from opgov.render.decomps_text import render_violations
    from opgov.usecases.decomps import CHECK_DECOMPS

    report = ask(CHECK_DECOMPS, models=models)
    violations = [Violation(v.rule, v.severity, v.operator, v.message, tuple(v.path)) for v in report.violations]
    text = render_violations(violations, fmt.value)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    if any(v.severity == "error" for v in violations):
        raise typer.Exit(1)


@opset_app.command("build")
def opset_build(
    preset: Preset = typer.Option(Preset.core_aten, "--preset"),
    decompose: Optional[List[str]] = typer.Option(None, "--decompose", metavar="OP", help="Also decompose OP."),
    keep: Optional[List[str]] = typer.Option(None, "--keep", metavar="OP", help="Do not decompose OP."),
    models: Optional[str] = typer.Option(None, "--models", metavar="CORPUS", callback=note_skipped_models,
                                         help="A corpus JSON, a .pt2 archive, a folder of *_ops.json corpora and .pt2 archives, or a shipped corpus by name (shipped, torchvision, transformers)."),
    fmt: OpsetFmt = typer.Option(OpsetFmt.text, "--format"),
) -> None:
    """The operators a backend must implement after the chosen decompositions (and, with
    --models, which real models that covers and what to add next)."""
    from opgov.cli.client import ask
    from opgov.results.plain import to_json
    from opgov.results.rendered import Rendered
    from opgov.usecases.decomps import OPSET_BUILD

    # json: the report; the other formats: the text the service renders
    answer = ask(OPSET_BUILD, {"decompose": "--decompose", "keep": "--keep"}, preset=preset.value,
                              decompose=decompose or [], keep=keep or [], format=fmt.value, models=models)
    text = answer.text if isinstance(answer, Rendered) else to_json(answer)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
