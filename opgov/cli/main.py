"""Entry point of the ``opgov`` console script."""

from __future__ import annotations

import gc
import os
import sys

# A command is a short-lived process that builds many objects and few cycles (imports, YAML
# trees, rows): collect far less often than after every 700 allocations, Python's default.
gc.set_threshold(100_000, 50, 100)

from opgov.cli.app import app  # noqa: E402
# Registration order is the order `opgov --help` lists the commands in.
from opgov.cli import commands_registry  # noqa: F401,I001
from opgov.cli import commands_governance  # noqa: F401
from opgov.cli import commands_checks  # noqa: F401
from opgov.cli import commands_decomps  # noqa: F401
from opgov.cli import commands_prgate  # noqa: F401
from opgov.cli import commands_serve  # noqa: F401
from opgov.cli import commands_runtimes  # noqa: F401
from opgov.cli import commands_upgraders  # noqa: F401
from opgov.cli import commands_site  # noqa: F401
from opgov.core.errors import OpgovError


def run(argv: list[str] | None = None) -> None:
    """Run the CLI; map opgov's errors to one line on stderr and their exit code.

    Called with ``argv`` (tests, other Python code) it ends with ``SystemExit`` as usual. As the
    ``opgov`` program it flushes its output and leaves with ``os._exit``: every command has
    already committed its transaction and closed its database, and skipping the interpreter's
    teardown of thousands of objects saves a tenth of a second on every invocation.
    """
    try:
        try:
            app(args=argv, prog_name="opgov")
        except OpgovError as err:
            prefix = "refused" if err.exit_code == 1 else "error"
            from opgov.render.escapes import visible

            message = visible(" ".join(str(err).split("\n")))  # always one line, no control codes
            sys.stderr.write(f"opgov: {prefix}: {message}\n")
            sys.exit(err.exit_code)
    except SystemExit as done:
        if argv is not None:
            raise
        _leave(done.code)
    if argv is None:
        _leave(0)


def _leave(code: object) -> None:
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message")
        sys.stderr.write(f"{code}\n")
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # `opgov … | head`: the reader left; nothing more to say
        pass
    os._exit(code)


if __name__ == "__main__":
    run()
