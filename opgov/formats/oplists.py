"""Files that name operators: what a model uses, or what a runtime implements.

:func:`read_op_file` recognises, by content (never by the file name alone):

``pt2``
    a ``torch.export`` archive (``torch.export.save``): a zip holding the serialized program as
    JSON; the operators are the graph nodes' targets (``torch.ops.aten.add.Tensor``), in every
    subgraph. Read with zipfile and json: no torch needed (:mod:`opgov.formats.pt2`).
``kernel-yaml``
    ExecuTorch's kernel registries (``functions.yaml``, ``optimized.yaml``, custom ops yaml): a
    list of ``- op: add.out`` (an ATen operator by name) or ``- func: ns::name.overload(...) -> ...``
    (a schema) entries.
``selected-operators``
    the selected-operators YAML of PyTorch's and ExecuTorch's selective build (and of
    ``opgov opset build --format selective-build``): ``operators: {aten::add.out: {...}, ...}``.
``opset-json`` / ``opset-text``
    ``opgov opset build`` output (``--format json``, or the default text).
``list``
    a JSON list of operator names, or one operator per line (``#`` comments, blank lines ignored).

Names are canonicalized (``aten.relu.default`` → ``aten::relu``, ``add.out`` → ``aten::add.out``)
and de-duplicated, first occurrence first. Anything malformed is :class:`BadInput` naming the
file (and line where there is one): one line, never a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.core.names import canonical
from opgov.formats.files import Content

FORMATS = ("pt2", "kernel-yaml", "selected-operators", "opset-json", "opset-text", "list")
MODEL_FORMATS = ("pt2", "selected-operators", "list")  # what a model's operators come in
# more than any real operator list; a bigger text file is not one
MAX_TEXT_BYTES = 64 * 1024 * 1024
_YAML_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*:(\s|$)")
_OPSET_TEXT = re.compile(r"^opset .*: \d+ operators to implement$")


@dataclass(frozen=True)
class OpList:
    """The operators a file names, in file order, and which format it was."""

    path: str
    format: str
    ops: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.ops)


def read_op_file(path: str | Path, *, accept: Sequence[str] = FORMATS) -> OpList:
    """Read any of the formats in the module docstring that ``accept`` allows."""
    path = Path(path)
    name = str(path)
    from opgov.formats.files import check_file, read_bytes

    check_file(path, limit=None)  # a FIFO, a device, a loop of links: refused before any read
    try:
        with path.open("rb") as handle:
            head = handle.read(4)
    except OSError as exc:
        raise BadInput(f"cannot read: {exc.strerror or exc}", file=name) from None
    if _is_archive(head, name):  # read from the file: an archive may hold much more than its program
        _accept("pt2", accept, name)
        from opgov.formats.pt2 import read_pt2

        return OpList(path=name, format="pt2", ops=read_pt2(path))
    data = read_bytes(path, limit=MAX_TEXT_BYTES)
    return _text_ops(_decode(data, name), name, accept)


def parse_op_file(content: str | bytes, name: str, *, accept: Sequence[str] = FORMATS) -> OpList:
    """:func:`read_op_file` of a file already in memory (an upload): bytes (a ``.pt2`` archive is
    recognised as a file is) or text; messages and the list's ``path`` name it ``name``."""
    if isinstance(content, str):
        if "\x00" in content:
            raise BadInput(_BINARY, file=name)
        return _text_ops(content, name, accept)
    if _is_archive(content[:4], name):
        _accept("pt2", accept, name)
        from opgov.formats.pt2 import parse_pt2

        return OpList(path=name, format="pt2", ops=parse_pt2(content, name))
    if len(content) > MAX_TEXT_BYTES:
        raise BadInput(f"{len(content)} bytes: too big for an operator list", file=name)
    return _text_ops(_decode(content, name), name, accept)


def _is_archive(head: bytes, name: str) -> bool:
    """A zip (or an empty one), or a file named as a torch.export archive."""
    return head in (b"PK\x03\x04", b"PK\x05\x06") or Path(name).suffix == ".pt2"


