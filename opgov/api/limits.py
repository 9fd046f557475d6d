"""What one request may make the server do, enforced before any route sees it (an ASGI middleware).

- **The whole body is bounded.** ``OPGOV_MAX_UPLOAD_BYTES`` covers all the files and fields of one
  request, however it is sent: a declared ``Content-Length`` over the bound is answered 413 before
  a byte is read, and a chunked body is counted as it streams and refused (413) the moment it
  passes the bound, before it is buffered or parsed.
- **Anonymous work is bounded.** A request that carries a body and no token (an upload to
  ``check-model`` or ``check-bc``) is one of at most ``OPGOV_ANONYMOUS_UPLOADS`` per worker at a
  time; one more is answered 503 with ``Retry-After`` at once, so a crowd of anonymous uploads
  cannot take the event loop from the operator reads. Requests with a token are members' work and
  are not queued here (a bad token is refused by the route, 401).
- **All the uploads of a worker are bounded together.** Every request with a body, whoever sends
  it, reserves its declared length (a chunked one the whole-body bound) from the worker's budget
  (``OPGOV_UPLOAD_BUDGET_BYTES``, 64 MiB: two whole requests; at least one) until it is answered; one
  that would pass the budget is answered 503 with ``Retry-After`` at once. Reads carry no body
  and are never refused here, so they stay answered while uploads run.
- **A body arrives in time or not at all.** The whole body must arrive within
  ``OPGOV_BODY_TIMEOUT`` seconds (30) of the request; a slower one (a client sending a byte a
  second to hold a slot) is answered 408 and its connection closed, which frees its slot and its
  share of the budget.
- **Processing is bounded too.** Once its body is in, a request has ``OPGOV_REQUEST_SECONDS`` (30)
  of processing (opgov.core.budget): the loops whose work grows with the input spend from it, and
  past it the request is answered 413 in words, never left to hold a worker for as long as its
  input takes.
- **A refusal is read, not reset.** A request refused before its body is read (503: no slot or no
  budget) is answered once its body has arrived, read and dropped as it comes (within the body
  timeout; nothing kept), so the client, still sending, reads the answer instead of a connection
  reset; a client that asked ``Expect: 100-continue`` is answered at once, without its body.
- **Memory goes back.** After an upload of a megabyte or more, the worker hands the memory its
  parse freed back to the system (``malloc_trim`` where the C library has it) rather than
  keeping it for later requests.
"""

from __future__ import annotations

import asyncio

from fastapi import HTTPException

from opgov.core.budget import Budget, budgeted

_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class RequestLimits:
    def __init__(self, app, *, max_body: int, anonymous_uploads: int, budget: int | None = None,
                 body_timeout: float = 30.0, request_seconds: float = 30.0) -> None:
        self.app = app
        self.max_body = max_body
        self.anonymous = asyncio.Semaphore(anonymous_uploads)
        self.budget = max(budget or 2 * max_body, max_body)
        self.body_timeout = body_timeout
        self.request_seconds = request_seconds
        self.in_flight = 0  # bytes reserved by the bodies being taken in (one event loop: no lock needed)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        budget = Budget(self.request_seconds)
        with budgeted(budget):  # its clock starts once the body is in (_counted), or now
            if scope["method"] in _NO_BODY:
                budget.start()
                await self.app(scope, receive, send)
            else:
                await self._with_body(scope, receive, send, budget)

    async def _with_body(self, scope, receive, send, budget: Budget) -> None:
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length", b"").decode("latin-1").strip()
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        if declared.isdigit() and int(declared) > self.max_body:
            await self._refuse(scope, receive, send, 413, f"the request body is {int(declared)} bytes; this server "
                                                          f"accepts at most {self.max_body} in one request")
            return
        if not chunked and (not declared.isdigit() or int(declared) == 0):
            budget.start()
            await self.app(scope, receive, send)
            return
        size = int(declared) if declared.isdigit() else self.max_body
        if self.in_flight + size > self.budget:
            await self._drain(receive, headers)
            await self._refuse(scope, receive, send, 503, "the server is busy taking in other uploads; try again "
                                                          "shortly", headers={"Retry-After": "2"})
            return
        self.in_flight += size
        try:
            if b"authorization" in headers:
                await self.app(scope, self._counted(receive, budget), send)
                return
            if self.anonymous.locked():  # no await between this test and the acquire below
                self.in_flight -= size  # not taken in: the drain below keeps nothing
                size = 0
                await self._drain(receive, headers)
                await self._refuse(scope, receive, send, 503, "the server is busy with other uploads without a "
                                                              "token; try again shortly, or send a token",
                                   headers={"Retry-After": "1"})
                return
            async with self.anonymous:
                await self.app(scope, self._counted(receive, budget), send)
        finally:
            self.in_flight -= size
            if size >= 1 << 20:
                from opgov.api.lifetime import give_memory_back

                give_memory_back()

    async def _drain(self, receive, headers: dict) -> None:
        """Read a refused request's body and drop it, so that its client, still sending, reads the
        refusal rather than a reset (a socket closed with unread data is reset): within the body
        timeout and up to the whole-body bound, keeping nothing. A client that waits for ``100
        Continue`` has sent nothing yet and is answered at once."""
        if b"100-continue" in headers.get(b"expect", b"").lower():
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        seen = 0
        while seen <= self.max_body:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(deadline - loop.time(), 0.001))
            except asyncio.TimeoutError:
                return
            if message["type"] != "http.request":
                return
            seen += len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    def _counted(self, receive, budget: Budget):
        seen = 0
        limit = self.max_body
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        timeout = self.body_timeout
        complete = False

        async def counted():
            nonlocal seen, complete
            if complete:  # the body is in: what follows (a disconnect) may take as long as it takes
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), timeout=max(deadline - loop.time(), 0.001))
            except asyncio.TimeoutError:
                raise HTTPException(408, f"the request body did not arrive within {timeout:g} s; send it at once",
                                    headers={"Connection": "close"}) from None
            if message["type"] == "http.request":
                complete = not message.get("more_body", False)
                if complete:
                    budget.start()  # the request's processing time runs from here
                seen += len(message.get("body", b""))
                if seen > limit:
                    # raised inside the route's body parsing: FastAPI passes an HTTPException through,
                    # and the problem handler answers it (errors.install)
                    raise HTTPException(413, f"the request body is larger than {limit} bytes, the most this "
                                             "server accepts in one request")
            return message

        return counted

    @staticmethod
    async def _refuse(scope, receive, send, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        from opgov.api.errors import problem

        await problem(status, detail, headers={**(headers or {}), "Connection": "close"})(scope, receive, send)
