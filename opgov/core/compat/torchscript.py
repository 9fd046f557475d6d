"""TorchScript's view of types and default values, which PyTorch's compatibility checks use.

PyTorch compares schemas after its schema parser has turned them into TorchScript types and
``IValue`` defaults; this module computes the same from the schema text. Standard library only.
"""

from __future__ import annotations

from functools import lru_cache

from opgov.core.schema import Annotation, Argument, BaseType, ListType, OptionalType, Type

__all__ = ["alias_key", "default_value", "subtype", "type_accepts", "value_differs"]


# The type PyTorch checks with ("fake type"): these are all plain int to TorchScript, so PyTorch
# (and therefore opgov) does not flag int ↔ SymInt or ScalarType ↔ int, although the C++
# signature changes. SymBool, by contrast, is not bool to TorchScript. Verified against torch
# 2.13 by tests/core/test_compat_torch.py.
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


def type_accepts(wider: Type, narrower: Type) -> bool:
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


def value_differs(old: Argument, new: Argument) -> bool:
    """PyTorch's ``old.default_value() != new.default_value()`` for an old default."""
    if new.default is None:
        return True
    if old.default == new.default and old.type == new.type:
        return False
    return default_value(old.type, old.default) != default_value(new.type, new.default)
