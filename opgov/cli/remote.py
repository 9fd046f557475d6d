"""The CLI talking to `opgov serve` (``--server URL`` / ``OPGOV_SERVER``, token ``OPGOV_TOKEN``).

The server's answers are the services' typed results, so a command parses them into the same
models and renders them exactly as it does locally; an error response's one-line ``detail`` is
the message the command would print, with the same exit code (400/401/404/422 → 2, 403/409 → 1).
Only the standard library is used for HTTP. The actor is the token's member: ``--actor`` is refused.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from opgov.core.errors import BadInput, PolicyRefusal

REMOTE_COMMANDS = "ops list, ops show, proposals, proposals show and log"


@dataclass(frozen=True)
class Remote:
    url: str
    token: str | None

    def get(self, path: str, result_type: Any, **params: Any) -> Any:
        """GET ``path`` and parse the answer as ``result_type`` (a model, or ``list[Model]``)."""
        from pydantic import TypeAdapter

        query = urllib.parse.urlencode({k: v for k, v in params.items() if v not in (None, False)}, doseq=True)
        request = urllib.request.Request(f"{self.url}{path}" + (f"?{query}" if query else ""),
                                         headers={"Accept": "application/json"})
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 - the user's server
                body = response.read()
        except urllib.error.HTTPError as err:
            raise _error(err.code, err.read()) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise BadInput(f"cannot reach the opgov server at {self.url}: {reason}") from None
        return TypeAdapter(result_type).validate_json(body)


def _error(status: int, body: bytes):
    try:
        detail = json.loads(body).get("detail") or f"HTTP {status}"
    except (ValueError, AttributeError):
        detail = f"HTTP {status}"
    if status in (403, 409):
        return PolicyRefusal(str(detail))
    return BadInput(str(detail))


def path_segment(text: str) -> str:
    return urllib.parse.quote(text, safe="")
