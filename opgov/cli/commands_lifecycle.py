"""The lifecycle: its steps and `opgov tick`."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import JsonOpt, app
from opgov.cli.client import ask  # a declared use case (opgov.usecases.<area>), in-process or of the server
from opgov.cli.runtime import day, minute, print_json, say


def _stepped(result, json_out: bool) -> None:
    if json_out:
        print_json(result)
        return
    say(f"{result.operator}: {result.from_state} → {result.to_state}"
        + (f" (replacement {result.replacement})" if result.replacement and result.to_state == "deprecating" else ""))
    if result.family:
        say(f"  with its family: {', '.join(result.family)}")
    if result.left_behind:
        say(f"  still refers to it, and stays {', '.join(sorted({r.lifecycle or 'unknown' for r in result.left_behind}))}: "
            + ", ".join(f"{r.operator} ({'its' if r.relation != 'decomposition rule' else 'a'} {r.relation}"
                        + (f" of {r.of}" if r.of != result.operator else "") + ")" for r in result.left_behind))
    if result.next:
        say(f"  can become {result.next.to} from {minute(result.next.possible_from)} UTC")


@app.command("deprecate")
def deprecate_cmd(op: str = typer.Argument(..., metavar="OP"), reason: str = typer.Option(..., "--reason"),
                  replacement: Optional[str] = typer.Option(None, "--replacement", metavar="OP",
                                                            help="Required for core operators."),
                  json_out: bool = JsonOpt) -> None:
    """Tag an operator deprecating (torch.export warns on it)."""
    from opgov.usecases.lifecycle import DEPRECATE

    _stepped(ask(DEPRECATE, name=op, reason=reason, replacement=replacement), json_out)


@app.command("mark-deprecated")
def mark_deprecated_cmd(op: str = typer.Argument(..., metavar="OP"),
                        reason: Optional[str] = typer.Option(None, "--reason"), json_out: bool = JsonOpt) -> None:
    """deprecating → deprecated, no sooner than deprecating_days after (torch.export fails on it)."""
    from opgov.usecases.lifecycle import MARK_DEPRECATED

    _stepped(ask(MARK_DEPRECATED, name=op, reason=reason), json_out)


@app.command("delete")
def delete_cmd(op: str = typer.Argument(..., metavar="OP"), reason: Optional[str] = typer.Option(None, "--reason"),
               json_out: bool = JsonOpt) -> None:
    """deprecated → deleted, no sooner than deprecated_days after; the sync bot removes the entry."""
    from opgov.usecases.lifecycle import DELETE

    _stepped(ask(DELETE, name=op, reason=reason), json_out)


@app.command("undeprecate")
def undeprecate_cmd(op: str = typer.Argument(..., metavar="OP"), reason: str = typer.Option(..., "--reason"),
                    json_out: bool = JsonOpt) -> None:
    """Back to active from deprecating or deprecated (not from deleted)."""
    from opgov.usecases.lifecycle import UNDEPRECATE

    _stepped(ask(UNDEPRECATE, name=op, reason=reason), json_out)


@app.command("tick")
def tick_cmd(apply: bool = typer.Option(False, "--apply", help="Perform the due transitions."),
             within: int = typer.Option(0, "--within", metavar="DAYS", help="Also list those due within DAYS."),
             json_out: bool = JsonOpt) -> None:
    """Lifecycle transitions due now (and within DAYS); --apply performs the due ones."""
    from opgov.results.plain import jsonable
    from opgov.core.lifecycle import check_within
    from opgov.usecases.lifecycle import TICK, UPGRADERS_TIMERS

    check_within(within)  # here, so the request's schema cannot word it differently
    # over HTTP on the server's clock, a token needed even without --apply; in-process a read without it
    result = ask(TICK, apply=apply, within_days=within)
    upgraders = ask(UPGRADERS_TIMERS, within_days=within)  # reported, never applied: a person replaces them
    if json_out:
        print_json({**jsonable(result), "upgraders": jsonable(upgraders)})
        return
    if not result.due and not result.within and not upgraders.due and not upgraders.within:
        say("nothing is due" + (f" within {within} days" if within else ""))
    for timer in upgraders.due:
        say(f"due: upgrader {timer.name} ({timer.operator}) may be replaced: 180 days since version bump "
            f"{timer.bump} on {timer.bumped_on}")
    for timer in upgraders.within:
        say(f"coming: upgrader {timer.name} ({timer.operator}) may be replaced from {day(timer.replaceable_from)} "
            f"({timer.days_left} day{'' if timer.days_left == 1 else 's'})")
    for item in result.due:
        done = any(a.operator == item.operator for a in result.applied)
        say(f"{'applied' if done else 'due'}: {item.operator} {item.from_state} → {item.to_state} "
            f"(due {day(item.due_at)})")
    for item in result.within:
        say(f"coming: {item.operator} {item.from_state} → {item.to_state} on {day(item.due_at)} "
            f"({item.days_left} day{'' if item.days_left == 1 else 's'})")
