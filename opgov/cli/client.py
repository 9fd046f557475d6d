"""How a command calls a use case: it imports the declaration from its area's module and calls it,
``ask(REVIEW_MANY, proposal_ids=…)`` or ``call(REVIEW_MANY, request)``, with the client of this
command line (opgov.usecases.client.connect): over HTTP with ``--server`` (or ``OPGOV_SERVER``) as
the member whose token ``OPGOV_TOKEN`` is, else in-process in one transaction of
opgov.cli.runtime.command (``--db``, ``--actor``, ``--now``). The same result either way, so a
command renders it the same.

The commands that call a use case are those that work with ``--server``; :func:`callers` reads
them, and the declarations each calls, from the commands' source."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # importing a declaration imports its area's requests (pydantic): not at start-up
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


def call(use_case: UseCase, request: Any = None, *, then: Then | None = None) -> Any:
    """``use_case``'s answer to ``request`` (``use_case.ask(…)``) from :func:`client`;
    ``then(result)`` before it counts (opgov.usecases.client.Then)."""
    return client().call(use_case, request, then=then)


def ask(use_case: UseCase, shown: dict[str, str] | None = None, /, **fields: Any) -> Any:
    """``use_case``'s answer to these fields (``use_case.ask``: checked as the server checks them;
    ``shown`` names fields as the user knows them), from :func:`client`."""
    return client().call(use_case, use_case.ask(shown, **fields))


def callers() -> dict[str, tuple[str, ...]]:
    """Every command that calls a use case (so works with ``--server``) → the declarations it calls,
    as ``opgov.usecases.<area>.NAME``, in the order of ``opgov --help``: every command registered
    (opgov.cli.app.REGISTERED; all of them once opgov.cli.main is imported). Read from the source
    of the command's function: the declarations it imports, inside it or at its module's top, and
    those of the functions of its module it calls."""
    import inspect

    from typer.main import get_command_name

    from opgov.cli.app import REGISTERED

    sources: dict[str, _Source] = {}
    found: dict[str, tuple[str, ...]] = {}

    def add(command: str, callback: Any) -> None:
        code = inspect.unwrap(callback).__code__
        source = sources.get(code.co_filename)
        if source is None:
            source = sources[code.co_filename] = _Source(code.co_filename)
        called = source.declarations(source.function_at(code.co_firstlineno))
        if called:
            found[command] = called

    def walk(commands: list, groups: list, prefix: str) -> None:  # as click lists them: commands, then groups
        for info in commands:
            add(f"{prefix}{info.name or get_command_name(info.callback.__name__)}", info.callback)
        for group in groups:
            typer_app = group.typer_instance
            name = f"{prefix}{group.name if isinstance(group.name, str) else typer_app.info.name}"
            if typer_app.registered_callback is not None:
                add(name, typer_app.registered_callback.callback)
            walk(typer_app.registered_commands, typer_app.registered_groups, name + " ")

    walk(*REGISTERED, "")
    return found


class _Source:
    """One command module's source: the declarations each of its functions names."""

    def __init__(self, filename: str) -> None:
        import ast

        from opgov.usecases import AREAS

        with open(filename, encoding="utf-8") as file:
            tree = ast.parse(file.read(), filename)
        self._areas = {f"opgov.usecases.{area}" for area in AREAS}
        self._functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
        self._imported = self._imports(tree.body)  # at the module's top

    def function_at(self, line: int) -> Any:
        """The function (a nested one too) whose first line, its first decorator's or its def's, is ``line``."""
        import ast

        def first(node: Any) -> int:
            return node.decorator_list[0].lineno if node.decorator_list else node.lineno

        outer = next(node for node in self._functions.values() if first(node) <= line <= node.end_lineno)
        return next(node for node in ast.walk(outer) if isinstance(node, ast.FunctionDef) and line in
                    (first(node), node.lineno))

    def _imports(self, nodes: Any) -> dict[str, str]:
        import ast

        return {alias.asname or alias.name: f"{node.module}.{alias.name}" for node in nodes
                if isinstance(node, ast.ImportFrom) and node.module in self._areas
                for alias in node.names if alias.name != "DECLARED"}

    def declarations(self, function: Any, seen: set[str] | None = None) -> tuple[str, ...]:
        """The declarations ``function`` (its ``ast.FunctionDef``) names, and those of the module's
        functions it calls."""
        import ast

        seen = set() if seen is None else seen
        seen.add(function.name)
        nodes = list(ast.walk(function))
        found = list(self._imports(nodes).values())
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in self._imported:
                found.append(self._imported[node.id])
            elif isinstance(node, ast.Name) and node.id in self._functions and node.id not in seen:
                found += self.declarations(self._functions[node.id], seen)
        return tuple(dict.fromkeys(found))
