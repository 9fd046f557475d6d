"""What a request says, refused before any route reads it when no reader could take it the way its
sender meant (an ASGI middleware, inside the body bounds of opgov.api.limits):

- **text no database stores** (opgov.core.text: a NUL, a lone surrogate) in the path, a query
  parameter, or any key or string of a JSON body: 422 naming the parameter or the key, on SQLite
  as on PostgreSQL (which would otherwise fail with a 500);
- **a JSON body that would build more than it says** — more than ``MAX_JSON_VALUES`` values (a
  million: 10⁵ operator names are 10⁵; ``[{},{},…]`` builds a 64-byte object per 3 bytes), counted
  before it is parsed (opgov.formats.files.json_values), is 413; one nested deeper than a parser
  recurses is 422. Neither is parsed, here or by the route;
- **a JSON object with a key twice** (``{"role": "developer", "role": "maintainer"}``): 422
  naming the key, where a JSON parser would silently keep the last.

A body that is not JSON at all is left to the route (its own 422). The JSON body is read once and
handed on as the same bytes object, so checking it holds no second copy of the body.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

from opgov.core.text import UNSTORABLE, unstorable


# the most values a JSON body may hold: its tree (some 100 bytes a value at worst) stays ~100 MB
MAX_JSON_VALUES = 1_000_000


class Refused(ValueError):
    status = 422


class TooMany(Refused):
    status = 413


def _check_pairs(pairs: list[tuple[str, object]]) -> dict:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            raise Refused(f"the JSON body has the key {key!r} twice in one object; send it once")
        if UNSTORABLE.search(key):
            raise Refused(f"the JSON key {key[:40]!r} {unstorable(key)}")
        bad = _bad_string(value)
        if bad is not None:
            raise Refused(f"{key} {unstorable(bad)}: {bad[:40]!r}")
        seen[key] = value
    return seen


def _bad_string(value: object) -> str | None:
    """The first string no database stores in a JSON value (its objects were checked as parsed)."""
    if isinstance(value, str):
        return value if UNSTORABLE.search(value) else None
    if isinstance(value, list):
        for item in value:
            bad = _bad_string(item)
            if bad is not None:
                return bad
    return None


def check_json(body: bytes) -> str | None:
    """Why a JSON body is refused, or None (also for a body that is not JSON: the route says so).
    Raises :class:`TooMany` for a body of more than :data:`MAX_JSON_VALUES` values."""
    from opgov.formats.files import json_values

    values = json_values(body)
    if values > MAX_JSON_VALUES:
        raise TooMany(f"the JSON body holds up to {values:,} values; this server reads at most "
                      f"{MAX_JSON_VALUES:,} in one request: send fewer at once")
    try:
        data = json.loads(body, object_pairs_hook=_check_pairs)
    except Refused as err:
        return str(err)
    except RecursionError:
        return "the JSON body is nested too deeply"
    except ValueError:  # not JSON, not UTF-8: the route's parser answers it
        return None
    try:
        bad = _bad_string(data)
    except RecursionError:
        return "the JSON body is nested too deeply"
    return None if bad is None else f"the JSON body {unstorable(bad)}: {bad[:40]!r}"


def check_url(path: str, query: bytes) -> str | None:
    """Why a request's path or query is refused, or None."""
    if UNSTORABLE.search(path):
        return f"the path {unstorable(path)}"
    if not query:
        return None
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if UNSTORABLE.search(name):
            return f"the query parameter {name[:40]!r} {unstorable(name)}"
        if UNSTORABLE.search(value):
            return f"{name} {unstorable(value)}: {value[:40]!r}"
    return None


class RequestInputs:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        why = check_url(scope.get("path", ""), scope.get("query_string", b""))
        if why is None and _is_json(scope):
            from fastapi import HTTPException

            try:
                body, receive = await _buffered(receive)
            except HTTPException as err:  # the body bounds of opgov.api.limits (413, 408), before any route
                from opgov.api.errors import problem

                await problem(err.status_code, str(err.detail), headers=err.headers)(scope, receive, send)
                return
            try:
                why = check_json(body) if body else None
            except TooMany as err:
                from opgov.api.errors import problem

                await problem(err.status, str(err))(scope, receive, send)
                return
        if why is not None:
            from opgov.api.errors import problem

            await problem(422, why)(scope, receive, send)
            return
        await self.app(scope, receive, send)


def _is_json(scope) -> bool:
    for key, value in scope["headers"]:
        if key == b"content-type":
            media = value.split(b";", 1)[0].strip().lower()
            return media == b"application/json" or media.endswith(b"+json")
    return False


async def _buffered(receive):
    """The whole body (one bytes object), and a ``receive`` that gives it again, then what follows."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away: the route sees it as it would
            body = b"".join(chunks)
            given = [{"type": "http.request", "body": body, "more_body": False}] if chunks else []
            given.append(message)
            return body, _replay(given, receive)
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    chunks.clear()
    return body, _replay([{"type": "http.request", "body": body, "more_body": False}], receive)


def _replay(messages, receive):
    async def again():
        if messages:
            return messages.pop(0)
        return await receive()

    return again
