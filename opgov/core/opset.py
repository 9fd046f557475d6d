"""Build your own opset: the operators a backend implements after the decompositions it chooses.

"There is no best IR": a backend chooses which operators to decompose, and implements what is
left. :func:`build_opset` computes what is left from the registry (every operator with its
category, lifecycle and kind), the decomposition rules (operator → target operators, followed
transitively) and a choice: a preset plus ``decompose`` and ``keep`` adjustments.

Presets
-------
``core-aten`` — what ``torch.export``'s ``run_decompositions()`` aims at. Every operator that
    is not core is decomposed; core operators are kept. The must-implement set is every live
    core operator, plus whatever the rules of decomposed operators lead to that is not itself
    decomposed (normally core operators; anything else is a ``check-decomps`` finding). Only
    functional operators are considered, core or not: export functionalizes in-place, out= and
    mutable variants away, so a ``core`` tag on one of those (``resize_``, ``atan2.out``,
    ``_native_batch_norm_legit``) is drift, reported in :attr:`Opset.not_functional` and the
    notes, not an operator to implement.
``no-decomp`` — decompose nothing. The backend runs the exported program as it is, so it
    implements every live functional, in-place and mutable operator (the kinds an exported
    program holds) and every core one. out= and scratch variants are left out: export does not
    produce them.
``full-decomp`` — decompose everything that can be: like ``core-aten``, and core operators that
    have a rule are decomposed too. The smallest opset the rules allow: the leaves of the rules
    plus the core operators no rule decomposes.

``decompose=[OP…]`` decomposes these operators as well; ``keep=[OP…]`` keeps these operators
whatever the preset says (a kept operator is implemented by the backend, so it is in the opset
and its rule is not followed). Deleted operators are never in an opset. Operators on a cycle of
rules cannot be decomposed away and stay in the opset.

Graph operators (:mod:`opgov.core.graph_ops`: assertions such as ``aten::_assert_tensor_metadata``
and symbolic sizes) are never in an opset: lowering strips them or the runtime answers them
without a kernel. They are listed in :attr:`Opset.graph_ops`, and a model that holds one does not
miss it.

With torch's facts (:class:`TorchFacts`), the operators torch.export decomposes whatever the
table says (:attr:`TorchFacts.forced`: CompositeImplicitAutograd ones it cannot preserve, e.g.
``batch_norm``, ``flatten.using_ints``, ``reshape``, ``dropout``, and ``native_batch_norm``) are
never in an opset, whatever the preset, nor in what a model needs: what torch turns them into is
(:attr:`Opset.torch_removes` names them, with why). Keeping one is refused.

Operators the choice decomposes but for which no rule exists (a ``decompose`` operator without a
rule, also named in :attr:`Opset.notes`)
cannot go away: they are listed in :attr:`Opset.without_rule`, not in the must-implement set.
A backend implements one when a model it runs uses it, which is what :func:`coverage` reports.

Models
------
:func:`coverage` says which models of a corpus a backend with this opset can run. What a model
needs depends on the preset:

- ``no-decomp`` starts from the model's ``exported_ops`` (what torch removes by itself replaced by
  what it becomes);
- ``core-aten`` and ``full-decomp`` start from its ``core_aten_ops``: PyTorch's own run of its
  default decompositions on the whole program, which also applies CompositeImplicitAutograd
  kernels and functionalization that a rules table may not describe. A kept operator the model
  exported is added to what it needs.

Then every operator the choice decomposes and has a rule for is replaced by its targets,
transitively. A model is covered when everything it then needs is in the must-implement set.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from opgov.core.corpus import ModelOps
from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.core.graph_ops import graph_op_reason, is_graph_op
from opgov.core.names import canonical
from opgov.core.vocab import Preset

PRESETS: tuple[str, ...] = tuple(Preset)
_EXPORTED_KINDS = frozenset({"functional", "inplace", "mutable"})

#: What :func:`build_opset` says, with ``@placeholders@`` (:func:`opset_policy` puts them in its
#: data too); the build-your-own-opset page shows them as :func:`build_opset` filled them.
TEXTS: dict[str, str] = {
    "unknown_preset": "unknown preset '@preset@' (@presets@)",
    "unknown": "@flag@ @op@: unknown operator",
    "both": "@op@ is both decomposed and kept; choose one",
    "no_rule": "@op@ has no decomposition rule: it cannot be decomposed, so a model that uses it still needs it",
    "not_functional": "@n@ core operator(s) are not functional and are left out (functionalization removes them; "
                      "drift to fix in the core tags): @ops@",
    "refuse_none": "--decompose @op@: torch @version@ has no decomposition for it (torch._decomp holds none), "
                   "so an exported program keeps it",
    "refuse_untraced": "--decompose @op@: torch @version@'s decomposition of it could not be traced (@reason@), "
                       "so opgov cannot say what it produces",
    "refuse_keep": "--keep @op@: torch @version@ decomposes it at export whatever the table says (@reason@), "
                   "so no exported program holds it; keep what it becomes instead: @ops@",
    "torch_removes": "@n@ operator(s) torch @version@ removes by itself at export, whatever the table says, "
                     "are not listed (what they become is): @ops@",
    "torch_none": "@n@ operator(s) opgov's rules decompose stay in exported programs: torch @version@ has no "
                  "decomposition for them (implement them): @ops@",
    "torch_foreign": "@n@ operator(s) opgov's rules decompose stay: torch @version@'s decomposition leaves ATen "
                     "(implement them): @ops@",
    "foreign_item": "@op@ (→ @ops@)",
    "core_kept": "@n@ core operator(s) torch @version@'s default table decomposes are kept by the generated code: "
                 "@ops@",
    "choice_decompose": "decompose @ops@",
    "choice_keep": "keep @ops@",
    "without_rule": "@n@ operators would be decomposed but have no rule; a backend implements them only for models "
                    "that use them",
    "graph_ops": "not to implement: @n@ graph operators (@ops@): assertions and symbolic sizes that lowering strips or "
                 "the runtime answers without a kernel",
}


def fill(template: str, **values: object) -> str:
    """``template`` with each ``@name@`` replaced by ``values[name]`` (one pass; a placeholder
    without a value stays)."""
    return re.sub(r"@(\w+)@", lambda m: str(values[m[1]]) if m[1] in values else m[0], template)


@dataclass(frozen=True)
class OpInfo:
    """What the opset builder needs to know of one operator.

    ``category``: ``core``, ``decomposable``, ``custom`` or ``None`` (uncategorized);
    ``lifecycle``: ``active``, ``deprecating``, ``deprecated``, ``deleted``;
    ``kind``: ``functional``, ``inplace``, ``out``, ``mutable``, ``scratch``.
    """

    category: str | None
    lifecycle: str = "active"
    kind: str = "functional"
    graph: str | None = None  # why it needs no kernel, from its schema (opgov.core.graph_ops.schema_reason)


def _graph(op: str, operators: Mapping[str, OpInfo]) -> bool:
    """A graph operator: its schema says so (``OpInfo.graph``), or the hand list does."""
    info = operators.get(op)
    return (info is not None and info.graph is not None) or is_graph_op(op)


#: the start of an operator's ``inputs`` when export could not trace any of its samples and torch's
#: make_fx on real tensors, with export's table, did (:mod:`opgov.formats.torch_decomps`)
TRACED_BY_MAKE_FX = "make_fx on real tensors"


@dataclass(frozen=True)
class TorchFacts:
    """What one torch release does, recorded by ``opgov decomps import-torch`` (opgov never
    imports torch to build an opset).

    ``version``: the torch release. ``default``: the operators its default core-ATen table
    (``torch.export.default_decompositions()``) decomposes. ``targets``: every operator torch has
    a decomposition for (that table or ``torch._decomp.decomposition_table``) → the operators an
    exported program holds of it after the default table (with torch's rule added for one outside
    it), any namespace (``prims::var``), or ``None`` when no sample input exported;
    ``reasons`` says why for those. ``complete``: the whole table was traced (an ``--only`` import
    alone records the default table but few targets: enough for ``check-decomps``, not for an opset).
    """

    version: str
    default: frozenset[str]
    targets: Mapping[str, tuple[str, ...] | None]
    reasons: Mapping[str, str] = field(default_factory=dict)
    complete: bool = True  # every decomposition was traced (not an ``--only`` import alone)
    #: the operators torch.export decomposes whatever the table says → why (CompositeImplicitAutograd
    #: ones it cannot preserve: ``batch_norm``, ``flatten.using_ints``, ``reshape``, ``dropout``…);
    #: their ``targets`` are what export turns them into
    forced: Mapping[str, str] = field(default_factory=dict)
    #: the CompositeImplicitAutograd operators export keeps when the table lacks them
    preservable: frozenset[str] = frozenset()
    #: an operator only ``torch._decomp`` decomposes (its ``targets``: what that rule makes of it once a
    #: table adds it) → what export with the default table alone leaves of it (itself: export keeps it)
    exported: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: operator → where the sample inputs its targets were observed on came from (``3 OpInfo``)
    inputs: Mapping[str, str] = field(default_factory=dict)
    #: where these facts come from: ``import-torch`` (the user's own torch) or ``shipped`` (opgov's
    #: package data, generated from that torch release)
    source: str = "import-torch"
    #: shipped facts standing for another release: the snapshot label they were chosen for
    nearest_to: str | None = None

    def has(self, op: str) -> bool:
        return op in self.targets or op in self.default

    def traced_by_make_fx(self, op: str) -> bool:
        """Whether export could not trace ``op``'s samples, so that its targets are make_fx's."""
        return (self.inputs.get(op) or "").startswith(TRACED_BY_MAKE_FX)

    def describe(self) -> str:
        """Which release's facts these are and where they come from, as every output says it."""
        if self.source == "shipped":
            nearest = (f", the nearest release opgov ships facts for to snapshot {self.nearest_to}"
                       if self.nearest_to else "")
            return f"torch {self.version}: opgov's shipped facts{nearest}"
        return f"torch {self.version}: the facts `opgov decomps import-torch` recorded"