def read_archives(models: Sequence[str | Content]) -> list[tuple[str, list]]:
    """(name, [(torch_version, calls) per program]) of every .pt2 archive among ``models``."""
    from opgov.formats.pt2 import archive_calls

    out = []
    for model in models:
        if isinstance(model, Content):
            data = model.data if isinstance(model.data, bytes) else None
            if data is not None and _is_archive(data[:4], model.name):
                out.append((model.name, archive_calls(data, model.name)))
        elif Path(model).is_file():
            with open(model, "rb") as handle:
                head = handle.read(4)
            if _is_archive(head, str(model)):
                out.append((str(model), archive_calls(str(model), str(model))))
    return out


def _text_ops(text: str, name: str, accept: Sequence[str]) -> OpList:
    fmt = _sniff(text)
    if fmt == "opset-json" and fmt not in accept and "list" in accept:
        fmt = "list"  # the list reader says what a JSON object is not
    _accept(fmt, accept, name)
    if fmt in ("kernel-yaml", "selected-operators"):
        ops = _read_yaml_ops(text, name, fmt)
    elif fmt == "opset-json":
        ops = _read_opset_json(text, name)
    elif fmt == "opset-text":
        ops = _read_opset_text(text, name)
    else:
        from opgov.formats.corpus import list_ops

        ops = list_ops(text, name)
    if not ops:
        raise BadInput("names no operators", file=name)
    return OpList(path=name, format=fmt, ops=tuple(dict.fromkeys(ops)))


def read_model_specs(specs: str | Content | Sequence[str | Content], *, corpora_dir: Path | None = None,
                     accept: Sequence[str] = MODEL_FORMATS) -> list[OpList]:
    """One :class:`OpList` per spec: a file (:func:`read_op_file`), a file already in memory
    (:class:`~opgov.formats.files.Content`, :func:`parse_op_file`), or ``CORPUS#model[@stage]`` (a
    model of a corpus, :func:`opgov.formats.corpus.resolve_model_ops`)."""
    from opgov.formats.corpus import resolve_model_ops

    if isinstance(specs, (str, Content)):
        specs = [specs]
    if not specs:
        raise BadInput("name at least one model")
    out = []
    for spec in specs:
        if isinstance(spec, Content):
            out.append(parse_op_file(spec.data, spec.name, accept=accept))
        elif Path(spec).is_file():
            out.append(read_op_file(spec, accept=accept))
        else:  # CORPUS#model, or the error that says what it is not
            out.append(OpList(path=spec, format="corpus", ops=tuple(resolve_model_ops(spec, corpora_dir=corpora_dir))))
    return out


def union(lists: Iterable[OpList]) -> tuple[str, ...]:
    """Every operator of ``lists``, first occurrence first."""
    return tuple(dict.fromkeys(op for lst in lists for op in lst.ops))


def _accept(fmt: str, accept: Sequence[str], name: str) -> None:
    if fmt not in accept:
        raise BadInput(f"a {fmt} file is not accepted here (accepted: {', '.join(accept)})", file=name)


_BINARY = "a binary file, not an operator list or a torch.export archive"


def _decode(data: bytes, name: str) -> str:
    if b"\x00" in data:
        raise BadInput(_BINARY, file=name)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"not UTF-8 text (byte {exc.start}): not an operator list", file=name) from None


def _sniff(text: str) -> str:
    from opgov.formats.files import iter_lines

    for raw in iter_lines(text):  # a line at a time: only the first that says something is needed
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            return "opset-json"
        if line.startswith("["):
            return "list"
        if _OPSET_TEXT.match(line):
            return "opset-text"
        if raw.startswith("- "):
            return "kernel-yaml"
        if _YAML_KEY.match(raw):
            return "selected-operators"
        return "list"
    return "list"


# --- YAML: kernel registries and selected operators -------------------------------------------------


def _compose(text: str, name: str):
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise BadInput(f"not valid YAML: {exc.problem or exc}", file=name,
                       line=mark.line + 1 if mark is not None else None) from None
    except yaml.YAMLError as exc:
        raise BadInput(f"not valid YAML: {exc}", file=name) from None


def _line(node) -> int:
    return node.start_mark.line + 1


