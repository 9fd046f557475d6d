"""The routes of the use cases, derived from their declarations (opgov.usecases.USE_CASES).

Each declaration becomes one route: its method and path, the ``Reader`` or ``Writer`` dependency
(opgov.api.deps: a transaction, the token's member), its result as the response model, and its
request as path parameters (the fields its path names), query parameters (GET) or a JSON body
(the other fields; one whose fields all have defaults may be left out), or, for a request with
files, a multipart form: its files the parts, read into memory (opgov.api.uploads: bounded, named
as the client named them), and its other fields form fields. The contract hook
(opgov.api.contract) adds the errors and the security from the dependencies, as for a
hand-written route. A request with ``FORMATS`` is answered the text its service wrote
(``Rendered``) in its media type when its ``format`` asks for it; a service that opens its own
transactions (its first parameter ``begin``) gets them from opgov.api.deps.writing, and the route
is marked as writing.

What one route alone needs is here, not in its declaration, keyed by the declaration itself:
:data:`CACHED` reads are answered with a strong ETag from the answer cache (opgov.api.cache), their
token, stamp and answer read in one trip to the thread pool; :data:`HEADERS` adds headers to an
answer; :data:`HAND_WRITTEN` routes are not derived; :data:`OPERATION_IDS` keeps an older
operationId.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Path, Query, Request, Response, UploadFile
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from opgov.api.deps import Authorization, Reader, Writer
from opgov.api.headers import deprecation
from opgov.usecases import USE_CASES, UseCase
from opgov.usecases.compat import CHECK_BC
from opgov.usecases.ops import OPS_SHOW
from opgov.usecases.runtimes import CHECK_MODEL

# What a route alone needs, beside its declaration:
# the reads answered with a strong ETag from the answer cache (opgov.api.cache)
CACHED: frozenset[UseCase] = frozenset({OPS_SHOW})
# the headers an answer carries besides its JSON, a function of the result (opgov.api.headers)
HEADERS: dict[UseCase, Any] = {OPS_SHOW: deprecation}
# the use cases whose route is hand-written (opgov.api.routers.checks: check-model's one path takes a
# multipart form of model files or a JSON body of operators); the CLI's client asks them all the same
HAND_WRITTEN: frozenset[UseCase] = frozenset({CHECK_MODEL})
# operationIds kept from before the route was derived: clients generated from the document call them so
OPERATION_IDS: dict[UseCase, str] = {CHECK_BC: "check_bc_api_v1_check_bc_post"}


def operation_id(use_case: UseCase) -> str:
    """The route's operationId: the declaration's, unless an older one is kept (:data:`OPERATION_IDS`)."""
    return OPERATION_IDS.get(use_case, use_case.operation_id)


_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "pattern")


def _parameter(name: str, field: FieldInfo, where: Any) -> inspect.Parameter:
    """A request field as a path, query or form parameter, with its constraints and description;
    its value is text, so the checks of a JSON value's kind are not its (fields.textual)."""
    from opgov.usecases.fields import textual

    options: dict[str, Any] = {"description": field.description}
    for meta in field.metadata:
        for constraint in _CONSTRAINTS:
            if getattr(meta, constraint, None) is not None:
                options[constraint] = getattr(meta, constraint)
    others = [m for m in textual(field.metadata)
              if not any(getattr(m, c, None) is not None for c in _CONSTRAINTS)]
    # the parameter's own FieldInfo first: pydantic reads one after a BeforeValidator as no constraint
    annotation = Annotated[(field.annotation, where(**options), *others)] if others else \
        Annotated[field.annotation, where(**options)]
    default = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _body(use_case: UseCase, fields: dict[str, FieldInfo]) -> type[BaseModel]:
    """The JSON body: the request model itself, or a model of the fields the path does not name,
    with the bounds only the server applies (opgov.usecases.fields.HttpBound)."""
    from pydantic import Field

    from opgov.usecases.fields import HttpBound, marker

    model = use_case.request
    bounds = {name: marker(field, HttpBound) for name, field in fields.items()}
    if len(fields) == len(model.model_fields) and not any(bounds.values()):
        return model
    name = model.__name__ if len(fields) == len(model.model_fields) else f"{model.__name__}Body"

    def annotation(field_name: str, field: FieldInfo) -> Any:
        bound = bounds[field_name]
        return Annotated[field.annotation, Field(**bound.bounds)] if bound else field.annotation

    return create_model(name, __config__=model.model_config, __doc__=model.__doc__,
                        **{name: (annotation(name, field), field) for name, field in fields.items()})


