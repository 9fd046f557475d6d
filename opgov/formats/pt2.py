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

from opgov.core.budget import spend
from opgov.core.errors import BadInput
from opgov.core.names import canonical

# What a reader inflates and builds is bounded, whatever the archive declares: a hostile archive of a
# few hundred KB can inflate to hundreds of MB of JSON whose tree is tens of times bigger still.
# The serialized program of a real model is a few MB (its JSON values a few hundred thousand):
# a program member inflating to more than MAX_PROGRAM_BYTES, the programs of one archive to more
# than MAX_ARCHIVE_BYTES, or a program of more than MAX_JSON_VALUES values (objects, arrays, strings,
# numbers: counted from the text before it is parsed, so the tree is never built) is refused.
MAX_PROGRAM_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_BYTES = 128 * 1024 * 1024
MAX_JSON_VALUES = 2_000_000
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
            left = [MAX_ARCHIVE_BYTES]
            for info in members:
                where = f"{name}!{info.filename}"
                data = _load_json(_inflate(archive, info, where, left), where)
                for op in program_ops(data, where):
                    ops[op] = None
                del data
    except BadInput:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError) as exc:
        raise BadInput(f"not a readable torch.export archive (zip): {exc}", file=name) from None
    except (OSError, RuntimeError, ValueError) as exc:  # bad CRC, encrypted member, truncated data
        raise BadInput(f"not a readable torch.export archive (zip): {exc}", file=name) from None
    return tuple(ops)


def _inflate(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, left: list[int]) -> bytes:
    """A program member's bytes, inflated at most to :data:`MAX_PROGRAM_BYTES` and to what is ``left``
    of the archive's :data:`MAX_ARCHIVE_BYTES` (``left[0]``, lessened by what is read): refused at the
    bound, whatever the member's header declares, before more is inflated."""
    limit = min(MAX_PROGRAM_BYTES, left[0])
    if info.file_size > limit:
        raise BadInput(_too_big(f"{info.file_size:,} bytes (as its header says)", limit), file=where)
    with archive.open(info) as member:
        raw = member.read(limit + 1)  # inflates no more than this, whatever the header says
    if len(raw) > limit:
        raise BadInput(_too_big(f"more than {limit:,} bytes", limit), file=where)
    left[0] -= len(raw)
    return raw


def _too_big(size: str, limit: int) -> str:
    what = (f"{MAX_PROGRAM_BYTES // 2**20} MiB, the bound for a serialized program" if limit == MAX_PROGRAM_BYTES
            else f"the {limit:,} bytes left of {MAX_ARCHIVE_BYTES // 2**20} MiB, the bound for an archive's programs")
    return f"inflates to {size}: more than {what}"


def _load_json(raw: bytes, where: str):
    from opgov.formats.files import json_values

    values = json_values(raw)  # before a tree is built
    if values > MAX_JSON_VALUES:
        raise BadInput(f"holds up to {values:,} JSON values: more than {MAX_JSON_VALUES:,}, the bound for a "
                       "serialized program", file=where)
    try:
        return json.loads(raw)
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
        spend()  # the request's processing time (opgov.core.budget)
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


# --- calls, argument by argument ---------------------------------------------------------------------

# torch._export.serde.schema's enums → what PyTorch's schema parser reads a default as (c10's codes)
_SERDE_DTYPES = {1: ("uint8", 0), 2: ("int8", 1), 3: ("int16", 2), 4: ("int32", 3), 5: ("int64", 4),
                 6: ("float16", 5), 7: ("float32", 6), 8: ("float64", 7), 9: ("complex32", 8), 10: ("complex64", 9),
                 11: ("complex128", 10), 12: ("bool", 11), 13: ("bfloat16", 15), 28: ("uint16", 27),
                 29: ("float8_e4m3fn", 24), 30: ("float8_e5m2", 23), 31: ("float8_e4m3fnuz", 25),
                 32: ("float8_e5m2fnuz", 26), 33: ("float8_e8m0fnu", 44), 34: ("uint32", 28), 35: ("uint64", 29)}
_SERDE_MEMORY_FORMATS = {1: ("contiguous_format", 0), 2: ("channels_last", 2), 3: ("channels_last_3d", 3),
                         4: ("preserve_format", 1)}
