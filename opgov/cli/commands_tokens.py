"""API tokens of members, for `opgov serve`: `opgov tokens create|list|revoke`."""

from __future__ import annotations

from typing import Optional

import typer

from opgov.cli.app import ColumnsOpt, FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import minute, output, print_json, say


tokens_app = typer.Typer(help="API tokens of members, for `opgov serve`.", no_args_is_help=True)
app.add_typer(tokens_app, name="tokens")


@tokens_app.command("create")
def tokens_create(member: str = typer.Argument(..., metavar="MEMBER"),
                  expires: Optional[int] = typer.Option(None, "--expires", metavar="DAYS",
                                                        help="Days until it expires (default: never)."),
                  json_out: bool = JsonOpt) -> None:
    """Create a token for MEMBER (maintainers; on a database without members, MEMBER becomes the
    first maintainer). The token is printed once: only its hash is stored."""
    from opgov.cli.client import ask
    from opgov.usecases.tokens import TOKENS_CREATE

    created = ask(TOKENS_CREATE, {"expires_days": "--expires"}, member=member, expires_days=expires)
    if json_out:
        print_json(created)
        return
    say(created.token)
    expiry = f"expires {minute(created.expires_at)} UTC" if created.expires_at else "does not expire"
    import sys

    sys.stderr.write(f"token {created.id} for {created.member} ({expiry}); it is shown only now\n")


@tokens_app.command("list")
def tokens_list(member: Optional[str] = typer.Option(None, "--member", help="Only this member's tokens."),
                json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto, columns: ColumnsOpt = None) -> None:
    """Tokens: id, member, state and dates (never the tokens themselves)."""
    from opgov.cli.client import ask
    from opgov.usecases.tokens import TOKENS_LIST

    out = output(fmt, json_out, columns)
    tokens = ask(TOKENS_LIST, member=member)
    columns = ["id", "member", "state", "created", "by", "expires"]
    if out.json:
        print_json(tokens)
    elif not tokens:
        out.empty("no tokens", columns)
    else:
        out.table(None, columns,
                  [[t.id, t.member, t.state, minute(t.created_at), t.created_by, minute(t.expires_at) or "never"]
                   for t in tokens])


@tokens_app.command("revoke")
def tokens_revoke(token_id: int = typer.Argument(..., metavar="ID"), json_out: bool = JsonOpt) -> None:
    """Revoke a token now (maintainers; a member their own)."""
    from opgov.cli.client import ask
    from opgov.usecases.tokens import TOKENS_REVOKE

    revoked = ask(TOKENS_REVOKE, token_id=token_id)
    print_json(revoked) if json_out else say(f"revoked token {revoked.id} of {revoked.member}")
