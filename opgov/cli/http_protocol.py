"""The HTTP protocol `opgov serve` runs: uvicorn's (httptools), with a deadline on a request's head.

uvicorn times out an idle kept-alive connection, and opgov's body timeout (opgov.api.limits) a
request's body, but nothing times a request's head (uvicorn may be imported by the CLI only,
hence this module's place): a client that sends its request line and
headers a byte at a time (slowloris) would hold its connection, and a socket of the worker, for as
long as it likes. Here a connection must deliver each request's head within the body timeout
(``OPGOV_BODY_TIMEOUT``, 30 s) of connecting or of starting that request; past it the connection is
closed. The worker is never held meanwhile (it serves others: the wait is the event loop's).
"""

from __future__ import annotations

import asyncio
import os

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


def head_timeout() -> float:
    """``OPGOV_BODY_TIMEOUT`` (checked by `opgov serve` before uvicorn starts: opgov.api.config)."""
    return float(os.environ.get("OPGOV_BODY_TIMEOUT", "").strip() or 30)


class HeadDeadline(HttpToolsProtocol):
    """:class:`HttpToolsProtocol` that closes a connection whose request head is late."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._head_seconds = head_timeout()
        self._head_deadline: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        if self._head_deadline is None:
            self._head_deadline = self.loop.call_later(self._head_seconds, self._head_too_late)

    def _disarm(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_late(self) -> None:
        self._head_deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()  # a connection that sends nothing is closed too

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()  # the body has its own timeout (opgov.api.limits)
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
