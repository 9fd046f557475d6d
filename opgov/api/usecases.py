"""The routes of the use cases, derived from their declarations (opgov.usecases.USE_CASES).

Each declaration becomes one route: its method and path, the ``Reader`` or ``Writer`` dependency
(opgov.api.deps: a transaction, the token's member), its result as the response model, and its
request as path parameters (the fields its path names), query parameters (GET) or a JSON body
(the other fields), or, for a request with files, a multipart form: its files the parts, read
into memory (opgov.api.uploads: bounded, named as the client named them), and its other fields
form fields. A declaration with ``formats`` answers a text rendering with its media type when the
request's ``format`` asks for one; one with ``transactions`` gives its service ``begin`` (write
transactions it opens itself, opgov.api.deps.writing) and marks the route as writing. The
contract hook (opgov.api.contract) adds the errors and the security from the dependencies, as for
a hand-written route. A declaration whose route is hand-written (``route=False``) gets none here.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Path, Query, Request, Response, UploadFile
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from opgov.api.deps import Authorization, Reader, Writer
from opgov.usecases import USE_CASES, UseCase

_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "pattern")


def _parameter(name: str, field: FieldInfo, where: Any) -> inspect.Parameter:
    """A request field as a path or query parameter, with its constraints and description."""
    options: dict[str, Any] = {"description": field.description}
    for meta in field.metadata:
        for constraint in _CONSTRAINTS:
            if getattr(meta, constraint, None) is not None:
                options[constraint] = getattr(meta, constraint)
    others = [m for m in field.metadata if not any(getattr(m, c, None) is not None for c in _CONSTRAINTS)]
    annotation = Annotated[(field.annotation, *others, where(**options))] if others else \
        Annotated[field.annotation, where(**options)]
    default = inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _body(use_case: UseCase, fields: dict[str, FieldInfo]) -> type[BaseModel]:
    """The JSON body: the request model itself, or a model of the fields the path does not name,
    with the bounds only the server applies (opgov.usecases.fields.HttpBound)."""
    from pydantic import Field

    from opgov.usecases.fields import HttpBound, marker

    model = use_case.request_model
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
    if use_case.transactions:  # the service opens its write transactions (deps.writing) itself
        parameters = [inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request),
                      inspect.Parameter("authorization", inspect.Parameter.KEYWORD_ONLY, annotation=Authorization)]
    else:
        parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY,
                                        annotation=Writer if use_case.writes else Reader)]
    model = use_case.request_model
    body_model = None
    uploads = use_case.upload_fields
    if model is not None:
        in_path = use_case.path_fields
        rest = {name: field for name, field in model.model_fields.items()
                if name not in in_path and name not in use_case.local_fields}
        parameters += [_parameter(name, model.model_fields[name], Path) for name in in_path]
        if uploads:
            if not use_case.transactions:
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
            parameters.append(inspect.Parameter("body", inspect.Parameter.KEYWORD_ONLY, annotation=body_model))
    # the parameters without a default first, as Python requires
    parameters.sort(key=lambda p: p.default is not inspect.Parameter.empty)

    def run(ctx: Any = None, **given: Any) -> Any:
        body = given.pop("body", None)
        request = given.pop("request", None)
        if use_case.transactions:
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
        if use_case.formats:
            from opgov.results.rendered import Rendered

            if isinstance(result, Rendered):  # a text rendering the request's format asked for
                media_type = dict(use_case.formats)[fields["format"]]
                return Response(result.text, media_type=f"{media_type}; charset=utf-8")
        return result

    run.__name__ = use_case.operation_id
    run.__doc__ = use_case.summary
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return run


def router(use_cases: tuple[UseCase, ...] = USE_CASES) -> APIRouter:
    """An APIRoute for each declaration."""
    from fastapi import Depends

    from opgov.api.contract import ONE_OF
    from opgov.api.deps import writes

    routes = APIRouter()
    # a literal segment before a parameter at the same place (/runtimes/coverage before /runtimes/{runtime})
    for use_case in sorted(use_cases, key=lambda u: u.path.replace("{", "\uffff")):
        if not use_case.route:  # a hand-written route serves it (opgov.api.routers.checks: check-model)
            continue
        extra = {ONE_OF: [list(group) for group in use_case.one_of]} if use_case.one_of else None
        # the text renderings a GET also answers, beside the result's JSON
        responses = {use_case.status: {"content": {media: {} for _, media in use_case.formats}}} \
            if use_case.formats else None
        routes.add_api_route(use_case.path, endpoint(use_case), methods=[use_case.method], openapi_extra=extra,
                             response_model=use_case.result_type, status_code=use_case.status, tags=[use_case.tag],
                             summary=use_case.summary, description=use_case.description or "",
                             operation_id=use_case.operation_id, name=use_case.operation_id, responses=responses,
                             dependencies=[Depends(writes)] if use_case.transactions else None)
    return routes
