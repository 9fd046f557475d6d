"""The compatibility rules: one function per rule id, and the table that registers them.

Each rule is a small function named after its kebab-case id (``default_changed`` for
``default-changed``). It receives the kind of check it runs for (``bc`` or ``fc``) and exactly
one pair from the adapters in :mod:`opgov.core.compat.pairing` — the two schemas, an argument
pair, a new argument, an out-argument pair or a return pair — and yields one message per change
it finds, in one voice: what changed, naming the argument or return.

:data:`RULES` registers every rule once per kind: its id, its kind (bc / fc / new: the rule's
category), the subjects it looks at, its one-line purpose and its function. ``opgov check-bc
--list-rules`` and the documentation list the rules from this table; the checker runs them in
its order. Adding a rule: write the function here, add its row, and add a fixture folder
``tests/compat/cases/<rule-id>/`` (old.yaml, new.yaml, expected.json).

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from opgov.core.compat.pairing import (AddedArg, ArgPair, OutPair, RetPair, SchemaPair, first_out, name_change,
                                       out_not_at_end)
from opgov.core.compat.torchscript import alias_key, default_value, type_accepts, value_differs
from opgov.core.schema import Argument, Return
from opgov.core.vocab import FindingKind

__all__ = ["RULES", "Rule", "rules_for"]

BC, FC, NEW = FindingKind.bc, FindingKind.fc, FindingKind.new

#: What a rule looks at: the two schemas, an argument pair, a return pair, a new argument before
#: the outs, an out-argument pair; ``operator``: whole operators, which :func:`compare` pairs.
SUBJECTS = ("schema", "argument", "return", "added", "out", "operator")

Check = Callable[[FindingKind, object], Iterator[str]]


# --- message helpers ----------------------------------------------------------------------


def _arg(a: Argument) -> str:
    return f"'{a.name}'"


def _ret(r: Return, position: int) -> str:
    return f"return {position}" + (f" '{r.name}'" if r.name else "")


def _fmt_default(a: Argument) -> str:
    return "no default" if a.default is None else a.default


def _same_name(pair: ArgPair) -> bool:
    return pair.old.name == pair.new.name


# --- schema rules -------------------------------------------------------------------------


def name_changed(kind: FindingKind, pair: SchemaPair) -> Iterator[str]:
    if pair.old.func_name != pair.new.func_name:
        yield f"Schema {pair.old.func_name} is compared with a different operator, {pair.new.func_name}."


def return_count_changed(kind: FindingKind, pair: SchemaPair) -> Iterator[str]:
    if len(pair.old.returns) != len(pair.new.returns):
        yield f"Number of returns changed from {len(pair.old.returns)} to {len(pair.new.returns)}."


def argument_removed(kind: FindingKind, pair: SchemaPair | ArgPair) -> Iterator[str]:
    """Of two schemas (BC only: the BC check requires at least as many arguments, the FC check has
    no count gate), or at one aligned position."""
    if isinstance(pair, ArgPair):
        if name_change(pair) == "removed":
            yield f"Argument {_arg(pair.old)} of type {pair.old.type_text} was removed."
        return
    old, new = pair.old, pair.new
    if kind != BC or len(new.arguments) >= len(old.arguments):
        return
    new_names = set(new.arguments.names())
    gone = [a for a in old.arguments if a.name not in new_names]
    if not gone:
        yield f"Number of arguments fell from {len(old.arguments)} to {len(new.arguments)}."
    for a in gone:
        yield f"Argument {_arg(a)} of type {a.type_text} was removed."


def _out_counts(pair: SchemaPair) -> tuple[int, int]:
    return (len(pair.old.arguments) - first_out(pair.old.arguments.flat),
            len(pair.new.arguments) - first_out(pair.new.arguments.flat))


def out_count_changed(kind: FindingKind, pair: SchemaPair) -> Iterator[str]:
    old_n, new_n = _out_counts(pair)
    if old_n != new_n and out_not_at_end(pair.new) is None:
        yield f"Number of out arguments changed from {old_n} to {new_n}."


def out_argument_not_at_end(kind: FindingKind, pair: SchemaPair) -> Iterator[str]:
    old_n, new_n = _out_counts(pair)
    misplaced = out_not_at_end(pair.new)
    if old_n != new_n and misplaced is not None:
        out, later = misplaced
        yield (f"Out argument {_arg(out)} comes before non-out argument {_arg(later)}; "
               "out arguments must come last.")


# --- argument rules (one aligned or name-matched pair) ------------------------------------


def argument_renamed(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    """For FC only an argument without a default (default-argument-renamed covers the others)."""
    if kind == FC and (pair.old.default is not None or pair.new.default is not None):
        return
    if name_change(pair) == "renamed":
        yield f"Argument {pair.position} was renamed from {_arg(pair.old)} to {_arg(pair.new)}."


def argument_reordered(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if name_change(pair) == "reordered":
        where = pair.new_schema.arguments.names().index(pair.old.name)
        yield f"Argument {_arg(pair.old)} moved from position {pair.position} to position {where}."


def argument_inserted(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    """For FC only an argument without a default (default-argument-not-before-out covers the others)."""
    if kind == FC and pair.new.default is not None:
        return
    if name_change(pair) == "inserted":
        yield (f"New argument {_arg(pair.new)} was inserted at position {pair.position}, before "
               f"existing argument {_arg(pair.old)}; new arguments must follow the existing ones.")


def default_argument_not_before_out(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if pair.new.default is not None and name_change(pair) == "inserted":
        yield (f"New default argument {_arg(pair.new)} was placed before existing argument "
               f"{_arg(pair.old)}; new default arguments must go right before the out arguments.")


def default_argument_renamed(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if (pair.old.default is not None or pair.new.default is not None) and name_change(pair) == "renamed":
        yield (f"Default argument {pair.position} was renamed from {_arg(pair.old)} "
               f"to {_arg(pair.new)}.")


def argument_type_narrowed(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if _same_name(pair) and not type_accepts(pair.new.type, pair.old.type):
        yield (f"Argument {_arg(pair.old)} changed type from {pair.old.type} to {pair.new.type}, "
               f"which does not accept every {pair.old.type} value.")


def argument_type_widened(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if _same_name(pair) and not type_accepts(pair.old.type, pair.new.type):
        yield (f"Argument {_arg(pair.old)} changed type from {pair.old.type} to {pair.new.type}, "
               f"which older versions of the schema do not accept.")


def argument_made_kwarg_only(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if _same_name(pair) and pair.new.kwarg_only and not pair.old.kwarg_only:
        yield f"Argument {_arg(pair.old)} became keyword-only."


def default_changed(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    old, new = pair.old, pair.new
    if _same_name(pair) and old.default is not None and new.default is not None and value_differs(old, new):
        yield f"Default of argument {_arg(old)} changed from {old.default} to {new.default}."


def default_removed(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if _same_name(pair) and pair.old.default is not None and pair.new.default is None:
        yield f"Argument {_arg(pair.old)} lost its default value {pair.old.default}."


def default_added(kind: FindingKind, pair: ArgPair) -> Iterator[str]:
    if _same_name(pair) and pair.old.default is None and pair.new.default is not None:
        yield (f"Argument {_arg(pair.old)} gained the default value {pair.new.default}, "
               "which older versions of the schema do not know.")


def alias_annotation_changed(kind: FindingKind, pair: ArgPair | RetPair) -> Iterator[str]:
    old, new = pair.old, pair.new
    if isinstance(pair, ArgPair):
        if not _same_name(pair):
            return
        what = f"argument {_arg(old)}"
    else:
        what = _ret(old, pair.position)
    if alias_key(old.type, old.annotation) != alias_key(new.type, new.annotation):
        yield f"Alias annotation of {what} changed from {old.type_text} to {new.type_text}."


# --- returns ------------------------------------------------------------------------------


def return_renamed(kind: FindingKind, pair: RetPair) -> Iterator[str]:
    if (pair.old.name or "") != (pair.new.name or ""):
        old = f"'{pair.old.name}'" if pair.old.name else "(unnamed)"
        new = f"'{pair.new.name}'" if pair.new.name else "(unnamed)"
        yield f"Return {pair.position} was renamed from {old} to {new}."


def return_type_changed(kind: FindingKind, pair: RetPair) -> Iterator[str]:
    old, new = pair.old.type, pair.new.type
    if not type_accepts(old, new):
        why = f"more generic than {old}" if type_accepts(new, old) else f"not a {old}"
        yield f"Type of {_ret(pair.old, pair.position)} changed from {old} to {new}, which is {why}."


# --- new arguments before the outs --------------------------------------------------------


def argument_added_without_default(kind: FindingKind, added: AddedArg) -> Iterator[str]:
    if added.new.default is None:
        yield f"New argument {_arg(added.new)} of type {added.new.type_text} has no default value."


def container_default_added(kind: FindingKind, added: AddedArg) -> Iterator[str]:
    a = added.new
    if a.default is not None and default_value(a.type, a.default)[0] == "list":
        yield (f"New argument {_arg(a)} of type {a.type} has a container default ({a.default}); "
               "only non-container defaults are forward compatible.")


# --- out arguments ------------------------------------------------------------------------


def out_argument_changed(kind: FindingKind, pair: OutPair) -> Iterator[str]:
    """PyTorch's ``Argument::is{Backward,Forward}CompatibleWith`` on one out argument."""
    old, new = pair.old, pair.new
    if new is None:
        yield f"Out argument {_arg(old)} was removed."
        return
    changes: list[str] = []
    if old.name != new.name:
        changes.append(f"was renamed to {_arg(new)}")
    if alias_key(old.type, old.annotation) != alias_key(new.type, new.annotation):
        changes.append(f"changed alias annotation from {old.type_text} to {new.type_text}")
    if new.kwarg_only and not old.kwarg_only:
        changes.append("became keyword-only")
    accepts = type_accepts(new.type, old.type) if kind == BC else type_accepts(old.type, new.type)
    if not accepts:
        changes.append(f"changed type from {old.type} to {new.type}")
    if old.default is not None and value_differs(old, new):
        changes.append(f"changed default from {old.default} to {_fmt_default(new)}")
    if kind == FC and old.default is None and new.default is not None:
        changes.append(f"gained the default value {new.default}")
    if changes:
        yield f"Out argument {_arg(old)} " + " and ".join(changes) + "."


