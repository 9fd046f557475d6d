"""Commands of the committee: members, settings, proposals, votes, historical decisions."""

from __future__ import annotations


import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.client import ask  # a declared use case (opgov.usecases.<area>), in-process or of the server
from opgov.cli.runtime import day, minute, output, print_json, say

members_app = typer.Typer(help="Who may do what: maintainers, developers, bots.", no_args_is_help=True)
config_app = typer.Typer(help="Governance settings: quorum and the two lifecycle periods.", no_args_is_help=True)
proposals_app = typer.Typer(help="List proposals (`proposals show ID` for one).", invoke_without_command=True)
decisions_app = typer.Typer(help="Historical decisions.", no_args_is_help=True)
app.add_typer(members_app, name="members")
app.add_typer(config_app, name="config")
app.add_typer(proposals_app, name="proposals")
app.add_typer(decisions_app, name="decisions")

RationaleOpt = typer.Option(..., "--rationale", help="Why: recorded with the decision.")


@members_app.command("add")
def members_add(name: str, role: str = typer.Option(..., "--role", help="maintainer, developer or bot."),
                json_out: bool = JsonOpt) -> None:
    """Add a member. The first member must be a maintainer; until then every command is allowed."""
    from opgov.usecases.governance import MEMBERS_ADD

    member = ask(MEMBERS_ADD, name=name, role=role)
    print_json(member) if json_out else say(f"added {member.name} as {member.role}")


