"""The checker: pairs two schemas (or two registries) and runs every rule of :data:`RULES`.

:func:`bc_breaks` and :func:`fc_breaks` walk two schemas the way PyTorch's C++
``FunctionSchema::isBackwardCompatibleWith`` / ``isForwardCompatibleWith`` do, hand each pair to
the rules that look at it, and return an empty list exactly when PyTorch says compatible
(PyTorch stops at the first failure; opgov reports every rule that breaks). :func:`compare`
checks two whole registries. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from opgov.core.compat.pairing import AddedArg, OutPair, RetPair, SchemaPair, align, first_out
from opgov.core.compat.rules import RULES, Check
from opgov.core.schema import FunctionSchema
from opgov.core.vocab import FindingKind

__all__ = ["Break", "RawFinding", "bc_breaks", "compare", "fc_breaks"]

BC, FC, NEW = FindingKind.bc, FindingKind.fc, FindingKind.new


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



_BY_SUBJECT: dict[tuple[str, str], tuple[tuple[str, Check], ...]] = {
    (k, s): tuple((r.id, r.check) for r in RULES if r.kind == k and s in r.subjects and r.check is not None)
    for k in (BC, FC) for s in ("schema", "argument", "return", "added", "out")
}


# --- pairwise verdicts --------------------------------------------------------------------


def _run(kind: FindingKind, subject: str, pair: object) -> Iterator[Break]:
    for rule_id, check in _BY_SUBJECT[(kind, subject)]:
        for message in check(kind, pair):
            yield Break(kind, rule_id, message)




def bc_breaks(old: FunctionSchema, new: FunctionSchema) -> list[Break]:
    """Every way ``new`` breaks backward compatibility with ``old``, in a stable order.

    Empty exactly when ``new.is_backward_compatible_with(old)`` is true in PyTorch.
    """
    breaks = list(_run(BC, "schema", SchemaPair(old, new)))
    if breaks and breaks[0].rule == "name-changed":
        return breaks[:1]
    if len(old.returns) == len(new.returns):
        for i, (o, n) in enumerate(zip(old.returns, new.returns, strict=True)):
            breaks.extend(_run(BC, "return", RetPair(o, n, i)))
    old_args, new_args = old.arguments.flat, new.arguments.flat
    old_out = first_out(old_args)
    if len(new_args) < len(old_args):
        # PyTorch stops here; report what else changed among the arguments that are left.
        for pair in align(old, new, old_out, aligned=False):
            breaks.extend(_run(BC, "argument", pair))
        return breaks
    new_out = first_out(new_args)
    for pair in align(old, new, old_out):
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
    breaks = list(_run(FC, "schema", SchemaPair(old, new)))
    if breaks and breaks[0].rule == "name-changed":
        return breaks[:1]
    old_args, new_args = old.arguments.flat, new.arguments.flat
    old_out, new_out = first_out(old_args), first_out(new_args)
    for pair in align(old, new, min(old_out, new_out)):
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
    """Every finding of :func:`iter_compare`, as a list."""
    return list(iter_compare(old, new, old_autogen))


def iter_compare(old: Mapping[str, FunctionSchema], new: Mapping[str, FunctionSchema],
                 old_autogen: Mapping[str, str] | None = None) -> Iterator[RawFinding]:
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
                yield _finding(name, BC, bc, old_schema, new_schema)
        if new_schema is not None:
            fc = fc_breaks(old_schema, new_schema)
            if fc:
                yield _finding(name, FC, fc, old_schema, new_schema)
    for name, new_schema in new.items():
        if name not in old:
            if old_autogen and name in old_autogen:
                yield RawFinding(name, NEW, "operator-own-entry", own_entry_message(old_autogen[name]), None,
                                 str(new_schema))
            else:
                yield RawFinding(name, NEW, "operator-added", "New operator.", None, str(new_schema))
