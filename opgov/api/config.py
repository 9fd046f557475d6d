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
    # where users reach the service (https://opgov.example.org): the only source of absolute links
    # (the Atom feed's); a request's Host header never is
    public_url: str | None = None
    anonymous_uploads: int = 2  # requests with a body and no token handled at once per worker; more get 503
    # the bytes of request bodies one worker takes in at once, whoever sends them (at least one whole
    # request's): past it 503 with Retry-After (api/limits.py)
    upload_budget: int = 2 * 32 * 1024 * 1024
    body_timeout: int = 30  # seconds a request's whole body may take to arrive; then 408
    # seconds of processing a request may take once its body is in (opgov.core.budget); then 413
    request_seconds: int = 30

    @classmethod
    def from_env(cls) -> Config:
        """The configuration in the environment; a bad number is one line naming its variable."""
        return cls(db=os.environ.get("OPGOV_DATABASE_URL") or None,
                   public_reads=os.environ.get("OPGOV_PUBLIC_READS", "1") not in ("0", "false", "no"),
                   max_upload_bytes=_number("OPGOV_MAX_UPLOAD_BYTES", 32 * 1024 * 1024, low=1),
                   response_cache=_number("OPGOV_RESPONSE_CACHE", 1024, low=0),
                   db_pool=_number("OPGOV_DB_POOL", 8, low=1),
                   public_url=public_url(os.environ.get("OPGOV_PUBLIC_URL", "")),
                   anonymous_uploads=_number("OPGOV_ANONYMOUS_UPLOADS", 2, low=1),
                   upload_budget=_number("OPGOV_UPLOAD_BUDGET_BYTES", 2 * 32 * 1024 * 1024, low=1),
                   body_timeout=_number("OPGOV_BODY_TIMEOUT", 30, low=1),
                   request_seconds=_number("OPGOV_REQUEST_SECONDS", 30, low=1))


def public_url(text: str) -> str | None:
    """``OPGOV_PUBLIC_URL`` / ``--public-url``: an http(s) URL with a host and no query, without
    its trailing slash; empty is None. Anything else is one line naming the setting."""
    from urllib.parse import urlsplit

    from opgov.core.errors import BadInput

    text = text.strip()
    if not text:
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        parts = None
    if (parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query
            or parts.fragment or parts.username or any(ch.isspace() for ch in text)):
        raise BadInput(f"OPGOV_PUBLIC_URL={text!r} must be an http(s) URL such as https://opgov.example.org "
                       "(a host, optionally a port and a path; no query)")
    return text.rstrip("/")


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
