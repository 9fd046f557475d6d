"""The ATen function schema language: a parser and a printer that cannot drift from the text.

One small frozen value class per concept: :class:`OperatorName`, :class:`Annotation` (alias
annotations such as ``a!`` or ``a -> *``), :class:`Type` (:class:`BaseType`,
:class:`OptionalType`, :class:`ListType`), :class:`Argument`, :class:`Return`,
:class:`Arguments` and :class:`FunctionSchema`. Each has a ``parse(text)`` constructor and a
``__str__`` that prints it back; parsing checks that printing gives the same text, so
``str(FunctionSchema.parse(s)) == s`` for every schema that parses at all. Anything else raises
:class:`~opgov.core.errors.SchemaParseError` naming the schema text and the problem.

Facts that follow from a schema (its kind, its out arguments, whether it is in-place) are
properties computed from the model, with the semantics of PyTorch's code generator.

Standard library only. Parsing is cached per distinct text (names, types, arguments, returns,
whole schemas), which keeps a full ``native_functions.yaml`` to a few hundredths of a second.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import lru_cache

from opgov.core.errors import SchemaParseError

__all__ = [
    "Annotation",
    "Argument",
    "Arguments",
    "BASE_TYPES",
    "BaseType",
    "FunctionSchema",
    "ListType",
    "OperatorName",
    "OptionalType",
    "Return",
    "SchemaKind",
    "Type",
]

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_IDENT_RE = re.compile(_IDENT)
_NAME_RE = re.compile(rf"(?:(?P<ns>{_IDENT})::)?(?P<name>{_IDENT})(?:\.(?P<overload>{_IDENT}))?")
_DUNDER_RE = re.compile(r"__(?P<inner>[A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)__")
_ALIAS_SET = r"(?:\*|[a-z][a-z0-9_]*)(?:\|(?:\*|[a-z][a-z0-9_]*))*"
_ANNOTATION_RE = re.compile(rf"(?P<before>{_ALIAS_SET})(?P<write>!?)(?: -> (?P<after>{_ALIAS_SET}))?")

# Default values as they are written: None/True/False, numbers, string literals, identifiers
# (Mean, long, contiguous_format, strided, dtype names) and lists of numbers/booleans/identifiers.
_NUMBER = r"-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)j?"
_SCALAR_DEFAULT = rf"(?:{_NUMBER}|{_IDENT})"
_STRING = r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'"
_DEFAULT_RE = re.compile(
    rf"(?:{_SCALAR_DEFAULT}|{_STRING}|\[\s*(?:{_SCALAR_DEFAULT}\s*(?:,\s*{_SCALAR_DEFAULT}\s*)*)?\])"
)

#: Base type names of the schema language (torchgen's ``BaseTy`` plus the TorchScript names
#: that ``torch._C.parse_schema`` also accepts, and ``Dimname`` of the named-tensor era).
BASE_TYPES = frozenset({
    "Tensor", "int", "float", "bool", "str", "complex", "Scalar", "ScalarType", "Layout",
    "MemoryFormat", "Device", "DeviceIndex", "Generator", "Storage", "Stream", "QScheme",
    "SymInt", "SymFloat", "SymBool", "Dimname", "DimVector", "GraphModule", "Any",
})

# In-place dunder methods (``__iand__``) name the augmented assignment of these operators.
_AUGMENTED_ASSIGNMENT = frozenset({"add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift",
                                   "and", "xor", "or"})


class _Invalid(Exception):
    """Internal: a problem found below the schema level; re-raised naming the whole schema."""


class SchemaKind(enum.StrEnum):
    """What a schema does with its results (torchgen's ``SchemaKind``); compares equal to str."""

    functional = "functional"  # returns newly allocated outputs
    inplace = "inplace"  # modifies ``self`` in place (name ends in ``_``, or ``__iand__``)
    out = "out"  # writes into explicitly provided keyword-only ``out`` arguments
    mutable = "mutable"  # mutates a positional argument other than self, and is not in-place
    scratch = "scratch"  # an out= variant with ``_scratch_*`` work-space outputs


# --- operator names -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OperatorName:
    """``add_.Tensor``: the name as written before the dot, and the overload ("" by default).

    opgov's one operator-name model: the schema parser builds it from a ``func:`` line, and
    :func:`opgov.core.names.parse_op_name` from the spellings users type (with the namespace
    filled in, so that ``str()`` gives the canonical ``aten::add.Tensor``).

    ``name`` keeps the spelling of the ``func:`` line (``add_``, ``__iand__``); ``base`` strips
    the in-place underscore or the dunder wrapping (``add``, ``and``).
    """

    name: str
    overload: str = ""
    namespace: str = ""  # only when the text carried one (``aten::add.Tensor``)

    @classmethod
    def parse(cls, text: str) -> OperatorName:
        """Parse ``[ns::]name[.overload]``."""
        try:
            return _parse_name(text)
        except _Invalid as err:
            raise SchemaParseError(f"operator name {text!r}: {err}") from None

    @property
    def func_name(self) -> str:
        """The name as a ``func:`` line writes it: ``add.Tensor``, ``abs``."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    @property
    def dunder(self) -> bool:
        """``__and__``, ``__iand__``."""
        return self.name.startswith("__") and _DUNDER_RE.fullmatch(self.name) is not None

    @property
    def inplace(self) -> bool:
        """``add_`` and ``__iand__`` (in-place augmented assignment) are in-place."""
        m = _DUNDER_RE.fullmatch(self.name) if self.name.startswith("__") else None
        if m is not None:
            inner = m.group("inner")
            return inner.startswith("i") and inner[1:] in _AUGMENTED_ASSIGNMENT
        return self.name.endswith("_")

    @property
    def base(self) -> str:
        """The operator family's name, as torchgen groups variants: ``add_`` → ``add``,
        ``__iand__`` → ``and``, ``normal_functional`` → ``normal``."""
        m = _DUNDER_RE.fullmatch(self.name) if self.name.startswith("__") else None
        if m is not None:
            inner = m.group("inner")
            return inner[1:] if self.inplace else inner
        if self.name.endswith("_"):
            return self.name[:-1]
        if self.name.endswith("_functional"):
            return self.name[: -len("_functional")]
        return self.name

    @property
    def backward(self) -> bool:
        """A gradient formula's operator: ``native_layer_norm_backward``, ``_cudnn_rnn_backward``."""
        return self.name == "backward" or "_backward" in self.name

    @property
    def internal(self) -> bool:
        """Named with a leading ``_`` (``_foreach_add``, ``_softmax``): internal to PyTorch by
        convention; the dunders (``__and__``) are not."""
        return self.name.startswith("_") and not self.dunder

    def __str__(self) -> str:
        prefix = f"{self.namespace}::" if self.namespace else ""
        return prefix + self.func_name


@lru_cache(maxsize=4096)
def _parse_name(text: str) -> OperatorName:
    m = _NAME_RE.fullmatch(text)
    if m is None:
        raise _Invalid(f"{text!r} is not an operator name (expected name or name.overload)")
    overload = m.group("overload") or ""
    if overload == "default":
        raise _Invalid("'default' is not a legal overload name (it means the unnamed overload)")
    if overload.startswith("__"):
        raise _Invalid(f"overload name {overload!r} may not start with '__'")
    return OperatorName(m.group("name"), overload, m.group("ns") or "")


# --- alias annotations --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Annotation:
    """An alias annotation: ``a``, ``a!``, ``a -> *``, ``a|b``.

    ``alias_set`` are the alias sets before the call, ``alias_set_after`` those after it (empty
    when the text has no arrow, meaning: the same as before); ``is_write`` marks mutation.
    """

    alias_set: tuple[str, ...]
    is_write: bool = False
    alias_set_after: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Annotation:
        try:
            return _parse_annotation(text)
        except _Invalid as err:
            raise SchemaParseError(f"alias annotation {text!r}: {err}") from None

    @property
    def after(self) -> tuple[str, ...]:
        """The alias sets after the call (``alias_set`` when no arrow was written)."""
        return self.alias_set_after or self.alias_set

    @property
    def is_wildcard_after(self) -> bool:
        """``a -> *``: the value may alias anything afterwards (views into containers)."""
        return "*" in self.after

    def __str__(self) -> str:
        text = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            text += " -> " + "|".join(self.alias_set_after)
        return text


@lru_cache(maxsize=256)
def _parse_annotation(text: str) -> Annotation:
    m = _ANNOTATION_RE.fullmatch(text)
    if m is None:
        raise _Invalid(f"{text!r} is not an alias annotation (expected e.g. a, a!, a -> *)")
    after = m.group("after")
    ann = Annotation(tuple(m.group("before").split("|")), m.group("write") == "!",
                     tuple(after.split("|")) if after else ())
    _check_round_trip(ann, text)
    return ann


# --- types --------------------------------------------------------------------------------


class Type:
    """Base class of the type model; use :meth:`Type.parse`."""

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> Type:
        """Parse ``int``, ``int?``, ``int[2]``, ``Tensor?[]``, ``SymInt[]?`` …"""
        try:
            return _parse_type(text)
        except _Invalid as err:
            raise SchemaParseError(f"type {text!r}: {err}") from None

    def render(self, annotation: Annotation | None) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def base(self) -> BaseType:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def is_optional(self) -> bool:
        return isinstance(self, OptionalType)

    @property
    def list_size(self) -> int | None:
        """The fixed size of a list written ``T[N]`` or ``T[N]?`` (PyTorch's ``Argument::N``)."""
        t = self.elem if isinstance(self, OptionalType) else self
        return t.size if isinstance(t, ListType) else None

    def __str__(self) -> str:
        return self.render(None)


@dataclass(frozen=True, slots=True)
class BaseType(Type):
    """``Tensor``, ``int``, ``SymInt``, ``Scalar`` … (see :data:`BASE_TYPES`)."""

    name: str

    def render(self, annotation: Annotation | None) -> str:
        return f"{self.name}({annotation})" if annotation is not None else self.name

    @property
    def base(self) -> BaseType:
        return self

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class OptionalType(Type):
    """``T?``: a ``T`` or None."""

    elem: Type

    def render(self, annotation: Annotation | None) -> str:
        return self.elem.render(annotation) + "?"

    @property
    def base(self) -> BaseType:
        return self.elem.base

    def __str__(self) -> str:
        return self.render(None)


@dataclass(frozen=True, slots=True)
class ListType(Type):
    """``T[]`` or, with a fixed size, ``T[N]``."""

    elem: Type
    size: int | None = None

    def render(self, annotation: Annotation | None) -> str:
        return f"{self.elem.render(annotation)}[{'' if self.size is None else self.size}]"

    @property
    def base(self) -> BaseType:
        return self.elem.base

    def __str__(self) -> str:
        return self.render(None)


@lru_cache(maxsize=1024)
def _parse_type(text: str) -> Type:
    if text.endswith("?"):
        inner = _parse_type(text[:-1])
        if isinstance(inner, OptionalType):
            raise _Invalid("'??' is not a type")
        return OptionalType(inner)
    if text.endswith("]"):
        start = text.rfind("[")
        if start <= 0:
            raise _Invalid("unbalanced ']'")
        size_text = text[start + 1:-1]
        if size_text and not size_text.isdigit():
            raise _Invalid(f"list size {size_text!r} is not a number")
        if size_text and (size_text != str(int(size_text))):
            raise _Invalid(f"list size {size_text!r} has leading zeros")
        return ListType(_parse_type(text[:start]), int(size_text) if size_text else None)
    if text not in BASE_TYPES:
        if _IDENT_RE.fullmatch(text) is None:
            raise _Invalid(f"{text!r} is not a type")
        raise _Invalid(f"unknown type {text!r}")
    return BaseType(text)


def _split_type_annotation(text: str) -> tuple[Type, Annotation | None]:
    """``Tensor(a!)[]`` → (``Tensor[]``, ``a!``): the annotation binds to the base type."""
    open_at = text.find("(")
    if open_at == -1:
        return _parse_type(text), None
    close_at = text.find(")", open_at)
    if close_at == -1:
        raise _Invalid(f"unclosed alias annotation in {text!r}")
    ann = _parse_annotation(text[open_at + 1:close_at])
    typ = _parse_type(text[:open_at] + text[close_at + 1:])
    if not isinstance(typ.base, BaseType) or len(typ.base.name) != open_at:
        raise _Invalid(f"alias annotation must follow the base type name in {text!r}")
    return typ, ann


def _type_end(text: str) -> int:
    """Index of the space that ends the type part of ``Type name…`` (or -1)."""
    space = text.find(" ")
    paren = text.find("(")
    if paren != -1 and (space == -1 or paren < space):
        close = text.find(")", paren)
        if close == -1:
            raise _Invalid(f"unclosed alias annotation in {text!r}")
        space = text.find(" ", close)
    return space


# --- arguments and returns ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Argument:
    """``Tensor(a!) out``, ``int[2] stride=1``, ``*, bool keepdim=False`` (``kwarg_only``).

    ``default`` is the default exactly as written (``[0, 0]``, ``None``, ``"mean"``), or None
    when there is none.
    """

    name: str
    type: Type
    default: str | None = None
    annotation: Annotation | None = None
    kwarg_only: bool = False
    _text: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def parse(cls, text: str, *, kwarg_only: bool = False) -> Argument:
        try:
            return _parse_argument(text, kwarg_only)
        except _Invalid as err:
            raise SchemaParseError(f"argument {text!r}: {err}") from None

    @property
    def is_write(self) -> bool:
        """Annotated as written to (``Tensor(a!)``, ``Tensor(a!)[]``)."""
        return self.annotation is not None and self.annotation.is_write

    @property
    def is_out(self) -> bool:
        """A keyword-only argument the operator writes to: an out= argument."""
        return self.kwarg_only and self.annotation is not None and self.annotation.is_write

    @property
    def type_text(self) -> str:
        """The type as written, with its alias annotation: ``Tensor(a!)[]``."""
        return self.type.render(self.annotation)

    def __str__(self) -> str:
        if self._text is not None:
            return self._text
        text = f"{self.type_text} {self.name}"
        return text if self.default is None else f"{text}={self.default}"


@lru_cache(maxsize=16384)
def _parse_argument(text: str, kwarg_only: bool) -> Argument:
    end = _type_end(text)
    if end <= 0:
        raise _Invalid(f"{text!r} is not 'Type name' or 'Type name=default'")
    typ, ann = _split_type_annotation(text[:end])
    name, eq, default = text[end + 1:].partition("=")
    if _IDENT_RE.fullmatch(name) is None:
        raise _Invalid(f"{name!r} is not an argument name")
    if eq and _DEFAULT_RE.fullmatch(default) is None:
        raise _Invalid(f"default value {default!r} is not a literal")
    arg = Argument(name, typ, default if eq else None, ann, kwarg_only)
    _check_round_trip(arg, text)
    object.__setattr__(arg, "_text", text)
    return arg


@dataclass(frozen=True, slots=True)
class Return:
    """``Tensor``, ``Tensor(a!)``, ``Tensor values`` (a named return)."""

    type: Type
    name: str | None = None
    annotation: Annotation | None = None

    @classmethod
    def parse(cls, text: str) -> Return:
        try:
            return _parse_return(text)
        except _Invalid as err:
            raise SchemaParseError(f"return {text!r}: {err}") from None

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    @property
    def type_text(self) -> str:
        return self.type.render(self.annotation)

    def __str__(self) -> str:
        return self.type_text if self.name is None else f"{self.type_text} {self.name}"


@lru_cache(maxsize=4096)
def _parse_return(text: str) -> Return:
    end = _type_end(text)
    if end == 0:
        raise _Invalid(f"{text!r} is not 'Type' or 'Type name'")
    type_text, name = (text, None) if end == -1 else (text[:end], text[end + 1:])
    if name is not None and _IDENT_RE.fullmatch(name) is None:
        raise _Invalid(f"{name!r} is not a return name")
    typ, ann = _split_type_annotation(type_text)
    ret = Return(typ, name, ann)
    _check_round_trip(ret, text)
    return ret


@lru_cache(maxsize=4096)
def _parse_returns(text: str) -> tuple[Return, ...]:
    if text == "()":
        return ()
    if text.startswith("(") and text.endswith(")"):
        parts = _split_list(text[1:-1])
        if len(parts) == 1:
            raise _Invalid("a single return is written without parentheses")
        return tuple(_parse_return(p) for p in parts)
    return (_parse_return(text),)


@dataclass(frozen=True, slots=True)
class Arguments:
    """All arguments in schema order; ``*`` sits before the first keyword-only one.

    ``positional``, ``kwarg_only`` (not out) and ``out`` (keyword-only arguments annotated as
    written, torchgen's out arguments) are views of ``flat``.
    """

    flat: tuple[Argument, ...] = ()
    # the views below, computed on first use (schemas are immutable, and parsed ones are shared
    # by the parse cache): (positional, kwarg_only, out, self_arg, post_self_positional)
    _views: tuple | None = field(default=None, init=False, repr=False, compare=False)

    def _split(self) -> tuple:
        views = self._views
        if views is None:
            flat = self.flat
            positional = tuple(a for a in flat if not a.kwarg_only)
            post_self = positional
            self_arg = None
            for i, arg in enumerate(positional):
                if arg.name == "self":
                    self_arg, post_self = arg, positional[i + 1:]
                    break
            views = (positional, tuple(a for a in flat if a.kwarg_only and not a.is_out),
                     tuple(a for a in flat if a.is_out), self_arg, post_self)
            object.__setattr__(self, "_views", views)
        return views

    @property
    def positional(self) -> tuple[Argument, ...]:
        return self._split()[0]

    @property
    def kwarg_only(self) -> tuple[Argument, ...]:
        return self._split()[1]

    @property
    def out(self) -> tuple[Argument, ...]:
        return self._split()[2]

    @property
    def self_arg(self) -> Argument | None:
        return self._split()[3]

    @property
    def post_self_positional(self) -> tuple[Argument, ...]:
        """Positional arguments after ``self`` (all of them when there is no ``self``)."""
        return self._split()[4]

    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.flat)

    def __iter__(self):
        return iter(self.flat)

    def __len__(self) -> int:
        return len(self.flat)

    def __getitem__(self, index: int) -> Argument:
        return self.flat[index]

    def __str__(self) -> str:
        parts: list[str] = []
        star = False
        for arg in self.flat:
            if arg.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(arg))
        return ", ".join(parts)


