"""The results of the token use cases (:mod:`opgov.services.tokens`): members' API tokens."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from opgov.results.plain import about as _about


@dataclass(frozen=True, kw_only=True)
class TokenView:
    """An API token (never its secret)."""

    id: int
    member: str
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    revoked_at: datetime | None
    state: Literal["active", "revoked", "expired"] = field(metadata=_about("at the time of the request"))


@dataclass(frozen=True, kw_only=True)
class TokenCreated(TokenView):
    """``opgov tokens create``: the secret is shown this once and stored only as a hash."""

    token: str = field(metadata=_about("the bearer token; shown once"))
