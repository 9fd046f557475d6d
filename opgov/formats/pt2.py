"""The operators of a ``torch.export`` archive (``.pt2``), read without torch.

``torch.export.save(ep, "m.pt2")`` writes a zip. Its serialized program is JSON: in the PT2
archive layout of torch 2.6 and later ``<archive>/models/<model>.json`` (one per program), and
``serialized_exported_program.json`` in the older layout. Both hold ``{"graph_module": {"graph":
{"nodes": [...]}}, "schema_version": ...}``; each node names its operator as a ``target`` string
(``torch.ops.aten.add.Tensor``). Higher-order operators (``torch.ops.higher_order.cond``,
``while_loop``, ``map``) carry their branches as nested graphs (``{"as_graph": {"graph": {...}}}``),
whose nodes count too. Python-level targets (``_operator.getitem``) and the higher-order operators
themselves are not ATen operators and are left out.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.core.names import canonical

# the serialized program of a real model is a few MB; a JSON member bigger than this is not one
MAX_PROGRAM_BYTES = 256 * 1024 * 1024
_TARGET = re.compile(r"^torch\.ops\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)$")
_NOT_OPERATORS = frozenset({"higher_order"})


def program_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members holding a serialized exported program."""
    found = []
    for info in archive.infolist():
        parts = info.filename.split("/")
        if info.is_dir() or not parts[-1].endswith(".json"):
            continue
        if (len(parts) >= 2 and parts[-2] == "models") or parts[-1] == "serialized_exported_program.json":
            found.append(info)
    return found


def read_pt2(path: str | Path) -> tuple[str, ...]:
    """The operators every program of the archive calls, first occurrence first."""
    return _archive_ops(path, str(path))


def parse_pt2(data: bytes, name: str) -> tuple[str, ...]:
    """:func:`read_pt2` of an archive already in memory (an upload); messages name it ``name``."""
    return _archive_ops(io.BytesIO(data), name)


def _archive_ops(file, name: str) -> tuple[str, ...]:
    try:
        with zipfile.ZipFile(file) as archive:
            members = program_members(archive)
            if not members:
                raise BadInput("no serialized program in the archive (models/*.json): not a torch.export archive",
                               file=name)
            ops: dict[str, None] = {}
            for info in members:
                where = f"{name}!{info.filename}"
                if info.file_size > MAX_PROGRAM_BYTES:
                    raise BadInput(f"{info.file_size} bytes: too big for a serialized program", file=where)
                data = _load_json(archive.read(info), where)
                for op in program_ops(data, where):
                    ops[op] = None
    except BadInput:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise BadInput(f"not a readable torch.export archive (zip): {exc}", file=name) from None
    except (OSError, RuntimeError, ValueError) as exc:  # bad CRC, encrypted member, truncated data
        raise BadInput(f"not a readable torch.export archive (zip): {exc}", file=name) from None
    return tuple(ops)


def _load_json(raw: bytes, where: str):
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput("the serialized program is not UTF-8 JSON", file=where) from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"the serialized program is not valid JSON: {exc.msg}", file=where, line=exc.lineno) from None
    except RecursionError:
        raise BadInput("the serialized program is nested too deeply", file=where) from None


def program_ops(data, where: str = "<program>") -> list[str]:
    """The operator targets of one serialized program (the JSON object), nested graphs included."""
    if not isinstance(data, dict) or not isinstance(data.get("graph_module"), dict):
        raise BadInput("not a serialized exported program (no 'graph_module')", file=where)
    graph = data["graph_module"].get("graph")
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise BadInput("not a serialized exported program (no graph nodes)", file=where)
    ops: list[str] = []
    stack: list = [graph]
    while stack:  # iterative: a hostile file cannot exhaust the recursion limit
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
            continue
        if not isinstance(item, dict):
            continue
        nodes = item.get("nodes")
        if isinstance(nodes, list) and "outputs" in item:  # a graph
            for node in nodes:
                if not isinstance(node, dict):
                    raise BadInput("a graph node that is not an object", file=where)
                target = node.get("target")
                if not isinstance(target, str):
                    raise BadInput("a graph node without a target", file=where)
                op = _operator(target, where)
                if op is not None:
                    ops.append(op)
            # nested graphs live in the nodes' inputs; look there, after this graph's own nodes
            stack.extend(reversed([node.get("inputs") for node in nodes]))
        else:
            stack.extend(reversed([v for k, v in item.items() if k != "metadata"]))
    return list(dict.fromkeys(ops))


def _operator(target: str, where: str) -> str | None:
    match = _TARGET.match(target)
    if match is None or match.group(1) in _NOT_OPERATORS:
        return None
    try:
        return canonical(f"{match.group(1)}::{match.group(2)}.{match.group(3)}")
    except BadInput as exc:
        raise BadInput(f"node target {target!r}: {exc.message}", file=where) from None
