"""Every error as ``application/problem+json`` (RFC 9457), with the CLI's one-line message.

BadInput → 400 (NotFound → 404), PolicyRefusal → 409 (Forbidden, a role that may not → 403),
a request the schema rejects → 422, no or bad token → 401, an upload too large → 413. The
transaction of a refused request is rolled back: nothing is written.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from opgov.core.errors import (BadInput, DatabaseBehind, Forbidden, NotFound, OpgovError, PolicyRefusal,
                               Unauthenticated)

MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("opgov.api")


def problem(status: int, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
            "detail": " ".join(str(detail).split())}  # always one line
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def status_of(err: OpgovError) -> int:
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, Unauthenticated):
        return 401
    if isinstance(err, Forbidden):
        return 403
    if isinstance(err, PolicyRefusal):
        return 409
    if isinstance(err, DatabaseBehind):
        return 503
    if isinstance(err, BadInput):
        return 400
    return 400


def install(app: FastAPI) -> None:
    @app.exception_handler(OpgovError)
    async def opgov_error(_request: Request, err: OpgovError):
        status = status_of(err)
        return problem(status, str(err), headers={"WWW-Authenticate": "Bearer"} if status == 401 else None)

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, err: HTTPException):
        return problem(err.status_code, err.detail if isinstance(err.detail, str) else HTTPStatus(err.status_code).phrase,
                       headers=getattr(err, "headers", None))

    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(StarletteHTTPException)
    async def starlette_error(_request: Request, err: StarletteHTTPException):
        return problem(err.status_code, err.detail if isinstance(err.detail, str) else HTTPStatus(err.status_code).phrase,
                       headers=getattr(err, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, err: RequestValidationError):
        parts = []
        for e in err.errors():
            where = ".".join(str(p) for p in e.get("loc", ()) if p not in ("body", "query", "path"))
            parts.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
        return problem(422, "; ".join(parts) or "invalid request")

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, err: Exception):
        log.exception("unexpected error", exc_info=err)
        return problem(500, f"internal error ({err.__class__.__name__}); the request was rolled back")