_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.(\d+))?")


def release_key(label: str) -> tuple[int, int, int] | None:
    """(major, minor, micro) of a torch release label (``2.13.0``, ``2.14.0.dev20260101``,
    ``2.13.0+cpu``), or None for a label that names no release (``v2``, ``nightly``)."""
    m = _RELEASE.match(label)
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


def nearest_release(label: str | None, releases: Iterable[str]) -> str | None:
    """The release of ``releases`` whose facts stand for the snapshot ``label``: the same release,
    else the nearest one (by minor release, then micro; a tie goes to the older); None when the
    label names no release or there is none."""
    wanted = release_key(label) if label else None
    keyed = {r: k for r in releases if (k := release_key(r)) is not None}
    if wanted is None or not keyed:
        return None

    def distance(release: str) -> tuple[int, int, tuple[int, int, int]]:
        k = keyed[release]
        return (abs((k[0] * 1000 + k[1]) - (wanted[0] * 1000 + wanted[1])), abs(k[2] - wanted[2]), k)

    return min(keyed, key=distance)


@dataclass(frozen=True)
class OpsetChoice:
    preset: str
    decompose: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()


@dataclass(frozen=True)
class OpsetEntry:
    """One operator to implement and why: ``core``, ``kept``, ``not-decomposed`` (no-decomp) or
    ``target`` (only a decomposition produces it). ``produced_by``: decomposed operators whose
    rules lead to it."""

    op: str
    category: str | None
    why: str
    produced_by: tuple[str, ...] = ()
    lifecycle: str = "active"


