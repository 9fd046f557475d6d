"""The export-time check: warn on ``deprecating`` operators, stop on ``deprecated`` ones.

The policy asks ``torch.export`` users to be warned when their program uses an operator on its
way out and stopped when it uses one that is out::

    import torch
    from opgov.export_check import check_export

    ep = torch.export.export(model, args)
    result = check_export(ep, db="sqlite:///opgov.db")   # or a path to a .pt2
    print(result.runtimes_running)

A ``deprecating`` operator raises a :class:`DeprecatingOperatorWarning` (Python ``warnings``);
a ``deprecated`` or ``deleted`` one raises :class:`DeprecatedOperatorError`. Both say since when,
when the next step is due and the replacement. Graph operators (assertions, symbolic sizes;
:mod:`opgov.core.graph_ops`) never count against a runtime.

This module imports without torch: an ``ExportedProgram`` is read by duck typing (its graph
modules' ``call_function`` nodes), a ``.pt2`` by :mod:`opgov.formats.pt2`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class DeprecatingOperatorWarning(FutureWarning):
    """The program uses an operator in the ``deprecating`` state: it still runs, for now."""


class DeprecatedOperatorError(Exception):
    """The program uses a ``deprecated`` or ``deleted`` operator: the policy stops the export."""

    def __init__(self, message: str, operators: list[str]):
        super().__init__(message)
        self.operators = operators


@dataclass(frozen=True)
class ExportCheck:
    operators: list[str]
    graph_ops: dict[str, str] = field(default_factory=dict)
    deprecating: list[str] = field(default_factory=list)
    runtimes_running: list[str] = field(default_factory=list)


def program_operators(program: Any) -> list[str]:
    """The operators (``aten::add.Tensor``) of an ``ExportedProgram`` or a ``.pt2`` path, in order."""
    from opgov.core.names import canonical

    if isinstance(program, (str, Path)):
        from opgov.formats.pt2 import read_pt2

        return list(read_pt2(program))
    module = getattr(program, "graph_module", None)
    if module is None or not hasattr(module, "modules"):
        raise TypeError(f"expected an ExportedProgram or a path to a .pt2, got {type(program).__name__}")
    seen: dict[str, None] = {}
    for sub in module.modules():  # nested graphs (cond, map branches) are submodules
        graph = getattr(sub, "graph", None)
        for node in getattr(graph, "nodes", ()):
            target = node.target
            if node.op != "call_function" or not hasattr(target, "_schema"):
                continue  # Python callables (operator.getitem), higher-order operators
            schema = target._schema
            name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
            seen.setdefault(canonical(name), None)
    return list(seen)


def _when(value: Any) -> str:
    return str(value)[:10] if value else "unknown"


def _sentence(note: Any) -> str:
    get = note.get if isinstance(note, dict) else lambda k: getattr(note, k)
    text = f"{get('op')} is {get('state')} since {_when(get('since'))}"
    if get("next_step"):
        text += f"; {get('next_step')} from {_when(get('next_step_on'))}"
    text += f"; use {get('replacement')} instead" if get("replacement") else "; no replacement on record"
    return text


def check_export(program: Any, *, db: str | None = None, server: str | None = None,
                 token: str | None = None) -> ExportCheck:
    """Apply the seed policy to ``program`` (an ``ExportedProgram`` or a ``.pt2`` path) against an
    opgov database URL (``db``) or a running ``opgov serve`` (``server``, optional ``token``)."""
    ops = program_operators(program)
    if (db is None) == (server is None):
        raise ValueError("give exactly one of db= (a database URL) or server= (an opgov serve URL)")
    if db is not None:
        data = _from_db(db, ops)
    else:
        data = _from_server(server, token, ops)
    stopped = [n for n in data["lifecycle"] if n["state"] in ("deprecated", "deleted")]
    going = [n for n in data["lifecycle"] if n["state"] == "deprecating"]
    for note in going:
        warnings.warn(_sentence(note), DeprecatingOperatorWarning, stacklevel=2)
    if stopped:
        raise DeprecatedOperatorError("the program uses operators the policy stops: "
                                      + "; ".join(_sentence(n) for n in stopped), [n["op"] for n in stopped])
    return ExportCheck(operators=ops, graph_ops=dict(data["graph_ops"]), deprecating=[n["op"] for n in going],
                       runtimes_running=list(data["runtimes_running"]))


def _from_db(url: str, ops: list[str]) -> dict:
    from opgov.core.clock import SystemClock
    from opgov.db.engine import ensure_current, make_engine, resolve_url, transaction
    from opgov.services.common import Ctx
    from opgov.services.runtimes import export_verdict

    engine = make_engine(resolve_url(url))
    try:
        ensure_current(engine)
        with transaction(engine, write=False) as session:
            verdict = export_verdict(Ctx(session=session, actor="export-check", clock=SystemClock()), ops)
            return verdict.model_dump(mode="json")
    finally:
        engine.dispose()


def _from_server(server: str, token: str | None, ops: list[str]) -> dict:
    import json
    import urllib.error
    import urllib.request

    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    request = urllib.request.Request(server.rstrip("/") + "/api/v1/export-check", method="POST",
                                     data=json.dumps({"operators": ops}).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise RuntimeError(f"{server}: HTTP {err.code}: {err.read()[:300].decode(errors='replace')}") from None