_SERDE_LAYOUTS = {1: ("sparse_coo", 1), 2: ("sparse_csr", 2), 3: ("sparse_csc", 3), 4: ("sparse_bsr", 4),
                  5: ("sparse_bsc", 5), 6: ("_mkldnn", 6), 7: ("strided", 0)}
_KEYWORD = 2  # torch._export.serde.schema.ArgumentKind.KEYWORD


def dtype_name(code) -> str:
    """A serialized dtype (``7``) → ``float32``."""
    return _SERDE_DTYPES.get(code, (f"dtype#{code}", None))[0]


def argument_value(arg) -> tuple[tuple, str]:
    """A serialized argument (``{"as_string": "tanh"}``) → (its value tagged as
    :func:`opgov.core.compat.torchscript.default_value` tags a default, how to show it)."""
    if not isinstance(arg, dict) or len(arg) != 1:
        return ("invalid",), "?"
    (kind, value), = arg.items()
    if kind == "as_none":
        return ("none",), "None"
    if kind == "as_bool" and isinstance(value, bool):
        return ("bool", value), str(value)
    if kind == "as_int" and isinstance(value, int):
        return ("int", value), str(value)
    if kind == "as_float" and isinstance(value, (int, float)):
        return ("float", float(value)), repr(float(value))
    if kind == "as_string" and isinstance(value, str):
        return ("str", value), repr(value)
    if kind in ("as_ints", "as_floats", "as_bools") and isinstance(value, list):
        tag = {"as_ints": "int", "as_floats": "float", "as_bools": "bool"}[kind]
        items = tuple((tag, float(v) if tag == "float" else v) for v in value)
        return ("list", items), "[" + ", ".join(str(v) for v in value) + "]"
    if kind == "as_scalar_type" and value in _SERDE_DTYPES:
        name, code = _SERDE_DTYPES[value]
        return ("int", code), f"torch.{name}"
    if kind == "as_memory_format" and value in _SERDE_MEMORY_FORMATS:
        name, code = _SERDE_MEMORY_FORMATS[value]
        return ("int", code), f"torch.{name}"
    if kind == "as_layout" and value in _SERDE_LAYOUTS:
        name, code = _SERDE_LAYOUTS[value]
        return ("int", code), f"torch.{name}"
    if kind == "as_device" and isinstance(value, dict):
        text = str(value.get("type")) + (f":{value['index']}" if value.get("index") is not None else "")
        return ("device", text), repr(text)
    if kind in ("as_sym_int", "as_sym_float", "as_sym_bool") and isinstance(value, dict):
        if "as_name" in value:
            return ("symbolic", value["as_name"]), str(value["as_name"])
        return argument_value({kind.replace("sym_", ""): next(iter(value.values()))})
    if kind in ("as_tensor", "as_optional_tensor", "as_tensors", "as_optional_tensors", "as_sym_ints",
                "as_sym_floats", "as_sym_bools"):
        return ("tensor", kind), "a tensor" if "tensor" in kind else "symbolic values"
    return (kind,), kind.removeprefix("as_")


def _tensor_names(value) -> list[str]:
    """The tensor names a serialized argument or output refers to."""
    names: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                if key in ("as_tensor", "as_optional_tensor") and isinstance(inner, dict) and "name" in inner:
                    names.append(inner["name"])
                elif key in ("as_tensors", "as_optional_tensors", "as_tensor"):
                    stack.append(inner)
                elif isinstance(inner, (dict, list)) and key != "as_graph":
                    stack.append(inner)
    return names


