"""The body of every refusal the HTTP API answers (``application/problem+json``, RFC 9457)."""

from __future__ import annotations

from dataclasses import dataclass, field

from opgov.results.plain import about as _about


@dataclass(frozen=True, kw_only=True)
class Problem:
    """An error response of the service (RFC 9457, ``application/problem+json``)."""

    type: str = field(default="about:blank")
    title: str = field(metadata=_about("the HTTP status phrase"))
    status: int
    detail: str = field(metadata=_about("the one-line message the CLI prints for the same error"))
