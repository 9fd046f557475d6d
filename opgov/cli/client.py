"""How a command calls a use case: ``call(use_case, request)`` with the client of this command line
(opgov.usecases.client.connect): over HTTP with ``--server`` (or ``OPGOV_SERVER``) as the member
whose token ``OPGOV_TOKEN`` is, else in-process in one transaction of opgov.cli.runtime.command
(``--db``, ``--actor``, ``--now``). The same result either way, so a command renders it the same."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # importing opgov.usecases imports every declaration (and pydantic): not at start-up
    from opgov.usecases import UseCase
    from opgov.usecases.client import Client, Then


def client() -> Client:
    """Over HTTP with ``--server`` (or ``OPGOV_SERVER``), else in-process."""
    from opgov.cli.runtime import GLOBALS, command, server
    from opgov.usecases.client import connect

    url = server()
    if url and GLOBALS.actor:
        from opgov.core.errors import BadInput

        raise BadInput("--actor cannot be used with --server: the server acts as the member whose token "
                       "OPGOV_TOKEN is")
    return connect(url, os.environ.get("OPGOV_TOKEN"), begin=command)


def call(use_case: UseCase | str, request: Any = None, *, then: Then | None = None) -> Any:
    """``use_case`` (or the one of that name) answered by :func:`client`; ``then(result)`` before it
    counts (opgov.usecases.client.Then)."""
    if isinstance(use_case, str):
        use_case = named(use_case)
    return client().call(use_case, request, then=then)


def ask(name: str, /, **fields: Any) -> Any:
    """The answer to the use case called ``name`` asked these fields (``use_case.ask``: checked as
    the server checks them), from :func:`client`."""
    use_case = named(name)
    return client().call(use_case, use_case.ask(**fields))


def named(name: str) -> UseCase:
    """The use case called ``name``, looked for first in the area of the command being run (its
    function is in ``opgov.cli.commands_<area>``, whose use cases are that area's:
    tests/test_architecture.py), so that a command imports its own area's declarations only."""
    import click

    from opgov.usecases import named as find

    context = click.get_current_context(silent=True)
    module = getattr(getattr(context.command, "callback", None), "__module__", "") if context else ""
    area = module.partition("opgov.cli.commands_")[2] or None
    return find(name, area)
