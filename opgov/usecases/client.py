"""How a program calls a use case (opgov.usecases): ``connect(server, token, begin=...)`` decides,
once, whether it is asked of a server or run here, and the client's ``call(use_case, request)``
answers its result the same either way, errors included (``BadInput``, ``PolicyRefusal``):

- :class:`InProcess` runs the service in one transaction that ``begin(write=..., orm=...)`` opens
  (a context manager yielding a ``Ctx``): the CLI's (opgov.cli.runtime.command: ``--db``,
  ``--actor``, ``--now``), or :func:`on_database`'s for a script (opgov.export_check);
- :class:`OverHttp` asks an ``opgov serve`` server as the member whose token it holds, on the
  server's clock: the declaration's method and path, the request's fields as path parameters, the
  query, a JSON body or a multipart form (a field naming something on this machine, a corpus, is
  refused: opgov.usecases.fields.OnThisMachine); an error answer's one-line ``detail`` is the
  message, 400/401/404/422 ``BadInput``, 403/409 ``PolicyRefusal`` (a 409 of type
  ``urn:opgov:problem:unavailable``: ``Unavailable``). Only the standard library's
  HTTP client is used.

A caller builds its request with ``use_case.ask(**fields)``, which checks it against the request's
class as the server would, so a bad value is refused before anything runs or is sent.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol, TYPE_CHECKING

from opgov.core.errors import BadInput, PolicyRefusal, Unavailable

if TYPE_CHECKING:
    from opgov.usecases.declaration import UseCase

__all__ = ["Client", "InProcess", "OverHttp", "Remote", "connect", "on_database"]

# what a caller does with the result that must succeed for the use case to count (the CLI writing the
# files a sync answers): in-process inside its transaction, so an error there undoes it; over HTTP
# after the answer
Then = Callable[[Any], None]


class Client(Protocol):
    def call(self, use_case: UseCase, request: Any = None, *, then: Then | None = None) -> Any: ...


def connect(server: str | None, token: str | None = None, *, begin: Callable[..., Any]) -> Client:
    """The client: over HTTP to ``server`` (with ``token``) when one is given, else in-process in
    the transactions ``begin`` opens. The one place that decides whether a call is remote."""
    if server:
        return OverHttp(Remote(server.rstrip("/"), token or None))
    return InProcess(begin)


@dataclass(frozen=True)
class InProcess:
    """The service, in one transaction ``begin(write=..., orm=...)`` opens (or, for a service that
    opens its own, given ``begin`` itself)."""

    begin: Callable[..., Any]

    def call(self, use_case: UseCase, request: Any = None, *, then: Then | None = None) -> Any:
        use_case.function  # noqa: B018 - its module imported before the transaction: no lock held (nor waited) meanwhile
        if use_case.opens_transactions:
            result = use_case.run(lambda: self.begin(write=True, orm=use_case.orm), request)
            if then is not None:
                then(result)
            return result
        with self.begin(write=use_case.writes_for(request), orm=use_case.orm) as ctx:
            result = use_case.run(ctx, request)
            if then is not None:
                then(result)
            return result


def on_database(url: str | None, actor: str) -> Callable[..., Any]:
    """``begin`` for a script: one transaction on the database at ``url`` (None: OPGOV_DATABASE_URL,
    else the default), as ``actor``, on the system clock; the database must be at the head revision."""

    @contextmanager
    def begin(*, write: bool, orm: bool = True) -> Iterator[Any]:
        from opgov.core.clock import SystemClock
        from opgov.db.engine import ensure_current, make_engine, resolve_url, transaction
        from opgov.reads.common import Ctx

        engine = make_engine(resolve_url(url))
        try:
            ensure_current(engine)
            with transaction(engine, orm=orm, write=write) as session:
                yield Ctx(session=session, actor=actor, clock=SystemClock())
        finally:
            engine.dispose()

    return begin


@dataclass(frozen=True)
class OverHttp:
    """The use case asked of an ``opgov serve`` server (:class:`Remote`: its URL and a token)."""

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



@dataclass(frozen=True)
class Remote:
    url: str
    token: str | None

    def get(self, path: str, result_type: Any, **params: Any) -> Any:
        """GET ``path`` and parse the answer as ``result_type`` (a model, or ``list[Model]``)."""
        import urllib.parse

        query = urllib.parse.urlencode({k: v for k, v in params.items() if v not in (None, False)}, doseq=True)
        return self._send("GET", path + (f"?{query}" if query else ""), result_type)

    def get_text(self, path: str, **params: Any) -> str:
        """GET ``path`` as text (a rendering the server makes: Markdown, plain text)."""
        import urllib.parse

        query = urllib.parse.urlencode({k: v for k, v in params.items() if v not in (None, False)}, doseq=True)
        return self._send("GET", path + (f"?{query}" if query else ""), None).decode("utf-8")

    def send(self, method: str, path: str, result_type: Any, *, json_body: Any = None,
             files: list[tuple[str, str]] | None = None, fields: dict[str, Any] | None = None) -> Any:
        """``method`` (POST, PUT, DELETE) with a JSON body, or a multipart form of ``files`` ([(field, a
        local path or a Content)]) and ``fields``; parse the answer as ``result_type``."""
        if files is None:
            data = json.dumps(json_body if json_body is not None else {}).encode("utf-8")
            return self._send(method, path, result_type, data, "application/json")
        data, content_type = _multipart(files, fields or {})
        return self._send(method, path, result_type, data, content_type)

    def _send(self, method: str, path: str, result_type: Any, data: bytes | None = None,
              content_type: str | None = None) -> Any:
        import urllib.error
        import urllib.request

        request = urllib.request.Request(f"{self.url}{path}", data=data, method=method,
                                         headers={"Accept": "application/json"})
        if content_type:
            request.add_header("Content-Type", content_type)
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        import http.client

        sent = False
        try:
            with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310 - the user's server
                sent = True
                body = response.read()
        except urllib.error.HTTPError as err:
            raise _error(err.code, err.read()) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
            reason = getattr(err, "reason", err)
            if not sent and not isinstance(err, (http.client.HTTPException, ConnectionResetError)):
                raise BadInput(f"cannot reach the opgov server at {self.url}: {reason}") from None
            # the server went away with the request (killed, restarted): one transaction, so all or nothing
            raise BadInput(f"the opgov server at {self.url} broke off before answering "
                           f"({reason.__class__.__name__ if isinstance(reason, Exception) else reason}): a request "
                           "is applied whole or not at all; look (e.g. `opgov log`) before sending it again") from None
        if result_type is None:
            return body
        from pydantic import TypeAdapter

        return TypeAdapter(result_type).validate_json(body)


def _multipart(files: list[tuple[str, Any]], fields: dict[str, Any]) -> tuple[bytes, str]:
    """A multipart/form-data body (RFC 7578) of ``files`` ([(field, a local path or a Content)]) and
    ``fields`` (a list is its values repeated). A file is named as the user gave it, so the server's
    answers and messages name it the same way as a local run does."""
    import uuid

    from opgov.formats.files import Content, read_content

    boundary = f"opgov-{uuid.uuid4().hex}"
    parts: list[bytes] = []
    for name, given in fields.items():
        for value in given if isinstance(given, list) else [given]:
            if value is None or value is False:
                continue
            text = "true" if value is True else str(value)
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                         + text.encode("utf-8") + b"\r\n")
    for name, file in files:
        read = file if isinstance(file, Content) else read_content(file)
        content = read.data.encode("utf-8") if isinstance(read.data, str) else read.data
        shown = _quoted(read.name)
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{shown}"\r\n'
                     f"Content-Type: application/octet-stream\r\n\r\n".encode() + content + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _quoted(name: str) -> str:
    """A file name as a Content-Disposition's quoted ``filename``, which the server reads back as
    it is (a quote or a backslash escaped), so its answers name the file as a local run does. The
    line breaks a header cannot hold are left out; a Windows path from its drive (``C:\\...``) or a
    share (``\\\\...``) is sent with ``/``, since the server would keep only its last part."""
    name = name.replace("\r", "").replace("\n", "")
    if name[1:3] == ":\\" or name.startswith("\\\\"):
        name = name.replace("\\", "/")
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _error(status: int, body: bytes):
    from opgov.results.problem import UNAVAILABLE

    try:
        answer = json.loads(body)
        detail, kind = answer.get("detail") or f"HTTP {status}", answer.get("type")
    except (ValueError, AttributeError):
        detail, kind = f"HTTP {status}", None
    if kind == UNAVAILABLE:
        return Unavailable(str(detail))
    if status in (403, 409):
        return PolicyRefusal(str(detail))
    return BadInput(str(detail))