@dataclass(frozen=True)
class Opset:
    """The result of :func:`build_opset`.

    ``entries``: the must-implement set, sorted by name (:attr:`operators` as a set).
    ``without_rule``: operators the choice decomposes but no rule says how; a backend
    implements one only when a model uses it. ``decomposed``: operators with a rule that the
    choice decomposes. ``beyond_default``: those decomposed beyond what torch.export's default
    table does by this preset (``--decompose``; for full-decomp also core operators with a
    rule), used by :func:`opgov.render.decomps_text.render_python` when no torch facts are known.
    ``notes``: remarks for the user. ``torch_version``: the torch release the opset is exact for (built with :class:`TorchFacts`);
    then ``code_keep``/``code_decompose`` are what the generated code removes from / adds to
    torch's default table (the default table itself for no-decomp: an empty one).
    ``not_functional``: core operators that are not functional, left out by core-aten and
    full-decomp (drift).
    """

    choice: OpsetChoice
    entries: tuple[OpsetEntry, ...]
    without_rule: tuple[str, ...]
    decomposed: tuple[str, ...]
    beyond_default: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    not_functional: tuple[str, ...] = ()
    torch_version: str | None = None
    code_keep: tuple[str, ...] = ()
    code_decompose: tuple[str, ...] = ()
    rules: Mapping[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    graph_ops: tuple[str, ...] = ()  # graph operators of the registry: no kernel, never in the opset
    #: with torch: the registry's operators torch.export decomposes whatever the table says, and why
    #: (:attr:`TorchFacts.forced`); never in the opset nor in what a model needs: what they become is
    torch_removes: tuple[tuple[str, str], ...] = ()
    torch_facts: str | None = None  # which release's facts, from where (:meth:`TorchFacts.describe`)
    graph_reasons: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)  # op → why
    #: a decomposition's mutable or in-place target → what functionalization makes of it, the operator listed
    functionalized: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def operators(self) -> frozenset[str]:
        """The must-implement set."""
        return frozenset(e.op for e in self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def build_opset(*, operators: Mapping[str, OpInfo], rules: Mapping[str, Sequence[str]], preset: str,
                decompose: Iterable[str] = (), keep: Iterable[str] = (), torch: TorchFacts | None = None,
                implicit: Iterable[str] = ()) -> Opset:
    """The operators a backend implements for this choice (see the module docstring).

    ``operators`` and ``rules`` use canonical names; ``decompose`` and ``keep`` may use any
    accepted spelling. Raises :class:`BadInput` for an unknown preset, an operator in
    ``decompose``/``keep`` that neither the registry nor the rules know, or one in both.

    With ``torch`` (the facts of one torch release) the opset is what that release's
    ``run_decompositions`` produces with the generated code: an operator is decomposed only
    where torch has a decomposition for it, into the targets torch was traced to call. Where
    opgov's choice and torch's default table differ the code adjusts the table
    (:attr:`Opset.code_keep`, :attr:`Opset.code_decompose`); an operator a decision or rules file
    decomposes and torch cannot stays in the opset with a note; a ``decompose`` operator torch
    cannot decompose is refused (:class:`PolicyRefusal`). ``implicit``: the operators whose kernel
    is CompositeImplicitAutograd; torch.export decomposes those itself while tracing (``reshape``
    → ``view``), so with ``torch`` one that neither its table nor the code keeps never reaches a
    backend.
    """
    if preset not in PRESETS:
        raise BadInput(fill(TEXTS["unknown_preset"], preset=preset, presets=", ".join(PRESETS)))
    rules = {op: tuple(into) for op, into in rules.items()}
    extra = _names(decompose, operators, rules, "--decompose", torch)
    kept = _names(keep, operators, rules, "--keep", torch)
    both = sorted(set(extra) & set(kept))
    if both:
        raise BadInput(fill(TEXTS["both"], op=both[0]), subject=both[0])
    choice = OpsetChoice(preset, tuple(extra), tuple(kept))
    decomposes = _decision(choice, operators, rules)
    if torch is None:
        plan = _Plan(follow=rules, does=decomposes,
                     notes=[fill(TEXTS["no_rule"], op=op) for op in extra if op not in rules])
    else:
        plan = _torch_plan(choice, operators, rules, torch, frozenset(implicit), decomposes)
    live = {op: info for op, info in operators.items() if _present(info) and not _graph(op, operators)}
    graph = tuple(sorted(op for op, info in operators.items() if _present(info) and _graph(op, operators)))
    not_functional: list[str] = []
    if PRESET_POLICY[preset]["drift"]:
        not_functional = sorted(op for op, i in live.items() if _drift(i) and op not in kept)
    found = _Entries(preset, operators)
    without_rule = _gather(found, choice, operators, rules, live, plan, decomposes, torch)
    entries = found.entries
    notes = plan.notes
    # an operator is listed or left out, never both: a non-functional core operator a decomposition
    # produces (and functionalization has no form for in this registry) is listed, not left out
    not_functional = [op for op in not_functional if op not in entries]
    if not_functional:
        notes.append(fill(TEXTS["not_functional"], n=len(not_functional), ops=", ".join(not_functional)))
    built = tuple(OpsetEntry(op=op, category=e["info"].category if e["info"] else None, why=e["why"],
                             produced_by=tuple(sorted(e["by"])),
                             lifecycle=e["info"].lifecycle if e["info"] else "unknown")
                  for op, e in sorted(entries.items()))
    decomposed = tuple(sorted(op for op in plan.follow if plan.does(op)))
    beyond = set(extra)
    if PRESET_POLICY[preset]["beyond_core"]:
        beyond |= {op for op in decomposed if (i := operators.get(op)) is not None and i.category == "core"}
    return Opset(choice=choice, entries=built, without_rule=tuple(sorted(without_rule)),
                 decomposed=decomposed, beyond_default=tuple(sorted(beyond)), notes=tuple(notes),
                 not_functional=tuple(not_functional), graph_ops=graph,
                 graph_reasons={op: operators[op].graph or graph_op_reason(op) or "" for op in graph},
                 functionalized=found.functionalized,
                 torch_version=torch.version if torch is not None else None, code_keep=plan.code_keep,
                 code_decompose=plan.code_decompose, rules=plan.follow,
                 torch_removes=tuple((op, torch.forced[op]) for op in sorted(
                     plan.forced, key=lambda o: (operators[o].kind != "functional", o.startswith("aten::_"), o))),
                 torch_facts=torch.describe() if torch is not None else None)


@dataclass
class _Plan:
    """What the opset follows: the rules (torch's traced targets where torch decomposes), what is
    decomposed (``does``), what export decomposes whatever the table says (``forced``) or while
    tracing (``traced_away``), how the generated code adjusts torch's table, and the notes so far."""

    follow: Mapping[str, tuple[str, ...]]
    does: Callable[[str], bool]
    notes: list[str]
    forced: frozenset[str] = frozenset()
    traced_away: frozenset[str] = frozenset()
    code_keep: tuple[str, ...] = ()
    code_decompose: tuple[str, ...] = ()


def _torch_plan(choice: OpsetChoice, operators: Mapping[str, OpInfo], rules: Mapping[str, tuple[str, ...]],
                torch: TorchFacts, implicit: frozenset[str], decomposes) -> _Plan:
    """What one torch release's ``run_decompositions`` does with this choice (refusing a
    ``decompose`` operator torch cannot decompose, or a ``keep`` operator export removes anyway)."""
    extra, kept = choice.decompose, choice.keep
    for op in extra:
        refusal = _refusal(op, torch, rules)
        if refusal is not None:
            raise PolicyRefusal(fill(TEXTS[refusal[0]], op=op, version=torch.version, reason=refusal[1]),
                                subject=op)
    forced = _forced(operators, torch)
    extra_set = frozenset(extra)
    # what the generated code decomposes: opgov's choice, where torch has a decomposition
    # (an --decompose operator passed _refusal: torch has a traced decomposition or a rule says how)
    table = {op for op in set(torch.targets) | torch.default
             if decomposes(op) and (_torch_may(op, torch, rules) or op in extra_set) and op not in forced}
    follow = dict(rules)
    for op in table | forced:
        if torch.targets.get(op) is not None:
            follow[op] = tuple(torch.targets[op])
    becomes = _Leaves(follow, forced.__contains__)  # what export turns an operator into by itself
    for op in kept:
        if op in forced:
            shown = ", ".join(sorted(becomes(op))) or "(no operator)" if op in follow else "(not traced)"
            raise PolicyRefusal(fill(TEXTS["refuse_keep"], op=op, version=torch.version, reason=torch.forced[op],
                                     ops=shown), subject=op)
    # a decomposition added for a rule must stay within ATen (torch decomposes var_mean into
    # prims): otherwise the operator is better implemented than its targets
    added = sorted(op for op in table if op not in torch.default and op not in extra_set)
    probe = _Leaves(follow, table.__contains__)
    foreign = {op: sorted(t for t in probe(op) if _outside_aten(t)) for op in added}
    foreign = {op: leaves for op, leaves in foreign.items() if leaves}
    table -= set(foreign)
    plan = _Plan(follow=follow, does=(table | forced).__contains__, notes=[], forced=forced,
                 traced_away=implicit | forced)
    if PRESET_POLICY[choice.preset]["from_empty"]:
        plan.code_decompose = tuple(sorted(table))
    else:
        plan.code_keep = tuple(sorted(op for op in torch.default - table))
        plan.code_decompose = tuple(sorted(table - torch.default))
    live_rules = sorted(op for op in rules if decomposes(op) and op not in table
                        and _noted_if_torch_keeps(op, operators, rules, plan.traced_away))
    none = [op for op in live_rules if op not in foreign]
    if none:
        plan.notes.append(fill(TEXTS["torch_none"], n=len(none), version=torch.version, ops=", ".join(none)))
    if foreign:
        plan.notes.append(fill(TEXTS["torch_foreign"], n=len(foreign), version=torch.version, ops=", ".join(
            fill(TEXTS["foreign_item"], op=op, ops=", ".join(leaves)) for op, leaves in sorted(foreign.items()))))
    core_kept = [op for op in sorted(torch.default - table) if op not in kept
                 and _core_torch_decomposes(op, operators, torch)]
    if core_kept:
        plan.notes.append(fill(TEXTS["core_kept"], n=len(core_kept), version=torch.version, ops=", ".join(core_kept)))
    return plan


class _Entries:
    """The opset's operators as they are found: each with why it is there and the operators
    whose decomposition produces it (``entries``), and the mutable targets replaced by their
    functional form (``functionalized``)."""

    def __init__(self, preset: str, operators: Mapping[str, OpInfo]) -> None:
        self.preset = preset
        self.operators = operators
        self.entries: dict[str, dict] = {}
        self.functionalized: dict[str, str] = {}

    def add(self, op: str, why: str, source: str | None = None) -> None:
        if why == "target" and self.preset != "no-decomp":
            # functionalization: an exported graph holds a mutable target's functional sibling
            # (``_native_batch_norm_legit`` → ``_native_batch_norm_legit_functional``), never the target
            form = functional_form(op, self.operators)
            if form != op:
                self.functionalized[op], op = form, form
        if _graph(op, self.operators):
            return
        info = self.operators.get(op)
        entry = self.entries.setdefault(op, {"why": why, "by": set(), "info": info})
        if _RANK[why] < _RANK[entry["why"]]:
            entry["why"] = why
        if source:
            entry["by"].add(source)

    def targets(self, op: str, leaves) -> None:
        for leaf in leaves(op):
            self.add(leaf, "target", op)


def _gather(found: _Entries, choice: OpsetChoice, operators: Mapping[str, OpInfo],
            rules: Mapping[str, tuple[str, ...]], live: Mapping[str, OpInfo], plan: _Plan, decomposes,
            torch: TorchFacts | None) -> set[str]:
    """The opset's operators, into ``found``: the preset's candidates, kept or replaced by what
    they decompose into, then the operators kept and decomposed explicitly; returns the
    decomposed candidates no rule says how to decompose."""
    follow, does, entries = plan.follow, plan.does, found.entries
    leaves = _Leaves(follow, does)
    candidates = [op for op, i in live.items() if _candidate(choice.preset, i)]
    without_rule: set[str] = set()
    for op in sorted(set(candidates)):
        if op in plan.forced:  # never in an exported program: what torch turns it into is
            if op in follow:
                found.targets(op, leaves)
            continue
        if not decomposes(op):
            found.add(op, _why_kept(op, choice, operators))
        elif does(op) and op in follow:
            found.targets(op, leaves)
        elif torch is not None and op in plan.traced_away:
            continue  # export's tracing decomposes it (CompositeImplicitAutograd): never in a graph
        elif torch is not None and op in rules:
            found.add(op, "torch-keeps")  # decided decomposable, but torch cannot decompose it
        else:
            without_rule.add(op)
    for op in choice.keep:  # kept explicitly, perhaps not a candidate (e.g. an in-place variant)
        if op in live:
            found.add(op, "kept")
    for op in choice.decompose:  # decomposed explicitly, perhaps not a candidate
        if op in follow and does(op):
            found.targets(op, leaves)
    for op in entries:
        if entries[op]["why"] == "target" and not does(op) and op in operators:
            entries[op]["why"] = _why_kept(op, choice, operators) if not decomposes(op) else "torch-keeps"
    without_rule -= set(entries)
    for op in [op for op in entries if _graph(op, operators)]:  # a rule's target may be one: still no kernel
        del entries[op]
    return without_rule


_RANK = {"kept": 0, "core": 1, "not-decomposed": 2, "torch-keeps": 3, "target": 4}


def _why_kept(op: str, choice: OpsetChoice, operators: Mapping[str, OpInfo]) -> str:
    if op in choice.keep:
        return "kept"
    info = operators.get(op)
    if info is not None and info.category == "core":
        return "core"
    return "not-decomposed"


def _names(names: Iterable[str], operators: Mapping[str, OpInfo], rules: Mapping[str, tuple[str, ...]],
           flag: str, torch: TorchFacts | None = None) -> list[str]:
    out: list[str] = []
    for raw in names:
        op = canonical(raw)
        if op not in operators and op not in rules and not (torch is not None and torch.has(op)):
            raise NotFound(fill(TEXTS["unknown"], flag=flag, op=raw), subject=op)
        if op not in out:
            out.append(op)
    return out


def _decision(choice: OpsetChoice, operators: Mapping[str, OpInfo], rules: Mapping[str, tuple[str, ...]]):
    """A predicate: does this choice decompose ``op`` (whether or not a rule says how)?"""
    extra, kept = frozenset(choice.decompose), frozenset(choice.keep)

    def decomposes(op: str) -> bool:
        if op in kept:
            return False
        if op in extra:
            return True
        if choice.preset == "no-decomp":
            return False
        info = operators.get(op)
        is_core = info is not None and info.category == "core"
        if choice.preset == "core-aten":
            return not is_core
        return not is_core or op in rules  # full-decomp

    return decomposes


def _candidate(preset: str, info: OpInfo) -> bool:
    """Is a live operator one the preset's opset is built from? no-decomp keeps what export produces;
    the others see functional operators only (functionalization removes the rest)."""
    if preset == "no-decomp":
        return info.kind in _EXPORTED_KINDS or info.category == "core"
    return info.kind == "functional"


def _drift(info: OpInfo) -> bool:
    """A core operator that is not functional: core-aten and full-decomp leave it out, with a note."""
    return info.kind != "functional" and info.category == "core"


def functional_form(op: str, operators: Mapping[str, OpInfo]) -> str:
    """What functionalization turns ``op`` into: a mutable operator's ``_functional`` sibling
    (torchgen's autogen), an in-place one's functional form, when the registry has it; else ``op``."""
    info = operators.get(op)
    if info is None or info.kind not in ("mutable", "inplace"):
        return op
    namespace, _, rest = op.partition("::")
    base, dot, overload = rest.partition(".")
    form = f"{namespace}::{base.rstrip('_') if info.kind == 'inplace' else base + '_functional'}{dot}{overload}"
    sibling = operators.get(form)
    return form if sibling is not None and sibling.kind == "functional" else op


def _present(info: OpInfo | None) -> bool:
    """In the registry and not deleted (deleted operators are never in an opset)."""
    return info is not None and info.lifecycle != "deleted"


def _outside_aten(op: str) -> bool:
    """A target outside ATen (``prims::var``): an added decomposition must not lead there."""
    return not op.startswith("aten::")


def _forced(operators: Mapping[str, OpInfo], torch: TorchFacts) -> frozenset[str]:
    """The registry's live operators torch.export decomposes whatever the table says."""
    return frozenset(op for op in torch.forced if _present(operators.get(op)) and not is_graph_op(op))


def _torch_may(op: str, torch: TorchFacts, rules: Mapping[str, tuple[str, ...]]) -> bool:
    """The generated code lets torch decompose ``op`` when the preset does: torch has a
    decomposition, in its default table or for an operator a rule decomposes."""
    return torch.has(op) and (op in torch.default or op in rules)


def _noted_if_torch_keeps(op: str, operators: Mapping[str, OpInfo], rules: Mapping[str, tuple[str, ...]],
                          implicit: frozenset[str]) -> bool:
    """A live operator a rule decomposes: named in a note when torch's code cannot (export's
    tracing decomposes the CompositeImplicitAutograd ones itself)."""
    return op in rules and _present(operators.get(op)) and not _graph(op, operators) and op not in implicit


def _core_torch_decomposes(op: str, operators: Mapping[str, OpInfo], torch: TorchFacts) -> bool:
    """A core operator torch's default table decomposes: named in a note when the code keeps it."""
    info = operators.get(op)
    return op in torch.default and not _graph(op, operators) and info is not None and info.category == "core"


def _refusal(op: str, torch: TorchFacts, rules: Mapping[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """Why ``--decompose op`` is refused with these torch facts: (a key of :data:`TEXTS`, the reason), or None."""
    if not torch.has(op):
        return "refuse_none", ""
    if torch.targets.get(op) is None and op not in rules:
        return "refuse_untraced", torch.reasons.get(op, "no targets recorded")
    return None


#: The flags of :func:`opset_policy`, one letter each.
POLICY_FLAGS: dict[str, str] = {
    "r": "in the registry",
    "l": "live: in the registry, not deleted, not a graph operator",
    "g": "a graph operator of the registry (listed apart, never implemented)",
    "c": "core: kept as 'core' when the choice does not decompose it",
    "a": "core-aten decomposes it", "f": "full-decomp decomposes it",
    "n": "no-decomp builds its opset from it", "F": "core-aten and full-decomp build their opset from it",
    "x": "core but not functional: named in a note unless kept (core-aten, full-decomp)",
    "v": "the page offers it as a toggle",
    "T": "in torch's default table", "t": "the code lets torch decompose it when the choice does",
    "z": "--decompose is refused: torch has no decomposition for it",
    "u": "--decompose is refused: torch's decomposition of it could not be traced (see reasons)",
    "i": "export's tracing decomposes it (CompositeImplicitAutograd)",
    "w": "named in a note when the choice decomposes it and torch's code cannot",
    "K": "core and in torch's default table: named in a note when the code keeps it",
    "e": "torch.export decomposes it whatever the table says: never listed, --keep is refused (see removed)",
}

#: What a preset means to :func:`build_opset`, as :func:`opset_policy` gives it to the page.
PRESET_POLICY: dict[str, dict[str, object]] = {
    "no-decomp": {"decomposes": None, "candidate": "n", "drift": False, "from_empty": True, "beyond_core": False,
                  "start": "exported"},
    "core-aten": {"decomposes": "a", "candidate": "F", "drift": True, "from_empty": False, "beyond_core": False,
                  "start": "core-aten"},
    "full-decomp": {"decomposes": "f", "candidate": "F", "drift": True, "from_empty": False, "beyond_core": True,
                    "start": "core-aten"},
}


def opset_policy(*, operators: Mapping[str, OpInfo], rules: Mapping[str, Sequence[str]],
                 torch: TorchFacts | None = None, implicit: Iterable[str] = ()) -> dict:
    """What :func:`build_opset` decides about each operator, whatever the choice, as JSON-able data
    (``/api/v1/pages/opset``); the /opset page reads its toggles' ``v``, ``a`` and ``f`` flags.

    ``operators``: every name a choice may name (the registry, the rules, torch's table) →
    ``[category, lifecycle, flags]`` (:data:`POLICY_FLAGS`; ``unknown`` lifecycle outside the
    registry). ``rules``: operator → targets. With ``torch``: ``into`` (what torch's decomposition
    of an operator was traced to call), ``outside`` (those targets outside ATen), ``reasons`` (why
    a decomposition could not be traced). ``presets``: :data:`PRESET_POLICY`; ``texts``: the
    messages, torch's release filled in; ``ranks``: which reason to keep an operator wins."""
    rules = {op: tuple(into) for op, into in rules.items()}
    forced = _forced(operators, torch) if torch is not None else frozenset()
    implicit = frozenset(implicit) | forced
    by_preset = {p: _decision(OpsetChoice(p), operators, rules) for p in ("core-aten", "full-decomp")}
    names = set(operators) | set(rules)
    if torch is not None:
        names |= set(torch.targets) | set(torch.default)
    ops: dict[str, list] = {}
    reasons: dict[str, str] = {}
    for op in sorted(names):
        info = operators.get(op)
        graph = _graph(op, operators)
        present = _present(info)
        live = present and not graph
        core = info is not None and info.category == "core"
        flags = [("r", info is not None), ("l", live), ("g", present and graph), ("c", core),
                 ("a", by_preset["core-aten"](op)), ("f", by_preset["full-decomp"](op)),
                 ("n", live and _candidate("no-decomp", info)), ("F", live and _candidate("core-aten", info)),
                 ("x", live and _drift(info)),
                 ("v", present and (info.kind in _EXPORTED_KINDS or core or op in rules))]
        if torch is not None:
            refusal = _refusal(op, torch, rules)
            if refusal is not None and refusal[0] == "refuse_untraced":
                reasons[op] = refusal[1]
            flags += [("T", op in torch.default),
                      ("t", _torch_may(op, torch, rules)),
                      ("z", refusal is not None and refusal[0] == "refuse_none"),
                      ("u", refusal is not None and refusal[0] == "refuse_untraced"),
                      ("i", op in implicit),
                      ("w", _noted_if_torch_keeps(op, operators, rules, implicit)),
                      ("K", _core_torch_decomposes(op, operators, torch)),
                      ("e", op in forced)]
        ops[op] = [info.category if info else None, info.lifecycle if info else "unknown",
                   "".join(letter for letter, on in flags if on)]
    into = {} if torch is None else {op: list(t) for op, t in sorted(torch.targets.items()) if t is not None}
    outside = sorted({t for targets in (*into.values(), *rules.values()) for t in targets if _outside_aten(t)})
    version = torch.version if torch is not None else None
    return {"presets": {p: PRESET_POLICY[p] for p in PRESETS}, "operators": ops,
            "rules": {op: list(t) for op, t in sorted(rules.items())}, "into": into, "outside": outside,
            "reasons": reasons, "torch": version, "ranks": dict(_RANK),
            "removed": {op: torch.forced[op] for op in sorted(forced)} if torch is not None else {},
            "torch_facts": torch.describe() if torch is not None else None,
            "texts": {k: fill(t, version=version) if version else t for k, t in TEXTS.items()}}


class _Leaves:
    """Memoized: the operators ``op`` ends in when every decomposed operator with a rule is
    replaced by its targets. An operator met again on its own path (a cycle) is a leaf."""

    def __init__(self, rules: Mapping[str, tuple[str, ...]], decomposes) -> None:
        self.rules = rules
        self.decomposes = decomposes
        self.cache: dict[str, frozenset[str]] = {}

    def expands(self, op: str) -> bool:
        return op in self.rules and self.decomposes(op)

    def __call__(self, op: str) -> frozenset[str]:
        return self._walk(op, frozenset())[0]

    def _walk(self, op: str, path: frozenset[str]) -> tuple[frozenset[str], bool]:
        """(leaves, whether a cycle was met below): results touched by a cycle depend on the
        path that led to them and are not cached."""
        if not self.expands(op):
            return frozenset({op}), False
        if op in self.cache:
            return self.cache[op], False
        here = path | {op}
        out: set[str] = set()
        cyclic = False
        for target in self.rules[op]:
            if target in here:
                out.add(target)
                cyclic = True
            else:
                leaves, below = self._walk(target, here)
                out |= leaves
                cyclic = cyclic or below
        result = frozenset(out)
        if not cyclic:
            self.cache[op] = result
        return result, cyclic

    def of_all(self, ops: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for op in ops:
            out |= self(op)
        return out


# --------------------------------------------------------------------------------------------
# coverage


@dataclass(frozen=True)
class ModelCoverage:
    model: str
    family: str
    needed: tuple[str, ...]
    missing: tuple[str, ...]

    @property
    def covered(self) -> bool:
        return not self.missing


@dataclass(frozen=True)
class Suggestion:
    """Add ``op`` (after the earlier suggestions): ``newly_covered`` models become runnable;
    ``needed_by`` uncovered models use it; ``covered_after`` models are covered in all."""

    op: str
    newly_covered: tuple[str, ...]
    needed_by: int
    covered_after: int
    share_after: float


@dataclass(frozen=True)
class Coverage:
    """Models covered by an opset. ``not_in_registry``: operators the models need that the
    registry does not hold (when :func:`coverage` was told which it holds)."""

    start: str
    models: tuple[ModelCoverage, ...]
    suggestions: tuple[Suggestion, ...]
    not_in_registry: tuple[str, ...] = ()

    @property
    def covered(self) -> int:
        return sum(m.covered for m in self.models)

    @property
    def share(self) -> float:
        return self.covered / len(self.models) if self.models else 1.0

    @property
    def missing_ops(self) -> dict[str, int]:
        """Missing operator → number of models that lack it, most needed first."""
        counts: dict[str, int] = {}
        for m in self.models:
            for op in m.missing:
                counts[op] = counts.get(op, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def coverage(opset: Opset, models: Mapping[str, ModelOps], rules: Mapping[str, Sequence[str]] | None = None,
             *, start: str = "auto", known: Iterable[str] | None = None) -> Coverage:
    """Which ``models`` the opset covers, and which missing operators would cover the most more.

    ``start``: ``auto`` (by preset, see the module docstring), ``exported`` or ``core-aten``.
    ``rules`` (the targets followed) defaults to the rules the opset was built with; which
    operators are decomposed is the opset's :attr:`Opset.decomposed` either way. ``known``: the
    operators of the registry; the models' operators outside it are listed in
    :attr:`Coverage.not_in_registry` (a partial registry, or models newer than it).
    """
    if start == "auto":
        start = str(PRESET_POLICY[opset.choice.preset]["start"])
    if start not in ("exported", "core-aten"):
        raise BadInput(f"unknown start {start!r} (auto, exported or core-aten)")
    rules = {op: tuple(into) for op, into in (rules if rules is not None else opset.rules).items()}
    # what torch.export decomposes whatever the table says becomes what torch turns it into
    rules.update({op: opset.rules[op] for op, _ in opset.torch_removes if op in opset.rules})
    decomposed = frozenset(opset.decomposed)
    leaves = _Leaves(rules, decomposed.__contains__)
    have = opset.operators
    kept = set(opset.choice.keep)
    results: list[ModelCoverage] = []
    for key, model in models.items():
        ops = list(model.exported_ops if start == "exported" else model.core_aten_ops)
        if start == "core-aten":
            ops += [op for op in model.exported_ops if op in kept]
        needed = {opset.functionalized.get(op, op) for op in leaves.of_all(ops)
                  if op not in opset.graph_ops and not is_graph_op(op)}  # graph operators need no kernel
        results.append(ModelCoverage(model=key, family=model.family, needed=tuple(sorted(needed)),
                                     missing=tuple(sorted(needed - have))))
    unknown: tuple[str, ...] = ()
    if known is not None:
        known = frozenset(known)
        unknown = tuple(sorted({op for m in results for op in m.needed if op not in known}))
    return Coverage(start=start, models=tuple(results), suggestions=tuple(suggest_additions(results)),
                    not_in_registry=unknown)


def suggest_additions(models: Sequence[ModelCoverage], limit: int | None = None) -> list[Suggestion]:
    """Greedy: repeatedly add the missing operator that makes the most models fully covered;
    ties go to the operator more uncovered models need, then to the name. Stops when every
    model is covered (or after ``limit`` suggestions)."""
    total = len(models)
    missing = {m.model: set(m.missing) for m in models if m.missing}
    covered = total - len(missing)
    out: list[Suggestion] = []
    while missing and (limit is None or len(out) < limit):
        counts: dict[str, tuple[int, int]] = {}
        for lacking in missing.values():
            for op in lacking:
                completes, needs = counts.get(op, (0, 0))
                counts[op] = (completes + (len(lacking) == 1), needs + 1)
        op = min(counts, key=lambda o: (-counts[o][0], -counts[o][1], o))
        newly = tuple(sorted(name for name, lacking in missing.items() if lacking == {op}))
        for name in list(missing):
            missing[name].discard(op)
            if not missing[name]:
                del missing[name]
        covered += len(newly)
        out.append(Suggestion(op=op, newly_covered=newly, needed_by=counts[op][1], covered_after=covered,
                              share_after=covered / total if total else 1.0))
    return out
