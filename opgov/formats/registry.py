"""Reading a native_functions.yaml snapshot into plain entries.

No database. PyYAML's libyaml loader (``CSafeLoader``) composes the file into a node tree whose
nodes carry their line, so every problem names its file and line; the reader validates each
entry from the nodes (``func``, ``tags``, ``dispatch``, ``structured_delegate``, ``autogen``)
instead of constructing every value. Each ``func:`` is parsed by :mod:`opgov.core.schema`.

Each entry yields one :class:`RegistryOp`; every name an entry's ``autogen:`` declares yields one
more (torchgen generates those operators without an entry of their own, so they have no schema
text in the file: opgov stores them with ``schema=None`` and ``autogen_of`` naming the entry).
"""

from __future__ import annotations

import gc
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from opgov.core.budget import spend
from opgov.core.errors import BadInput, SchemaParseError
from opgov.core.names import from_func_name
from opgov.formats.files import Content, plain_bytes, read_text, text_of


def _yaml():
    """PyYAML, imported on first use: reading native_functions.yaml with rapidyaml never needs it,
    and the import costs about 20 ms."""
    import yaml

    return yaml


def _loader(yaml):
    # libyaml is about ten times faster; the pure loader gives the same result
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


CORE_TAG = "core"
# Kernels registered under these keys are decompositions written in terms of other operators.
IMPLICIT_KEYS = ("CompositeImplicitAutograd",)


@dataclass(frozen=True, slots=True)
class RegistryOp:
    """One operator as a snapshot declares it (slots: a registry holds thousands, and a dict each
    would be a third of what reading an upload costs)."""

    name: str  # canonical, e.g. aten::add.Tensor
    schema: str | None  # the func: text; None for autogen-declared operators
    kind: str  # functional | inplace | out | mutable | scratch
    tags: tuple[str, ...]
    line: int  # line of the "- func:" of the entry (for autogen: of the declaring entry)
    autogen_of: str | None = None  # canonical name of the declaring entry
    composite_implicit: bool = False  # its kernel is a CompositeImplicitAutograd decomposition
    delegate: str | None = None  # canonical name of its structured_delegate: entry (the out= it calls)

    @property
    def func_name(self) -> str:
        """As the file writes it: ``add.Tensor`` (the canonical name without its namespace; not held
        apart, a registry holds thousands)."""
        return self.name.partition("::")[2]

    @property
    def suggested_category(self) -> str:
        """The import heuristic: tagged core → core; CompositeImplicitAutograd → decomposable."""
        if CORE_TAG in self.tags:
            return "core"
        if self.composite_implicit:
            return "decomposable"
        return "custom"


_new = object.__new__
# each slot's own setter (what the frozen dataclass's __init__ reaches through object.__setattr__)
_SETTERS = tuple(
    RegistryOp.__dict__[f].__set__ for f in ("name", "schema", "kind", "tags", "line", "autogen_of",
                                             "composite_implicit", "delegate"))


def _op(name: str, schema: str | None, kind: str, tags: tuple[str, ...], line: int,
        autogen_of: str | None = None, composite_implicit: bool = False, delegate: str | None = None) -> RegistryOp:
    """``RegistryOp(...)`` without the frozen dataclass's ``__init__`` (its slots set directly): the
    same object, in less time; a registry builds thousands."""
    op = _new(RegistryOp)
    set_name, set_schema, set_kind, set_tags, set_line, set_autogen_of, set_implicit, set_delegate = _SETTERS
    set_name(op, name)
    set_schema(op, schema)
    set_kind(op, kind)
    set_tags(op, tags)
    set_line(op, line)
    set_autogen_of(op, autogen_of)
    set_implicit(op, composite_implicit)
    set_delegate(op, delegate)
    return op


@dataclass
class Registry:
    path: str
    content_hash: str
    ops: dict[str, RegistryOp] = field(default_factory=dict)  # canonical name → op, file order


def _compose(text: str, path: str):
    """The checked YAML node tree (see :mod:`opgov.formats.safeyaml`): no aliases, merge keys or
    duplicate keys; file and line in every error."""
    from opgov.formats.safeyaml import compose

    return compose(text, path)