# --- function schemas ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FunctionSchema:
    """A whole ``func:`` line: ``add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor``."""

    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]
    _text: str | None = field(default=None, compare=False, repr=False)
    # computed on first use (a parsed schema is shared by the parse cache, so once per text)
    _kind: SchemaKind | None = field(default=None, init=False, compare=False, repr=False)
    _family: tuple | None = field(default=None, init=False, compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> FunctionSchema:
        """Parse one schema; raise :class:`SchemaParseError` naming it when it is malformed."""
        if not isinstance(text, str):
            raise SchemaParseError(f"schema must be text, got {type(text).__name__}: {text!r}")
        return _parse_schema(text)

    @property
    def func_name(self) -> str:
        """``add.Tensor``, ``abs``: the name as the ``func:`` line writes it."""
        return self.name.func_name

    @property
    def kind(self) -> SchemaKind:
        """functional / inplace / out / mutable / scratch, with torchgen's precedence."""
        kind = self._kind
        if kind is None:
            kind = _kind(self)
            object.__setattr__(self, "_kind", kind)
        return kind

    @property
    def is_mutable(self) -> bool:
        """Some argument is annotated as written to."""
        return any(a.is_write for a in self.arguments.flat)

    def __str__(self) -> str:
        if self._text is not None:
            return self._text
        return _render_schema(self)


def _kind(schema: FunctionSchema) -> SchemaKind:
    if schema.name.inplace:
        return SchemaKind.inplace
    out = schema.arguments.out
    if out:
        if any(a.name.startswith("_scratch_") for a in out):
            return SchemaKind.scratch
        return SchemaKind.out
    if any(a.is_write for a in schema.arguments.post_self_positional):
        return SchemaKind.mutable
    return SchemaKind.functional


def _render_schema(schema: FunctionSchema) -> str:
    returns = ", ".join(str(r) for r in schema.returns)
    if len(schema.returns) != 1:
        returns = f"({returns})"
    return f"{schema.name}({schema.arguments}) -> {returns}"


# (a release declares some 3,100 schemas, two releases compared share most; every schema this cache
# holds costs about 0.6 KB however many texts a process reads: an upload of thousands of new ones
# grows it to this bound, no more)
@lru_cache(maxsize=4096)
def _parse_schema(text: str) -> FunctionSchema:
    try:
        open_at = text.find("(")
        arrow = text.rfind(") -> ")
        if open_at <= 0 or arrow < open_at:
            raise _Invalid("expected 'name(arguments) -> returns'")
        name = _parse_name(text[:open_at])
        args: list[Argument] = []
        kwarg_only = False
        pending_star = False
        for piece in _split_list(text[open_at + 1:arrow]):
            if piece == "*":
                if kwarg_only:
                    raise _Invalid("'*' may appear only once")
                kwarg_only = pending_star = True
                continue
            args.append(_parse_argument(piece, kwarg_only))
            pending_star = False
        if pending_star:
            raise _Invalid("'*' must be followed by a keyword-only argument")
        _check_defaults_last(args)
        returns = _parse_returns(text[arrow + 5:])
        schema = FunctionSchema(name, Arguments(tuple(args)), returns)
    except _Invalid as err:
        raise SchemaParseError(f"malformed schema {text!r}: {err}") from None
    printed = _render_schema(schema)
    if printed != text:
        raise SchemaParseError(f"malformed schema {text!r}: it prints back as {printed!r}")
    object.__setattr__(schema, "_text", text)
    return schema


def _check_defaults_last(args: list[Argument]) -> None:
    """What PyTorch refuses (``FunctionSchema::checkSchema``): a positional argument without a
    default after one with a default, unless it is a list (``int[] dims``, ``Tensor?[] indices``),
    which PyTorch has always allowed there (``permute(Tensor(a) self, int x=1, int[] dims)``
    parses). torchgen's parser accepts all of these; torch refuses the rest when it loads them."""
    with_default: Argument | None = None
    for arg in args:
        if arg.kwarg_only:
            return
        if arg.default is not None:
            with_default = with_default or arg
        elif with_default is not None and not isinstance(arg.type, ListType):
            raise _Invalid(f"positional argument {arg.name!r} has no default but follows "
                           f"{with_default.name!r}, which has one (only a list may)")


def _split_list(text: str) -> list[str]:
    """Split ``a, b, c`` at top-level ``", "`` (not inside brackets or string literals)."""
    if not text:
        return []
    if '"' not in text and "'" not in text:
        parts = text.split(", ")
        if "[" not in text:
            return parts
        merged: list[str] = []
        buf: str | None = None
        for part in parts:
            buf = part if buf is None else f"{buf}, {part}"
            if buf.count("[") == buf.count("]"):
                merged.append(buf)
                buf = None
        if buf is not None:
            raise _Invalid(f"unbalanced '[' in {text!r}")
        return merged
    return _split_list_slow(text)


def _split_list_slow(text: str) -> list[str]:
    parts: list[str] = []
    start = 0
    depth = 0
    quote = ""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        elif ch == "," and depth == 0 and text.startswith(", ", i):
            parts.append(text[start:i])
            start = i + 2
            i += 1
        i += 1
    if quote:
        raise _Invalid(f"unterminated string literal in {text!r}")
    parts.append(text[start:])
    return parts


def _check_round_trip(value: object, text: str) -> None:
    printed = str(value)
    if printed != text:
        raise _Invalid(f"{text!r} prints back as {printed!r}")


# --- families ----------------------------------------------------------------------------------

_TENSOR_OPTIONS = (("dtype", "ScalarType"), ("layout", "Layout"), ("device", "Device"),
                   ("pin_memory", "bool"))


def family_key(schema: FunctionSchema, *, keep: bool = True) -> tuple:
    """The key torchgen groups variants by (its ``FunctionSchema.signature()``): the base name,
    the arguments without out= arguments, alias annotations and the tensor options
    (``dtype, layout, device, pin_memory``), and the return types, with the mutated inputs a
    schema does not return counted as returns. Computed once per schema (``keep=False``: not kept
    on it, for a reader of thousands of schemas that needs each key once)."""
    if not keep:
        return schema._family or _family_key(schema)
    key = schema._family
    if key is None:
        key = _family_key(schema)
        object.__setattr__(schema, "_family", key)
    return key


def _family_key(schema: FunctionSchema) -> tuple:
    args = schema.arguments
    positional = tuple((a.name, str(a.type), a.default) for a in args.positional)
    kwargs = list(args.kwarg_only)
    for i in range(len(kwargs) - len(_TENSOR_OPTIONS) + 1):
        window = kwargs[i:i + len(_TENSOR_OPTIONS)]
        if all(a.name == name and str(a.type) in (ty, ty + "?")
               for a, (name, ty) in zip(window, _TENSOR_OPTIONS)):
            del kwargs[i:i + len(_TENSOR_OPTIONS)]
            break
    returned = {r.annotation for r in schema.returns if r.annotation is not None}
    mutated = [a for a in ((args.self_arg,) if args.self_arg else ()) + args.out + args.post_self_positional
               if a.annotation is not None and a.annotation.is_write and a.annotation not in returned]
    returns = tuple(str(r.type) for r in schema.returns) + tuple(str(a.type) for a in mutated)
    return (schema.name.base, schema.name.dunder, positional,
            tuple((a.name, str(a.type), a.default) for a in kwargs), returns)
