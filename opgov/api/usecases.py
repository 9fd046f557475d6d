"""The routes of the use cases, derived from their declarations (opgov.usecases.USE_CASES).

Each declaration becomes one route: its method and path, the ``Reader`` or ``Writer`` dependency
(opgov.api.deps: a transaction, the token's member), its result as the response model, and its
request as path parameters (the fields its path names), query parameters (GET) or a JSON body
(the other fields), or, for a request with files, a multipart form: its files the parts, read
into memory (opgov.api.uploads: bounded, named as the client named them), and its other fields
form fields. The contract hook (opgov.api.contract) adds the errors and the security from
the dependencies, as for a hand-written route.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Path, Query, Request, UploadFile
from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from opgov.api.deps import Reader, Writer
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
    default = inspect.Parameter.empty if field.is_required() else field.default
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def _body(use_case: UseCase, fields: dict[str, FieldInfo]) -> type[BaseModel]:
    """The JSON body: the request model itself, or a model of the fields the path does not name."""
    model = use_case.request_model
    if len(fields) == len(model.model_fields):
        return model
    return create_model(f"{model.__name__}Body", __config__=model.model_config,
                        **{name: (field.annotation, field) for name, field in fields.items()})


def endpoint(use_case: UseCase):
    """The route's function: its signature says FastAPI what to read from the request."""
    parameters = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY,
                                    annotation=Writer if use_case.writes else Reader)]
    model = use_case.request_model
    body_model = None
    uploads = use_case.upload_fields
    if model is not None:
        in_path = use_case.path_fields
        rest = {name: field for name, field in model.model_fields.items() if name not in in_path}
        parameters += [_parameter(name, model.model_fields[name], Path) for name in in_path]
        if uploads:
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

    def run(ctx: Any, **given: Any) -> Any:
        body = given.pop("body", None)
        request = given.pop("request", None)
        fields = {**(dict(body) if body is not None else {}), **given}
        if uploads:
            from opgov.api.uploads import read_upload

            limit = request.app.state.config.max_upload_bytes
            for name, many in uploads.items():
                if fields.get(name) is not None:
                    fields[name] = [read_upload(u, limit) for u in fields[name]] if many else \
                        read_upload(fields[name], limit)
        return use_case.function(ctx, **fields)

    run.__name__ = use_case.operation_id
    run.__doc__ = use_case.summary
    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    return run


def router(use_cases: tuple[UseCase, ...] = USE_CASES) -> APIRouter:
    """An APIRoute for each declaration."""
    from opgov.api.contract import ONE_OF

    routes = APIRouter()
    # a literal segment before a parameter at the same place (/runtimes/coverage before /runtimes/{runtime})
    for use_case in sorted(use_cases, key=lambda u: u.path.replace("{", "\uffff")):
        extra = {ONE_OF: [list(group) for group in use_case.one_of]} if use_case.one_of else None
        routes.add_api_route(use_case.path, endpoint(use_case), methods=[use_case.method], openapi_extra=extra,
                             response_model=use_case.result_type, status_code=use_case.status, tags=[use_case.tag],
                             summary=use_case.summary, description=use_case.description or "",
                             operation_id=use_case.operation_id, name=use_case.operation_id)
    return routes
