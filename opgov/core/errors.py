"""One error hierarchy for opgov.

Services and the functional core raise these; only the CLI shell maps them to exit codes
(``BadInput`` → 2, ``PolicyRefusal`` → 1) and colours.
"""

from __future__ import annotations


class OpgovError(Exception):
    """Base class. ``str(err)`` is the one line shown to the user."""

    exit_code = 2

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 subject: str | None = None) -> None:
        self.message = message
        self.file = file
        self.line = line
        self.subject = subject
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line is not None else f"{self.file}: "
        return f"{where}{self.message}"


class BadInput(OpgovError):
    """Malformed or unknown input: a file, a schema, an operator name, an id. Exit code 2."""

    exit_code = 2


class NotFound(BadInput):
    """An unknown operator, proposal, exception, token or snapshot. Exit code 2 (HTTP 404)."""


class Unprocessable(BadInput):
    """A request whose fields do not go together (neither or both of two that exclude each other):
    exit code 2, HTTP 422 as a request its schema refuses."""


class TooCostly(BadInput):
    """A request that would take more than its budget of processing time (opgov.core.budget): HTTP
    413, as an input too big to process; exit code 2."""


class SchemaParseError(BadInput):
    """A function schema that does not parse. The message names the schema text."""


class PolicyRefusal(OpgovError):
    """The input is understood, but governance policy forbids the action. Exit code 1."""

    exit_code = 1


class Forbidden(PolicyRefusal):
    """The actor's role does not allow the action. Exit code 1 (HTTP 403)."""


class Unauthenticated(Forbidden):
    """The request carries no token, and the action needs a member (HTTP 401). An unauthenticated
    caller is never looked up as a member, whatever the members are named."""


class Unavailable(OpgovError):
    """What this installation cannot do: a library the request needs is not installed (torch for
    ``decomps import-torch``). Not the request's fault, nor the server's failure: HTTP 409 (the server's
    state refuses it until the library is installed), with no ``Retry-After``; exit 2."""

    exit_code = 2


class DatabaseBehind(OpgovError):
    """The database schema is older than this opgov: run ``opgov db upgrade``."""

    exit_code = 2
