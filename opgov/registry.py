"""Reading a native_functions.yaml snapshot into plain entries.

Pure: no database. PyYAML's libyaml loader (``CSafeLoader``) does the parsing; a cheap line scan
finds where each top-level entry starts so that every problem can name its file and line.

Each entry yields one :class:`RegistryOp`; every name an entry's ``autogen:`` declares yields one
more (torchgen generates those operators without an entry of their own, so they have no schema
text in the file: opgov stores them with ``schema=None`` and ``autogen_of`` naming the entry).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from opgov.errors import BadInput, SchemaParseError
from opgov.names import from_func_name

try:  # libyaml is about ten times faster; the pure loader gives the same result
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

CORE_TAG = "core"
# Kernels registered under these keys are decompositions written in terms of other operators.
IMPLICIT_KEYS = ("CompositeImplicitAutograd",)


@dataclass(frozen=True)
class RegistryOp:
    """One operator as a snapshot declares it."""

    name: str  # canonical, e.g. aten::add.Tensor
    func_name: str  # as in the file: add.Tensor
    schema: str | None  # the func: text; None for autogen-declared operators
    kind: str  # functional | inplace | out | mutable | scratch
    tags: tuple[str, ...]
    line: int  # line of the "- func:" of the entry (for autogen: of the declaring entry)
    autogen_of: str | None = None  # canonical name of the declaring entry
    composite_implicit: bool = False  # its kernel is a CompositeImplicitAutograd decomposition

    @property
    def suggested_category(self) -> str:
        """The import heuristic: tagged core → core; CompositeImplicitAutograd → decomposable."""
        if CORE_TAG in self.tags:
            return "core"
        if self.composite_implicit:
            return "decomposable"
        return "custom"


@dataclass
class Registry:
    path: str
    content_hash: str
    ops: dict[str, RegistryOp] = field(default_factory=dict)  # canonical name → op, file order

    def schemas(self):
        """Canonical name → parsed FunctionSchema for every op with a schema."""
        from opgov.schema import FunctionSchema

        return {n: FunctionSchema.parse(op.schema) for n, op in self.ops.items() if op.schema is not None}


def _entry_lines(text: str) -> list[int]:
    """1-based line numbers of top-level sequence items (``- `` at column 0)."""
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("-") and (len(line) == 1 or line[1] in " \t"):
            lines.append(number)
    return lines


def _load_yaml(text: str, path: str):
    try:
        return yaml.load(text, Loader=_Loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or err.context or "malformed YAML"
        raise BadInput(f"malformed YAML: {problem}", file=path, line=line) from None
    except yaml.YAMLError as err:
        raise BadInput(f"malformed YAML: {err}", file=path) from None


def read_tags_yaml(path: str | Path) -> dict[str, int]:
    """Declared tag name → line of its ``- tag:`` item."""
    path = str(path)
    text = _read_text(path)
    data = _load_yaml(text, path)
    if not isinstance(data, list):
        raise BadInput("expected a list of '- tag: NAME' items", file=path, line=1)
    lines = _entry_lines(text)
    declared: dict[str, int] = {}
    for index, item in enumerate(data):
        line = lines[index] if index < len(lines) else None
        if not isinstance(item, dict) or not isinstance(item.get("tag"), str):
            raise BadInput("expected '- tag: NAME' with a 'desc:'", file=path, line=line)
        declared[item["tag"]] = line or 0
    return declared


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise BadInput("no such file", file=path) from None
    except IsADirectoryError:
        raise BadInput("is a directory, expected a yaml file", file=path) from None
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason})", file=path) from None


def _tags_of(value, path: str, line: int | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(",")]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        parts = [v.strip() for v in value]
    else:
        raise BadInput(f"tags must be a name or a list of names, got {value!r}", file=path, line=line)
    return tuple(p for p in parts if p)


def read_registry(path: str | Path, *, tags_yaml: str | Path | None = None, text: str | None = None) -> Registry:
    """Read and validate one native_functions.yaml. Raises :class:`BadInput` naming file and line."""
    from opgov.schema import FunctionSchema

    path = str(path)
    if text is None:
        text = _read_text(path)
    data = _load_yaml(text, path)
    if data is None:
        data = []
    if not isinstance(data, list):
        raise BadInput("expected a list of '- func: ...' entries", file=path, line=1)
    lines = _entry_lines(text)
    if len(lines) != len(data):  # unusual layout: ask the composer for exact positions
        node = yaml.compose(text, Loader=_Loader)
        lines = [item.start_mark.line + 1 for item in node.value]
    declared = read_tags_yaml(tags_yaml) if tags_yaml is not None else None

    registry = Registry(path=path, content_hash=hashlib.sha256(text.encode("utf-8")).hexdigest())
    ops = registry.ops
    autogen: list[tuple[str, str, int]] = []
    for index, entry in enumerate(data):
        line = lines[index]
        if not isinstance(entry, dict):
            raise BadInput("expected a mapping with a 'func:' key", file=path, line=line)
        func = entry.get("func")
        if not isinstance(func, str) or not func.strip():
            raise BadInput("entry has no 'func:'", file=path, line=line)
        try:
            schema = FunctionSchema.parse(func)
        except SchemaParseError as err:
            raise BadInput(err.message, file=path, line=line) from None
        tags = _tags_of(entry.get("tags"), path, line)
        if declared is not None:
            for tag in tags:
                if tag not in declared:
                    raise BadInput(f"tag {tag!r} of {schema.func_name} is not declared in {tags_yaml}",
                                   file=path, line=line)
        op_name = from_func_name(schema.func_name)
        name = str(op_name)
        if name in ops:
            raise BadInput(f"duplicate operator {schema.func_name} (first at line {ops[name].line})",
                           file=path, line=line)
        dispatch = entry.get("dispatch")
        if isinstance(dispatch, dict):
            keys = {k.strip() for key in dispatch for k in str(key).split(",")}
            implicit = any(k in IMPLICIT_KEYS for k in keys)
        else:
            implicit = "structured_delegate" not in entry
        ops[name] = RegistryOp(name=name, func_name=schema.func_name, schema=func, kind=schema.kind,
                               tags=tags, line=line, composite_implicit=implicit)
        generated = entry.get("autogen")
        if generated is not None:
            if not isinstance(generated, str):
                raise BadInput("autogen must be a comma-separated string", file=path, line=line)
            for part in generated.split(","):
                if part.strip():
                    autogen.append((part.strip(), name, line))
    for func_name, owner, line in autogen:
        op_name = from_func_name(func_name)
        name = str(op_name)
        if name in ops:
            # Two entries of one family may declare the same generated operator; keep the first.
            if ops[name].autogen_of is None:
                raise BadInput(f"autogen {func_name} duplicates an entry (line {ops[name].line})",
                               file=path, line=line)
            continue
        kind = "out" if op_name.overload.endswith("out") or op_name.overload == "out" else "functional"
        ops[name] = RegistryOp(name=name, func_name=func_name, schema=None, kind=kind, tags=(),
                               line=line, autogen_of=owner)
    return registry
