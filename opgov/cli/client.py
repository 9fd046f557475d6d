"""How a command calls a use case (opgov.usecases): ``call(use_case, request)`` answers its result,
from one of two clients that say the same, errors included (one line, the same exit code):

- :class:`InProcess` runs the service in one transaction on the database (``--db``), as the actor
  (``--actor``) on the clock (``--now`` on a simulation database): opgov.cli.runtime.command;
- :class:`OverHttp` asks an ``opgov serve`` server (``--server``) as the member whose token
  ``OPGOV_TOKEN`` is, on the server's clock: the declaration's method and path, the request's
  fields as path parameters, the query or a JSON body (a field naming something on this machine,
  a corpus, is refused: opgov.usecases.fields.OnThisMachine); an error answer's one-line ``detail`` is the
  message, 400/401/404/422 exit 2, 403/409 exit 1 (opgov.cli.remote).

A command builds its request with ``use_case.ask(**fields)``, which checks it against the
request's model as the server would, so a bad value is refused before anything runs or is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:  # importing opgov.usecases imports every declaration (and pydantic): not at start-up
    from opgov.usecases import UseCase

# what a command does with the result that must succeed for the use case to count (writing the files
# a sync answers): in-process inside its transaction, so an error there undoes it; over HTTP after
# the answer
Then = Callable[[Any], None]


class Client(Protocol):
    def call(self, use_case: UseCase, request: Any = None, *, then: Then | None = None) -> Any: ...


class InProcess:
    """The service in one transaction on the database of ``--db``."""

    def call(self, use_case: UseCase, request: Any = None, *, then: Then | None = None) -> Any:
        from opgov.cli.runtime import command

        use_case.function  # noqa: B018 - its module imported before the transaction: no lock held (nor waited) meanwhile
        if use_case.opens_transactions:  # the service opens its write transactions itself
            result = use_case.run(lambda: command(write=True, orm=use_case.orm), request)
            if then is not None:
                then(result)
            return result
        with command(write=use_case.writes_for(request), orm=use_case.orm) as ctx:
            result = use_case.run(ctx, request)
            if then is not None:
                then(result)
            return result


@dataclass(frozen=True)
class OverHttp:
    """The same use case asked of a server (opgov.cli.remote.Remote: the URL and the token)."""

    remote: Any

    def call(self, use_case: UseCase, request: Any = None, *, then: Then | None = None) -> Any:
        result = self._ask(use_case, request)
        if then is not None:
            then(result)
        return result

    def _ask(self, use_case: UseCase, request: Any) -> Any:
        from urllib.parse import quote

        fields = {}
        if request is not None:
            for name, refusal in use_case.local_fields.items():  # something on this machine
                if getattr(request, name) is not None:
                    from opgov.core.errors import BadInput

                    raise BadInput(refusal)
            uploads = use_case.upload_fields
            fields = request.model_dump(mode="json", by_alias=True, exclude={*uploads, *use_case.local_fields})
        path = use_case.path
        for name in use_case.path_fields:
            path = path.replace("{" + name + "}", quote(str(fields.pop(name)), safe=""))
        if use_case.media_type(request) is not None:  # a text rendering the server makes
            from opgov.results.rendered import Rendered

            return Rendered(self.remote.get_text(path, **fields))
        if use_case.method == "GET":
            return self.remote.get(path, use_case.result, **fields)
        if use_case.upload_fields:  # a multipart form: the files as parts, named as the user gave them
            files = []
            for name, many in use_case.upload_fields.items():
                given = getattr(request, name)
                files += [(name, content) for content in (given if many else [given] if given is not None else [])]
            return self.remote.send(use_case.method, path, use_case.result, files=files, fields=fields)
        return self.remote.send(use_case.method, path, use_case.result, json_body=fields)


def client() -> Client:
    """Over HTTP with ``--server`` (or ``OPGOV_SERVER``), else in-process."""
    from opgov.cli.remote import server

    remote = server()
    return InProcess() if remote is None else OverHttp(remote)


def call(use_case: UseCase | str, request: Any = None, *, then: Then | None = None) -> Any:
    """``use_case`` (or the one of that name) answered by :func:`client`; ``then(result)`` before it
    counts (:data:`Then`)."""
    if isinstance(use_case, str):
        from opgov.usecases import named

        use_case = named(use_case)
    return client().call(use_case, request, then=then)


def ask(name: str, /, **fields: Any) -> Any:
    """The answer to the use case called ``name`` asked these fields (``use_case.ask``: checked as
    the server checks them), from :func:`client`."""
    from opgov.usecases import named

    use_case = named(name)
    return client().call(use_case, use_case.ask(**fields))
