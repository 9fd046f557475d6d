"""Backward- and forward-compatibility of ATen function schemas, with PyTorch's own verdicts.

The semantics are those of PyTorch's C++ ``FunctionSchema::isBackwardCompatibleWith`` and
``isForwardCompatibleWith`` (what ``torch._C.FunctionSchema.is_backward_compatible_with`` and
``check_forward_compatible_with`` call), computed from schema text alone:

* Types are compared as TorchScript sees them. ``SymInt``, ``ScalarType``, ``Layout``,
  ``MemoryFormat`` and ``DeviceIndex`` are all ``int`` there, and ``Scalar`` is ``number``, of
  which ``int``, ``float`` and ``complex`` are subtypes; ``T`` is a subtype of ``T?``; lists are
  invariant; a fixed list size (``int[2]``) must stay the same.
* Defaults are compared as values, the way PyTorch's schema parser reads them: ``float eps=1``
  equals ``float eps=1.0``, ``int reduction=Mean`` equals ``int reduction=1``, ``int[2] s=1``
  equals ``int[2] s=[1, 1]``; but ``Scalar alpha=1`` differs from ``Scalar alpha=1.0``.
* BC: same name and overload; as many returns, each of a type at least as specific; at least as
  many arguments; each old argument before the out arguments still at its position with its
  name, its alias annotation, a type at least as general, not newly keyword-only, and its
  default; every new argument before the outs with a default; the out arguments unchanged.
* FC: same name and overload and number of returns; the same number of trailing out arguments;
  the common arguments before the outs unchanged except for a type at least as specific; no
  default added, removed or changed; new arguments only right before the outs, each with a
  non-container default.

Each rule is a small function with a stable kebab-case id, registered in :data:`RULES` with its
kind and a one-line purpose. Adapters pair old and new arguments and returns; a rule sees exactly
one pair. :func:`bc_breaks` and :func:`fc_breaks` run every rule (PyTorch stops at the first
failure) and return an empty list exactly when PyTorch says compatible.

:func:`compare` checks two whole registries; :func:`apply_policy` turns its raw findings into
findings with a severity (core ATen policy, recorded exceptions, completed deletions).

Standard library only; the JSON shapes and renderers live in :mod:`opgov.render.compat`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from fnmatch import fnmatchcase
from functools import lru_cache

from opgov.core.schema import Annotation, Argument, BaseType, FunctionSchema, ListType, OptionalType, Return, Type

__all__ = [
    "BcException",
    "Break",
    "Finding",
    "RULES",
    "RawFinding",
    "Rule",
    "SEVERITIES",
    "apply_policy",
    "bc_breaks",
    "compare",
    "expired_exceptions",
    "fc_breaks",
    "rules_for",
]

BC, FC, NEW = "bc", "fc", "new"
SEVERITIES = ("error", "warning", "waived", "info")


# --- value objects ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Break:
    """One rule that breaks between an old and a new schema."""

    kind: str  # "bc" | "fc"
    rule: str
    message: str


@dataclass(frozen=True, slots=True)
class RawFinding:
    """One finding per operator and kind, before policy: the first break names it."""

    operator: str  # canonical: aten::add.Tensor
    kind: str  # "bc" | "fc" | "new"
    rule: str
    message: str
    old_schema: str | None
    new_schema: str | None
    also: tuple[str, ...] = ()  # ids of the further rules that broke (their messages are appended)


@dataclass(frozen=True, slots=True)
class BcException:
    """A recorded exception letting BC breaks of non-core operators through until it expires.

    ``pattern`` is an fnmatch glob over canonical names (``aten::_foreach_*``); a pattern without
    ``::`` matches the name without its namespace (``_foreach_*``). The exception applies through
    ``expires_on`` and is expired from the day after.
    """

    pattern: str
    reason: str
    created_by: str
    expires_on: date

    def covers(self, operator: str) -> bool:
        if "::" not in self.pattern:
            operator = operator.partition("::")[2] or operator
        return fnmatchcase(operator, self.pattern)

    def expired(self, today: date) -> bool:
        return today > self.expires_on


@dataclass(frozen=True, slots=True)
class Finding:
    """A finding with the policy applied. ``severity``: error, warning, waived or info."""

    operator: str
    kind: str
    rule: str
    severity: str
    message: str
    old_schema: str | None = None
    new_schema: str | None = None
    file: str | None = None
    line: int | None = None


# --- the rule registry --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered rule: id, kind (bc / fc / new), one-line purpose, and its checks.

    ``checks`` pairs each subject the rule looks at (``schema``: the two schemas; ``argument``:
    an old/new argument pair; ``return``: a return pair; ``added``: a new argument before the
    outs; ``out``: an out-argument pair) with the function checking it. Operator-level rules
    (``operator-removed``, ``operator-added``) have none: :func:`compare` applies them.
    """

    id: str
    kind: str
    purpose: str
    checks: tuple[tuple[str, Callable], ...] = ()

    @property
    def subjects(self) -> tuple[str, ...]:
        return tuple(subject for subject, _ in self.checks) or ("operator",)


