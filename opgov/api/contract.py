"""The OpenAPI document as the service's contract.

FastAPI derives the document from the routes; this module adds what the routes do not say by
themselves, so that a generated client, a gateway or a fuzzer (schemathesis runs in CI) can trust
it:

- every route's errors, as ``application/problem+json`` with the statuses it can really answer:
  which follow from how the route is built (does it authenticate, write, take input or a body);
- the bearer token as a security scheme (optional on public reads), not as a header parameter;
- multipart uploads as binary parts, optional parts omitted rather than ``null``.
"""

from __future__ import annotations

from typing import Any, Iterator

from fastapi import FastAPI
from fastapi.routing import APIRoute

WHY = {
    400: "bad input: the content of a value or an uploaded file is not what the field names; the CLI's one-line message",
    401: "no token where one is needed, or an unknown, revoked or expired one",
    403: "the token's member has a role that may not do this",
    404: "an unknown operator, proposal, snapshot, runtime or other named thing",
    409: "refused by policy (timers, quorum, the state of the thing), or by what the server lacks (torch, for "
         "decomps import-torch: install it there)",
    413: "the request body is larger than the server accepts",
    422: "the request does not match its schema",
    503: "busy: another writer holds the database, or too many uploads without a token run at once; retry "
         "after the `Retry-After` seconds",
}
BEARER = "bearer"
ONE_OF = "x-one-of"  # a route's openapi_extra: exactly one field of each group (see _one_of)


def _calls(route: APIRoute) -> set[Any]:
    """Every dependency callable of ``route``, however deep."""
    seen: set[Any] = set()
    todo = list(route.dependant.dependencies)
    while todo:
        dep = todo.pop()
        seen.add(dep.call)
        todo.extend(dep.dependencies)
    return seen


def routes_of(app: FastAPI) -> Iterator[tuple[str, Any]]:
    """(path, route) of every route of ``app`` that has methods, in the document or not; FastAPI
    0.150+ includes routers lazily, so their routes are reached through its route contexts."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # FastAPI before lazy inclusion: the routes are the app's
        for route in app.routes:
            if getattr(route, "methods", None):
                yield route.path_format, route
        return
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if getattr(route, "methods", None):
            yield context.path_format or route.path_format, route


def _writes(calls: set[Any]) -> bool:
    from opgov.api import deps

    return deps.writer in calls or deps.writes in calls


def bearer_of(calls: set[Any]) -> bool:
    from opgov.api import deps

    return deps.bearer in calls


def _api_routes(app: FastAPI) -> Iterator[tuple[str, APIRoute]]:
    for path, route in routes_of(app):
        if isinstance(route, APIRoute) and route.include_in_schema:
            yield path, route


def _uploads(op: dict[str, Any]) -> bool:
    return "multipart/form-data" in op.get("requestBody", {}).get("content", {})


def errors_of(route: APIRoute, op: dict[str, Any], *, public_reads: bool) -> list[int]:
    """The statuses ``route`` can answer with a problem, from how it is built."""
    calls = _calls(route)
    writes, authenticates = _writes(calls), bearer_of(calls)
    takes_input = bool(op.get("parameters")) or "requestBody" in op
    statuses: set[int] = set()
    if authenticates:
        statuses |= {400, 401}  # a token that is not `Bearer <token>` is refused like a bad one
    if writes:
        statuses |= {403, 404, 409, 503}  # 503: another writer held the database too long
    if takes_input:
        statuses |= {400, 404, 422}
    if "requestBody" in op:
        statuses.add(413)
        if _uploads(op) and not writes and public_reads:
            statuses.add(503)  # uploads without a token are bounded per worker (api/limits.py)
    return sorted(statuses)


def _optional_part(schema: dict[str, Any]) -> dict[str, Any]:
    """A multipart part is sent or omitted, never ``null``: ``anyOf [X, null]`` becomes X; a file
    part is binary."""
    options = schema.get("anyOf")
    if options and {"type": "null"} in options and len(options) == 2:
        (kept,) = [o for o in options if o != {"type": "null"}]
        schema = {**{k: v for k, v in schema.items() if k != "anyOf"}, **kept}
    if schema.get("contentMediaType") == "application/octet-stream":
        schema = {**{k: v for k, v in schema.items() if k != "contentMediaType"}, "format": "binary"}
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        schema = {**schema, "items": _optional_part(schema["items"])}
    return schema


def _body_schema(doc: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """The schema of one body's content, the component it names if it names one."""
    ref = content["schema"].get("$ref", "")
    return doc["components"]["schemas"][ref.rsplit("/", 1)[-1]] if ref else content["schema"]


