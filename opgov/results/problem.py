"""The body of every refusal the HTTP API answers (``application/problem+json``, RFC 9457)."""

from __future__ import annotations

from dataclasses import dataclass, field

from opgov.results.plain import about as _about


# the problem type of what the server lacks (torch, for decomps import-torch): a 409 like a policy
# refusal, told apart by its type so a remote CLI exits as the local one does (2, not 1)
UNAVAILABLE = "urn:opgov:problem:unavailable"


@dataclass(frozen=True, kw_only=True)
class Problem:
    """An error response of the service (RFC 9457, ``application/problem+json``)."""

    type: str = field(default="about:blank", metadata=_about(
        f"about:blank, or {UNAVAILABLE}: the server lacks what the operation needs (409)"))
    title: str = field(metadata=_about("the HTTP status phrase"))
    status: int
    detail: str = field(metadata=_about("the one-line message the CLI prints for the same error"))
