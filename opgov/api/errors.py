"""Every error as ``application/problem+json`` (RFC 9457), with the CLI's one-line message.

BadInput → 400 (NotFound → 404; a request past its processing budget, TooCostly → 413), PolicyRefusal → 409 (Forbidden, a role that may not → 403),
Unavailable (what this installation lacks: torch for import-torch) → 409 without ``Retry-After``,
a request the schema rejects → 422, no or bad token → 401, an upload too large → 413, a database
busy with another writer for too long → 503 with ``Retry-After``. The
transaction of a refused request is rolled back: nothing is written.
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from opgov.core.errors import (BadInput, DatabaseBehind, Forbidden, NotFound, OpgovError, PolicyRefusal, TooCostly,
                               Unavailable, Unauthenticated, Unprocessable)
from opgov.db.engine import DatabaseBusy

MEDIA_TYPE = "application/problem+json"
log = logging.getLogger("opgov.api")


def problem(status: int, detail: str, headers: dict[str, str] | None = None, *,
            kind: str = "about:blank") -> JSONResponse:
    body = {"type": kind, "title": HTTPStatus(status).phrase, "status": status,
            "detail": " ".join(str(detail).split())}  # always one line
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def status_of(err: OpgovError) -> int:
    if isinstance(err, NotFound):
        return 404
    if isinstance(err, TooCostly):
        return 413
    if isinstance(err, Unprocessable):
        return 422
    if isinstance(err, Unauthenticated):
        return 401
    if isinstance(err, Forbidden):
        return 403
    if isinstance(err, (PolicyRefusal, Unavailable)):
        return 409
    if isinstance(err, (DatabaseBehind, DatabaseBusy)):
        return 503
    if isinstance(err, BadInput):
        return 400
    return 400


def install(app: FastAPI) -> None:
    regexes: list[tuple[re.Pattern[str], set[str], bool]] = []

    def allowed(path: str) -> list[str]:
        """The methods some route of ``app`` answers on ``path`` (read from the routes once)."""
        if not regexes:
            from starlette.routing import compile_path

            from opgov.api.contract import routes_of

            regexes.extend((compile_path(path_format)[0], route.methods, "{" not in path_format)
                           for path_format, route in routes_of(app))
        # a path that names a route literally (/proposals/triage) is that route's, not a parameter's value
        literal = {m for regex, methods, fixed in regexes if fixed and regex.match(path) for m in methods}
        return sorted(literal or {m for regex, methods, _ in regexes if regex.match(path) for m in methods})

    @app.exception_handler(OpgovError)
    async def opgov_error(_request: Request, err: OpgovError):
        status = status_of(err)
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {"Retry-After": "5"} if status == 503 else None
        from opgov.results.problem import UNAVAILABLE

        return problem(status, str(err), headers=headers, kind=UNAVAILABLE if isinstance(err, Unavailable) else "about:blank")

    @app.exception_handler(HTTPException)
    async def http_error(_request: Request, err: HTTPException):
        return problem(err.status_code, err.detail if isinstance(err.detail, str) else HTTPStatus(err.status_code).phrase,
                       headers=getattr(err, "headers", None))

    from starlette.exceptions import HTTPException as StarletteHTTPException

    @app.exception_handler(StarletteHTTPException)
    async def starlette_error(request: Request, err: StarletteHTTPException):
        headers = getattr(err, "headers", None)
        if err.status_code == 405:  # every method of the path, not those of the first route that matched it
            headers = {**(headers or {}), "Allow": ", ".join(allowed(request.url.path))}
        return problem(err.status_code, err.detail if isinstance(err.detail, str) else HTTPStatus(err.status_code).phrase,
                       headers=headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, err: RequestValidationError):
        from opgov.usecases.invalid import describe

        return problem(422, describe(err.errors()))

    @app.exception_handler(RecursionError)
    async def too_deep(_request: Request, _err: RecursionError):
        # a body nested deeper than a parser recurses (the JSON check refuses most first: api/inputs.py)
        return problem(422, "the request is nested too deeply to read")

    @app.exception_handler(Exception)
    async def unexpected(_request: Request, err: Exception):
        log.exception("unexpected error", exc_info=err)
        return problem(500, f"internal error ({err.__class__.__name__}); the request was rolled back")
