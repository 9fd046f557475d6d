"""The committee's workbench: for each operator that waits for a decision, the evidence opgov
holds about it (each fact with where it comes from) and the decision that evidence suggests,
with its reason in words.

The evidence is computed, never typed in: the operator's kind from its schema (the schema model
of :mod:`opgov.core.schema`), its family and what the committee decided for the rest of it, what
a torch release does with it (:class:`opgov.core.opset.TorchFacts`: its default decomposition
table, the targets traced, followed transitively to core), its CompositeImplicitAutograd kernel,
the registered runtimes that implement it and the model corpora that use it.

The suggestion (:func:`suggest`) follows from that evidence only. It is advice: shown, never
applied by itself. An operator torch decomposes into core operators is never suggested core;
a CompositeImplicitAutograd one is always suggested decompose (export never holds it).

Pure: plain values in, frozen dataclasses out.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from opgov.core.vocab import Suggestion

__all__ = ["CompositeFact", "Evidence", "FamilyFact", "KindFact", "ModelsFact", "Relative", "RuntimeFact",
           "RuntimesFact", "TorchFact", "WaitFact", "Advice", "family_fact", "kind_fact", "reach", "suggest", "torch_fact"]

SHOWN = 6  # targets named in a reason before "and N more"


# --- the evidence ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KindFact:
    """What the schema says the operator is: ``kind`` (functional, inplace, out, mutable, scratch),
    a ``backward`` formula's operator, ``internal`` (a leading ``_``)."""

    kind: str
    backward: bool
    internal: bool
    source: str


@dataclass(frozen=True)
class Relative:
    """Another operator of the family (same namespace and base name: overloads, out= and in-place
    variants): its kind, its category on record and whether the committee decided it."""

    operator: str
    kind: str
    category: str
    decided: bool


@dataclass(frozen=True)
class FamilyFact:
    """The rest of the family, and the categories the committee decided for its functional members."""

    relatives: tuple[Relative, ...]
    decided: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class CompositeFact:
    """Whether native_functions.yaml gives it a CompositeImplicitAutograd kernel: export's tracing
    then decomposes it, so an exported program never holds it."""

    composite_implicit: bool
    source: str


@dataclass(frozen=True)
class TorchFact:
    """What one torch release does with it: in its default decomposition table or not; the
    operators its decomposition was traced to call (``traced``; None: torch has no decomposition,
    or the trace failed, ``untraced`` says why); whether those reach core transitively
    (``reaches_core``; None when nothing was traced) and the operators the chain ends in."""

    release: str
    in_default_table: bool
    has_decomposition: bool
    traced: tuple[str, ...] | None
    untraced: str | None
    reaches_core: bool | None
    ends_in: tuple[str, ...]
    not_core: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class RuntimeFact:
    """A registered runtime that implements it: since which version, and its newest version."""

    runtime: str
    since: str
    latest: str


@dataclass(frozen=True)
class RuntimesFact:
    """The registered runtimes (``registered``) and those that implement it."""

    registered: tuple[str, ...]
    implemented_by: tuple[RuntimeFact, ...]
    source: str


@dataclass(frozen=True)
class ModelsFact:
    """The model corpora read (``corpora``: where; None when none is configured) and the models
    that use it (before or after torch's default decompositions)."""

    corpora: str | None
    models: int
    used_by: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class WaitFact:
    """Since which snapshot it waits, and why (as the import or the proposal recorded it)."""

    since: str
    reasons: tuple[str, ...]
    detail: str
    source: str


@dataclass(frozen=True)
class Evidence:
    """Everything the suggestion is made from, each fact with its source. ``torch`` is None when
    no torch release's facts are recorded (``opgov decomps import-torch``)."""

    kind: KindFact
    family: FamilyFact
    composite: CompositeFact
    torch: TorchFact | None
    runtimes: RuntimesFact
    models: ModelsFact
    waiting: WaitFact


@dataclass(frozen=True)
class Advice:
    """A suggestion, its reason in words, and the decomposition a ``decompose`` would record
    (torch's traced targets, else the rule on record; empty when neither is known)."""

    suggestion: Suggestion
    because: str
    targets: tuple[str, ...] = ()


