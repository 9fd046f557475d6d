"""The export-time check: what opgov tells a `torch.export` user about the program they exported.

The policy asks that exporting a model warns on ``deprecating`` operators and stops on
``deprecated`` (and deleted) ones, with the dates and the replacement, and that a runtime can
say whether it runs the program. Call it after exporting::

    import torch
    from opgov.export_check import check_export

    program = torch.export.export(model, example_args)
    result = check_export(program, db="postgresql://opgov@db/opgov")      # or server="https://…"
    print([fit.runtime for fit in result.runtimes if fit.runs])

It takes an ``ExportedProgram`` (its graph is read as it is: no torch import happens here) or the
path of a ``.pt2`` archive (read by opgov's own reader, without torch). The answer comes from an
opgov database (``db``: a URL or a SQLite path; the one ``opgov`` uses when neither is given) or
an ``opgov serve`` (``server``, with ``token`` for a server whose reads are private).

- A deprecating operator: :class:`DeprecatingOperatorWarning` (a ``FutureWarning``, shown by
  default), one per operator, naming when it may become deprecated and what to use instead.
- A deprecated or deleted one: :class:`DeprecatedOperatorError`, naming them all with their
  dates and replacements (``strict=False`` returns instead of raising).
- With ``runtime`` (a registered ``NAME@VERSION``, or a snapshot label standing for torch of that
  release): each call's operator, the arguments it passes by name (as torch.export's serializer
  writes them: a keyword default is left out) and the torch that made it (``torch.__version__``,
  or an archive's ``torch_version``) are sent too, and checked as ``opgov check-model`` checks a
  saved archive against the torch release the runtime follows. A default that changed between the
  two releases and that the program leaves to itself, or a call that runs only through an
  upgrader: :class:`ArgumentChangeWarning`, one per problem. An argument the runtime's release
  does not know (passed with another value than its default) or requires, an operator it lacks, a
  BC break no upgrader covers: :class:`IncompatibleArgumentsError`, naming the call, the argument
  and both releases. ``verdict.arguments`` is check-model's per-call answer.

The question is the declared use case ``EXPORT_CHECK`` (opgov.usecases.runtimes), asked through
the client the CLI uses (opgov.usecases.client): its service runs in one transaction on the
database, or its method and path are asked of the server. A problem either way is the same
``BadInput`` (or ``PolicyRefusal``) of opgov.core.errors, in one line.

opgov itself never needs torch: this module imports neither torch nor anything that does.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ArgumentChangeWarning", "DeprecatedOperatorError", "DeprecatingOperatorWarning", "ExportVerdict",
           "IncompatibleArgumentsError", "check_export", "operators_of"]


class DeprecatingOperatorWarning(FutureWarning):
    """The program uses an operator that is being deprecated."""


class ArgumentChangeWarning(UserWarning):
    """On the runtime's torch release a call runs otherwise than exported: an argument it leaves to
    its default has another default there, or the call runs only through an upgrader."""


class IncompatibleArgumentsError(Exception):
    """The runtime's torch release cannot run the program's calls as exported (an argument it does
    not know or that it requires, an operator it lacks); ``verdict`` holds the whole answer."""

    def __init__(self, message: str, verdict: ExportVerdict) -> None:
        super().__init__(message)
        self.verdict = verdict


class DeprecatedOperatorError(Exception):
    """The program uses deprecated or deleted operators; ``verdict`` holds the whole answer."""

    def __init__(self, message: str, verdict: ExportVerdict) -> None:
        super().__init__(message)
        self.verdict = verdict


@dataclass(frozen=True)
class ExportVerdict:
    """The answer: the service's ``ExportCheck`` as plain data, and the lines said about it."""

    operators: tuple[str, ...]
    graph_ops: dict[str, str]
    unknown: tuple[str, ...]
    lifecycle: tuple[dict[str, Any], ...]
    runtimes: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    errors: tuple[str, ...]
    arguments: dict[str, Any] | None = None  # with a runtime: check-model's per-call answer (ModelArguments)

    @property
    def runs_on(self) -> tuple[str, ...]:
        """The registered runtimes that run the program."""
        return tuple(r["runtime"] for r in self.runtimes if r["runs"])


def operators_of(program: Any) -> list[str]:
    """The operators of an ``ExportedProgram`` or of a ``.pt2`` archive's programs, canonical, in
    first-use order."""
    from opgov.formats.torch_decomps import overload_name

    if isinstance(program, (str, os.PathLike)):
        from opgov.formats.pt2 import read_pt2

        return list(read_pt2(Path(program)))
    graph = getattr(program, "graph", None)
    if graph is None or not hasattr(graph, "nodes"):
        raise TypeError(f"expected a torch.export ExportedProgram or the path of a .pt2 archive, got "
                        f"{type(program).__name__}")
    found: list[str] = []
    for node in graph.nodes:
        target = node.target
        if node.op != "call_function" or not hasattr(target, "_schema") or not hasattr(target, "_overloadname"):
            continue  # Python operators (getitem, comparisons of sizes) are not ATen's
        name = overload_name(target)
        if name not in found:
            found.append(name)
    return found


