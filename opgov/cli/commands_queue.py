"""``opgov queue``: the committee's workbench — every operator waiting for a decision, with its
evidence and a suggested decision."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import output, print_json

ReasonOpt = typer.Option([], "--reason", metavar="REASON",
                         help="Only operators waiting for this reason: undecided, tag-change, proposal (repeatable).")
MatchOpt = typer.Option([], "--match", metavar="GLOB", help="Operators whose names match, e.g. 'aten::_foreach_*' "
                                                            "(repeatable).")
SnapshotOpt = typer.Option([], "--snapshot", metavar="LABEL", help="Only operators waiting since this snapshot "
                                                                   "(repeatable).")
SuggestionOpt = typer.Option([], "--suggestion", metavar="SUGGESTION",
                             help="Only this suggestion: decompose, custom, core, human (repeatable).")
ModelsOpt = typer.Option(None, "--models", metavar="PATH",
                         help="Model corpora (a corpus JSON, a .pt2 archive or a folder) [env OPGOV_MODELS_DIR].")


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
              fmt: FormatOpt = TableFormat.auto) -> None:
    """The committee's workbench: every operator waiting for a decision (category undecided, a core tag
    change to review, a proposal open), each with its evidence — kind, family, what torch does with
    it, CompositeImplicitAutograd, runtimes, models — and the decision that evidence suggests
    (decompose, custom, core, or human when it disagrees), with why. Advice only: nothing is decided
    until the committee votes (`opgov triage --suggested` opens the proposals)."""
    from opgov.cli.client import ask

    out = output(fmt, json_out)
    view = ask("queue", reason=reason, match=match, snapshot=snapshot, suggestion=suggestion, sort=sort,
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
                               _runtimes(i), len(i.evidence.models.used_by)] for i in view.items])
    shown = f"{view.offset + 1}–{view.offset + len(view.items)} of {view.total}"
    counts = ", ".join(f"{n} {s}" for s, n in view.counts.items() if n)
    out.note(f"{shown} waiting ({counts}); evidence from torch {view.torch or '(no facts recorded)'}, "
             f"{len(view.runtimes)} runtime versions, models: {view.models or 'none configured'}")
