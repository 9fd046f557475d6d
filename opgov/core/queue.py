"""The committee's workbench: for each operator that waits for a decision, the evidence opgov
holds about it (each fact with where it comes from) and the decision that evidence suggests,
with its reason in words.

The evidence is computed, never typed in: the operator's kind from its schema (the schema model
of :mod:`opgov.core.schema`), its family and what the committee decided for the rest of it, what
a torch release does with it (:class:`opgov.core.opset.TorchFacts`: its default decomposition
table, the targets traced, followed transitively to core), its CompositeImplicitAutograd kernel,
the registered runtimes that implement it and the model corpora that use it.

The suggestion (:func:`suggest`) follows from that evidence only. It is advice: shown, never
applied by itself. Every word it says about torch is what ``torch.export`` does: an operator
"torch decomposes" is one export's default run decomposes (its default table, or a
CompositeImplicitAutograd kernel export cannot preserve), into the operators the exported graph
then holds; a decomposition torch._decomp has but export does not apply by default is said so,
and the operator is judged as one export keeps. A graph operator (a symbolic size, an assertion:
:mod:`opgov.core.graph_ops`) is never suggested decompose: export holds it, and the suggestion
follows PyTorch's core tag. The services screen each suggestion through the policy: one it would
refuse is not made (:mod:`opgov.services.queue`).

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
    a ``backward`` formula's operator, ``internal`` (a leading ``_``); ``graph``: why it needs no
    kernel when it is a graph operator (a symbolic size, an assertion: opgov.core.graph_ops, the
    words ``opset build`` and the runtimes use), else None."""

    kind: str
    backward: bool
    internal: bool
    source: str
    graph: str | None = None


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
    or the trace failed, ``untraced`` says why). ``export_decomposes``: torch.export's default run
    decomposes it (``export_how`` says why: the default table, or a CompositeImplicitAutograd
    kernel export cannot preserve). ``ends_in``: the operators that decomposition leaves once export
    has decomposed, in turn, every target it decomposes (what the exported graph holds);
    ``reaches_core``: all of them core (None when nothing was traced); ``not_core``: those that
    are not."""

    release: str
    in_default_table: bool
    has_decomposition: bool
    traced: tuple[str, ...] | None
    untraced: str | None
    reaches_core: bool | None
    ends_in: tuple[str, ...]
    not_core: tuple[str, ...]
    source: str
    export_decomposes: bool = False
    export_how: str = ""
    declines: tuple[str, ...] = ()  # itself, when its traced targets include it: export keeps it for some inputs


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


def kind_fact(name: str, kind: str, schema: str | None, graph: str | None = None) -> KindFact:
    """The kind of ``name`` from its schema (the schema model: :class:`opgov.core.schema.FunctionSchema`);
    an operator only ``autogen:`` declares (no schema) keeps the kind its import recorded.
    ``graph``: why it is a graph operator (:func:`opgov.core.graph_ops.graph_ops_of`), if it is."""
    from opgov.core.schema import FunctionSchema, OperatorName

    if schema:
        parsed = FunctionSchema.parse(schema)
        return KindFact(kind=str(parsed.kind), backward=parsed.name.backward, internal=parsed.name.internal,
                        source=f"schema: {schema}", graph=graph)
    bare = OperatorName.parse(name.split("::", 1)[-1])
    return KindFact(kind=kind, backward=bare.backward, internal=bare.internal,
                    source="the import (declared by an autogen: line, no schema of its own)", graph=graph)


def reach(op: str, targets: Mapping[str, tuple[str, ...] | None], is_core: Callable[[str], bool],
          expands: Callable[[str], bool] | None = None, functional: Callable[[str], str] | None = None
          ) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """Follow ``op``'s traced targets transitively: (every leaf is core, the leaves, the non-core
    leaves). ``expands``: the operators decomposed in turn (torch.export's: its default table and
    what it decomposes whatever the table says); a target it expands is followed whether or not it
    is core (export does), and one it expands whose decomposition was not traced is a leaf that is
    not core (what it becomes is unknown). Without ``expands``, a core target is a leaf and any
    traced target is followed. Any other target is a leaf, core or not (an operator outside ATen,
    ``prims::var``, is never core). ``functional``: the operator functionalization turns a
    target into (an exported program holds ``_native_batch_norm_legit_functional``, never the
    mutable ``_native_batch_norm_legit``)."""
    leaves: dict[str, bool] = {}
    seen = {op}
    stack = list(targets.get(op) or ())
    while stack:
        target = stack.pop()
        if functional is not None:
            target = functional(target)
        if target in seen:
            continue
        seen.add(target)
        if expands is not None:
            if not expands(target):
                leaves[target] = is_core(target)
            elif targets.get(target) is None:
                leaves[target] = False
            else:
                stack.extend(targets[target] or ())
        elif is_core(target):
            leaves[target] = True
        elif targets.get(target):
            stack.extend(targets[target] or ())
        else:
            leaves[target] = False
    ends = tuple(sorted(leaves))
    bad = tuple(t for t in ends if not leaves[t])
    return not bad, ends, bad


def export_decomposes(op: str, facts) -> str | None:
    """Why torch.export's default run decomposes ``op`` (``facts``: :class:`opgov.core.opset.TorchFacts`),
    or None when it keeps it (also when it keeps it for some inputs only: its traced targets include
    itself, its decomposition declining some of torch's sample inputs): in the default table (``torch.export.default_decompositions()``, which
    holds the CompositeImplicitAutograd operators export can preserve), or an operator export
    decomposes whatever the table says (``facts.forced``: its reason)."""
    if op in (facts.targets.get(op) or ()):  # its decomposition declines some of torch's sample inputs
        return None
    if op in facts.forced:
        return facts.forced[op]
    if op in facts.default:
        return ("CompositeImplicitAutograd, in its default table" if op in facts.preservable
                else "its default decomposition table")
    return None


def torch_fact(op: str, facts, is_core: Callable[[str], bool],
               graph: Callable[[str], bool] = lambda _: False,
               functional: Callable[[str], str] | None = None) -> TorchFact:
    """What ``facts`` (an :class:`opgov.core.opset.TorchFacts`) say of ``op``, followed as torch.export
    follows them (:func:`export_decomposes`); ``graph``: the graph operators, which export holds
    (a symbolic size stays in the graph whatever the table says); ``functional``: as :func:`reach`."""
    traced = facts.targets.get(op)
    has = facts.has(op)
    source = facts.describe()
    how = export_decomposes(op, facts)
    if how and traced is not None and facts.traced_by_make_fx(op):
        how += ("; export cannot trace torch's samples of it, so what it becomes was "
                "traced by torch's make_fx on real tensors with export's table")
    if traced is None:
        untraced = (facts.reasons.get(op) or "not traced") if op in facts.targets else (
            None if not has else "in the default table, its decomposition not traced")
        return TorchFact(release=facts.version, in_default_table=op in facts.default, has_decomposition=has,
                         traced=None, untraced=untraced, reaches_core=None, ends_in=(), not_core=(), source=source,
                         export_decomposes=how is not None, export_how=how or "")
    closed, ends, bad = reach(op, facts.targets, is_core,
                              expands=lambda t: not graph(t) and export_decomposes(t, facts) is not None, functional=functional)
    return TorchFact(release=facts.version, in_default_table=op in facts.default, has_decomposition=True,
                     traced=tuple(traced), untraced=None, reaches_core=closed, ends_in=ends, not_core=bad,
                     source=source, export_decomposes=how is not None, export_how=how or "",
                     declines=(op,) if op in traced else ())


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
    core; ``rule``: the decomposition on record for it, if any. In order:

    1. a variant (in-place, out=…) → human: it follows its functional operator.
    2. a graph operator → core when PyTorch tags it core, else custom: export holds it, no
       kernel runs it; never decompose.
    3. without torch's facts → human.
    4. torch.export decomposes it (its default table, or CompositeImplicitAutograd it cannot
       preserve) into core operators only → decompose, into what the exported graph holds; a
       CompositeImplicitAutograd one that ends in no operator → decompose with no targets (its
       kernel is the decomposition, as the policy accepts); when the yaml tags it core, or it
       ends in non-core operators, in nothing, or in what was not traced → human. A CompositeImplicitAutograd operator the release's facts do not know → decompose
       with no targets.
    5. export keeps it (no decomposition, or one its default table does not apply): runtimes
       implement it or models use it → core; neither → custom, or core when the yaml tags it
       core; but a family member the committee decided otherwise, or no runtime and no model to
       tell → human.
    """
    if ev.kind.kind != "functional":
        return Advice(Suggestion.human, f"a {ev.kind.kind} variant: it follows its functional operator's category")
    if ev.kind.graph is not None:
        return _graph_advice(ev, tagged_core)
    torch = ev.torch
    if torch is None:
        if ev.composite.composite_implicit:
            return Advice(Suggestion.human, "CompositeImplicitAutograd, but no torch release's facts are recorded "
                                            "(opgov decomps import-torch): what export turns it into is unknown")
        return Advice(Suggestion.human, "no torch release's facts are recorded (opgov decomps import-torch): "
                                        "whether torch.export decomposes it is unknown")
    if torch.export_decomposes:
        return _decomposed_advice(ev, torch, tagged_core)
    if ev.composite.composite_implicit and not torch.has_decomposition:  # an operator the release's facts do not know
        why = (f"CompositeImplicitAutograd in native_functions.yaml: export decomposes it by its kernel (torch "
               f"{torch.release}'s facts do not record it, nor into what)")
        if tagged_core:
            return Advice(Suggestion.human, f"native_functions.yaml tags it core, yet {why}")
        return Advice(Suggestion.decompose, why)
    return _kept_advice(ev, _why_kept(torch), tagged_core)


