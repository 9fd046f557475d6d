"""The use cases, each declared once: what it is called, what it asks and answers, which service
does it, whether it writes, and where the HTTP API serves it.

The declarations are grouped by area, one module each (their requests in opgov.usecases.requests),
each a module-level name there (``opgov.usecases.governance.REVIEW_MANY``) that whatever calls it
imports: a CLI command calls it through a client (opgov.cli.client) that runs its service
in-process, in one transaction, or asks an ``opgov serve`` server over HTTP (``--server``), so a
command knows neither a URL nor a JSON key; the API derives its routes from :data:`USE_CASES`
(opgov.api.usecases).

A declaration holds its request and result classes themselves, and its service as
``lazy(module, name)``: a service module loads the database layer, which a command that does not
call it must not pay for. An area's module imports its requests and results (pydantic), so a
command imports its own area's module inside its function, and ``opgov --help`` none; ``USE_CASES``
imports them all.
"""

from __future__ import annotations

import importlib
from typing import Any, Iterable, Iterator

from opgov.usecases.declaration import PREFIX, UseCase

__all__ = ["AREAS", "PREFIX", "UseCase", "USE_CASES", "named"]

# the modules of this package that declare use cases (each its DECLARED), the registry's first
AREAS = ("imports", "ops", "admin", "compat", "reports", "sync", "governance", "tokens", "status", "lifecycle", "upgraders",
         "queue", "decomps", "closure", "runtimes", "pages")


def declared(areas: Iterable[str] = AREAS) -> Iterator[UseCase]:
    """Every declaration of ``areas``, area by area, each area's module imported when it is reached."""
    for area in areas:
        yield from importlib.import_module(f"{__name__}.{area}").DECLARED


def named(name: str, area: str | None = None) -> UseCase:
    """The use case of that name, for a name that comes from data (a programming error if there is
    none); code that calls a use case imports its declaration instead. ``area``'s module is looked in
    first, then the others in turn until one declares it."""
    order = ([area] if area in AREAS else []) + [a for a in AREAS if a != area]
    for use_case in declared(order):
        if use_case.name == name:
            return use_case
    raise KeyError(name)


def __getattr__(attribute: str) -> Any:
    """``USE_CASES``: every declaration (all the areas imported)."""
    if attribute == "USE_CASES":
        return tuple(declared())
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
