"""A use case's answer as text: a rendering its request asked for by ``format``, served with the
media type its declaration gives that format (opgov.usecases.UseCase ``formats``) instead of the
JSON of its result."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Rendered"]


@dataclass(frozen=True)
class Rendered:
    text: str