def _graph_advice(ev: Evidence, tagged_core: bool) -> Advice:
    """A graph operator: core when PyTorch tags it core, else custom; never decompose."""
    torch = ev.torch
    held = f"a graph operator ({ev.kind.graph}): no kernel runs it"
    if "symbolic" in ev.kind.graph:  # a size of a dynamic shape: export records it whatever the table says
        held += ", torch.export holds it in a graph of dynamic shapes"
    elif torch is not None and torch.export_decomposes:
        held += f"; torch.export (torch {torch.release}) decomposes it ({torch.export_how})"
    elif torch is not None:
        held += f"; torch.export (torch {torch.release}) holds it, lowering strips it"
    if tagged_core:
        return Advice(Suggestion.core, f"{held}; native_functions.yaml tags it core")
    return Advice(Suggestion.custom, f"{held}; native_functions.yaml does not tag it core")


def _decomposed_advice(ev: Evidence, torch: TorchFact, tagged_core: bool) -> Advice:
    """torch.export decomposes it: decompose into core operators, else a human's call."""
    how = f"torch.export (torch {torch.release}) decomposes it ({torch.export_how})"
    if torch.traced is None:
        return Advice(Suggestion.human, f"{how}, but into what was not recorded ({torch.untraced})")
    if not torch.ends_in:
        if ev.composite.composite_implicit and not tagged_core:
            return Advice(Suggestion.decompose, f"{how} into no operator: an exported program never holds it; "
                                                "CompositeImplicitAutograd: its kernel is the decomposition "
                                                "(no targets recorded)")
        return Advice(Suggestion.human, f"{how} into no operator: an exported program never holds it, and "
                                        "a decomposition needs targets (the policy refuses one without)")
    if not torch.reaches_core:
        return Advice(Suggestion.human, f"{how} into {_names(list(torch.ends_in))}; not core: "
                                        f"{_names(list(torch.not_core))}")
    into = f"{how} into core ops: {_names(list(torch.ends_in))}"
    if tagged_core:
        return Advice(Suggestion.human, f"native_functions.yaml tags it core, yet {into}", torch.ends_in)
    return Advice(Suggestion.decompose, into, torch.ends_in)


