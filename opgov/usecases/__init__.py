"""The use cases, each declared once: what it is called, what it asks and answers, which service
does it, whether it writes, and where the HTTP API serves it.

The API derives its routes from :data:`USE_CASES` (opgov.api.usecases); the CLI calls a use case
through a client (opgov.cli.client) that runs its service in-process, in one transaction, or asks
an ``opgov serve`` server over HTTP (``--server``), so a command knows neither a URL nor a JSON key.
The list of commands that work with ``--server`` is derived from the declarations too.

The declarations are grouped by area, one module each (their requests in opgov.usecases.requests).
A declaration holds its request and result classes themselves, and its service as
``lazy(module, name)``: a service module loads the database layer, which a command that does not
call it must not pay for. Importing this package imports every request (pydantic), so the CLI
imports it inside the commands that ask a use case, never at start-up.
"""

from __future__ import annotations

from opgov.usecases import admin, checks, compat, decomps, governance, queue, registry, runtimes
from opgov.usecases.declaration import PREFIX, UseCase

__all__ = ["PREFIX", "UseCase", "USE_CASES", "named", "remote_commands"]

USE_CASES: tuple[UseCase, ...] = (*admin.DECLARED, *governance.DECLARED, *registry.DECLARED, *decomps.DECLARED,
                                  *runtimes.DECLARED, *checks.DECLARED, *compat.DECLARED,
                                  *queue.DECLARED)


def named(name: str) -> UseCase:
    """The use case of that name (a programming error if there is none)."""
    for use_case in USE_CASES:
        if use_case.name == name:
            return use_case
    raise KeyError(name)


def remote_commands() -> list[str]:
    """The CLI commands the declarations make work with ``--server``."""
    return list(dict.fromkeys(command for use_case in USE_CASES for command in use_case.cli))
