"""One use case's declaration (:class:`UseCase`); the declarations are the modules of this package
by area (opgov.usecases.USE_CASES gathers them)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

__all__ = ["MODELS", "PREFIX", "UseCase"]

PREFIX = "/api/v1"


def _resolve(ref: str) -> Any:
    """``module:attribute`` imported; ``list[module:attribute]`` as ``list`` of it."""
    import importlib

    if ref.startswith("list[") and ref.endswith("]"):
        return list[_resolve(ref[5:-1])]  # type: ignore[misc]
    module, _, attribute = ref.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class UseCase:
    """One use case.

    ``name`` is its CLI command (``members add``) and, with ``_`` for spaces, its operationId.
    ``request`` is a pydantic model whose fields the service takes as keyword arguments after the
    context (None: the service takes the context only); the fields named in ``path``'s ``{…}``
    are path parameters, the others the query (GET) or the JSON body (POST, PUT, DELETE).
    ``writes``: one write transaction and a token over HTTP; the role is checked by the service.
    A request field that is a file (opgov.usecases.fields ``Upload``, or a list of them) makes the
    request a multipart form: the files are its parts, the other fields its form fields; the CLI
    reads the files (opgov.formats.files.read_content) and the service takes them as ``Content``,
    in-process and on the server alike.
    ``render``: a function of the result to the command's text, for a command derived whole from
    this declaration (None: a hand-written command in cli/ calls it).
    ``commands``: the CLI commands that call it, when they are not just ``name`` (three
    ``propose-*`` commands ask one ``propose``).
    ``one_of``: groups of request fields of which exactly one must be given (the OpenAPI document
    says so: opgov.api.contract's ``x-one-of``); the service refuses any other combination.
    ``cached``: a read the server answers with a strong ``ETag`` (304 for ``If-None-Match``) and
    keeps in its answer cache while the database's stamp and the date are those it was computed at
    (opgov.api.cache); ``headers``: a function of the result to the HTTP answer's extra headers
    (``Deprecation``, ``Sunset``), the CLI ignores them.
    ``prepare``: a function of the request the in-process client calls before it opens the
    database, to begin work that overlaps loading it (``import`` parses its file meanwhile)."""

    name: str
    result: str
    service: str
    method: str
    path: str
    summary: str
    request: str | None = None
    writes: bool = False
    status: int = 200
    orm: bool = True
    render: str | None = None
    description: str | None = None
    commands: tuple[str, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()
    cached: bool = False
    headers: str | None = None
    prepare: str | None = None

    def __post_init__(self) -> None:
        if self.method not in ("GET", "POST", "PUT", "DELETE"):
            raise ValueError(f"{self.name}: method {self.method!r}")
        if self.writes == (self.method == "GET"):
            raise ValueError(f"{self.name}: a GET reads, a POST, PUT or DELETE writes")
        if not self.path.startswith(PREFIX + "/"):
            raise ValueError(f"{self.name}: the path must be under {PREFIX}")
        if self.cached and self.method != "GET":
            raise ValueError(f"{self.name}: only a read (GET) is cached")

    @property
    def tag(self) -> str:
        """The API's tag: the path's first segment after the prefix (``members``)."""
        return self.path[len(PREFIX) + 1:].split("/", 1)[0]

    @property
    def cli(self) -> tuple[str, ...]:
        """The CLI commands that call this use case."""
        return self.commands or (self.name,)

    @property
    def operation_id(self) -> str:
        return self.name.replace(" ", "_").replace("-", "_")

    @cached_property
    def upload_fields(self) -> dict[str, bool]:
        """The request's file fields, each with whether it takes several files."""
        from opgov.usecases.fields import upload_kind

        if self.request_model is None:
            return {}
        kinds = {name: upload_kind(field.annotation) for name, field in self.request_model.model_fields.items()}
        return {name: kind == "many" for name, kind in kinds.items() if kind is not None}

    @property
    def path_fields(self) -> list[str]:
        import re

        return re.findall(r"\{(\w+)\}", self.path)

    @cached_property
    def request_model(self) -> Any:
        return _resolve(self.request) if self.request else None

    @cached_property
    def result_type(self) -> Any:
        return _resolve(self.result)

    @cached_property
    def function(self) -> Callable[..., Any]:
        return _resolve(self.service)

    @cached_property
    def header_function(self) -> Callable[[Any], dict[str, str]] | None:
        return _resolve(self.headers) if self.headers else None

    @cached_property
    def preparation(self) -> Callable[[Any], None] | None:
        return _resolve(self.prepare) if self.prepare else None

    @cached_property
    def renderer(self) -> Callable[[Any], str] | None:
        return _resolve(self.render) if self.render else None

    def ask(self, shown: dict[str, str] | None = None, /, **fields: Any) -> Any:
        """The request of these fields, checked against its model: one line naming the field
        (opgov.usecases.invalid, as the server says it) and exit 2 for a value it refuses.
        ``shown`` names fields as the caller's user knows them (``{"expires_days": "--expires"}``)."""
        if self.request_model is None:
            if fields:
                raise TypeError(f"{self.name} takes no request")
            return None
        from pydantic import ValidationError

        try:
            return self.request_model.model_validate(fields)
        except ValidationError as err:
            from opgov.core.errors import BadInput
            from opgov.usecases.invalid import describe

            raise BadInput(describe(err.errors(), shown)) from None

    def fields_of(self, request: Any) -> dict[str, Any]:
        """A request's fields, as the service takes them."""
        if request is None:
            return {}
        return {name: getattr(request, name) for name in type(request).model_fields}

    def run(self, ctx: Any, request: Any) -> Any:
        """The service, in the caller's transaction."""
        return self.function(ctx, **self.fields_of(request))



# where the result models are (one package: opgov.results)
MODELS = "opgov.results.models"
