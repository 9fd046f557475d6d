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

    @classmethod
    def from_env(cls) -> Config:
        return cls(db=os.environ.get("OPGOV_DATABASE_URL") or None,
                   public_reads=os.environ.get("OPGOV_PUBLIC_READS", "1") not in ("0", "false", "no"),
                   max_upload_bytes=int(os.environ.get("OPGOV_MAX_UPLOAD_BYTES", str(32 * 1024 * 1024))),
                   response_cache=int(os.environ.get("OPGOV_RESPONSE_CACHE", "1024")))
