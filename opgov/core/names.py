"""Operator names as users type them, and the one canonical spelling opgov stores.

Canonical: ``aten::add.Tensor``, and ``aten::abs`` for the default overload. Accepted:
``aten::add.Tensor``, ``add.Tensor``, ``aten.add.Tensor``, ``aten.abs.default``, ``aten::abs``,
``aten::abs.default``, ``abs``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from opgov.core.errors import BadInput

DEFAULT_NAMESPACE = "aten"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_NAME_RE = re.compile(rf"^(?:(?P<ns>{_IDENT})(?:::|\.))?(?P<name>{_IDENT})(?:\.(?P<overload>{_IDENT}))?$")


@dataclass(frozen=True, order=True)
class OpName:
    namespace: str
    name: str
    overload: str  # "" for the default overload

    @property
    def func_name(self) -> str:
        """The name as written in a ``func:`` line: ``add.Tensor`` or ``abs``."""
        return f"{self.name}.{self.overload}" if self.overload else self.name

    def __str__(self) -> str:
        return f"{self.namespace}::{self.func_name}"


def parse_op_name(text: str, *, known_namespaces: frozenset[str] = frozenset({"aten"})) -> OpName:
    """Parse any accepted spelling into an :class:`OpName`; raise :class:`BadInput` otherwise.

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
    return OpName(ns, name, overload)


def canonical(text: str) -> str:
    """``canonical("aten.abs.default") == "aten::abs"``."""
    return str(parse_op_name(text))


def from_func_name(func_name: str, namespace: str = DEFAULT_NAMESPACE) -> OpName:
    """From the name part of a ``func:`` line (``add.Tensor``, ``abs``)."""
    name, _, overload = func_name.partition(".")
    return OpName(namespace, name, overload)