# --- the table ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of :data:`RULES`: a rule id, the kind of check it belongs to (bc / fc / new), the
    subjects it looks at, its one-line purpose and the function that checks it.

    ``check`` is None for the operator-level rules (``operator-removed``, ``operator-added``),
    which :func:`opgov.core.compat.compare` applies while pairing whole registries.
    """

    id: str
    kind: FindingKind
    subjects: tuple[str, ...]
    purpose: str
    check: Check | None = None


_S, _A, _R, _ADD, _OUT, _OP = ("schema",), ("argument",), ("return",), ("added",), ("out",), ("operator",)

#: Every rule, in the order the checker runs them on each subject; (id, kind) is unique.
RULES: tuple[Rule, ...] = (
    Rule("name-changed", BC, _S,
         "The two schemas name different operators or overloads (only when comparing a pair).", name_changed),
    Rule("name-changed", FC, _S,
         "The two schemas name different operators or overloads (only when comparing a pair).", name_changed),
    Rule("return-count-changed", BC, _S, "The operator returns more or fewer values.", return_count_changed),
    Rule("return-count-changed", FC, _S, "The operator returns more or fewer values.", return_count_changed),
    Rule("argument-removed", BC, _S + _A,
         "An argument was removed (for FC: one that was not a trailing argument).", argument_removed),
    Rule("argument-removed", FC, _A,
         "An argument was removed (for FC: one that was not a trailing argument).", argument_removed),
    Rule("out-count-changed", FC, _S,
         "The number of arguments from the first out argument to the end changed.", out_count_changed),
    Rule("out-argument-not-at-end", FC, _S,
         "An out argument was placed before a non-out argument, changing the out arguments' count.",
         out_argument_not_at_end),
    Rule("argument-renamed", BC, _A,
         "An argument has a new name at the same position (for FC: one without a default).", argument_renamed),
    Rule("argument-renamed", FC, _A,
         "An argument has a new name at the same position (for FC: one without a default).", argument_renamed),
    Rule("argument-reordered", BC, _A, "Existing arguments changed order.", argument_reordered),
    Rule("argument-reordered", FC, _A, "Existing arguments changed order.", argument_reordered),
    Rule("argument-inserted", BC, _A,
         "A new argument was inserted before existing ones (for FC: one without a default).", argument_inserted),
    Rule("argument-inserted", FC, _A,
         "A new argument was inserted before existing ones (for FC: one without a default).", argument_inserted),
    Rule("default-argument-not-before-out", FC, _A,
         "A new default argument was not placed right before the out arguments (or at the end).",
         default_argument_not_before_out),
    Rule("default-argument-renamed", FC, _A, "An argument with a default value was renamed.",
         default_argument_renamed),
    Rule("argument-type-narrowed", BC, _A,
         "An argument's type no longer accepts every old value (Scalar → int, int? → int, int[2] → int[3]).",
         argument_type_narrowed),
    Rule("argument-type-widened", FC, _A,
         "An argument's type accepts values the old type did not (int → int?, int → Scalar).",
         argument_type_widened),
    Rule("argument-made-kwarg-only", BC, _A, "A positional argument became keyword-only.", argument_made_kwarg_only),
    Rule("argument-made-kwarg-only", FC, _A, "A positional argument became keyword-only.", argument_made_kwarg_only),
    Rule("default-changed", BC, _A, "An argument's default value changed.", default_changed),
    Rule("default-changed", FC, _A, "An argument's default value changed.", default_changed),
    Rule("default-removed", BC, _A, "An argument lost its default value.", default_removed),
    Rule("default-removed", FC, _A, "An argument lost its default value.", default_removed),
    Rule("default-added", FC, _A,
         "A required argument gained a default value, which older versions do not know.", default_added),
    Rule("alias-annotation-changed", BC, _A + _R,
         "An alias annotation was added, removed or changed (Tensor(a) → Tensor(a!)).", alias_annotation_changed),
    Rule("alias-annotation-changed", FC, _A + _R,
         "An alias annotation was added, removed or changed (Tensor(a) → Tensor(a!)).", alias_annotation_changed),
    Rule("return-renamed", BC, _R, "A return value was named, renamed or lost its name.", return_renamed),
    Rule("return-type-changed", BC, _R,
         "A return type is not at least as specific as before (int → Scalar, Tensor → Tensor?).",
         return_type_changed),
    Rule("argument-added-without-default", BC, _ADD, "A new argument has no default value.",
         argument_added_without_default),
    Rule("argument-added-without-default", FC, _ADD, "A new argument has no default value.",
         argument_added_without_default),
    Rule("container-default-added", FC, _ADD,
         "A new argument's default is a list (int[2] c=1), which older versions cannot supply.",
         container_default_added),
    Rule("out-argument-changed", BC, _OUT,
         "An out argument was removed, renamed, moved, retyped or re-annotated.", out_argument_changed),
    Rule("out-argument-changed", FC, _OUT,
         "An out argument was renamed, moved, retyped or re-annotated.", out_argument_changed),
    Rule("operator-removed", BC, _OP, "The operator (this overload) is gone from the new registry."),
    Rule("operator-added", NEW, _OP, "A new operator appeared (informational)."),
    Rule("operator-own-entry", NEW, _OP,
         "An operator another entry's autogen: declared now has its own entry (informational; not a new "
         "operator)."),
)


def rules_for(kind: str, subject: str | None = None) -> tuple[Rule, ...]:
    """The rules of one kind (bc / fc / new), optionally only those looking at ``subject``."""
    return tuple(r for r in RULES if r.kind == kind and (subject is None or subject in r.subjects))
