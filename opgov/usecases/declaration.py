"""One use case's declaration (:class:`UseCase`); the declarations are module-level names of the
modules of this package by area (opgov.usecases.USE_CASES gathers them)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

__all__ = ["PREFIX", "UseCase", "lazy"]

PREFIX = "/api/v1"


class Lazy:
    """A service imported when first called (:func:`lazy`): a service module loads the database layer,
    which a command that never calls it must not pay for (``opgov --help``, ``check-bc``)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def load(self) -> Callable[..., Any]:
        import importlib

        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.module!r}, {self.name!r})"


def lazy(module: str, name: str) -> Lazy:
    """The function ``name`` of ``module``, imported when first called: how a declaration names its
    service (tests/test_architecture.py imports each and checks its layer)."""
    return Lazy(module, name)


@dataclass(frozen=True)
class UseCase:
    """One use case: what every one of them says, nothing one of them alone needs.

    ``name`` is its CLI command (``members add``) and, with ``_`` for spaces, its operationId.
    ``request`` is a request class (opgov.usecases.requests) whose fields the service takes as
    keyword arguments after the context (None: the service takes the context only); the fields
    named in ``path``'s ``{…}`` are path parameters, the others the query (GET), the JSON body
    (POST, PUT, DELETE) or, when a field is a file (opgov.usecases.fields ``Upload``), a multipart
    form. ``result`` is its result class (opgov.results), ``list[A]`` or ``A | B``. ``service`` is
    the function that does it: ``lazy(module, name)``, called with a ``Ctx`` and the request's fields.
    ``writes``: one write transaction and a token over HTTP (a POST may read: a question too large
    for a URL). ``status``, ``description``, ``group`` (the API's tag, else the path's first
    segment): the route's. ``orm``: the service takes an ORM session (False: Core only).

    A declaration is a module-level name of its area's module (``REVIEW_MANY`` of
    opgov.usecases.governance), which whatever calls it imports: a CLI command, the API's routes,
    the Python entry point. Which commands call it is read from them (opgov.cli.client.callers),
    not written here.

    What one use case alone needs lives in its own code: in its request class (``ONE_OF``, groups of
    fields of which exactly one is given; ``FORMATS``, the texts a GET also answers; a ``reads_only``
    property, a request of a writing use case that only reads), in its service (a first parameter
    ``begin`` in place of ``ctx``: it opens its write transactions itself), or in the entrypoint
    that serves it (opgov.api.usecases: the cached read, the extra headers, a hand-written route)."""

    name: str
    result: Any
    service: Callable[..., Any]
    method: str
    path: str
    summary: str
    request: Any = None
    writes: bool = False
    status: int = 200
    description: str | None = None
    group: str | None = None
    orm: bool = True

    def __post_init__(self) -> None:
        if self.method not in ("GET", "POST", "PUT", "DELETE"):
            raise ValueError(f"{self.name}: method {self.method!r}")
        if self.writes == (self.method == "GET") and not (self.method == "POST" and not self.writes):
            raise ValueError(f"{self.name}: a GET reads, a PUT or DELETE writes, a POST writes or reads")
        if not self.path.startswith(PREFIX + "/"):
            raise ValueError(f"{self.name}: the path must be under {PREFIX}")
        if self.formats and self.method != "GET":
            raise ValueError(f"{self.name}: only a GET answers text formats")

    @property
    def tag(self) -> str:
        """The API's tag: ``group``, else the path's first segment after the prefix (``members``)."""
        return self.group or self.path[len(PREFIX) + 1:].split("/", 1)[0]

    @property
    def operation_id(self) -> str:
        return self.name.replace(" ", "_").replace("-", "_")

    @property
    def one_of(self) -> tuple[tuple[str, ...], ...]:
        """Groups of request fields of which exactly one is given (the request's ``ONE_OF``)."""
        return getattr(self.request, "ONE_OF", ())

    @property
    def formats(self) -> dict[str, str]:
        """format → media type of the texts a GET answers besides its JSON (the request's ``FORMATS``):
        the request's ``format`` field names one, and the service answers that text
        (opgov.results.rendered.Rendered)."""
        return getattr(self.request, "FORMATS", {})

    @cached_property
    def function(self) -> Callable[..., Any]:
        """The service, imported (a :func:`lazy` one is imported now)."""
        return self.service.load() if isinstance(self.service, Lazy) else self.service

    @cached_property
    def opens_transactions(self) -> bool:
        """The service opens its write transactions itself (its first parameter is ``begin``, a
        function whose call is a context manager yielding the ctx of a new write transaction), so
        that slow work between them holds no write lock (``decomps import-torch``)."""
        import inspect

        return next(iter(inspect.signature(self.function).parameters), None) == "begin"

    @cached_property
    def upload_fields(self) -> dict[str, bool]:
        """The request's file fields, each with whether it takes several files."""
        from opgov.usecases.fields import upload_kind

        if self.request is None:
            return {}
        kinds = {name: upload_kind(field.annotation) for name, field in self.request.model_fields.items()}
        return {name: kind == "many" for name, kind in kinds.items() if kind is not None}

    @cached_property
    def local_fields(self) -> dict[str, str]:
        """The request's fields only the CLI in-process fills (opgov.usecases.fields ``OnThisMachine``:
        a corpus folder), each with the refusal ``--server`` gives."""
        from opgov.usecases.fields import OnThisMachine, marker

        if self.request is None:
            return {}
        marks = {name: marker(field, OnThisMachine) for name, field in self.request.model_fields.items()}
        return {name: mark.refusal for name, mark in marks.items() if mark is not None}

    def media_type(self, request: Any) -> str | None:
        """The media type of the text rendering ``request`` asks for, None for the result's JSON."""
        if not self.formats or request is None:
            return None
        return self.formats.get(getattr(request, "format", None))

    @property
    def path_fields(self) -> list[str]:
        import re

        return re.findall(r"\{(\w+)\}", self.path)

    def ask(self, shown: dict[str, str] | None = None, /, **fields: Any) -> Any:
        """The request of these fields, checked against its class: one line naming the field
        (opgov.usecases.invalid, as the server says it) and exit 2 for a value it refuses.
        ``shown`` names fields as the caller's user knows them (``{"expires_days": "--expires"}``)."""
        if self.request is None:
            if fields:
                raise TypeError(f"{self.name} takes no request")
            return None
        from pydantic import ValidationError

        try:
            return self.request.model_validate(fields)
        except ValidationError as err:
            from opgov.core.errors import BadInput
            from opgov.usecases.invalid import describe

            raise BadInput(describe(err.errors(), shown)) from None

    def fields_of(self, request: Any) -> dict[str, Any]:
        """A request's fields, as the service takes them."""
        if request is None:
            return {}
        return {name: getattr(request, name) for name in type(request).model_fields}

    def writes_for(self, request: Any) -> bool:
        """Whether this request writes: the use case writes, unless the request says it only reads
        (``tick`` without ``apply``: in-process a read transaction, which honours ``--now``)."""
        return self.writes and not getattr(request, "reads_only", False)

    def run(self, ctx: Any, request: Any) -> Any:
        """The service, in the caller's transaction (or, for one that :attr:`opens_transactions`,
        with ``begin`` as ``ctx``)."""
        return self.function(ctx, **self.fields_of(request))