def _why_kept(torch: TorchFact) -> str:
    """Why torch.export keeps an operator it does not decompose."""
    export = f"torch.export (torch {torch.release})"
    if torch.traced and torch.in_default_table and torch.declines:
        others = [t for t in torch.traced if t not in torch.declines]
        return (f"{export} keeps it: its decomposition declines some of torch's sample inputs"
                + (f" (the others it decomposes into {_names(others)})" if others else ""))
    if torch.traced:
        return (f"{export} keeps it: its default table does not apply torch._decomp's decomposition "
                f"(into {_names(list(torch.traced))})")
    if torch.has_decomposition:
        return f"{export} keeps it: its default table does not apply torch._decomp's decomposition"
    return f"{export} keeps it: torch has no decomposition for it"


def _kept_advice(ev: Evidence, no_decomp: str, tagged_core: bool) -> Advice:
    """Export keeps it: core when runtimes implement it or models use it, custom when neither (core
    when the yaml tags it core); a human's call when the committee decided its family otherwise, or
    when no runtime and no model can tell."""
    use = _use(ev)
    disagree = [c for c in ev.family.decided]
    if use:
        if disagree and "core" not in disagree:
            return Advice(Suggestion.human, f"{no_decomp}; {use}; but the committee decided its family "
                                            f"{', '.join(disagree)}")
        return Advice(Suggestion.core, f"{no_decomp}; {use}")
    if tagged_core:
        unused = _unused(ev)
        if disagree and "core" not in disagree:
            return Advice(Suggestion.human, f"native_functions.yaml tags it core ({no_decomp}; {unused}); but the "
                                            f"committee decided its family {', '.join(disagree)}")
        return Advice(Suggestion.core, f"native_functions.yaml tags it core; {no_decomp}; {unused}")
    if not ev.runtimes.registered and ev.models.corpora is None:
        return Advice(Suggestion.human, f"{no_decomp}; no runtime is registered and no model corpus is configured: "
                                        "whether backends need it is unknown")
    unused = _unused(ev)
    what = ("a backward operator" if ev.kind.backward else "an internal operator" if ev.kind.internal
            else "an operator")
    if disagree and "custom" not in disagree:
        return Advice(Suggestion.human, f"{what}: {no_decomp}, {unused}; but the committee decided its family "
                                        f"{', '.join(disagree)}")
    return Advice(Suggestion.custom, f"{what}: {unused}; {no_decomp}")


def _unused(ev: Evidence) -> str:
    return (("no registered runtime implements it" if ev.runtimes.registered else "no runtime registered")
            + (", no model uses it" if ev.models.corpora is not None else ", no model corpus configured"))