def endpoint(use_case: UseCase):
    """The route's function: its signature says FastAPI what to read from the request."""
    if use_case.opens_transactions:  # the service opens its write transactions (deps.writing) itself
        parameters = [inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request),
                      inspect.Parameter("authorization", inspect.Parameter.KEYWORD_ONLY, annotation=Authorization)]
    else:
        parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY,
                                        annotation=Writer if use_case.writes else Reader)]
    model = use_case.request
    body_model = None
    uploads = use_case.upload_fields
    if model is not None:
        in_path = use_case.path_fields
        rest = {name: field for name, field in model.model_fields.items()
                if name not in in_path and name not in use_case.local_fields}
        parameters += [_parameter(name, model.model_fields[name], Path) for name in in_path]
        if uploads:
            if not use_case.opens_transactions:
                parameters.append(inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request))
            for name, field in rest.items():
                if name in uploads:
                    kind = list[UploadFile] if uploads[name] else UploadFile
                    annotation = kind if field.is_required() else kind | None
                    default = inspect.Parameter.empty if field.is_required() else None
                    parameters.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                        annotation=Annotated[annotation, File(description=field.description)]))
                else:
                    parameters.append(_parameter(name, field, Form))
        elif use_case.method == "GET":
            parameters += [_parameter(name, field, Query) for name, field in rest.items()]
        elif rest:
            body_model = _body(use_case, rest)
            # a body whose fields all have defaults may be left out (a lifecycle step without a reason)
            optional = not any(field.is_required() for field in rest.values())
            parameters.append(inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY,
                                                annotation=body_model | None if optional else body_model,
                                                default=None if optional else inspect.Parameter.empty))
    if use_case in CACHED:
        return _cached(use_case, parameters[1:])
    headers = HEADERS.get(use_case)
    if headers is not None:
        parameters.append(inspect.Parameter("response", inspect.Parameter.KEYWORD_ONLY, annotation=Response))
    # the parameters without a default first, as Python requires
    parameters.sort(key=lambda p: p.default is not inspect.Parameter.empty)

    def run(ctx: Any = None, **given: Any) -> Any:
        body = given.pop("body", None)
        if body is None and body_model is not None:  # a body left out: its fields' defaults
            body = body_model()
        request = given.pop("request", None)
        response = given.pop("response", None)
        if use_case.opens_transactions:
            from opgov.api.deps import clock, writing

            authorization = given.pop("authorization")
            ctx = lambda: writing(request, authorization, clock())  # noqa: E731 - a new transaction each call
        fields = {**(dict(body) if body is not None else {}), **given}
        if uploads:
            from opgov.api.uploads import read_upload

            limit = request.app.state.config.max_upload_bytes
            for name, many in uploads.items():
                if fields.get(name) is not None:
                    fields[name] = [read_upload(u, limit) for u in fields[name]] if many else \
                        read_upload(fields[name], limit)
        result = use_case.function(ctx, **fields)
        if response is not None:
            response.headers.update(headers(result))
        if use_case.formats:
            from opgov.results.rendered import Rendered

            if isinstance(result, Rendered):  # a text the request's own format asked the service for
                media_type = use_case.formats[fields["format"]]
                return Response(result.text, media_type=f"{media_type}; charset=utf-8")
        return result

    run.__name__ = operation_id(use_case)
    run.__doc__ = use_case.summary
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return run


