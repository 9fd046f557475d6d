"""Headers an answer of the API carries besides its JSON (opgov.api.usecases.HEADERS)."""

from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime
from urllib.parse import quote

from opgov.results.ops import OperatorDetail


def deprecation(op: OperatorDetail) -> dict[str, str]:
    """``Deprecation`` (RFC 9745: when it began deprecating) and ``Sunset`` (RFC 8594: the earliest
    time its entry may be deleted) for a deprecating or deprecated operator, and a ``Link`` to its
    replacement."""
    if op.lifecycle not in ("deprecating", "deprecated"):
        return {}
    began: datetime | None = next((s.at for s in reversed(op.lifecycle_steps) if s.to_state == "deprecating"),
                                  op.lifecycle_since)
    headers = {}
    if began is not None:
        headers["Deprecation"] = f"@{int(began.timestamp())}"
    if op.sunset is not None:
        headers["Sunset"] = format_datetime(op.sunset, usegmt=True)
    if op.replacement:
        headers["Link"] = f'</api/v1/operators/{quote(op.replacement, safe="")}>; rel="successor-version"'
    return headers
