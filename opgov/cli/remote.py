"""The CLI talking to `opgov serve` (``--server URL`` / ``OPGOV_SERVER``, token ``OPGOV_TOKEN``).

The server's answers are the services' typed results, so a command parses them into the same
models and renders them exactly as it does locally; an error response's one-line ``detail`` is
the message the command would print, with the same exit code (400/401/404/422 → 2, 403/409 → 1).
Only the standard library is used for HTTP. The actor is the token's member: ``--actor`` is refused.

Every command that works with ``--server`` calls its declared use case (opgov.usecases) through
opgov.cli.client, which asks the server with :class:`Remote`: no command builds a URL.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from opgov.cli.runtime import GLOBALS
from opgov.core.errors import BadInput, PolicyRefusal

__all__ = ["Remote", "server"]


def server() -> Remote | None:
    """The server to talk to (``--server``, else ``OPGOV_SERVER``), or None to use the database."""
    url = GLOBALS.server or os.environ.get("OPGOV_SERVER")
    if not url:
        return None
    if GLOBALS.actor:
        raise BadInput("--actor cannot be used with --server: the server acts as the member whose token "
                       "OPGOV_TOKEN is")
    return Remote(url.rstrip("/"), os.environ.get("OPGOV_TOKEN") or None)


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
        try:
            with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310 - the user's server
                body = response.read()
        except urllib.error.HTTPError as err:
            raise _error(err.code, err.read()) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise BadInput(f"cannot reach the opgov server at {self.url}: {reason}") from None
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
    try:
        detail = json.loads(body).get("detail") or f"HTTP {status}"
    except (ValueError, AttributeError):
        detail = f"HTTP {status}"
    if status in (403, 409):
        return PolicyRefusal(str(detail))
    return BadInput(str(detail))
