"""The use cases, each declared once: what it is called, what it asks and answers, which service
does it, whether it writes, and where the HTTP API serves it.

The API derives its routes from :data:`USE_CASES` (opgov.api.usecases); the CLI calls a use case
through a client (opgov.cli.client) that runs its service in-process, in one transaction, or asks
an ``opgov serve`` server over HTTP (``--server``), so a command knows neither a URL nor a JSON key.
A declaration whose ``render`` is set is a whole CLI command by itself (opgov.cli.commands_usecases):
its ``--json`` prints the result, its text is the renderer's. The list of commands that work with
``--server`` is derived from the declarations too.

A declaration names its models, service and renderer as ``module:attribute`` references, imported
when first used, so reading the list costs nothing: ``opgov --help`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable

__all__ = ["UseCase", "USE_CASES", "named", "remote_commands"]

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
    ``render``: a function of the result to the command's text, for a command derived whole from
    this declaration (None: a hand-written command in cli/ calls it)."""

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

    def __post_init__(self) -> None:
        if self.method not in ("GET", "POST", "PUT", "DELETE"):
            raise ValueError(f"{self.name}: method {self.method!r}")
        if self.writes == (self.method == "GET"):
            raise ValueError(f"{self.name}: a GET reads, a POST, PUT or DELETE writes")
        if not self.path.startswith(PREFIX + "/"):
            raise ValueError(f"{self.name}: the path must be under {PREFIX}")

    @property
    def tag(self) -> str:
        """The API's tag: the path's first segment after the prefix (``members``)."""
        return self.path[len(PREFIX) + 1:].split("/", 1)[0]

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
    def renderer(self) -> Callable[[Any], str] | None:
        return _resolve(self.render) if self.render else None

    def ask(self, **fields: Any) -> Any:
        """The request of these fields, checked against its model: one line naming the field
        (opgov.usecases.invalid, as the server says it) and exit 2 for a value it refuses."""
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

            raise BadInput(describe(err.errors())) from None

    def fields_of(self, request: Any) -> dict[str, Any]:
        """A request's fields, as the service takes them."""
        if request is None:
            return {}
        return {name: getattr(request, name) for name in type(request).model_fields}

    def run(self, ctx: Any, request: Any) -> Any:
        """The service, in the caller's transaction."""
        return self.function(ctx, **self.fields_of(request))


_MODELS = "opgov.results.models"
_REQUESTS = "opgov.usecases.requests"

USE_CASES: tuple[UseCase, ...] = (
    UseCase("members list", result=f"list[{_MODELS}:MemberView]", service="opgov.services.governance:list_members",
            method="GET", path="/api/v1/members", summary="Members and their roles, by name."),
    UseCase("members add", request=f"{_REQUESTS}:MemberRequest", result=f"{_MODELS}:MemberView",
            service="opgov.services.governance:add_member", writes=True, method="POST", path="/api/v1/members",
            status=201, summary="Add a member (maintainers). Give them a token with `opgov tokens create`."),
    UseCase("members remove", request=f"{_REQUESTS}:MemberRef", result=f"{_MODELS}:MemberView",
            service="opgov.services.governance:remove_member", writes=True, method="DELETE",
            path="/api/v1/members/{name}",
            summary="Remove a member (maintainers; never the last maintainer while others remain)."),
    UseCase("config list", result=f"{_MODELS}:Settings", service="opgov.services.governance:list_settings",
            method="GET", path="/api/v1/config", summary="The governance settings."),
    UseCase("config set", request=f"{_REQUESTS}:SettingRequest", result=f"{_MODELS}:SettingChange",
            service="opgov.services.governance:set_setting", writes=True, method="PUT", path="/api/v1/config/{key}",
            summary="Set quorum, deprecating_days or deprecated_days (maintainers; logged)."),
    UseCase("tokens create", request=f"{_REQUESTS}:TokenRequest", result=f"{_MODELS}:TokenCreated",
            service="opgov.services.tokens:create_token", writes=True, method="POST", path="/api/v1/tokens",
            status=201, summary="A new token for a member (maintainers).",
            description="`token` is in this answer only: the server keeps its sha256."),
    UseCase("tokens list", request=f"{_REQUESTS}:TokenQuery", result=f"list[{_MODELS}:TokenView]",
            service="opgov.services.tokens:list_tokens", method="GET", path="/api/v1/tokens",
            summary="Tokens, oldest first, never their secrets.",
            description="Maintainers see all, a member (`member` = their name) their own."),
    UseCase("tokens revoke", request=f"{_REQUESTS}:TokenId", result=f"{_MODELS}:TokenView",
            service="opgov.services.tokens:revoke_token", writes=True, method="DELETE",
            path="/api/v1/tokens/{token_id}",
            summary="Revoke a token now (maintainers any, a member their own); 404 for an unknown id."),
    UseCase("status", result=f"{_MODELS}:StatusReport", service="opgov.services.status:status", method="GET",
            path="/api/v1/status", render="opgov.render.status:status_text",
            summary="The database at a glance: its revision, snapshots, operators by category, open proposals and "
                    "members."),
)


def named(name: str) -> UseCase:
    """The use case of that name (a programming error if there is none)."""
    for use_case in USE_CASES:
        if use_case.name == name:
            return use_case
    raise KeyError(name)


def remote_commands() -> list[str]:
    """The CLI commands the declarations make work with ``--server``."""
    return [use_case.name for use_case in USE_CASES]