# --- computing facts --------------------------------------------------------------------------------


def kind_fact(name: str, kind: str, schema: str | None) -> KindFact:
    """The kind of ``name`` from its schema (the schema model: :class:`opgov.core.schema.FunctionSchema`);
    an operator only ``autogen:`` declares (no schema) keeps the kind its import recorded."""
    from opgov.core.schema import FunctionSchema, OperatorName

    if schema:
        parsed = FunctionSchema.parse(schema)
        return KindFact(kind=str(parsed.kind), backward=parsed.name.backward, internal=parsed.name.internal,
                        source=f"schema: {schema}")
    bare = OperatorName.parse(name.split("::", 1)[-1])
    return KindFact(kind=kind, backward=bare.backward, internal=bare.internal,
                    source="the import (declared by an autogen: line, no schema of its own)")


def reach(op: str, targets: Mapping[str, tuple[str, ...] | None], is_core: Callable[[str], bool]
          ) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """Follow ``op``'s traced targets transitively: (every leaf is core, the leaves, the non-core
    leaves). A core target is a leaf; a target torch decomposes (traced) is followed; any other
    is a leaf that is not core (an operator outside ATen, ``prims::var``, is never core)."""
    leaves: dict[str, bool] = {}
    seen = {op}
    stack = list(targets.get(op) or ())
    while stack:
        target = stack.pop()
        if target in seen:
            continue
        seen.add(target)
        if is_core(target):
            leaves[target] = True
        elif targets.get(target):
            stack.extend(targets[target] or ())
        else:
            leaves[target] = False
    ends = tuple(sorted(leaves))
    bad = tuple(t for t in ends if not leaves[t])
    return not bad, ends, bad


def torch_fact(op: str, facts, is_core: Callable[[str], bool]) -> TorchFact:
    """What ``facts`` (an :class:`opgov.core.opset.TorchFacts`) say of ``op``."""
    traced = facts.targets.get(op)
    has = facts.has(op)
    source = facts.describe()
    if traced is None:
        untraced = (facts.reasons.get(op) or "not traced") if op in facts.targets else (
            None if not has else "in the default table, its decomposition not traced")
        return TorchFact(release=facts.version, in_default_table=op in facts.default, has_decomposition=has,
                         traced=None, untraced=untraced, reaches_core=None, ends_in=(), not_core=(), source=source)
    closed, ends, bad = reach(op, facts.targets, is_core)
    return TorchFact(release=facts.version, in_default_table=op in facts.default, has_decomposition=True,
                     traced=tuple(traced), untraced=None, reaches_core=closed, ends_in=ends, not_core=bad,
                     source=source)


def family_fact(op: str, relatives: Iterable[Relative], snapshot: str | None) -> FamilyFact:
    rest = tuple(sorted((r for r in relatives if r.operator != op), key=lambda r: r.operator))
    decided = tuple(sorted({r.category for r in rest if r.decided and r.kind == "functional"}))
    where = f"native_functions.yaml {snapshot}" if snapshot else "the registry"
    return FamilyFact(relatives=rest, decided=decided,
                      source=f"{where}: the operators of its base name; their categories on record")


# --- the suggestion ---------------------------------------------------------------------------------


def _names(ops: Sequence[str]) -> str:
    shown = ", ".join(ops[:SHOWN])
    return shown + (f" and {len(ops) - SHOWN} more" if len(ops) > SHOWN else "")


def _use(ev: Evidence) -> str:
    """The runtimes and models part of a reason."""
    parts = []
    if ev.runtimes.implemented_by:
        parts.append("implemented by " + ", ".join(f"{r.runtime} since {r.since.split('@', 1)[-1]}"
                                                   for r in ev.runtimes.implemented_by))
    if ev.models.used_by:
        parts.append(f"used by {len(ev.models.used_by)} model{'s' if len(ev.models.used_by) != 1 else ''} "
                     f"({_names(list(ev.models.used_by))})")
    return "; ".join(parts)