def read_tags_yaml(path: str | Path) -> dict[str, int]:
    """Declared tag name → line of its ``- tag:`` item."""
    return _tags(read_text(path), str(path))


def parse_tags_yaml(content: str | bytes, name: str) -> dict[str, int]:
    """:func:`read_tags_yaml` of a tags.yaml already in memory; messages name it ``name``."""
    return _tags(text_of(content, name), name)


def _tags(text: str, path: str) -> dict[str, int]:
    yaml = _yaml()
    root = _compose(text, path)
    if root is None:
        raise BadInput("declares no tags: expected a list of '- tag: NAME' items", file=path)
    if not isinstance(root, yaml.SequenceNode):
        raise BadInput("expected a list of '- tag: NAME' items", file=path, line=1)
    declared: dict[str, int] = {}
    for item in root.value:
        line = item.start_mark.line + 1
        tag = ({k.value: v for k, v in item.value}.get("tag") if isinstance(item, yaml.MappingNode) else None)
        if not isinstance(tag, yaml.ScalarNode) or not tag.value:
            raise BadInput("expected '- tag: NAME' with a 'desc:'", file=path, line=line)
        declared[tag.value] = line
    return declared


def _scalar(node, what: str, path: str) -> str | None:
    yaml = _yaml()
    if node is None or (isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null")):
        return None
    if not isinstance(node, yaml.ScalarNode):
        raise BadInput(f"{what} must be a single value", file=path, line=node.start_mark.line + 1)
    return node.value


def _tags_node(node, path: str) -> tuple[str, ...]:
    yaml = _yaml()
    if node is None:
        return ()
    if isinstance(node, yaml.SequenceNode):
        names = [_scalar(item, "each tag", path) or "" for item in node.value]
    else:
        names = (_scalar(node, "tags", path) or "").split(",")
    return tuple(n.strip() for n in names if n.strip())


def _libyaml_entries(text: str, path: str, buildable: bool):
    """The entries of ``text`` from libyaml's checked node tree (:mod:`opgov.formats.safeyaml`),
    one at a time, each problem raised with its exact line when its entry is reached."""
    yaml = _yaml()
    from opgov.formats.fastyaml import Entry

    root = _compose(text, path)
    if root is None:
        raise BadInput("holds no entries: expected a list of '- func: ...' entries", file=path)
    if not isinstance(root, yaml.SequenceNode):
        raise BadInput("expected a list of '- func: ...' entries", file=path, line=root.start_mark.line + 1)
    for item in root.value:
        line = item.start_mark.line + 1
        if not isinstance(item, yaml.MappingNode):
            raise BadInput("expected a mapping with a 'func:' key", file=path, line=line)
        entry = {key.value: value for key, value in item.value}
        func = _scalar(entry.get("func"), "func", path)
        tags = _tags_node(entry.get("tags"), path)
        dispatch = entry.get("dispatch")
        dispatch_keys = None
        dispatch_bad_line = None
        if isinstance(dispatch, yaml.MappingNode):
            dispatch_keys = tuple((k.strip(), key.start_mark.line + 1) for key, _ in dispatch.value
                                  for k in str(key.value).split(","))
        elif dispatch is not None and not (isinstance(dispatch, yaml.ScalarNode) and dispatch.tag.endswith(":null")):
            dispatch_bad_line = dispatch.start_mark.line + 1
        autogen = _scalar(entry.get("autogen"), "autogen (a comma-separated string)", path)
        yield Entry(line, func, tags, dispatch_keys, dispatch_bad_line, autogen,
                    {key.value: key.start_mark.line + 1 for key, _ in item.value},
                    {key.value: value.value for key, value in item.value if isinstance(value, yaml.ScalarNode)})


class _Retry(Exception):
    """The fast path met a problem (``problem``, in its words): read the file again with libyaml to
    word it exactly."""

    def __init__(self, problem: BadInput | None = None) -> None:
        super().__init__()
        self.problem = problem


class _TooMany(BadInput):
    """More functions than :data:`MAX_REGISTRY_FUNCTIONS`: refused as found, never read again."""


# libyaml (the reader of a registry the fast path cannot read: control or unusual characters)
# builds the file's whole node tree at once, some 25 times its text: it reads at most this much
# (PyTorch's native_functions.yaml is 0.6 MB)
LIBYAML_MAX_BYTES = 4 * 1024 * 1024


def read_registry(path: str | Path, *, tags_yaml: str | Path | None = None, text: str | bytes | None = None,
                  buildable: bool = True) -> Registry:
    """Read and validate one native_functions.yaml. Raises :class:`BadInput` naming file and line.

    ``text``: the file's text, already read (it is not read again), or its bytes when they are
    plain ASCII (:func:`opgov.formats.files.plain_bytes`: read without a decoded copy). ``buildable`` also applies
    :mod:`opgov.core.registry_rules`: a file PyTorch's code generator would refuse (an in-place op
    without ``Tensor(a!) self``, an unknown dispatch key, …) is bad input. ``check-bc`` turns it
    off: it compares two files, and building them is torchgen's job.

    rapidyaml reads the file where it is installed and the file is plain (:mod:`opgov.formats.fastyaml`);
    otherwise, and to word any problem with its exact line, libyaml reads it
    (:mod:`opgov.formats.safeyaml`). Either way only the keys opgov needs are read (``func``,
    ``tags``, ``dispatch`` keys, ``structured_delegate``, ``autogen``), and both give the same
    entries (a test compares them on every real release)."""
    path = str(path)
    if text is None:
        text = read_text(path)
    declared = read_tags_yaml(tags_yaml) if tags_yaml is not None else None
    return _registry(text, path, declared, None if tags_yaml is None else str(tags_yaml), buildable)


def parse_registry(content: str | bytes, name: str, *, tags: Content | None = None,
                   buildable: bool = True) -> Registry:
    """:func:`read_registry` of a native_functions.yaml already in memory (an upload): messages
    and the registry's ``path`` name it ``name``; ``tags``: its tags.yaml, also in memory."""
    text = content if plain_bytes(content) else text_of(content, name)  # plain ASCII: read as bytes, no copy
    declared = parse_tags_yaml(tags.data, tags.name) if tags is not None else None
    return _registry(text, name, declared, None if tags is None else tags.name, buildable)


def _registry(text: str | bytes, path: str, declared: dict[str, int] | None, tags_yaml: str | None,
              buildable: bool) -> Registry:
    from opgov.formats import fastyaml
    from opgov.formats.safeyaml import MAX_DEPTH

    content_hash = _sha256(text)
    # the entries as rapidyaml parses them, a piece of the file at a time (each freed once built)
    fast = None if os.environ.get("OPGOV_YAML") == "libyaml" else fastyaml.iter_entries(text, MAX_DEPTH)
    found: BadInput | None = None  # what the fast path found wrong, in its words
    if fast is not None:
        try:
            return _build(fast, path, content_hash, declared, tags_yaml, buildable, retry=True)
        except _TooMany:
            raise
        except (_Retry, BadInput, fastyaml.GiveUp) as err:  # libyaml words it, with its exact line
            found = err.problem if isinstance(err, _Retry) else err if isinstance(err, BadInput) else None
        finally:
            del fast
    if len(text) > LIBYAML_MAX_BYTES:  # libyaml builds the whole tree at once: not of a big file
        if found is not None:
            raise found
        raise BadInput(f"{len(text):,} bytes in a form opgov reads only whole (control or unusual characters such "
                       f"as a form feed or U+2028, or a layout its piecewise reader cannot read exactly): at most "
                       f"{LIBYAML_MAX_BYTES:,} bytes of such a registry", file=path)
    if isinstance(text, bytes):  # plain ASCII (files.plain_bytes): libyaml reads its text
        text = text.decode("ascii")
    return _build(_libyaml_entries(text, path, buildable), path, content_hash, declared, tags_yaml, buildable)


def _sha256(text: str | bytes) -> str:
    """The SHA-256 of ``text`` in UTF-8, encoded a megabyte at a time (not a copy of the whole text)."""
    if isinstance(text, bytes):  # plain ASCII (files.plain_bytes): the text's own UTF-8
        return hashlib.sha256(text).hexdigest()
    digest = hashlib.sha256()
    step = 1 << 20
    for start in range(0, len(text), step):
        digest.update(text[start:start + step].encode("utf-8"))
    return digest.hexdigest()


# The functions (entries and their autogen variants) a registry may declare: some eight times
# PyTorch's. What reading one builds is about a kilobyte a function whatever its text (a
# registry of the shortest entries, ``- func: f1(Tensor self) -> Tensor``, would cost thirty times
# its size), so this, not the file's size alone, bounds what a registry upload costs in memory.
MAX_REGISTRY_FUNCTIONS = 25_000


def _build(entries, path: str, content_hash: str, declared, tags_yaml, buildable: bool, *,
           retry: bool = False) -> Registry:
    """The registry of ``entries``; with ``retry``, any problem raises :class:`_Retry` instead."""
    from opgov.core.schema import FunctionSchema, SchemaKind

    kind_text = {kind: str(kind) for kind in SchemaKind}  # one string each (str of a member makes a new one)
    if buildable:
        from opgov.core.registry_rules import Checker, EntryFacts

    def bad(message: str, line: int | None):
        if retry:
            raise _Retry(BadInput(message, file=path, line=line))
        raise BadInput(message, file=path, line=line)

    collecting = gc.isenabled()
    gc.disable()  # many small objects, no cycles (see opgov.formats.safeyaml.compose)
    try:
        registry = Registry(path=path, content_hash=content_hash)
        ops = registry.ops
        autogen: list[tuple[str, str, int]] = []
        # torchgen's rules, an entry at a time (a delegate is looked for among the operators read)
        checker = Checker(named=lambda func_name: str(from_func_name(func_name)) in ops) if buildable else None
        for entry in entries:
            spend()  # a request's processing time (opgov.core.budget): an upload of a million entries
            line, func = entry.line, entry.func
            if len(ops) + len(autogen) >= MAX_REGISTRY_FUNCTIONS:
                raise _TooMany(f"more than {MAX_REGISTRY_FUNCTIONS:,} functions (PyTorch 2.13.0 declares 3,114): "
                               "not a registry opgov reads", file=path, line=line)
            if not func or not func.strip():
                bad("entry has no 'func:'", line)
            try:
                schema = FunctionSchema.parse(func)
            except SchemaParseError as err:
                bad(err.message, line)
            tags = entry.tags
            if declared is not None:
                for tag in tags:
                    if tag not in declared:
                        bad(f"tag {tag!r} of {schema.func_name} is not declared in {tags_yaml}", line)
            name = str(from_func_name(schema.func_name))
            if name in ops:
                bad(f"duplicate operator {schema.func_name} (first at line {ops[name].line})", line)
            if entry.dispatch is not None:
                implicit = any(k in IMPLICIT_KEYS for k, _ in entry.dispatch)
            elif buildable and entry.dispatch_bad_line is not None:
                bad(f"dispatch of {schema.func_name} must be a mapping of dispatch keys to kernels",
                    entry.dispatch_bad_line)
            else:
                implicit = "structured_delegate" not in entry.keys
            if buildable:
                checker.add(EntryFacts(line=line, schema=schema, tags=tags, dispatch=entry.dispatch or (),
                                       keys=entry.keys, scalars=entry.scalars))
            delegate = entry.scalars.get("structured_delegate")
            if delegate and delegate.strip():
                delegate = str(from_func_name(delegate.strip()))
            ops[name] = _op(name, func, kind_text[schema.kind], tags, line, None, implicit,
                            delegate or None)
            for part in (entry.autogen or "").split(","):
                if part.strip():
                    autogen.append((part.strip(), name, line))
        if not ops:
            bad("holds no entries: expected a list of '- func: ...' entries", None)
        problems = checker.problems() if checker is not None else ()
        if problems:  # a file torchgen would refuse to build from
            bad(problems[0].message, problems[0].line)
        for func_name, owner, line in autogen:
            op_name = from_func_name(func_name)
            name = str(op_name)
            if name in ops:
                # Two entries of one family may declare the same generated operator; keep the first.
                if ops[name].autogen_of is None:
                    bad(f"autogen {func_name} duplicates an entry (line {ops[name].line})", line)
                continue
            kind = "out" if op_name.overload.endswith("out") or op_name.overload == "out" else "functional"
            ops[name] = _op(name, None, kind, (), line, owner)
        return registry
    finally:
        if collecting:
            gc.enable()

