"""The service's configuration, from the environment (``opgov serve`` sets it for its workers)."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Config:
    db: str | None
    public_reads: bool = True
    max_upload_bytes: int = 32 * 1024 * 1024
    response_cache: int = 1024  # answers kept per worker (opgov.api.cache); 0 turns the cache off
    db_pool: int = 8  # database connections per worker, kept open

    @classmethod
    def from_env(cls) -> Config:
        """The configuration in the environment; a bad number is one line naming its variable."""
        return cls(db=os.environ.get("OPGOV_DATABASE_URL") or None,
                   public_reads=os.environ.get("OPGOV_PUBLIC_READS", "1") not in ("0", "false", "no"),
                   max_upload_bytes=_number("OPGOV_MAX_UPLOAD_BYTES", 32 * 1024 * 1024, low=1),
                   response_cache=_number("OPGOV_RESPONSE_CACHE", 1024, low=0),
                   db_pool=_number("OPGOV_DB_POOL", 8, low=1))


def _number(variable: str, default: int, *, low: int) -> int:
    from opgov.core.errors import BadInput

    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text)
    except ValueError:
        value = low - 1
    if value < low:
        raise BadInput(f"{variable}={text!r} must be a whole number of at least {low}")
    return value
