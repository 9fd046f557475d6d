"""One use case's declaration (:class:`UseCase`); the declarations are the modules of this package
by area (opgov.usecases.USE_CASES gathers them)."""

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
    """One use case.

    ``name`` is its CLI command (``members add``) and, with ``_`` for spaces, its operationId.
    ``request`` is a pydantic model whose fields the service takes as keyword arguments after the
    context (None: the service takes the context only); the fields named in ``path``'s ``{…}``
    are path parameters, the others the query (GET) or the JSON body (POST, PUT, DELETE).
    ``writes``: one write transaction and a token over HTTP; the role is checked by the service.
    A POST may read (``writes`` False): a question too large for a URL (``export-check``), files to check
    (``sync-yaml --check``).
    A request field that is a file (opgov.usecases.fields ``Upload``, or a list of them) makes the
    request a multipart form: the files are its parts, the other fields its form fields; the CLI
    reads the files (opgov.formats.files.read_content) and the service takes them as ``Content``,
    in-process and on the server alike.
    ``render``: a function of the result to the command's text, for a command derived whole from
    this declaration (None: a hand-written command in cli/ calls it).
    ``commands``: the CLI commands that call it, when they are not just ``name`` (three
    ``propose-*`` commands ask one ``propose``).
    ``asked_by``: who asks it when no CLI command does (``export-check``: the Python entry point
    opgov.export_check); it then adds no command to those that work with ``--server``.
    ``result`` may be ``A | B``: a use case that answers one of two results (``check-model``).
    ``formats``: (format, media type) of the texts a GET also answers besides the result's JSON:
    the request's own ``format`` field names one, and the service answers that text
    (opgov.results.rendered.Rendered), served with its media type (``opset build``, whose
    selective-build yaml needs the database; the coverage matrix; the weekly report).
    ``light``: a command whose time is the point (``import``): in-process its request is not checked
    against its model — loading pydantic would cost a third of the command — since its service
    checks every field a user gives, in the words the model's check uses (``invalid.COLUMNS``);
    sent with ``--server`` it is checked first, as any other.
    ``operation``: the operationId, when it is not derived from ``name`` (``check-bc`` keeps the one its
    hand-written route had: clients generated from the document call it so).
    ``group``: the API's tag, when it is not the path's first segment (``checks``).
    ``route``: False when a hand-written route serves the path (it takes more than the request:
    ``check-model`` takes a JSON body of operators too); the CLI's client asks it all the same.
    ``transactions``: the service opens its write transactions itself, so that slow work between
    them holds no write lock (``decomps import-torch`` traces torch between two): it is called with
    ``begin`` (a function whose call is a context manager yielding the ctx of a new write
    transaction) in place of the ctx, in-process and on the server alike.
    A request field marked opgov.usecases.fields ``OnThisMachine`` (a corpus folder) is not a
    route's: the server cannot read it, so the client refuses it with ``--server``; one marked
    ``HttpBound`` has bounds only the route applies.
    ``one_of``: groups of request fields of which exactly one must be given (the OpenAPI document
    says so: opgov.api.contract's ``x-one-of``); the service refuses any other combination.
    ``cached``: a read the server answers with a strong ``ETag`` (304 for ``If-None-Match``) and
    keeps in its answer cache while the database's stamp and the date are those it was computed at
    (opgov.api.cache); ``headers``: a function of the result to the HTTP answer's extra headers
    (``Deprecation``, ``Sunset``), the CLI ignores them.
    ``reads_unless``: a flag of the request without which a use case that ``writes`` only reads
    (``tick`` without ``apply``): in-process it then runs in a read transaction, which waits for
    no writer and honours ``--now`` as a read does; over HTTP it is the same write route.
    A JSON body whose fields all have defaults may be left out (``delete`` with no reason).

    ``prepare``: a function of the request the in-process client calls before it opens the
    database, to begin work that overlaps loading it (``import`` parses its file meanwhile)."""

    name: str
    result: Any
    service: Callable[..., Any]
    method: str
    path: str
    summary: str
    request: Any = None
    writes: bool = False
    status: int = 200
    orm: bool = True
    description: str | None = None
    commands: tuple[str, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()
    cached: bool = False
    formats: tuple[tuple[str, str], ...] = ()
    group: str | None = None
    route: bool = True
    reads_unless: str | None = None
    transactions: bool = False
    asked_by: str | None = None
    light: bool = False
    prepare: Callable[[Any], None] | None = None
    operation: str | None = None

    def __post_init__(self) -> None:
        if self.method not in ("GET", "POST", "PUT", "DELETE"):
            raise ValueError(f"{self.name}: method {self.method!r}")
        if self.writes == (self.method == "GET") and not (self.method == "POST" and not self.writes):
            raise ValueError(f"{self.name}: a GET reads, a PUT or DELETE writes, a POST writes or reads")
        if not self.path.startswith(PREFIX + "/"):
            raise ValueError(f"{self.name}: the path must be under {PREFIX}")
        if self.reads_unless and not self.writes:
            raise ValueError(f"{self.name}: reads_unless is for a use case that writes")
        if self.cached and (self.method != "GET" or self.formats):
            raise ValueError(f"{self.name}: only a read (GET) of JSON is cached")
        if self.formats and self.method != "GET":
            raise ValueError(f"{self.name}: only a GET answers text formats")
        if self.transactions and not self.writes:
            raise ValueError(f"{self.name}: a service opens write transactions only")


    @property
    def tag(self) -> str:
        """The API's tag: ``group``, else the path's first segment after the prefix (``members``)."""
        return self.group or self.path[len(PREFIX) + 1:].split("/", 1)[0]

    @property
    def cli(self) -> tuple[str, ...]:
        """The CLI commands that call this use case (none when ``asked_by`` says who does)."""
        return () if self.asked_by else self.commands or (self.name,)

    @property
    def operation_id(self) -> str:
        if self.operation is not None:
            return self.operation
        return self.name.replace(" ", "_").replace("-", "_")

    @cached_property
    def upload_fields(self) -> dict[str, bool]:
        """The request's file fields, each with whether it takes several files."""
        from opgov.usecases.fields import upload_kind

        if self.request_model is None:
            return {}
        kinds = {name: upload_kind(field.annotation) for name, field in self.request_model.model_fields.items()}
        return {name: kind == "many" for name, kind in kinds.items() if kind is not None}

    @cached_property
    def local_fields(self) -> dict[str, str]:
        """The request's fields only the CLI in-process fills, each with the refusal ``--server`` gives."""
        from opgov.usecases.fields import OnThisMachine, marker

        if self.request_model is None:
            return {}
        marks = {name: marker(field, OnThisMachine) for name, field in self.request_model.model_fields.items()}
        return {name: mark.refusal for name, mark in marks.items() if mark is not None}

    def media_type(self, request: Any) -> str | None:
        """The media type of the text rendering ``request`` asks for, None for the result's JSON."""
        if not self.formats or request is None:
            return None
        return dict(self.formats).get(getattr(request, "format", None))

    @property
    def path_fields(self) -> list[str]:
        import re

        return re.findall(r"\{(\w+)\}", self.path)

    @property
    def request_model(self) -> Any:
        return self.request

    @property
    def result_type(self) -> Any:
        return self.result

    @cached_property
    def function(self) -> Callable[..., Any]:
        """The service, imported (a :func:`lazy` one is imported now)."""
        return self.service.load() if isinstance(self.service, Lazy) else self.service

    def ask(self, shown: dict[str, str] | None = None, /, **fields: Any) -> Any:
        """The request of these fields, checked against its model: one line naming the field
        (opgov.usecases.invalid, as the server says it) and exit 2 for a value it refuses.
        ``shown`` names fields as the caller's user knows them (``{"expires_days": "--expires"}``).
        A ``light`` use case's request is checked only when it is sent (:class:`Unchecked`)."""
        if self.request is None:
            if fields:
                raise TypeError(f"{self.name} takes no request")
            return None
        if self.light:
            return Unchecked(fields, shown)
        return self.check(fields, shown)

    def check(self, fields: dict[str, Any], shown: dict[str, str] | None = None) -> Any:
        """The request model of ``fields``, or one line of BadInput (see :meth:`ask`)."""
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
        if isinstance(request, Unchecked):
            return dict(request.fields)
        return {name: getattr(request, name) for name in type(request).model_fields}

    def writes_for(self, request: Any) -> bool:
        """Whether this request writes (see ``reads_unless``)."""
        return self.writes and (self.reads_unless is None or bool(getattr(request, self.reads_unless)))

    def run(self, ctx: Any, request: Any) -> Any:
        """The service, in the caller's transaction (``transactions``: ``ctx`` is ``begin``)."""
        return self.function(ctx, **self.fields_of(request))



class Unchecked:
    """A ``light`` use case's request as the command gave it (its fields as attributes), checked
    against its model only when it is sent (opgov.cli.client.OverHttp)."""

    def __init__(self, fields: dict[str, Any], shown: dict[str, str] | None = None) -> None:
        self.fields, self.shown = dict(fields), shown

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None
