"""Entry point of the ``opgov`` console script."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator

from opgov.cli.app import GLOBAL_VALUE_OPTIONS, app
# Registration order is the order `opgov --help` lists the commands in (the commands, then the groups).
from opgov.cli import commands_db  # noqa: F401,I001
from opgov.cli import commands_imports  # noqa: F401
from opgov.cli import commands_ops  # noqa: F401
from opgov.cli import commands_admin  # noqa: F401
from opgov.cli import commands_governance  # noqa: F401
from opgov.cli import commands_lifecycle  # noqa: F401
from opgov.cli import commands_queue  # noqa: F401
from opgov.cli import commands_compat  # noqa: F401
from opgov.cli import commands_reports  # noqa: F401
from opgov.cli import commands_sync  # noqa: F401
from opgov.cli import commands_decomps  # noqa: F401
from opgov.cli import commands_closure  # noqa: F401
from opgov.cli import commands_runtimes  # noqa: F401
from opgov.cli import commands_prgate  # noqa: F401
from opgov.cli import commands_serve  # noqa: F401
from opgov.cli import commands_tokens  # noqa: F401
from opgov.cli import commands_upgraders  # noqa: F401
from opgov.cli import commands_site  # noqa: F401
from opgov.cli import commands_status  # noqa: F401
from opgov.core.errors import OpgovError


def _whole_help(typer_app) -> None:
    """Every command group lists its commands' help whole (opgov.cli.app.WholeHelpGroup)."""
    from typer.core import TyperGroup
    from typer.models import DefaultPlaceholder

    from opgov.cli.app import WholeHelpGroup

    for group in typer_app.registered_groups:
        info = group.typer_instance.info
        if isinstance(info.cls, DefaultPlaceholder) or info.cls in (None, TyperGroup):
            info.cls = WholeHelpGroup
        _whole_help(group.typer_instance)


_whole_help(app)


def run(argv: list[str] | None = None) -> None:
    """Run the CLI; map opgov's errors, and click's for a bad option, value or argument, to one line
    on stderr and their exit code (2 for bad input, 1 for a refusal).

    Called with ``argv`` (tests, other Python code) it ends with ``SystemExit`` as usual. As the
    ``opgov`` program it flushes its output and leaves with ``os._exit``: every command has
    already committed its transaction and closed its database, and skipping the interpreter's
    teardown of the modules and their caches is a fifth of ``opgov check-bc``'s time on two
    files, which must stay within a bare YAML load of them (docs/performance.md).
    """
    import click

    try:
        try:
            with _only_the_command_invoked(sys.argv[1:] if argv is None else argv):
                code = app(args=argv, prog_name="opgov", standalone_mode=False)
            sys.exit(code if isinstance(code, int) else 0)
        except OpgovError as err:
            _say("refused" if err.exit_code == 1 else "error", _shown(err))
            sys.exit(err.exit_code)
        except click.exceptions.NoArgsIsHelpError as err:  # `opgov ops`: the group's help, as click shows it
            err.show()
            sys.exit(err.exit_code)
        except click.UsageError as err:  # a bad option, value or argument: one line, and where to read more
            where = f" (see `{err.ctx.command_path} --help`)" if err.ctx is not None else ""
            _say("error", err.format_message() + where)
            sys.exit(err.exit_code)
        except click.ClickException as err:
            _say("error", err.format_message())
            sys.exit(err.exit_code)
        except click.Abort:
            _say("error", "aborted")
            sys.exit(1)
    except SystemExit as done:
        if argv is not None:
            raise
        _leave(done.code)
    if argv is None:
        _leave(0)


def _shown(err: OpgovError) -> str:
    """The line an error shows; a command refused with --server also names those that work with it
    (every command that calls a use case: opgov.cli.client.callers)."""
    from opgov.cli.runtime import NotRemote

    if isinstance(err, NotRemote):
        from opgov.cli.client import callers

        return err.naming(list(callers()))
    return str(err)


def _say(prefix: str, text: str) -> None:
    from opgov.render.escapes import visible

    message = visible(" ".join(text.split("\n")))  # always one line, no control codes
    sys.stderr.write(f"opgov: {prefix}: {message}\n")


# the global options (opgov.cli.app.main) that take a value
_GLOBAL_VALUE_OPTIONS = GLOBAL_VALUE_OPTIONS


def _invoked_name(args: list[str]) -> str | None:
    """The top-level command ``args`` name after the global options, or ``None`` (no command, or
    an option this does not know)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if not arg.startswith("-"):
            return arg
        if arg in _GLOBAL_VALUE_OPTIONS:
            i += 2
        elif arg.partition("=")[0] in _GLOBAL_VALUE_OPTIONS:
            i += 1
        else:  # --help, --version, anything else: the whole application
            return None
    return None


@contextmanager
def _only_the_command_invoked(args: list[str]) -> Iterator[None]:
    """Typer builds a click command for every registered command on every run (inspecting each
    function's signature, ~0.01 s for opgov's); a run that names a known command gets an
    application holding only that one (its usage, help and errors are the same). ``opgov --help``,
    a mistyped command and anything unusual get the whole application."""
    from typer.main import get_command_name

    name = _invoked_name(args)
    commands = [c for c in app.registered_commands
                if (c.name or get_command_name(c.callback.__name__)) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if name is None or len(commands) + len(groups) != 1 or any(g.name is None for g in app.registered_groups):
        yield
        return
    saved = app.registered_commands, app.registered_groups
    app.registered_commands, app.registered_groups = commands, groups
    try:
        yield
    finally:
        app.registered_commands, app.registered_groups = saved


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