@members_app.command("list")
def members_list(json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Members and their roles."""
    from opgov.cli.client import call
    from opgov.usecases.governance import MEMBERS_LIST

    out = output(fmt, json_out, columns)
    members = call(MEMBERS_LIST)
    columns = ["name", "role", "added", "by"]
    if out.json:
        print_json(members)
    elif not members:
        out.empty("no members: single-user mode (every command is allowed and recorded with the actor's name)",
                  columns)
    else:
        out.table(None, columns, [[m.name, m.role, day(m.added_at), m.added_by] for m in members])


@members_app.command("remove")
def members_remove(name: str) -> None:
    """Remove a member (never the last maintainer while others remain)."""
    from opgov.usecases.governance import MEMBERS_REMOVE

    ask(MEMBERS_REMOVE, name=name)
    say(f"removed {name}")


@config_app.command("set")
def config_set(key: str, value: str) -> None:
    """Set quorum, deprecating_days or deprecated_days (logged)."""
    from opgov.core.settings import setting_value
    from opgov.usecases.governance import CONFIG_SET

    number = setting_value(key, value)  # the argument is text: its key and number said as a local run says them
    result = ask(CONFIG_SET, key=key, value=number)
    say(f"{key}: {result.before} → {result.value}")


@config_app.command("list")
def config_list(json_out: bool = JsonOpt) -> None:
    """Current settings."""
    from opgov.results.plain import jsonable
    from opgov.cli.client import call
    from opgov.usecases.governance import CONFIG_LIST

    settings = call(CONFIG_LIST)
    if json_out:
        print_json(settings)
    else:
        for key, value in jsonable(settings).items():
            say(f"{key} = {value}")


def _proposed(view, json_out: bool) -> None:
    if json_out:
        print_json(view)
    else:
        what = view.kind + (f" into {', '.join(view.targets)}" if view.targets else "")
        say(f"proposal {view.id}: {view.operator} → {what} (needs {view.quorum} approvals)"
            + (f"; confirms its category {view.confirms}" if view.confirms else ""))


@app.command("propose-core")
def propose_core(op: str = typer.Argument(..., metavar="OP"), rationale: str = RationaleOpt,
                 json_out: bool = JsonOpt) -> None:
    """Propose adding a functional operator to the core opset."""
    from opgov.usecases.governance import PROPOSE

    _proposed(ask(PROPOSE, operator=op, kind="core", rationale=rationale), json_out)


@app.command("propose-decompose")
def propose_decompose(op: str = typer.Argument(..., metavar="OP"),
                      into: str = typer.Option("", "--into", metavar="OP[,OP…]",
                                               help="Target operators: core, or decomposing into core. "
                                                    "Needed unless the operator's kernel is "
                                                    "CompositeImplicitAutograd (the kernel is the decomposition)."),
                      rationale: str = RationaleOpt, json_out: bool = JsonOpt) -> None:
    """Propose that an operator decomposes into (core) operators."""
    from opgov.usecases.governance import PROPOSE

    targets = [t for t in into.split(",") if t.strip()]
    _proposed(ask(PROPOSE, operator=op, kind="decompose", rationale=rationale, targets=targets), json_out)


@app.command("propose-custom")
def propose_custom(op: str = typer.Argument(..., metavar="OP"), rationale: str = RationaleOpt,
                   json_out: bool = JsonOpt) -> None:
    """Propose keeping an operator custom (needs special handling by backends)."""
    from opgov.usecases.governance import PROPOSE

    _proposed(ask(PROPOSE, operator=op, kind="custom", rationale=rationale), json_out)


@app.command("review")
def review_cmd(proposal_ids: list[int] = typer.Argument(..., metavar="ID..."),
               approve: bool = typer.Option(False, "--approve"), reject: bool = typer.Option(False, "--reject"),
               comment: list[str] = typer.Option(..., "--comment",
                                                 help="Why: once for every vote, or once per ID in their order."),
               json_out: bool = JsonOpt) -> None:
    """Vote on proposals (maintainers; not on your own). Quorum approvals decide each.

    Several IDs are voted on in one transaction, each vote its own record: a refusal on any of
    them (not open, your own) writes none. `--json` prints the proposal, or with several IDs the
    list of them in the order given."""
    from opgov.core.errors import BadInput
    from opgov.usecases.governance import REVIEW, REVIEW_MANY

    if approve == reject:
        raise BadInput("give exactly one of --approve or --reject")
    if len(proposal_ids) == 1 and len(comment) == 1:
        views = [ask(REVIEW, proposal_id=proposal_ids[0], approve=approve, comment=comment[0])]
    else:
        views = ask(REVIEW_MANY, {"comments": "--comment", "proposal_ids": "ID"},
                                 proposal_ids=proposal_ids, approve=approve, comments=comment)
    if json_out:
        print_json(views[0] if len(proposal_ids) == 1 else views)
        return
    for view in views:
        say(f"proposal {view.id}: {len(view.approvals)} approve, {len(view.rejections)} reject "
            f"(quorum {view.quorum}) — {view.status}")
        if view.replaced is not None:
            earlier = view.replaced
            say(f"this vote replaces your earlier {'approve' if earlier.approve else 'reject'} of "
                f"{minute(earlier.at)} ({earlier.comment!r}; kept in the log)")


@app.command("withdraw")
def withdraw_cmd(proposal_id: int = typer.Argument(..., metavar="ID"), json_out: bool = JsonOpt) -> None:
    """Withdraw an open proposal (your own; maintainers any)."""
    from opgov.usecases.governance import WITHDRAW

    view = ask(WITHDRAW, proposal_id=proposal_id)
    print_json(view) if json_out else say(f"proposal {view.id} withdrawn")


OpenOpt = typer.Option(False, "--open", help="Only open proposals.")


@proposals_app.callback()
def proposals_default(typer_ctx: typer.Context, open_only: bool = OpenOpt,
                      json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """List proposals (`--open`: only open ones), as `proposals list` does."""
    if typer_ctx.invoked_subcommand is None:
        _list_proposals(open_only, json_out, fmt, columns)


@proposals_app.command("list")
def proposals_list(open_only: bool = OpenOpt, json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto,
                   columns: ColumnsOpt = None) -> None:
    """List proposals (`--open`: only open ones)."""
    _list_proposals(open_only, json_out, fmt, columns)


def _list_proposals(open_only: bool, json_out: bool, fmt: TableFormat, columns: str | None = None) -> None:
    from opgov.usecases.governance import PROPOSALS

    out = output(fmt, json_out, columns)
    views = ask(PROPOSALS, open=open_only)
    if out.json:
        print_json(views)
        return
    columns = ["id", "operator", "proposal", "status", "by", "votes", "created"]
    if not views:
        out.empty("no proposals" + (" open" if open_only else ""), columns)
        return
    out.table(None, columns,
              [[v.id, v.operator, v.kind + (f" into {', '.join(v.targets)}" if v.targets else ""),
                v.status, v.proposer, f"+{len(v.approvals)} -{len(v.rejections)}/{v.quorum}",
                day(v.created_at)] for v in views])


@proposals_app.command("show")
def proposals_show(proposal_id: int = typer.Argument(..., metavar="ID"), json_out: bool = JsonOpt) -> None:
    """One proposal with its votes and decision."""
    from opgov.usecases.governance import PROPOSALS_SHOW

    view = ask(PROPOSALS_SHOW, proposal_id=proposal_id)
    if json_out:
        print_json(view)
        return
    say(f"proposal {view.id}: {view.operator} → {view.kind}"
        + (f" into {', '.join(view.targets)}" if view.targets else "") + f" — {view.status}")
    say(f"by {view.proposer} on {day(view.created_at)}: {view.rationale}")
    for vote in view.votes:
        say(f"  {'approve' if vote.approve else 'reject '} {vote.voter} ({day(vote.at)}): {vote.comment}")
    if view.decision:
        d = view.decision
        say(f"decided {d.category} on {day(d.decided_at)} by {', '.join(d.decided_by)}")


@decisions_app.command("load")
def decisions_load(file: str = typer.Argument(..., metavar="FILE"), json_out: bool = JsonOpt) -> None:
    """Record a file of historical decisions (dated, marked as imported) in one transaction.
    FILE may name a shipped file: core-aten-review-2023 (the 2023 core ATen review)."""
    from pathlib import Path

    from opgov.formats.files import read_content
    from opgov.resources import SHIPPED_DECISIONS, data_argument, shipped_name
    from opgov.usecases.governance import DECISIONS_LOAD

    given = file
    if not Path(file).exists() and shipped_name(file) in SHIPPED_DECISIONS:  # the one the server ships
        result = ask(DECISIONS_LOAD, shipped=shipped_name(file))
    else:  # a shipped file of another kind is read as the file it is, and refused as such
        result = ask(DECISIONS_LOAD, decisions=read_content(data_argument(file)))
    print_json(result) if json_out else say(
        f"{result.recorded} decisions recorded from {given}"  # as the user named it: no path of a checkout
        + (f" ({result.already_recorded} were already recorded)" if result.already_recorded else "")
        + (f"; {len(result.superseded)} on record only, superseded by a newer snapshot that tags the operator "
           f"core: {', '.join(result.superseded)}" if result.superseded else ""))
    if not json_out and result.skipped:
        say(f"{len(result.skipped)} skipped, not in this database yet (load the file again once a snapshot holds "
            f"them): " + "; ".join(f"{op} ({why})" for op, why in result.skipped.items()))
    if not json_out and result.decomposition_errors:
        errors = result.decomposition_errors
        say(f"{len(errors)} of these rules end in operators that are neither core nor decomposed, e.g. {errors[0]}; "
            "give those operators rules (`opgov decomps load`; for the 2023 review: `opgov decomps load export-composites`) and run "
            "`opgov check-decomps`")
