"""The service: `opgov serve`, and the API tokens of its members."""

from __future__ import annotations

import os
from typing import Optional

import typer

from opgov.cli.app import FormatOpt, JsonOpt, TableFormat, app
from opgov.cli.runtime import GLOBALS, minute, output, print_json, say

tokens_app = typer.Typer(help="API tokens of members, for `opgov serve`.", no_args_is_help=True)
app.add_typer(tokens_app, name="tokens")


@app.command("serve")
def serve_cmd(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8080, "--port", help="Port to listen on."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, show_default=False,
                                          help="Worker processes [default: 1 on SQLite; on PostgreSQL one per "
                                               "CPU, at most 8]."),
    private_reads: bool = typer.Option(False, "--private-reads",
                                       help="Reads need a token too [env OPGOV_PUBLIC_READS=0]."),
    public_url: Optional[str] = typer.Option(None, "--public-url", metavar="URL", show_default=False,
                                             help="Where users reach the service, e.g. https://opgov.example.org: "
                                                  "the base of the Atom feed's absolute links (never the request's "
                                                  "Host header) [env OPGOV_PUBLIC_URL]."),
    forwarded_allow_ips: Optional[str] = typer.Option(None, "--forwarded-allow-ips", metavar="IPS",
                                                      show_default=False,
                                                      help="Comma-separated addresses of the reverse proxies whose "
                                                           "X-Forwarded-For/-Proto headers are trusted [default: "
                                                           "none: the headers are ignored]."),
) -> None:
    """Serve the HTTP API (FastAPI on uvicorn): OpenAPI at /openapi.json, docs at /docs.

    Uses the database of --db (one transaction per request, the server's clock). Writes need
    `Authorization: Bearer <token>` (`opgov tokens create`); reads are public unless
    --private-reads. Absolute links come from --public-url only; X-Forwarded-* headers are
    trusted only from --forwarded-allow-ips. Every worker keeps a pool of OPGOV_DB_POOL connections (8) and caches
    operator answers until the next write (OPGOV_RESPONSE_CACHE answers, 1024; 0: off)."""
    import uvicorn

    from opgov.api.config import Config
    from opgov.db.engine import ensure_current, make_engine, resolve_url

    url = resolve_url(GLOBALS.db)
    if public_url is not None:
        from opgov.api.config import public_url as checked_url

        os.environ["OPGOV_PUBLIC_URL"] = checked_url(public_url) or ""
    Config.from_env()  # a bad OPGOV_* setting is said once, before listening
    if workers is None:  # SQLite serialises writers and its reads are cheap: one process is enough for a host
        workers = 1 if url.startswith("sqlite") else min(os.cpu_count() or 1, 8)
    engine = make_engine(url)
    try:
        ensure_current(engine)  # a missing or old database is said once, before listening
    finally:
        engine.dispose()
    from opgov.cli.ports import refusal

    taken = refusal(host, port)  # said before listening, naming what holds the port
    if taken is not None:
        from opgov.core.errors import BadInput

        raise BadInput(taken)
    os.environ["OPGOV_DATABASE_URL"] = url  # the workers read their configuration from the environment
    if workers > 1:  # each worker ends with this process (opgov.api.lifetime.SUPERVISOR)
        os.environ["OPGOV_SUPERVISOR_PID"] = str(os.getpid())
    if private_reads:
        os.environ["OPGOV_PUBLIC_READS"] = "0"
    say(f"opgov serving {engine.url.render_as_string(hide_password=True)} on http://{host}:{port} "
        f"({workers} worker{'s' if workers > 1 else ''}); API docs at /docs")
    # uvicorn trusts X-Forwarded-* from 127.0.0.1 unless told otherwise: trust only named proxies
    proxies = [ip.strip() for ip in (forwarded_allow_ips or "").split(",") if ip.strip()]
    uvicorn.run("opgov.api.app:create_app", factory=True, host=host, port=port, workers=workers,
                log_level="warning", access_log=False, proxy_headers=bool(proxies),
                forwarded_allow_ips=",".join(proxies) or None)


@tokens_app.command("create")
def tokens_create(member: str = typer.Argument(..., metavar="MEMBER"),
                  expires: Optional[int] = typer.Option(None, "--expires", metavar="DAYS",
                                                        help="Days until it expires (default: never)."),
                  json_out: bool = JsonOpt) -> None:
    """Create a token for MEMBER (maintainers; on a database without members, MEMBER becomes the
    first maintainer). The token is printed once: only its hash is stored."""
    from opgov.cli.client import call
    from opgov.usecases import named

    use_case = named("tokens create")
    created = call(use_case, use_case.ask({"expires_days": "--expires"}, member=member, expires_days=expires))
    if json_out:
        print_json(created)
        return
    say(created.token)
    expiry = f"expires {minute(created.expires_at)} UTC" if created.expires_at else "does not expire"
    import sys

    sys.stderr.write(f"token {created.id} for {created.member} ({expiry}); it is shown only now\n")


@tokens_app.command("list")
def tokens_list(member: Optional[str] = typer.Option(None, "--member", help="Only this member's tokens."),
                json_out: bool = JsonOpt, fmt: FormatOpt = TableFormat.auto) -> None:
    """Tokens: id, member, state and dates (never the tokens themselves)."""
    from opgov.cli.client import call
    from opgov.usecases import named

    out = output(fmt, json_out)
    use_case = named("tokens list")
    tokens = call(use_case, use_case.ask(member=member))
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
    from opgov.cli.client import call
    from opgov.usecases import named

    use_case = named("tokens revoke")
    revoked = call(use_case, use_case.ask(token_id=token_id))
    print_json(revoked) if json_out else say(f"revoked token {revoked.id} of {revoked.member}")