_RULES: dict[tuple[str, str], Rule] = {}


def _rule(rule_id: str, kind: str | tuple[str, ...], subject: str | tuple[str, ...], purpose: str = ""):
    """Register the decorated function as ``rule_id``'s check of ``subject`` for each kind.

    A rule registered again (another subject) keeps its first purpose."""
    kinds = (kind,) if isinstance(kind, str) else kind
    subjects = (subject,) if isinstance(subject, str) else subject

    def register(fn: Callable) -> Callable:
        for k in kinds:
            existing = _RULES.get((rule_id, k))
            if not purpose and existing is None:
                purpose_ = next(r.purpose for r in _RULES.values() if r.id == rule_id)
            else:
                purpose_ = existing.purpose if existing else purpose
            checks = (existing.checks if existing else ()) + tuple((s, fn) for s in subjects)
            _RULES[(rule_id, k)] = Rule(rule_id, k, purpose_, checks)
        return fn

    return register


# --- TorchScript's view of types and defaults ---------------------------------------------

# The type PyTorch checks with ("fake type"): these are all plain int to TorchScript, so PyTorch
# (and therefore opgov) does not flag int ↔ SymInt or ScalarType ↔ int, although the C++
# signature changes. SymBool, by contrast, is not bool to TorchScript. Verified against torch
# 2.13 by tests/test_compat_torch.py.
_FAKE_ATOM = {"SymInt": "int", "ScalarType": "int", "Layout": "int", "MemoryFormat": "int",
              "DeviceIndex": "int", "Scalar": "number"}
_NUMBERS = frozenset({"int", "float", "complex"})


@lru_cache(maxsize=1024)
def _fake(t: Type) -> tuple:
    if isinstance(t, OptionalType):
        return ("?", _fake(t.elem))
    if isinstance(t, ListType):
        return ("[]", _fake(t.elem))
    assert isinstance(t, BaseType)
    return ("", _FAKE_ATOM.get(t.name, t.name))


def _is_subtype(a: tuple, b: tuple) -> bool:
    """TorchScript's ``a.isSubtypeOf(b)`` on fake types."""
    if a == b or b == ("", "Any"):
        return True
    if b[0] == "?":
        return _is_subtype(a[1], b[1]) if a[0] == "?" else _is_subtype(a, b[1])
    if a[0] == "" and b == ("", "number"):
        return a[1] in _NUMBERS
    return False  # lists are invariant; an optional is no subtype of a non-optional


@lru_cache(maxsize=4096)
def subtype(a: Type, b: Type) -> bool:
    """Whether every value of type ``a`` is a value of type ``b`` (list sizes aside)."""
    return _is_subtype(_fake(a), _fake(b))


def _type_accepts(wider: Type, narrower: Type) -> bool:
    """``wider`` accepts every ``narrower`` value, with the same fixed list size."""
    return wider.list_size == narrower.list_size and subtype(narrower, wider)


@lru_cache(maxsize=1024)
def alias_key(t: Type, annotation: Annotation | None) -> tuple | None:
    """An annotation as PyTorch compares it: sets unordered, ``(a)`` == ``(a -> a)``, and one
    container level per list around the annotated element (``Tensor(a)[]`` ≠ ``Tensor(a)``)."""
    if annotation is None:
        return None
    depth = 0
    while not isinstance(t, BaseType):
        if isinstance(t, ListType):
            depth += 1
        t = t.elem
    return frozenset(annotation.alias_set), frozenset(annotation.after), annotation.is_write, depth