def program_calls(data, where: str = "<program>", *, raw: bool = False):
    """Every call of one serialized program (nested graphs included), as
    :class:`opgov.core.model_args.Call`: its arguments by name and the dtypes of its tensors (with
    ``raw``, as :func:`graph_calls` gives them: each argument as the archive writes it)."""
    from opgov.core.model_args import Call, CallArg

    program_ops(data, where)  # checks the shape, in the words of the operator reader
    calls = []
    stack: list = [data["graph_module"]["graph"]]
    while stack:
        spend()
        graph = stack.pop()
        tensors = graph.get("tensor_values") if isinstance(graph.get("tensor_values"), dict) else {}
        for node in graph.get("nodes", []):
            op = _operator(node["target"], where)
            inputs = node.get("inputs") if isinstance(node.get("inputs"), list) else []
            for item in inputs:  # nested graphs (cond, while_loop, map) are arguments
                if isinstance(item, dict) and isinstance(item.get("arg"), dict):
                    nested = item["arg"].get("as_graph")
                    if isinstance(nested, dict) and isinstance(nested.get("graph"), dict):
                        stack.append(nested["graph"])
            if op is None:
                continue
            args = []
            for item in inputs:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    continue
                if raw:
                    args.append({"name": item["name"], "keyword": item.get("kind") == _KEYWORD,
                                 "arg": item.get("arg") if isinstance(item.get("arg"), dict) else {}})
                    continue
                value, text = argument_value(item.get("arg"))
                args.append(CallArg(item["name"], item.get("kind") == _KEYWORD, value, text))
            names = _tensor_names([i.get("arg") for i in inputs if isinstance(i, dict)]) + _tensor_names(
                node.get("outputs"))
            dtypes = {dtype_name(tensors[n]["dtype"]) for n in names
                      if isinstance(tensors.get(n), dict) and "dtype" in tensors[n]}
            uses = _tensor_uses(inputs, node.get("outputs"), tensors)
            if raw:
                calls.append({"node": str(node.get("name") or op), "op": op, "args": args, "dtypes": sorted(dtypes)})
                continue
            calls.append(Call(str(node.get("name") or op), op, tuple(args), tuple(sorted(dtypes)), uses))
    return calls


def _ordered_tensor_names(value) -> list[str]:
    """The tensor names a serialized argument or output refers to, in order."""
    if isinstance(value, list):
        return [n for item in value for n in _ordered_tensor_names(item)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("name"), str) and len(value) <= 2 and "arg" not in value:
        return [value["name"]]
    out = []
    for key, inner in value.items():
        if key in ("as_tensor", "as_optional_tensor") and isinstance(inner, dict) and isinstance(inner.get("name"), str):
            out.append(inner["name"])
        elif key in ("as_tensors", "as_optional_tensors"):
            out.extend(_ordered_tensor_names(inner))
    return out


def _tensor_uses(inputs: list, outputs, tensors: dict) -> tuple:
    """The dtype and rank of each tensor a call passes (by argument name) and returns
    (``<output>0``, …), from the graph's tensor metadata."""
    from opgov.core.kernels import OUTPUT, TensorUse

    def use(argument: str, name: str) -> TensorUse:
        meta = tensors.get(name)
        if not isinstance(meta, dict):
            return TensorUse(argument, None, None)
        sizes = meta.get("sizes")
        return TensorUse(argument, dtype_name(meta["dtype"]) if "dtype" in meta else None,
                         len(sizes) if isinstance(sizes, list) else None)

    out = []
    for item in inputs:
        if isinstance(item, dict) and isinstance(item.get("name"), str) and isinstance(item.get("arg"), dict):
            out.extend(use(item["name"], n) for n in _ordered_tensor_names(item["arg"]))
    for i, name in enumerate(_ordered_tensor_names(outputs if isinstance(outputs, list) else [])):
        out.append(use(f"{OUTPUT}{i}", name))
    return tuple(out)


def archive_calls(file, name: str, *, raw: bool = False) -> list[tuple[str | None, list]]:
    """For each program of a ``.pt2`` archive (a path, or bytes of an upload named ``name``): the
    torch release that wrote it (``torch_version``; None in archives that do not say) and its calls
    (``raw``: see :func:`program_calls`)."""
    source = io.BytesIO(file) if isinstance(file, (bytes, bytearray)) else file
    try:
        with zipfile.ZipFile(source) as archive:
            members = program_members(archive)
            if not members:
                raise BadInput("no serialized program in the archive (models/*.json): not a torch.export archive",
                               file=name)
            out = []
            left = [MAX_ARCHIVE_BYTES]
            for info in members:
                where = f"{name}!{info.filename}"
                data = _load_json(_inflate(archive, info, where, left), where)
                version = data.get("torch_version") if isinstance(data, dict) else None
                out.append((version if isinstance(version, str) and version else None,
                            program_calls(data, where, raw=raw)))
    except BadInput:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, OSError, RuntimeError,
            ValueError) as exc:
        raise BadInput(f"not a readable torch.export archive (zip): {exc}", file=name) from None
    return out


# --- an in-memory program's calls, as the serializer would write them ---------------------------------