def _one_of(doc: dict[str, Any], op: dict[str, Any]) -> None:
    """A route's ``x-one-of`` (groups of body fields of which exactly one is given: a file or the
    name of one the server holds) as the body schema's ``allOf`` of ``oneOf``s of ``required``."""
    groups = op.pop(ONE_OF, None)
    if not groups:
        return
    for content in op["requestBody"]["content"].values():
        schema = _body_schema(doc, content)
        schema["allOf"] = [{"oneOf": [{"required": [name]} for name in group]} for group in groups]
    op["requestBody"]["required"] = True


def _multipart(doc: dict[str, Any], op: dict[str, Any]) -> None:
    content = op.get("requestBody", {}).get("content", {}).get("multipart/form-data")
    if not content:
        return
    schema = _body_schema(doc, content)
    schema["properties"] = {name: _optional_part(part) for name, part in schema.get("properties", {}).items()}
    for name in schema.get("required", []):  # a list of parts is sent as that many parts: at least one
        if schema["properties"][name].get("type") == "array":
            schema["properties"][name]["minItems"] = 1
    files = [name for name, part in schema["properties"].items()
             if part.get("format") == "binary" or part.get("items", {}).get("format") == "binary"]
    if files:  # how a client sends each part
        content["encoding"] = {name: {"contentType": "application/octet-stream"} for name in files}


def document(app: FastAPI, *, public_reads: bool) -> dict[str, Any]:
    from fastapi.openapi.utils import get_openapi


    doc = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    from pydantic import TypeAdapter

    from opgov.results.problem import Problem

    schemas["Problem"] = TypeAdapter(Problem).json_schema()
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)  # a 422 is a problem like every other error
    doc["components"]["securitySchemes"] = {BEARER: {
        "type": "http", "scheme": "bearer",
        "description": "An API token (`opgov tokens create MEMBER`): `Authorization: Bearer <token>`."}}
    for path, route in _api_routes(app):
        for method in route.methods:
            op = doc["paths"].get(path, {}).get(method.lower())
            if op is None:
                continue
            calls = _calls(route)
            if _writes(calls):
                op["security"] = [{BEARER: []}]
            elif bearer_of(calls):
                op["security"] = [{}, {BEARER: []}] if public_reads else [{BEARER: []}]
            responses = op["responses"]
            for status in [s for s in responses if s.isdigit() and int(s) >= 400]:
                del responses[status]
            for status in errors_of(route, op, public_reads=public_reads):
                responses[str(status)] = {"description": WHY[status], "content": {
                    "application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}}
            _multipart(doc, op)
            _one_of(doc, op)
            for parameter in op.get("parameters", []):  # an optional parameter is omitted, never null
                parameter["schema"] = _optional_part(parameter["schema"])
                _storable(parameter["schema"])
            for content in op.get("requestBody", {}).get("content", {}).values():
                _storable(content.get("schema"))
    for schema in schemas.values():
        _storable(schema)
    return doc


# a NUL, which no database stores and every request refuses (opgov.api.inputs, 422): said of every
# string the document takes. (A lone surrogate is refused too, but no valid UTF-8 body carries one
# and no regex engine a client uses takes the range.)
STORABLE = "^[^\\u0000]*$"


def _storable(schema: Any) -> None:
    """Narrow every text string of ``schema`` (not a file's bytes, not a fixed value) to storable
    text, beside any pattern it has."""
    if isinstance(schema, list):
        for item in schema:
            _storable(item)
        return
    if not isinstance(schema, dict):
        return
    kind = schema.get("type")
    if (kind == "string" or (isinstance(kind, list) and "string" in kind)) and schema.get("format") != "binary" \
            and "enum" not in schema and "const" not in schema and STORABLE not in str(schema.get("allOf", "")):
        if "pattern" in schema:
            schema.setdefault("allOf", []).append({"pattern": STORABLE})
        else:
            schema["pattern"] = STORABLE
    for key, value in schema.items():
        if key in ("properties", "patternProperties", "$defs", "definitions"):
            for sub in value.values():
                _storable(sub)
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "not", "prefixItems"):
            _storable(value)


def install(app: FastAPI, *, public_reads: bool) -> None:
    """``app.openapi()`` answers the contract (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(app, public_reads=public_reads)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