_DTYPES = {  # c10::ScalarType codes of the dtype names a ScalarType default may use
    "uint8": 0, "int8": 1, "int16": 2, "short": 2, "int32": 3, "int": 3, "int64": 4, "long": 4,
    "float16": 5, "half": 5, "float32": 6, "float": 6, "float64": 7, "double": 7,
    "complex32": 8, "chalf": 8, "complex64": 9, "cfloat": 9, "complex128": 10, "cdouble": 10,
    "bool": 11, "bfloat16": 15,
}
# Identifiers PyTorch's schema parser reads as numbers whatever the argument type.
_KNOWN_IDENTS = {"float": 6, "complex": 9, "long": 4, "strided": 0, "Mean": 1, "contiguous_format": 0}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescape(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            i += 1
            out.append(_ESCAPES.get(body[i], body[i]))
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _is_scalar_type(t: Type) -> bool:
    t = t.elem if isinstance(t, OptionalType) else t
    return isinstance(t, BaseType) and t.name == "ScalarType"


def _constant(text: str, kind: str, real: Type) -> tuple:
    """One constant as PyTorch's schema parser reads it for an argument of fake kind ``kind``."""
    if text in ("True", "False"):
        return ("bool", text == "True")
    if text == "None":
        return ("none",)
    if text[0] in "\"'":
        return ("str", _unescape(text[1:-1]))
    if text[0].isalpha() or text[0] == "_":
        if text in _KNOWN_IDENTS:
            return ("int", _KNOWN_IDENTS[text])
        if _is_scalar_type(real) and text in _DTYPES:
            return ("int", _DTYPES[text])
        return ("invalid", text)
    if kind == "complex" or text.endswith("j"):
        return ("complex", complex(0, float(text[:-1])))
    if kind == "float" or "." in text or "e" in text:
        return ("float", float(text))
    return ("int", int(text))


def _list_items(text: str) -> list[str]:
    inner = text.strip()[1:-1].strip()
    return [part.strip() for part in inner.split(",")] if inner else []


@lru_cache(maxsize=4096)
def default_value(t: Type, text: str) -> tuple:
    """The value PyTorch's schema parser gives the default ``text`` of an argument of type ``t``,
    as a tagged tuple whose equality is PyTorch's ``IValue`` equality (``("int", 1)``,
    ``("float", 1.0)``, ``("list", (("int", 0), ("int", 0)))``, ``("none",)``)."""
    fake = _fake(t)
    if fake[0] == "[]":
        elem_kind = fake[1][1] if fake[1][0] == "" else "?"
        elem = t.elem
        if text[0].isalpha():
            return ("none",) if text == "None" else ("invalid", text)
        if t.list_size is not None and text[0] != "[":
            items = [text] * t.list_size
        elif text[0] == "[":
            items = _list_items(text)
        else:
            return ("invalid", text)
        values = tuple(_constant(item, elem_kind, elem) for item in items)
        wanted = {"int": "int", "float": "float", "bool": "bool", "complex": "complex"}.get(elem_kind)
        if wanted is None or any(v[0] != wanted for v in values):
            return ("invalid", text)
        return ("list", values)
    kind = fake[1] if fake[0] == "" else "?"
    if kind in ("Tensor", "Generator"):
        return ("none",) if text == "None" else ("invalid", text)
    if kind == "Device":
        return ("device", _unescape(text[1:-1])) if text[0] in "\"'" else ("invalid", text)
    if text[0] == "[":
        return ("invalid", text)
    return _constant(text, kind, t)


def _value_differs(old: Argument, new: Argument) -> bool:
    """PyTorch's ``old.default_value() != new.default_value()`` for an old default."""
    if new.default is None:
        return True
    if old.default == new.default and old.type == new.type:
        return False
    return default_value(old.type, old.default) != default_value(new.type, new.default)


# --- pairing (adapters) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ArgPair:
    """An old argument and the new argument it is compared with.

    ``aligned``: compared by position, as PyTorch does. After the first position whose names
    differ PyTorch has its verdict; opgov then pairs the remaining arguments by name
    (``aligned=False``) only to report further changes to them.
    """

    old: Argument
    new: Argument
    position: int
    old_schema: FunctionSchema
    new_schema: FunctionSchema
    aligned: bool = True


@dataclass(frozen=True, slots=True)
class AddedArg:
    """A new argument between the old arguments and the out arguments."""

    new: Argument
    position: int


@dataclass(frozen=True, slots=True)
class OutPair:
    """An old out argument and the new argument at its position counted from the first out
    argument (``new`` is None when the new schema has too few arguments)."""

    old: Argument
    new: Argument | None
    position: int


@dataclass(frozen=True, slots=True)
class RetPair:
    old: Return
    new: Return
    position: int


def _first_out(args: Sequence[Argument]) -> int:
    for i, arg in enumerate(args):
        if arg.is_out:
            return i
    return len(args)


def _align(old: FunctionSchema, new: FunctionSchema, count: int, *, aligned: bool = True) -> list[ArgPair]:
    old_args, new_args = old.arguments.flat, new.arguments.flat
    pairs: list[ArgPair] = []
    new_index: dict[str, int] | None = None
    for i in range(count):
        o = old_args[i]
        if aligned:
            n = new_args[i]
            pairs.append(ArgPair(o, n, i, old, new, True))
            if o.name != n.name:
                aligned = False
            continue
        if new_index is None:
            new_index = {}
            for j, a in enumerate(new_args):
                new_index.setdefault(a.name, j)
        j = new_index.get(o.name)
        if j is not None:
            pairs.append(ArgPair(o, new_args[j], i, old, new, False))
    return pairs


def _name_change(pair: ArgPair) -> str | None:
    """How the names at one aligned position differ: removed / inserted / reordered / renamed."""
    if not pair.aligned or pair.old.name == pair.new.name:
        return None
    old_names = pair.old_schema.arguments.names()
    new_names = pair.new_schema.arguments.names()
    old_gone = pair.old.name not in new_names
    new_fresh = pair.new.name not in old_names
    if old_gone and new_fresh:
        return "renamed"
    if old_gone:
        return "removed"
    if new_fresh:
        return "inserted"
    return "reordered"


def _same_name(pair: ArgPair) -> bool:
    return pair.old.name == pair.new.name


def _arg(a: Argument) -> str:
    return f"'{a.name}'"


def _ret(r: Return, position: int) -> str:
    return f"return {position}" + (f" '{r.name}'" if r.name else "")


def _fmt_default(a: Argument) -> str:
    return "no default" if a.default is None else a.default


# --- schema rules -------------------------------------------------------------------------


@_rule("name-changed", (BC, FC), "schema",
       "The two schemas name different operators or overloads (only when comparing a pair).")
def name_changed(old: FunctionSchema, new: FunctionSchema) -> Iterator[str]:
    if old.func_name != new.func_name:
        yield f"Schema {old.func_name} is compared with a different operator, {new.func_name}."


@_rule("return-count-changed", (BC, FC), "schema", "The operator returns more or fewer values.")
def return_count_changed(old: FunctionSchema, new: FunctionSchema) -> Iterator[str]:
    if len(old.returns) != len(new.returns):
        yield f"Number of returns changed from {len(old.returns)} to {len(new.returns)}."


@_rule("argument-removed", BC, "schema",
       "An argument was removed (for FC: one that was not a trailing argument).")
def arguments_removed(old: FunctionSchema, new: FunctionSchema) -> Iterator[str]:
    # Only the BC check requires at least as many arguments; the FC check has no count gate.
    if len(new.arguments) >= len(old.arguments):
        return
    new_names = set(new.arguments.names())
    gone = [a for a in old.arguments if a.name not in new_names]
    if not gone:
        yield f"Number of arguments fell from {len(old.arguments)} to {len(new.arguments)}."
    for a in gone:
        yield f"Argument {_arg(a)} of type {a.type_text} was removed."


@_rule("argument-removed", (BC, FC), "argument")
def argument_removed(pair: ArgPair) -> str | None:
    if _name_change(pair) == "removed":
        return f"Argument {_arg(pair.old)} of type {pair.old.type_text} was removed."
    return None


@_rule("out-count-changed", FC, "schema",
       "The number of arguments from the first out argument to the end changed.")
def out_count_changed(old: FunctionSchema, new: FunctionSchema) -> Iterator[str]:
    old_n = len(old.arguments) - _first_out(old.arguments.flat)
    new_n = len(new.arguments) - _first_out(new.arguments.flat)
    if old_n != new_n and _out_not_at_end(new) is None:
        yield f"Number of out arguments changed from {old_n} to {new_n}."


def _out_not_at_end(schema: FunctionSchema) -> tuple[Argument, Argument] | None:
    args = schema.arguments.flat
    first = _first_out(args)
    for later in args[first + 1:]:
        if not later.is_out:
            return args[first], later
    return None


@_rule("out-argument-not-at-end", FC, "schema",
       "An out argument was placed before a non-out argument, changing the out arguments' count.")
def out_argument_not_at_end(old: FunctionSchema, new: FunctionSchema) -> Iterator[str]:
    old_n = len(old.arguments) - _first_out(old.arguments.flat)
    new_n = len(new.arguments) - _first_out(new.arguments.flat)
    misplaced = _out_not_at_end(new)
    if old_n != new_n and misplaced is not None:
        out, later = misplaced
        yield (f"Out argument {_arg(out)} comes before non-out argument {_arg(later)}; "
               "out arguments must come last.")


# --- argument rules (one aligned or name-matched pair) ------------------------------------


@_rule("argument-renamed", (BC, FC), "argument",
       "An argument has a new name at the same position (for FC: one without a default).")
def argument_renamed(pair: ArgPair) -> str | None:
    if _name_change(pair) == "renamed":
        return f"Argument {pair.position} was renamed from {_arg(pair.old)} to {_arg(pair.new)}."
    return None


def _fc_argument_renamed(pair: ArgPair) -> str | None:
    if pair.old.default is None and pair.new.default is None:
        return argument_renamed(pair)
    return None


@_rule("argument-reordered", (BC, FC), "argument", "Existing arguments changed order.")
def argument_reordered(pair: ArgPair) -> str | None:
    if _name_change(pair) == "reordered":
        where = pair.new_schema.arguments.names().index(pair.old.name)
        return f"Argument {_arg(pair.old)} moved from position {pair.position} to position {where}."
    return None


@_rule("argument-inserted", (BC, FC), "argument",
       "A new argument was inserted before existing ones (for FC: one without a default).")
def argument_inserted(pair: ArgPair) -> str | None:
    if _name_change(pair) == "inserted":
        return (f"New argument {_arg(pair.new)} was inserted at position {pair.position}, before "
                f"existing argument {_arg(pair.old)}; new arguments must follow the existing ones.")
    return None


def _fc_argument_inserted(pair: ArgPair) -> str | None:
    return argument_inserted(pair) if pair.new.default is None else None


@_rule("default-argument-not-before-out", FC, "argument",
       "A new default argument was not placed right before the out arguments (or at the end).")
def default_argument_not_before_out(pair: ArgPair) -> str | None:
    if pair.new.default is not None and _name_change(pair) == "inserted":
        return (f"New default argument {_arg(pair.new)} was placed before existing argument "
                f"{_arg(pair.old)}; new default arguments must go right before the out arguments.")
    return None


@_rule("default-argument-renamed", FC, "argument", "An argument with a default value was renamed.")
def default_argument_renamed(pair: ArgPair) -> str | None:
    if (pair.old.default is not None or pair.new.default is not None) and _name_change(pair) == "renamed":
        return (f"Default argument {pair.position} was renamed from {_arg(pair.old)} "
                f"to {_arg(pair.new)}.")
    return None


@_rule("argument-type-narrowed", BC, "argument",
       "An argument's type no longer accepts every old value (Scalar → int, int? → int, int[2] → int[3]).")
def argument_type_narrowed(pair: ArgPair) -> str | None:
    if _same_name(pair) and not _type_accepts(pair.new.type, pair.old.type):
        return (f"Argument {_arg(pair.old)} changed type from {pair.old.type} to {pair.new.type}, "
                f"which does not accept every {pair.old.type} value.")
    return None


@_rule("argument-type-widened", FC, "argument",
       "An argument's type accepts values the old type did not (int → int?, int → Scalar).")
def argument_type_widened(pair: ArgPair) -> str | None:
    if _same_name(pair) and not _type_accepts(pair.old.type, pair.new.type):
        return (f"Argument {_arg(pair.old)} changed type from {pair.old.type} to {pair.new.type}, "
                f"which older versions of the schema do not accept.")
    return None


@_rule("argument-made-kwarg-only", (BC, FC), "argument", "A positional argument became keyword-only.")
def argument_made_kwarg_only(pair: ArgPair) -> str | None:
    if _same_name(pair) and pair.new.kwarg_only and not pair.old.kwarg_only:
        return f"Argument {_arg(pair.old)} became keyword-only."
    return None


@_rule("default-changed", (BC, FC), "argument", "An argument's default value changed.")
def default_changed(pair: ArgPair) -> str | None:
    old, new = pair.old, pair.new
    if _same_name(pair) and old.default is not None and new.default is not None and _value_differs(old, new):
        return f"Default of argument {_arg(old)} changed from {old.default} to {new.default}."
    return None


@_rule("default-removed", (BC, FC), "argument", "An argument lost its default value.")
def default_removed(pair: ArgPair) -> str | None:
    if _same_name(pair) and pair.old.default is not None and pair.new.default is None:
        return f"Argument {_arg(pair.old)} lost its default value {pair.old.default}."
    return None


@_rule("default-added", FC, "argument",
       "A required argument gained a default value, which older versions do not know.")
def default_added(pair: ArgPair) -> str | None:
    if _same_name(pair) and pair.old.default is None and pair.new.default is not None:
        return (f"Argument {_arg(pair.old)} gained the default value {pair.new.default}, "
                "which older versions of the schema do not know.")
    return None


@_rule("alias-annotation-changed", (BC, FC), ("argument", "return"),
       "An alias annotation was added, removed or changed (Tensor(a) → Tensor(a!)).")
def alias_annotation_changed(pair: ArgPair | RetPair) -> str | None:
    old, new = pair.old, pair.new
    if isinstance(pair, ArgPair):
        if not _same_name(pair):
            return None
        what = f"argument {_arg(old)}"
    else:
        what = _ret(old, pair.position)
    if alias_key(old.type, old.annotation) != alias_key(new.type, new.annotation):
        return f"Alias annotation of {what} changed from {old.type_text} to {new.type_text}."
    return None


# --- returns ------------------------------------------------------------------------------


@_rule("return-renamed", BC, "return", "A return value was named, renamed or lost its name.")
def return_renamed(pair: RetPair) -> str | None:
    if (pair.old.name or "") != (pair.new.name or ""):
        old = f"'{pair.old.name}'" if pair.old.name else "(unnamed)"
        new = f"'{pair.new.name}'" if pair.new.name else "(unnamed)"
        return f"Return {pair.position} was renamed from {old} to {new}."
    return None


@_rule("return-type-changed", BC, "return",
       "A return type is not at least as specific as before (int → Scalar, Tensor → Tensor?).")
def return_type_changed(pair: RetPair) -> str | None:
    old, new = pair.old.type, pair.new.type
    if _type_accepts(old, new):
        return None
    why = f"more generic than {old}" if _type_accepts(new, old) else f"not a {old}"
    return f"Type of {_ret(pair.old, pair.position)} changed from {old} to {new}, which is {why}."


# --- new arguments before the outs --------------------------------------------------------


@_rule("argument-added-without-default", (BC, FC), "added", "A new argument has no default value.")
def argument_added_without_default(added: AddedArg) -> str | None:
    if added.new.default is None:
        return f"New argument {_arg(added.new)} of type {added.new.type_text} has no default value."
    return None


@_rule("container-default-added", FC, "added",
       "A new argument's default is a list (int[2] c=1), which older versions cannot supply.")
def container_default_added(added: AddedArg) -> str | None:
    a = added.new
    if a.default is not None and default_value(a.type, a.default)[0] == "list":
        return (f"New argument {_arg(a)} of type {a.type} has a container default ({a.default}); "
                "only non-container defaults are forward compatible.")
    return None


# --- out arguments ------------------------------------------------------------------------


def _arg_changes(old: Argument, new: Argument, kind: str) -> list[str]:
    """What makes ``new`` incompatible with ``old`` (PyTorch's Argument::is{Backward,Forward}CompatibleWith)."""
    changes: list[str] = []
    if old.name != new.name:
        changes.append(f"was renamed to {_arg(new)}")
    if alias_key(old.type, old.annotation) != alias_key(new.type, new.annotation):
        changes.append(f"changed alias annotation from {old.type_text} to {new.type_text}")
    if new.kwarg_only and not old.kwarg_only:
        changes.append("became keyword-only")
    accepts = _type_accepts(new.type, old.type) if kind == BC else _type_accepts(old.type, new.type)
    if not accepts:
        changes.append(f"changed type from {old.type} to {new.type}")
    if old.default is not None and _value_differs(old, new):
        changes.append(f"changed default from {old.default} to {_fmt_default(new)}")
    if kind == FC and old.default is None and new.default is not None:
        changes.append(f"gained the default value {new.default}")
    return changes


def _out_argument_changed(kind: str) -> Callable[[OutPair], str | None]:
    def check(pair: OutPair) -> str | None:
        if pair.new is None:
            return f"Out argument {_arg(pair.old)} was removed."
        changes = _arg_changes(pair.old, pair.new, kind)
        if changes:
            return f"Out argument {_arg(pair.old)} " + " and ".join(changes) + "."
        return None

    return check


_rule("out-argument-changed", BC, "out",
      "An out argument was removed, renamed, moved, retyped or re-annotated.")(_out_argument_changed(BC))
_rule("out-argument-changed", FC, "out",
      "An out argument was renamed, moved, retyped or re-annotated.")(_out_argument_changed(FC))

# --- operator-level rules, applied by compare() -------------------------------------------

_RULES[("operator-removed", BC)] = Rule("operator-removed", BC,
                                       "The operator (this overload) is gone from the new registry.")
_RULES[("operator-added", NEW)] = Rule("operator-added", NEW, "A new operator appeared (informational).")
_RULES[("operator-own-entry", NEW)] = Rule("operator-own-entry", NEW,
                                           "An operator another entry's autogen: declared now has its own "
                                           "entry (informational; not a new operator).")

# FC variants where the BC wording would mislead: defaults have their own FC rules.
for _id, _fn in (("argument-renamed", _fc_argument_renamed), ("argument-inserted", _fc_argument_inserted)):
    _RULES[(_id, FC)] = replace(_RULES[(_id, FC)], checks=(("argument", _fn),))

#: Every rule, in the order they run; (id, kind) is unique.
RULES: tuple[Rule, ...] = tuple(_RULES.values())


def rules_for(kind: str, subject: str | None = None) -> tuple[Rule, ...]:
    """The rules of one kind (bc / fc / new), optionally only those looking at ``subject``."""
    return tuple(r for r in RULES if r.kind == kind and (subject is None or subject in r.subjects))


_BY_SUBJECT: dict[tuple[str, str], tuple[tuple[str, Callable], ...]] = {
    (k, s): tuple((r.id, fn) for r in RULES if r.kind == k for subject, fn in r.checks if subject == s)
    for k in (BC, FC) for s in ("schema", "argument", "return", "added", "out")
}


# --- pairwise verdicts --------------------------------------------------------------------


def _run(kind: str, subject: str, *args) -> Iterator[Break]:
    for rule_id, check in _BY_SUBJECT[(kind, subject)]:
        result = check(*args)
        if result is None:
            continue
        if isinstance(result, str):
            yield Break(kind, rule_id, result)
        else:
            for message in result:
                yield Break(kind, rule_id, message)


def bc_breaks(old: FunctionSchema, new: FunctionSchema) -> list[Break]:
    """Every way ``new`` breaks backward compatibility with ``old``, in a stable order.

    Empty exactly when ``new.is_backward_compatible_with(old)`` is true in PyTorch.
    """
    breaks = list(_run(BC, "schema", old, new))
    if breaks and breaks[0].rule == "name-changed":
        return breaks[:1]
    if len(old.returns) == len(new.returns):
        for i, (o, n) in enumerate(zip(old.returns, new.returns, strict=True)):
            breaks.extend(_run(BC, "return", RetPair(o, n, i)))
    old_args, new_args = old.arguments.flat, new.arguments.flat
    old_out = _first_out(old_args)
    if len(new_args) < len(old_args):
        # PyTorch stops here; report what else changed among the arguments that are left.
        for pair in _align(old, new, old_out, aligned=False):
            breaks.extend(_run(BC, "argument", pair))
        return breaks
    new_out = _first_out(new_args)
    for pair in _align(old, new, old_out):
        breaks.extend(_run(BC, "argument", pair))
    for i in range(old_out, new_out):
        breaks.extend(_run(BC, "added", AddedArg(new_args[i], i)))
    for i in range(old_out, len(old_args)):
        j = i - old_out + new_out
        breaks.extend(_run(BC, "out", OutPair(old_args[i], new_args[j] if j < len(new_args) else None, i)))
    return breaks


def fc_breaks(old: FunctionSchema, new: FunctionSchema) -> list[Break]:
    """Every way ``new`` breaks forward compatibility with ``old``, in a stable order.

    Empty exactly when ``new.check_forward_compatible_with(old)`` says compatible in PyTorch.
    """
    breaks = list(_run(FC, "schema", old, new))
    if breaks and breaks[0].rule == "name-changed":
        return breaks[:1]
    old_args, new_args = old.arguments.flat, new.arguments.flat
    old_out, new_out = _first_out(old_args), _first_out(new_args)
    for pair in _align(old, new, min(old_out, new_out)):
        breaks.extend(_run(FC, "argument", pair))
    for i in range(old_out, new_out):
        breaks.extend(_run(FC, "added", AddedArg(new_args[i], i)))
    if len(old_args) - old_out == len(new_args) - new_out:
        for i in range(old_out, len(old_args)):
            breaks.extend(_run(FC, "out", OutPair(old_args[i], new_args[i - old_out + new_out], i)))
    return breaks


# --- whole registries ---------------------------------------------------------------------


def _base_key(operator: str) -> str:
    """``aten::add.Tensor`` → ``aten::add``."""
    ns, sep, rest = operator.rpartition("::")
    return f"{ns}{sep}{rest.partition('.')[0]}"


def _finding(operator: str, kind: str, breaks: list[Break], old: FunctionSchema | None,
             new: FunctionSchema | None) -> RawFinding:
    first, others = breaks[0], breaks[1:]
    message = first.message
    if others:
        message += " Also: " + " ".join(b.message for b in others)
    return RawFinding(operator, kind, first.rule, message, None if old is None else str(old),
                      None if new is None else str(new), tuple(b.rule for b in others))


def own_entry_message(declared_by: str) -> str:
    """The one wording for an operator that another entry's ``autogen:`` declared and that now has
    its own entry: check-bc's finding and the import summary say the same."""
    return f"Now has its own entry (was autogen of {declared_by}); not a new operator."


def compare(old: Mapping[str, FunctionSchema], new: Mapping[str, FunctionSchema],
            old_autogen: Mapping[str, str] | None = None) -> list[RawFinding]:
    """Check every operator of ``old`` against ``new``; keys are canonical names.

    BC: an old schema is fine when some overload of the same name in ``new`` is backward
    compatible with it (PyTorch's BC script; since the check also compares overload names, that
    is the overload of the same full name). FC: checked for operators present in both. New
    operators are reported as informational. One finding per operator and kind, old operators in
    ``old``'s order (BC before FC), then new operators in ``new``'s order. ``old_autogen`` names
    the operators the old registry declared by ``autogen:`` (→ the declaring entry): one of them
    with its own entry in ``new`` is not new (``operator-own-entry``).
    """
    overloads: dict[str, list[str]] = {}
    for name in new:
        overloads.setdefault(_base_key(name), []).append(name)
    findings: list[RawFinding] = []
    for name, old_schema in old.items():
        new_schema = new.get(name)
        if new_schema is not None and str(new_schema) == str(old_schema):
            continue
        bc = bc_breaks(old_schema, new_schema) if new_schema is not None else None
        if bc != []:
            candidates = [n for n in overloads.get(_base_key(name), ()) if n != name]
            if not any(not bc_breaks(old_schema, new[c]) for c in candidates):
                if bc is None:
                    remaining = ", ".join(sorted(candidates))
                    message = "Operator was removed" + (
                        f"; no remaining overload ({remaining}) is backward compatible with it."
                        if remaining else ".")
                    bc = [Break(BC, "operator-removed", message)]
                findings.append(_finding(name, BC, bc, old_schema, new_schema))
        if new_schema is not None:
            fc = fc_breaks(old_schema, new_schema)
            if fc:
                findings.append(_finding(name, FC, fc, old_schema, new_schema))
    for name, new_schema in new.items():
        if name not in old:
            if old_autogen and name in old_autogen:
                findings.append(RawFinding(name, NEW, "operator-own-entry", own_entry_message(old_autogen[name]),
                                           None, str(new_schema)))
            else:
                findings.append(RawFinding(name, NEW, "operator-added", "New operator.", None, str(new_schema)))
    return findings


# --- policy -------------------------------------------------------------------------------


def expired_exceptions(exceptions: Iterable[BcException], today: date) -> list[BcException]:
    """The exceptions that no longer apply (their expiry date has passed)."""
    return [e for e in exceptions if e.expired(today)]


def apply_policy(
    raw: Iterable[RawFinding],
    *,
    core: Callable[[str], bool] | Collection[str],
    exceptions: Sequence[BcException] = (),
    completed_deletions: Collection[str] = frozenset(),
    today: date,
    locate: Callable[[RawFinding], tuple[str | None, int | None]] | None = None,
) -> list[Finding]:
    """Give each raw finding a severity under the core ATen policy.

    * BC break of a core operator (``core`` is judged on the old side): ``error``, never waived;
      the message says to add a new native function instead.
    * Removal of an operator in ``completed_deletions`` (it finished its deprecation lifecycle):
      ``info``.
    * BC break of another operator: ``error``, or ``waived`` when an unexpired exception covers
      it (the message names the exception). Expired exceptions do not apply; an error they would
      have covered says so. An error's message says how to let such a change through.
    * FC break: ``warning``. New operator: ``info``.

    ``locate`` gives each finding its file and line (e.g. the entry in the new yaml).
    """
    is_core = core if callable(core) else core.__contains__
    active = [e for e in exceptions if not e.expired(today)]
    expired = [e for e in exceptions if e.expired(today)]
    findings: list[Finding] = []
    for f in raw:
        message = f.message
        if f.kind == NEW:
            severity = "info"
        elif f.kind == FC:
            severity = "warning"
        elif f.rule == "operator-removed" and f.operator in completed_deletions:
            severity = "info"
            message += " The removal completes the operator's deprecation lifecycle."
        elif is_core(f.operator):
            severity = "error"
            message += (f" {f.operator} is a core ATen operator: BC-breaking changes to it are never "
                        "waived; add a new native function (a new operator or overload) instead.")
        else:
            cover = next((e for e in active if e.covers(f.operator)), None)
            if cover is not None:
                severity = "waived"
                message += (f" Waived by exception {cover.pattern!r} until {cover.expires_on.isoformat()} "
                            f"({cover.created_by}: {cover.reason}).")
            else:
                severity = "error"
                lapsed = next((e for e in expired if e.covers(f.operator)), None)
                if lapsed is not None:
                    message += (f" Exception {lapsed.pattern!r} expired on "
                                f"{lapsed.expires_on.isoformat()} and no longer applies.")
                if f.rule == "operator-removed":
                    message += (" Remove operators through the deprecation lifecycle (opgov deprecate), "
                                "or record an exception (opgov exceptions add).")
                else:
                    message += (f" {f.operator} is not core: if the break is intended, record an exception "
                                "(opgov exceptions add).")
        file, line = locate(f) if locate is not None else (None, None)
        findings.append(Finding(f.operator, f.kind, f.rule, severity, message, f.old_schema,
                                f.new_schema, file, line))
    return findings
