"""The adapters: which old and new parts of two schemas each rule compares.

Every rule sees exactly one pair: the two whole schemas (:class:`SchemaPair`), an old argument
and the new argument it is compared with (:class:`ArgPair`), a new argument before the outs
(:class:`AddedArg`), an out-argument pair (:class:`OutPair`) or a return pair (:class:`RetPair`).
The checker (:mod:`opgov.core.compat.checker`) builds the pairs the way PyTorch walks a schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from opgov.core.schema import Argument, FunctionSchema, Return

__all__ = ["AddedArg", "ArgPair", "OutPair", "RetPair", "SchemaPair", "align", "first_out", "name_change",
           "out_not_at_end"]


@dataclass(frozen=True, slots=True)
class SchemaPair:
    """The old and the new schema of one operator."""

    old: FunctionSchema
    new: FunctionSchema


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


def first_out(args: Sequence[Argument]) -> int:
    for i, arg in enumerate(args):
        if arg.is_out:
            return i
    return len(args)


def align(old: FunctionSchema, new: FunctionSchema, count: int, *, aligned: bool = True) -> list[ArgPair]:
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


def name_change(pair: ArgPair) -> str | None:
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


def out_not_at_end(schema: FunctionSchema) -> tuple[Argument, Argument] | None:
    """The first out argument and a non-out argument after it, if the outs are not all last."""
    args = schema.arguments.flat
    first = first_out(args)
    for later in args[first + 1:]:
        if not later.is_out:
            return args[first], later
    return None