_BY_NAME = {
    "dtype": {name: code for code, (name, _) in _SERDE_DTYPES.items()},
    "memory_format": {name: code for code, (name, _) in _SERDE_MEMORY_FORMATS.items()},
    "layout": {name: code for code, (name, _) in _SERDE_LAYOUTS.items()},
}
_ENUM_KIND = {"dtype": "as_scalar_type", "memory_format": "as_memory_format", "layout": "as_layout"}


def _is_node(value) -> bool:
    return hasattr(value, "op") and hasattr(value, "meta") and hasattr(value, "name")


def _node_is_tensor(node) -> bool:
    val = node.meta.get("val")
    return hasattr(val, "dtype") and hasattr(val, "shape")


def serialized_argument(value) -> dict:
    """A value an ``ExportedProgram``'s node passes (a Python constant, a torch dtype, device,
    layout or memory format, a graph node) → the JSON torch.export's serializer writes for it
    (``{"as_string": "tanh"}``), read back by :func:`argument_value`. Reads the objects as they
    are: no torch import."""
    if value is None:
        return {"as_none": True}
    if isinstance(value, bool):
        return {"as_bool": value}
    if isinstance(value, int):
        return {"as_int": value}
    if isinstance(value, float):
        return {"as_float": value}
    if isinstance(value, str):
        return {"as_string": value}
    kind = type(value).__name__
    if kind in _ENUM_KIND:
        code = _BY_NAME[kind].get(str(value).removeprefix("torch."))
        return {_ENUM_KIND[kind]: code} if code is not None else {f"as_{kind}": str(value)}
    if kind == "device":
        return {"as_device": {"type": value.type, "index": value.index}}
    if _is_node(value):
        if _node_is_tensor(value):
            return {"as_tensor": {"name": value.name}}
        return {"as_sym_int": {"as_name": value.name}}
    if isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(v, bool) for v in items) and items:
            return {"as_bools": items}
        if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            return {"as_ints": items}
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
            return {"as_floats": [float(v) for v in items]}
        if any(_is_node(v) and _node_is_tensor(v) for v in items):
            if any(v is None for v in items):
                return {"as_optional_tensors": [{"as_tensor": {"name": v.name}} if v is not None else {"as_none": True}
                                                for v in items]}
            return {"as_tensors": [{"name": v.name} for v in items if _is_node(v)]}
        return {"as_sym_ints": [{"as_name": v.name} if _is_node(v) else {"as_int": v} for v in items]}
    return {"as_other": kind}


def graph_calls(program) -> list[dict]:
    """Each ATen call of an ``ExportedProgram`` (its graph and nested ones): the node's name, the
    operator (canonical), the arguments it passes as torch.export's serializer keeps them (by the
    schema's names; what it leaves to a keyword default is not written) and the dtypes of its
    tensors. JSON, as the export-time check sends them."""
    from opgov.formats.torch_decomps import overload_name

    calls: list[dict] = []
    modules = [program.graph_module] if hasattr(program, "graph_module") else []
    seen: set[int] = set()
    while modules:
        module = modules.pop()
        if id(module) in seen or not hasattr(module, "graph"):
            continue
        seen.add(id(module))
        modules.extend(child for child in getattr(module, "children", lambda: [])() if hasattr(child, "graph"))
        for node in module.graph.nodes:
            target = node.target
            if node.op != "call_function" or not hasattr(target, "_schema") or not hasattr(target, "_overloadname"):
                continue
            args = []
            for i, schema_arg in enumerate(target._schema.arguments):  # as the serializer matches them
                if schema_arg.name in node.kwargs:
                    args.append({"name": schema_arg.name, "keyword": True,
                                 "arg": serialized_argument(node.kwargs[schema_arg.name])})
                elif not schema_arg.kwarg_only and i < len(node.args):
                    args.append({"name": schema_arg.name, "keyword": False, "arg": serialized_argument(node.args[i])})
            dtypes = set()
            for value in [*node.all_input_nodes, node]:
                val = value.meta.get("val")
                for item in (val if isinstance(val, (list, tuple)) else [val]):
                    if hasattr(item, "dtype") and hasattr(item, "shape"):
                        dtypes.add(str(item.dtype).removeprefix("torch."))
            calls.append({"node": node.name, "op": overload_name(target), "args": args, "dtypes": sorted(dtypes)})
    return calls