def suggest(ev: Evidence, *, tagged_core: bool = False, rule: Sequence[str] = ()) -> Advice:
    """The decision the evidence suggests, and why; ``tagged_core``: the latest snapshot tags it
    core; ``rule``: the decomposition on record for it, if any (the targets a ``decompose``
    records when torch traced none). In order:

    1. CompositeImplicitAutograd → decompose: export never holds it.
    2. torch decomposes it into core operators (transitively) → decompose; but when the yaml tags
       it core, the two disagree → human.
    3. torch's default table decomposes it into operators that end outside core, or torch has a
       decomposition it could not trace → human.
    4. no decomposition (torch's facts say so), or one outside the default table that ends outside
       core (export keeps it): runtimes implement it or models use it → core;
       neither → custom, or core when the yaml tags it core; but a family member the committee
       decided otherwise → human.
    5. without torch's facts, or without any runtime or model to tell → human.
    """
    torch = ev.torch
    traced = tuple(torch.traced) if torch is not None and torch.traced else ()
    if ev.kind.kind != "functional":
        return Advice(Suggestion.human, f"a {ev.kind.kind} variant: it follows its functional operator's category")
    if ev.composite.composite_implicit:
        why = "CompositeImplicitAutograd: export never holds it"
        if traced:
            why += f" (torch {torch.release} traces it into {_names(traced)})"  # type: ignore[union-attr]
        return Advice(Suggestion.decompose, why, traced or tuple(rule))
    if torch is not None and traced and torch.reaches_core:
        into = f"torch {torch.release} decomposes it into core ops: {_names(traced)}"
        if torch.ends_in and set(torch.ends_in) != set(traced):
            into += f" (ending in {_names(list(torch.ends_in))})"
        if tagged_core:
            return Advice(Suggestion.human, f"native_functions.yaml tags it core, yet {into}", traced)
        return Advice(Suggestion.decompose, into, traced)
    if torch is not None and traced and torch.in_default_table:
        return Advice(Suggestion.human, f"torch {torch.release}'s default table decomposes it into {_names(traced)}, "
                                        f"which end in non-core {_names(list(torch.not_core))}", traced)
    if torch is not None and torch.has_decomposition and not traced:
        return Advice(Suggestion.human, f"torch {torch.release} has a decomposition of it that could not be traced "
                                        f"({torch.untraced})")
    if torch is None:
        return Advice(Suggestion.human, "no torch release's facts are recorded (opgov decomps import-torch): "
                                        "whether torch decomposes it is unknown")
    if traced:  # outside the default table, and ending outside core: export keeps it
        no_decomp = (f"torch {torch.release}'s default table keeps it (its decomposition ends in non-core "
                     f"{_names(list(torch.not_core))})")
    else:
        no_decomp = f"no decomposition in torch {torch.release}"
    use = _use(ev)
    disagree = [c for c in ev.family.decided]
    if use:
        if disagree and "core" not in disagree:
            return Advice(Suggestion.human, f"{no_decomp}; {use}; but the committee decided its family "
                                            f"{', '.join(disagree)}")
        return Advice(Suggestion.core, f"{no_decomp}; {use}")
    if not ev.runtimes.registered and ev.models.corpora is None:
        return Advice(Suggestion.human, f"{no_decomp}; no runtime is registered and no model corpus is configured: "
                                        "whether backends need it is unknown")
    unused = ("no registered runtime implements it" if ev.runtimes.registered else "no runtime registered") + \
             (", no model uses it" if ev.models.corpora is not None else ", no model corpus configured")
    if tagged_core:
        if disagree and "core" not in disagree:
            return Advice(Suggestion.human, f"native_functions.yaml tags it core ({no_decomp}; {unused}); but the "
                                            f"committee decided its family {', '.join(disagree)}")
        return Advice(Suggestion.core, f"native_functions.yaml tags it core; {no_decomp}; {unused}")
    what = ("a backward operator" if ev.kind.backward else "an internal operator" if ev.kind.internal
            else "an operator")
    if disagree and "custom" not in disagree:
        return Advice(Suggestion.human, f"{what}: {no_decomp}, {unused}; but the committee decided its family "
                                        f"{', '.join(disagree)}")
    return Advice(Suggestion.custom, f"{what}: {unused}; {no_decomp}")
