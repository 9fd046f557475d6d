"""The service: `opgov serve` (its members' tokens: opgov.cli.commands_tokens)."""

from __future__ import annotations

import os
from typing import Optional

import typer

from opgov.cli.app import app
from opgov.cli.runtime import GLOBALS, say



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
    """Serve the HTTP API (FastAPI on uvicorn): OpenAPI at /openapi.json, docs at /docs; the address is
    printed once the server answers there.

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
    line = (f"opgov serving {engine.url.render_as_string(hide_password=True)} on http://{host}:{port} "
            f"({workers} worker{'s' if workers > 1 else ''}); API docs at /docs")
    _announce_when_answering(host, port, line)
    # uvicorn trusts X-Forwarded-* from 127.0.0.1 unless told otherwise: trust only named proxies
    proxies = [ip.strip() for ip in (forwarded_allow_ips or "").split(",") if ip.strip()]
    from opgov.cli.http_protocol import HeadDeadline  # a request's head is timed as its body is

    uvicorn.run("opgov.api.app:create_app", factory=True, host=host, port=port, workers=workers,
                log_level="warning", access_log=False, proxy_headers=bool(proxies),
                forwarded_allow_ips=",".join(proxies) or None, http=HeadDeadline)


def _announce_when_answering(host: str, port: int, line: str) -> None:
    """Say ``line`` (the address) once the server answers ``/healthz``, not before: uvicorn starts
    the workers, each imports the app and opens its database, which takes seconds on a busy
    machine, and a script or a person that reads the address goes straight to it. A daemon thread
    of this process asks over loopback (the wildcard addresses through their loopback)."""
    import http.client
    import sys
    import threading
    import time

    target = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)

    def wait() -> None:
        while True:
            try:
                connection = http.client.HTTPConnection(target, port, timeout=2)
                try:
                    connection.request("GET", "/healthz")
                    if connection.getresponse().status == 200:
                        break
                finally:
                    connection.close()
            except OSError:
                pass
            time.sleep(0.1)
        say(line)
        sys.stdout.flush()  # a pipe or a log file reads it now, not when the buffer fills

    threading.Thread(target=wait, name="opgov-announce", daemon=True).start()
