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
"""

from __future__ import annotations

import asyncio

from fastapi import HTTPException

_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


class RequestLimits:
    def __init__(self, app, *, max_body: int, anonymous_uploads: int) -> None:
        self.app = app
        self.max_body = max_body
        self.anonymous = asyncio.Semaphore(anonymous_uploads)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or scope["method"] in _NO_BODY:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length", b"").decode("latin-1").strip()
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        if declared.isdigit() and int(declared) > self.max_body:
            await self._refuse(scope, receive, send, 413, f"the request body is {int(declared)} bytes; this server "
                                                          f"accepts at most {self.max_body} in one request")
            return
        if not chunked and (not declared.isdigit() or int(declared) == 0):
            await self.app(scope, receive, send)
            return
        if b"authorization" in headers:
            await self.app(scope, self._counted(receive), send)
            return
        if self.anonymous.locked():  # no await between this test and the acquire below
            await self._refuse(scope, receive, send, 503, "the server is busy with other uploads without a token; "
                                                          "try again shortly, or send a token",
                               headers={"Retry-After": "1"})
            return
        async with self.anonymous:
            await self.app(scope, self._counted(receive), send)

    def _counted(self, receive):
        seen = 0
        limit = self.max_body

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
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
