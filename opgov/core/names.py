"""Operator names as users type them, and the one canonical spelling opgov stores.

Canonical: ``aten::add.Tensor``, and ``aten::abs`` for the default overload. Accepted:
``aten::add.Tensor``, ``add.Tensor``, ``aten.add.Tensor``, ``aten.abs.default``, ``aten::abs``,
``aten::abs.default``, ``abs``.

The name model is :class:`opgov.core.schema.OperatorName` (the one the schema parser builds);
this module only reads the looser spellings people type and always fills in the namespace, so
``str()`` of what it returns is the canonical name.
"""

from __future__ import annotations

import re

from opgov.core.errors import BadInput
from opgov.core.schema import OperatorName

__all__ = ["DEFAULT_NAMESPACE", "NAME_PATTERN", "OperatorName", "canonical", "from_func_name", "parse_op_name"]

DEFAULT_NAMESPACE = "aten"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# every spelling parse_op_name accepts (without surrounding blanks), as a regular expression that
# JSON Schema (the service's OpenAPI document) and Python read the same way
NAME_PATTERN = rf"^({_IDENT}::{_IDENT}(\.{_IDENT})?|{_IDENT}(\.{_IDENT}){{0,2}})$"


def parse_op_name(text: str, *, known_namespaces: frozenset[str] = frozenset({"aten"})) -> OperatorName:
    """Parse any accepted spelling into an :class:`OperatorName` with its namespace; raise
    :class:`BadInput` otherwise.

    ``aten.add.Tensor`` is ambiguous in general with ``add.Tensor`` when the first part is not a
    namespace, so a dotted first part counts as a namespace only when it is a known one.
    """
    raw = text.strip()
    if "::" in raw:
        ns, _, rest = raw.partition("::")
        parts = rest.split(".")
        if not re.fullmatch(_IDENT, ns) or not 1 <= len(parts) <= 2 or not all(re.fullmatch(_IDENT, p) for p in parts):
            raise BadInput(f"{text!r} is not an operator name (expected e.g. aten::add.Tensor)")
        name, overload = parts[0], parts[1] if len(parts) == 2 else ""
    else:
        parts = raw.split(".")
        if not all(re.fullmatch(_IDENT, p) for p in parts) or not 1 <= len(parts) <= 3:
            raise BadInput(f"{text!r} is not an operator name (expected e.g. aten::add.Tensor)")
        if len(parts) == 3:
            ns, name, overload = parts[0], parts[1], parts[2]
        elif len(parts) == 2 and parts[0] in known_namespaces:
            # "aten.abs" reads as namespace + name
            ns, name, overload = parts[0], parts[1], ""
        elif len(parts) == 2:
            ns, name, overload = DEFAULT_NAMESPACE, parts[0], parts[1]
        else:
            ns, name, overload = DEFAULT_NAMESPACE, parts[0], ""
    if overload == "default":
        overload = ""
    return OperatorName(name, overload, ns)


_CANONICAL = re.compile(rf"{_IDENT}::{_IDENT}(\.{_IDENT})?")


def canonical(text: str) -> str:
    """``canonical("aten.abs.default") == "aten::abs"``."""
    if _CANONICAL.fullmatch(text) and not text.endswith(".default"):
        return text  # already canonical (a model's thousands of names are read at this cost)
    return str(parse_op_name(text))


def from_func_name(func_name: str, namespace: str = DEFAULT_NAMESPACE) -> OperatorName:
    """From the name part of a ``func:`` line (``add.Tensor``, ``abs``), in ``namespace``."""
    name, _, overload = func_name.partition(".")
    return OperatorName(name, overload, namespace)


# --- "did you mean": close names from an index -------------------------------------------------------

# the unknown names of one check that get a "did you mean" (the rest are named without one): a
# request of thousands of unknown names costs what a few do
SUGGESTED_NAMES = 10
_CANDIDATES = 40  # the names that share the most rare trigrams with the unknown one, compared in full


def _trigrams(name: str) -> set[str]:
    text = f" {name.lower()} "
    return {text[i:i + 3] for i in range(len(text) - 2)}


class NameIndex:
    """Close matches for a name among a registry's names, as :func:`difflib.get_close_matches` ranks
    them, without comparing it with every name: an index of each name's trigrams (those most names
    share, such as ``ate`` of ``aten::``, left out) gives the few dozen names sharing the most with it,
    and only those are compared. Built once per registry (:func:`name_index`)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        postings: dict[str, list[int]] = {}
        for i, name in enumerate(names):
            for gram in _trigrams(name):
                postings.setdefault(gram, []).append(i)
        common = max(64, len(names) // 16)
        self._postings = {gram: tuple(found) for gram, found in postings.items() if len(found) <= common}

    def close(self, name: str, *, n: int = 3, cutoff: float = 0.8) -> list[str]:
        import difflib
        from collections import Counter

        shared: Counter[int] = Counter()
        for gram in _trigrams(name):
            shared.update(self._postings.get(gram, ()))
        candidates = [self.names[i] for i, _ in shared.most_common(_CANDIDATES)]
        return difflib.get_close_matches(name, candidates, n=n, cutoff=cutoff)


_INDEXES: dict[tuple[str, ...], NameIndex] = {}


def name_index(names) -> NameIndex:
    """The :class:`NameIndex` of ``names`` (a registry's operator names), built once and kept for the
    next check of the same registry (the last four registries are kept)."""
    key = tuple(names)
    index = _INDEXES.get(key)
    if index is None:
        index = NameIndex(key)
        while len(_INDEXES) >= 4:
            _INDEXES.pop(next(iter(_INDEXES)))
        _INDEXES[key] = index
    return index