def check_export(program: Any, *, db: str | None = None, server: str | None = None, token: str | None = None,
                 runtime: str | None = None, strict: bool = True) -> ExportVerdict:
    """Check an exported program against opgov's record (see the module docstring). With
    ``runtime`` (a registered ``NAME@VERSION``, or a snapshot label standing for torch of that
    release), the program's calls (an archive's as written) are also checked argument by argument
    against the torch release the runtime follows, as ``opgov check-model`` checks an archive: a
    changed default
    the program relies on, or a call that runs only through an upgrader, warns
    (:class:`ArgumentChangeWarning`); a call that release cannot run as exported raises
    :class:`IncompatibleArgumentsError` (``strict=False`` returns instead)."""
    ops = operators_of(program)
    if not ops:
        raise ValueError("the program calls no ATen operator")
    extra: dict[str, Any] = {}
    if runtime is not None:
        extra["runtime"] = runtime
        if isinstance(program, (str, os.PathLike)):  # an archive: its calls as written, by the torch that wrote it
            from opgov.formats.pt2 import archive_calls

            programs = archive_calls(str(program), str(program), raw=True)
            extra["calls"] = [call for _, calls in programs for call in calls]
            extra["torch_version"] = next((version for version, _ in programs if version), None)
        else:
            from opgov.formats.pt2 import graph_calls

            extra["calls"] = graph_calls(program)
            extra["torch_version"] = _torch_version()
    answer = _ask(db, server, token, ops, extra)
    said_warnings, said_errors = [], []
    for note in answer["lifecycle"]:
        line = _sentence(note)
        if note["state"] == "deprecating":
            said_warnings.append(line)
            warnings.warn(line, DeprecatingOperatorWarning, stacklevel=2)
        else:
            said_errors.append(line)
    arguments = answer.get("arguments")
    argument_errors = []
    for problem in (arguments or {}).get("problems", []):
        line = f"{problem['rule']}: {problem['message']}"
        if problem["severity"] == "warning":
            said_warnings.append(line)
            warnings.warn(line, ArgumentChangeWarning, stacklevel=2)
        else:
            argument_errors.append(line)
    if arguments is not None and not arguments.get("checked") and arguments.get("note"):
        said_warnings.append(arguments["note"])
        warnings.warn(arguments["note"], ArgumentChangeWarning, stacklevel=2)
    verdict = ExportVerdict(operators=tuple(answer["operators"]), graph_ops=dict(answer["graph_ops"]),
                            unknown=tuple(answer["unknown"]), lifecycle=tuple(answer["lifecycle"]),
                            runtimes=tuple(answer["runtimes"]), warnings=tuple(said_warnings),
                            errors=tuple(said_errors + argument_errors), arguments=arguments)
    if said_errors and strict:
        raise DeprecatedOperatorError("; ".join(said_errors), verdict)
    if argument_errors and strict:
        raise IncompatibleArgumentsError(f"{runtime} cannot run the program as exported: " + "; ".join(argument_errors),
                                         verdict)
    return verdict


def _torch_version() -> str | None:
    """The version of the torch that made the program: the one loaded (an ExportedProgram's)."""
    import sys

    torch = sys.modules.get("torch")
    return str(torch.__version__) if torch is not None and hasattr(torch, "__version__") else None


def _sentence(note: dict[str, Any]) -> str:
    since = (note.get("since") or "")[:10]
    text = f"{note['op']} is {note['state']}" + (f" since {since}" if since else "")
    if note.get("next_step") and note.get("next_step_on"):
        text += f"; it may become {note['next_step']} on {note['next_step_on'][:10]}"
    if note.get("replacement"):
        text += f"; use {note['replacement']} instead"
    return text


def _ask(db: str | None, server: str | None, token: str | None, ops: list[str],
         extra: dict[str, Any]) -> dict[str, Any]:
    """The declared use case ``export-check`` (opgov.usecases.runtimes.EXPORT_CHECK) asked through the
    same client as the CLI's (opgov.usecases.client): of the server, or in one transaction on the database."""
    from opgov.results.plain import jsonable
    from opgov.usecases.client import connect, on_database
    from opgov.usecases.runtimes import EXPORT_CHECK

    client = connect(server, token, begin=on_database(db or os.environ.get("OPGOV_DATABASE_URL"), "export-check"))
    result = client.call(EXPORT_CHECK, EXPORT_CHECK.ask(operators=ops, **extra))
    return jsonable(result)