def _cached(use_case: UseCase, parameters: list[inspect.Parameter]):
    """The route's function of a ``cached`` read: an anonymous public read is answered from the
    answer cache when its answer is of the generation read after the request arrived (one read of
    the stamp serves the requests that arrived meanwhile); else the whole read (token, stamp,
    answer) is done in one trip to the thread pool, by :func:`_answer`."""
    parameters = [*parameters, inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request),
                  inspect.Parameter("authorization", inspect.Parameter.KEYWORD_ONLY, annotation=Authorization)]
    parameters.sort(key=lambda p: p.default is not inspect.Parameter.empty)

    async def run(request: Request, authorization: str | None, **given: Any) -> Response:
        from starlette.concurrency import run_in_threadpool

        key = (use_case.name, *((name, tuple(value) if isinstance(value, list) else value)
                                for name, value in sorted(given.items())))
        state = request.app.state
        if state.answers.enabled and authorization is None and state.config.public_reads:
            answer = state.answers.get(key, await state.stamps.current())
            if answer is not None:
                return answer.response(request.headers.get("if-none-match"))
        return await run_in_threadpool(_answer, use_case, request, authorization, key, given)

    run.__name__ = operation_id(use_case)
    run.__doc__ = use_case.summary
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return run


def _answer(use_case: UseCase, request: Request, authorization: str | None, key: tuple,
            fields: dict[str, Any]) -> Response:
    """A cached read's answer, from the cache while the database's stamp and the date are those it
    was computed at (opgov.api.cache), in one read transaction."""
    from opgov.api.cache import Answer
    from opgov.api.deps import clock, orm_session, reading
    from opgov.reads.common import log_version

    answers = request.app.state.answers
    with reading(request, authorization, clock()) as ctx:
        # the stamp first: the answer computed next is at least as new as it
        generation = (log_version(ctx.session), ctx.now().date()) if answers.enabled else None
        answer = answers.get(key, generation) if answers.enabled else None
        if answer is None:
            if use_case.orm:
                with orm_session(ctx) as orm:
                    result = use_case.function(orm, **fields)
            else:
                result = use_case.function(ctx, **fields)
            headers = HEADERS[use_case](result) if use_case in HEADERS else {}
            answer = Answer.of(_adapter(use_case).dump_json(result), headers)
            if answers.enabled:
                answers.put(key, generation, answer)
    return answer.response(request.headers.get("if-none-match"), private=not request.app.state.config.public_reads)


_ADAPTERS: dict[UseCase, Any] = {}


def _adapter(use_case: UseCase) -> Any:
    """The result's serializer (built once per use case)."""
    if use_case not in _ADAPTERS:
        from pydantic import TypeAdapter

        _ADAPTERS[use_case] = TypeAdapter(use_case.result)
    return _ADAPTERS[use_case]


# a cached read's answers, as the OpenAPI document shows them
CACHED_ANSWERS = {200: {"headers": {"ETag": {"description": "strong validator of this answer", "schema": {"type": "string"}}}},
          304: {"description": "the answer is unchanged since the ETag given in If-None-Match"}}


def _route_path(use_case: UseCase) -> str:
    """The path a route matches: a path parameter that is a whole number matches digits only (an
    ``int`` convertor; the document's path stays the declared one), so ``/proposals/triage`` is
    not proposal "triage" but another route, whose other methods are 405."""
    path = use_case.path
    for name in use_case.path_fields:
        if use_case.request.model_fields[name].annotation is int:
            path = path.replace("{" + name + "}", "{" + name + ":int}")
    return path


def router(use_cases: tuple[UseCase, ...] = USE_CASES) -> APIRouter:
    """An APIRoute for each declaration."""
    from fastapi import Depends

    from opgov.api.contract import ONE_OF
    from opgov.api.deps import writes

    routes = APIRouter()
    # a literal segment before a parameter at the same place (/runtimes/coverage before /runtimes/{runtime})
    for use_case in sorted(use_cases, key=lambda u: u.path.replace("{", "\uffff")):
        if use_case in HAND_WRITTEN:
            continue
        extra = {ONE_OF: [list(group) for group in use_case.one_of]} if use_case.one_of else None
        responses = dict(CACHED_ANSWERS) if use_case in CACHED else {}
        if use_case.formats:  # the texts a GET also answers, beside the result's JSON
            responses[use_case.status] = {"content": {media: {} for media in use_case.formats.values()}}
        routes.add_api_route(_route_path(use_case), endpoint(use_case), methods=[use_case.method], openapi_extra=extra,
                             response_model=use_case.result, status_code=use_case.status, tags=[use_case.tag],
                             summary=use_case.summary, description=use_case.description or "",
                             operation_id=operation_id(use_case), name=operation_id(use_case),
                             responses=responses or None,
                             dependencies=[Depends(writes)] if use_case.opens_transactions else None)
    return routes
