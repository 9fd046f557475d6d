"""``opgov queue``: the committee's workbench — every operator waiting for a decision, with its
evidence and a suggested decision — and ``opgov triage``, a proposal for each operator a filter
selects or for each suggestion."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.client import ask  # a declared use case (opgov.usecases.<area>), in-process or of the server
from opgov.cli.runtime import output, print_json, say

ReasonOpt = typer.Option([], "--reason", metavar="REASON",
                         help="Only operators waiting for this reason: undecided, tag-change, proposal (repeatable).")
MatchOpt = typer.Option([], "--match", metavar="GLOB", help="Operators whose names match, e.g. 'aten::_foreach_*' "
                                                            "(repeatable).")
SnapshotOpt = typer.Option([], "--snapshot", metavar="LABEL", help="Only operators waiting since this snapshot "
                                                                   "(repeatable).")
SuggestionOpt = typer.Option([], "--suggestion", metavar="SUGGESTION",
                             help="Only this suggestion: decompose, custom, core, human (repeatable).")
ModelsOpt = typer.Option(None, "--models", metavar="PATH",
                         help="Model corpora (a corpus JSON, a .pt2 archive, a folder, or a shipped corpus by name) [env OPGOV_MODELS_DIR, else the shipped corpora].")


def _runtimes(item) -> str:
    return ", ".join(f"{r.runtime}≥{r.since.split('@', 1)[-1]}" for r in item.evidence.runtimes.implemented_by)


def _torch(item) -> str:
    t = item.evidence.torch
    if t is None:
        return "?"
    if t.traced:
        return ("default " if t.in_default_table else "") + ("→core" if t.reaches_core else "→non-core")
    return "untraced" if t.has_decomposition else "none"


@app.command("queue")
def queue_cmd(reason: list[str] = ReasonOpt, match: list[str] = MatchOpt, snapshot: list[str] = SnapshotOpt,
              suggestion: list[str] = SuggestionOpt,
              sort: str = typer.Option("waiting", "--sort", help="waiting (oldest first), operator, suggestion, "
                                                                 "impact (most runtimes and models first)."),
              limit: int = typer.Option(0, "--limit", help="At most this many (0: all)."),
              offset: int = typer.Option(0, "--offset", help="Skip this many first."),
              models: Optional[str] = ModelsOpt, json_out: bool = JsonOpt,
              fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """The committee's workbench: every operator waiting for a decision (category undecided, a core tag
    change to review, a proposal open), each with its evidence — kind, family, what torch does with
    it, CompositeImplicitAutograd, runtimes, models — and the decision that evidence suggests
    (decompose, custom, core, or human when it disagrees), with why. Advice only: nothing is decided
    until the committee votes (`opgov triage --suggested` opens the proposals)."""
    from opgov.cli.client import ask
    from opgov.usecases.queue import QUEUE

    out = output(fmt, json_out, columns)
    view = ask(QUEUE, reason=reason, match=match, snapshot=snapshot, suggestion=suggestion, sort=sort,
               limit=limit, offset=offset, models=models)
    if out.json:
        print_json(view)
        return
    columns = ["operator", "waiting since", "reasons", "suggestion", "because", "torch", "runtimes", "models"]
    if not view.items:
        out.empty("nothing waits for the committee" if not view.total else f"no item from {view.offset} "
                  f"(of {view.total})", columns)
        return
    out.table(None, columns, [[i.operator, i.waiting_since, " ".join(i.reasons), i.suggestion, i.because, _torch(i),
                               _runtimes(i), len(i.evidence.models.used_by)] for i in view.items],
              spare=["torch", "runtimes", "models", "reasons", "waiting since"])  # `because` says why: kept
    shown = f"{view.offset + 1}–{view.offset + len(view.items)} of {view.total}"
    counts = ", ".join(f"{n} {s}" for s, n in view.counts.items() if n)
    out.note(f"{shown} waiting ({counts}); evidence from torch {view.torch or '(no facts recorded)'}, "
             f"{len(view.runtimes)} runtime versions, models: {view.models or 'none configured'}")


@app.command("triage")
def triage_cmd(kind: Optional[str] = typer.Argument(None, metavar="core|custom",
                                                    help="The category to propose (not with --suggested)."),
               rationale: Optional[str] = typer.Option(None, "--rationale",
                                                       help="Why: recorded with the decision (not with --suggested)."),
               match: list[str] = typer.Option([], "--match", metavar="GLOB",
                                               help="Queued operators whose names match, e.g. 'aten::_foreach_*' "
                                                    "(repeatable)."),
               file: Optional[str] = typer.Option(None, "--file", metavar="FILE",
                                                  help="A file of operator names, one a line ('#' comments)."),
               suggested: bool = typer.Option(False, "--suggested",
                                              help="Propose what `opgov queue` suggests for each queued operator the "
                                                   "filters select (decompose into the traced targets, core, "
                                                   "custom), its reason the rationale."),
               reason: list[str] = typer.Option([], "--reason", metavar="REASON",
                                                help="With --suggested: only this reason (undecided, tag-change)."),
               snapshot: list[str] = typer.Option([], "--snapshot", metavar="LABEL",
                                                  help="With --suggested: only operators waiting since this snapshot."),
               suggestion: list[str] = typer.Option([], "--suggestion", metavar="SUGGESTION",
                                                    help="With --suggested: only this suggestion (decompose, custom, "
                                                         "core)."),
               models: Optional[str] = typer.Option(None, "--models", metavar="PATH",
                                                    help="With --suggested: model corpora [env OPGOV_MODELS_DIR, else the shipped corpora]."),
               apply: bool = typer.Option(False, "--apply", help="Open the proposals (default: a dry run)."),
               json_out: bool = JsonOpt) -> None:
    """Triage the review queue in bulk: propose KIND, with one rationale, for every queued operator a
    --match glob or the --file selects; or, with --suggested, what `opgov queue` suggests for each
    one the filters select (all of them without a filter). A dry run names them and writes nothing;
    --apply opens one proposal each (one event each), all in one transaction, for the committee to
    vote on: with KIND a refusal of any one names it and opens none; with --suggested what the
    policy refuses is skipped, with why."""
    from opgov.core.errors import BadInput
    from opgov.usecases.queue import TRIAGE

    if suggested:
        if kind is not None or rationale is not None or file:
            raise BadInput("--suggested proposes each operator's suggestion with its reason: give no KIND, "
                           "--rationale or --file")
        _triage_suggested(reason=reason, match=match, snapshot=snapshot, suggestion=suggestion, models=models,
                          apply=apply, json_out=json_out)
        return
    if reason or snapshot or suggestion or models:
        raise BadInput("--reason, --snapshot, --suggestion and --models select suggestions: add --suggested")
    if kind is None or rationale is None:
        raise BadInput("name the category to propose (core or custom) and give --rationale, or use --suggested")
    names = _names_file(file) if file else []
    result = ask(TRIAGE, kind=kind, rationale=rationale, match=match, operators=names, apply=apply)
    if not result.selected:  # the service's empty answer: for a command, a selection that missed
        from opgov.core.errors import BadInput

        raise BadInput("no operator of the review queue matches")
    if json_out:
        print_json(result)
        return
    if result.applied:
        for view in result.proposals:
            say(f"proposal {view.id}: {view.operator} → {view.kind} (needs {view.quorum} approvals)")
        say(f"{len(result.proposals)} proposals opened")
    else:
        for name in result.selected:
            say(f"would propose {result.kind}: {name}")
        say(f"{len(result.selected)} operators selected; nothing written (run again with --apply)")


def _triage_suggested(*, apply: bool, json_out: bool, **filters) -> None:
    from opgov.usecases.queue import TRIAGE_SUGGESTED

    result = ask(TRIAGE_SUGGESTED, apply=apply, **filters)
    if json_out:
        print_json(result)
        return
    for p in result.proposals:
        into = f" into {', '.join(p.targets)}" if p.targets else ""
        say(f"proposal {p.id}: {p.operator} → {p.kind}{into}" if result.applied
            else f"would propose {p.kind}: {p.operator}{into}")
    for operator, why in result.skipped.items():
        say(f"skipped {operator}: {why}")
    say(f"{len(result.proposals)} proposals {'opened' if result.applied else 'selected'}, {len(result.skipped)} "
        f"skipped" + ("" if result.applied else "; nothing written (run again with --apply)"))


def _names_file(path: str) -> list[str]:
    """The operator names of a file, one a line (``#`` comments); a bad one names the file and line."""
    from opgov.core.names import canonical
    from opgov.formats.files import context, read_text

    names = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        text = line.split("#", 1)[0].strip()
        if text:
            with context(path, number):
                names.append(canonical(text))
    return names