def _op(text: str, name: str, line: int) -> str:
    try:
        return canonical(text)
    except BadInput as exc:
        raise BadInput(exc.message, file=name, line=line) from None


def _read_yaml_ops(text: str, name: str, fmt: str) -> list[str]:
    import yaml

    root = _compose(text, name)
    if fmt == "kernel-yaml":
        if not isinstance(root, yaml.SequenceNode):
            raise BadInput("a kernel registry is a list of '- op: NAME' or '- func: SCHEMA' entries", file=name,
                           line=_line(root) if root is not None else None)
        ops: list[str] = []
        for item in root.value:
            fields = _fields(item, name, "a kernel entry")
            if "op" in fields:
                node = fields["op"]
                ops.append(_op(_scalar(node, name, "'op'"), name, _line(node)))
            elif "func" in fields:
                node = fields["func"]
                schema = _scalar(node, name, "'func'")
                ops.append(_op(schema.split("(", 1)[0], name, _line(node)))
            else:
                raise BadInput("a kernel entry without 'op' or 'func'", file=name, line=_line(item))
        return ops
    if not isinstance(root, yaml.MappingNode):
        raise BadInput("expected a mapping with 'operators:'", file=name, line=_line(root) if root is not None else None)
    top = _fields(root, name, "the file")
    if _truthy(top.get("include_all_operators")):
        raise BadInput("'include_all_operators: true' selects every operator: it names none to check",
                       file=name, line=_line(top["include_all_operators"]))
    if "operators" not in top:
        raise BadInput("no 'operators:' (a selected-operators file maps each operator name to its options)",
                       file=name, line=_line(root))
    node = top["operators"]
    if isinstance(node, yaml.MappingNode):
        keys = [k for k, _ in node.value]
    elif isinstance(node, yaml.SequenceNode):
        keys = list(node.value)
    elif isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null", "{}", "[]"):
        keys = []
    else:
        raise BadInput("'operators' must map operator names to their options", file=name, line=_line(node))
    return [_op(_scalar(k, name, "an operator name"), name, _line(k)) for k in keys]


def _fields(node, name: str, what: str) -> dict:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise BadInput(f"{what} must be a mapping", file=name, line=_line(node))
    out = {}
    for key, value in node.value:
        field = _scalar(key, name, "a key")
        if field in out:
            raise BadInput(f"key {field!r} appears twice", file=name, line=_line(key))
        out[field] = value
    return out


def _scalar(node, name: str, what: str) -> str:
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        raise BadInput(f"{what} must be a single value", file=name, line=_line(node))
    return str(node.value)


def _truthy(node) -> bool:
    import yaml

    return isinstance(node, yaml.ScalarNode) and node.value.lower() in ("true", "yes", "on")


# --- opgov opset build output --------------------------------------------------------------------


def _read_opset_json(text: str, name: str) -> list[str]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"not valid JSON: {exc.msg}", file=name, line=exc.lineno) from None
    except RecursionError:
        raise BadInput("JSON nested too deeply", file=name) from None
    if not isinstance(data, dict) or not isinstance(data.get("operators"), list):
        hint = " (a model corpus: name one model as FILE#model)" if isinstance(data, dict) and "models" in data else ""
        raise BadInput("a JSON object that is not `opgov opset build --format json` output" + hint, file=name)
    ops = []
    for entry in data["operators"]:
        op = entry.get("op") if isinstance(entry, dict) else None
        if not isinstance(op, str):
            raise BadInput("each entry of 'operators' needs an 'op' name", file=name)
        ops.append(_op(op, name, None))
    return ops


def _read_opset_text(text: str, name: str) -> list[str]:
    ops = []
    header_seen = False
    for number, raw in enumerate(text.splitlines(), start=1):
        if not header_seen:
            header_seen = bool(_OPSET_TEXT.match(raw.strip()))
            continue
        if not raw.startswith("  ") or raw.startswith("   "):
            continue  # the summary lines after the operators, and per-model coverage lines
        first = raw.split()[0] if raw.split() else ""
        if "::" not in first:
            continue
        ops.append(_op(first, name, number))
    return ops
