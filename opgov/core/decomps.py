"""Decomposition rules and the checks that keep them honest.

A *rule* says which operators an operator decomposes into: ``aten::hardswish`` →
``aten::clamp, aten::add.Tensor, aten::mul.Tensor, aten::div.Tensor``. Names are canonical
(:func:`opgov.core.names.canonical`). Rules are one step deep; the checks follow them transitively.

Rules come from rules files (read by :mod:`opgov.formats.rules`, which documents the format),
from committee decisions and from PyTorch's own decomposition table.

Checks
------
:func:`check` runs every rule of :data:`CHECKS` over plain mappings, so the database layer, a
test or a bot can call it with whatever it has. :func:`would_break` answers "which violations
would this proposal introduce?" so that a governance service can refuse it with the path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from opgov.core.errors import BadInput
from opgov.core.graph_ops import GRAPH_OPS
from opgov.core.vocab import Category, Lifecycle, Severity

CORE, DECOMPOSABLE, CUSTOM = Category.core, Category.decomposable, Category.custom
_DEAD = frozenset({Lifecycle.deprecated, Lifecycle.deleted})


# --------------------------------------------------------------------------------------------
# rules (a rules file is read by opgov.formats.rules)


@dataclass(frozen=True)
class Rule:
    """``op`` decomposes into ``into`` (canonical names). ``line`` is where the file says so."""

    op: str
    into: tuple[str, ...]
    note: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class RulesFile:
    """A loaded rules file. ``shape`` is ``rules-v1`` or ``review-decisions``."""

    path: str
    source: str
    shape: str
    rules: tuple[Rule, ...]
    date: str | None = None

    def mapping(self) -> dict[str, tuple[str, ...]]:
        """``{op: into}``, the form :func:`check` and the opset builder take."""
        return {r.op: r.into for r in self.rules}


# --------------------------------------------------------------------------------------------
# checks


@dataclass(frozen=True)
class Violation:
    """One finding of :func:`check`.

    ``path`` is the chain of operators that shows it (a decomposition path, a cycle), empty when
    the finding concerns one operator. ``subject`` is the operator (or cycle) the finding is
    about besides ``operator``; together with ``rule`` and ``operator`` it identifies the
    finding across two runs (see :func:`would_break`).
    """

    rule: str
    severity: Severity
    operator: str
    message: str
    path: tuple[str, ...] = ()
    subject: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rule, self.operator, self.subject)


@dataclass(frozen=True)
class CheckInfo:
    id: str
    severity: Severity
    purpose: str


#: Every rule :func:`check` applies, by id. Documentation and ``--help`` list them from here.
CHECKS: dict[str, CheckInfo] = {c.id: c for c in (
    CheckInfo("decomp-reaches-non-core", "error",
              "A non-core operator's rules, followed transitively, end in an operator that is not core."),
    CheckInfo("decomp-cycle", "error", "Rules that lead from an operator back to itself."),
    CheckInfo("decomp-target-deprecated", "error", "A rule targets a deprecated or deleted operator."),
    CheckInfo("decomp-target-deprecating", "warning", "A rule targets an operator that is being deprecated."),
    CheckInfo("decomp-target-unknown", "error", "A rule targets an operator the registry does not know."),
    CheckInfo("decomp-target-not-core", "warning",
              "A rule's targets are not all core: one reaches core only through a CompositeImplicitAutograd "
              "kernel, whose own targets no rule records."),
    CheckInfo("core-decomposed", "warning", "Drift: a core operator has a decomposition rule."),
    CheckInfo("core-not-functional", "warning",
              "Drift: a core operator that is not functional (in-place, out= or mutable); the core opset holds "
              "functional operators only, since functionalization removes the others."),
    CheckInfo("core-composite-implicit", "warning",
              "Drift: a core operator whose kernel is CompositeImplicitAutograd: torch.export decomposes it "
              "unless the decomposition table keeps it (pytorch/pytorch#116684)."),
    CheckInfo("core-tag-mismatch", "warning",
              "Drift: the `core` tag in native_functions.yaml disagrees with the category."),
    CheckInfo("decomposable-without-rule", "warning",
              "Drift: a decomposable operator has no rule and no CompositeImplicitAutograd kernel "
              "(such a kernel is a decomposition)."),
    CheckInfo("torch-keeps-decomposable", "warning",
              "Disagreement with torch: opgov decomposes the operator (a rule, or the decomposable category) but "
              "the default decomposition table of the torch release `decomps import-torch` read keeps it."),
    CheckInfo("torch-decomposes-core", "warning",
              "Disagreement with torch: a core operator that the default decomposition table of the torch "
              "release `decomps import-torch` read decomposes (the opset's generated code keeps it)."),
    CheckInfo("model-op-uncovered", "warning",
              "Drift: an operator real models use is neither core nor decomposed (no rule, no "
              "CompositeImplicitAutograd kernel), so a core-only backend cannot run them "
              "(pytorch/pytorch#139617)."),
)}


@dataclass(frozen=True)
class _Graph:
    rules: Mapping[str, tuple[str, ...]]
    categories: Mapping[str, str]
    lifecycle: Mapping[str, str]
    tagged: Mapping[str, bool]
    implicit: frozenset[str] = frozenset()
    kinds: Mapping[str, str] = field(default_factory=dict)
    used_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    no_tensor: frozenset[str] = frozenset()
    torch: object | None = None  # opgov.core.opset.TorchFacts
    pending: Mapping[str, str] = field(default_factory=dict)  # operator → why it waits for the committee
    graph: frozenset[str] = frozenset()  # the graph operators the snapshot's schemas declare (core.graph_ops)

    def graph_op(self, op: str) -> bool:
        return op in self.graph or op in GRAPH_OPS

    def category(self, op: str) -> str:
        if op in self.categories:
            return self.categories[op]
        return "uncategorized" if op in self.lifecycle else "unknown"

    def known(self, op: str) -> bool:
        return op in self.categories or op in self.lifecycle

    def live(self, op: str) -> bool:
        return self.lifecycle.get(op) != "deleted"

    def decomposes(self, op: str) -> bool:
        """Something decomposes ``op``: a rule, or its CompositeImplicitAutograd kernel."""
        return op in self.rules or op in self.implicit

    def functional_form(self, op: str) -> str | None:
        """The functional sibling of an in-place operator (``relu_`` → ``relu``), if known."""
        if self.kinds.get(op) != "inplace":
            return None
        ns, _, rest = op.partition("::")
        name, dot, overload = rest.partition(".")
        sibling = f"{ns}::{name.rstrip('_')}{dot}{overload}"
        return sibling if sibling != op and self.known(sibling) else None


def _violation(rule: str, operator: str, message: str, path: Sequence[str] = (), subject: str = "") -> Violation:
    return Violation(rule, CHECKS[rule].severity, operator, message, tuple(path), subject)


def arrow(path: Iterable[str]) -> str:
    """``a → b → c``."""
    return " → ".join(path)


def check_reaches_core(g: _Graph) -> list[Violation]:
    """``decomp-reaches-non-core``: follow the rules of every non-core operator to their leaves.

    Every operator with a rule counts, whatever its category: a rule is a decomposition, and the
    backends that decompose the operator (every non-core one under the core-aten preset) get its
    leaves. (A heuristic category of a fresh import, e.g. ``custom`` for ``aten::mish``, does not
    exempt its rule.) Core operators are leaves; their own rules are ``core-decomposed`` drift.
    A core target is a leaf (decomposition stops there); a non-core target with a rule is
    followed; a non-core target whose CompositeImplicitAutograd kernel decomposes it is not an
    error (``decomp-target-not-core`` notes it); any other non-core target is reported, with the
    first path found to it.
    One finding per (operator, bad leaf).
    """
    out: list[Violation] = []
    for op in sorted(o for o in g.rules if g.category(o) != CORE):
        if g.lifecycle.get(op) == "deleted":
            continue
        for leaf, path in _bad_leaves(op, g):
            out.append(_violation(
                "decomp-reaches-non-core", op,
                f"{op} decomposes into non-core {leaf}: {arrow(path)} ({g.category(leaf)})",
                path, leaf))
    return out


def _bad_leaves(op: str, g: _Graph) -> list[tuple[str, tuple[str, ...]]]:
    found: dict[str, tuple[str, ...]] = {}
    visited: set[str] = set()

    def walk(node: str, path: tuple[str, ...]) -> None:
        for target in g.rules.get(node, ()):
            if target in path:  # a cycle: decomp-cycle reports it
                continue
            if g.category(target) == CORE:
                continue
            here = (*path, target)
            if target in g.rules:
                if target not in visited:
                    visited.add(target)
                    walk(target, here)
            elif target in g.implicit:
                continue  # its kernel decomposes it: decomp-target-not-core says so
            elif target not in found:
                found[target] = here

    walk(op, (op,))
    return list(found.items())


def check_cycles(g: _Graph) -> list[Violation]:
    """``decomp-cycle``: each strongly connected group of rules reported once, as one cycle."""
    out: list[Violation] = []
    for component in _strongly_connected(g.rules):
        start = min(component)
        cycle = _cycle_through(start, component, g.rules)
        out.append(_violation(
            "decomp-cycle", start, f"decomposition cycle: {arrow(cycle)}", cycle,
            ",".join(sorted(component))))
    return out


def _strongly_connected(rules: Mapping[str, tuple[str, ...]]) -> list[frozenset[str]]:
    """Tarjan's algorithm, iterative; only components that contain a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[frozenset[str]] = []
    counter = 0
    for root in sorted(rules):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = rules.get(node, ())
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1 or node in rules.get(node, ()):
                    result.append(frozenset(members))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(result, key=min)


def _cycle_through(start: str, component: frozenset[str], rules: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A shortest cycle from ``start`` back to itself inside ``component`` (breadth first)."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for target in rules.get(node, ()):
                if target == start:
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(parents[chain[-1]])
                    return (*reversed(chain), start)
                if target in component and target not in parents:
                    parents[target] = node
                    nxt.append(target)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - components have one


def check_targets(g: _Graph) -> list[Violation]:
    """``decomp-target-deprecated``, ``decomp-target-deprecating``, ``decomp-target-unknown``."""
    out: list[Violation] = []
    for op in sorted(g.rules):
        if g.lifecycle.get(op) == "deleted":
            continue
        for target in g.rules[op]:
            state = g.lifecycle.get(target)
            if not g.known(target):
                out.append(_violation("decomp-target-unknown", op,
                                      f"{op} decomposes into {target}, which the registry does not know",
                                      (op, target), target))
            elif state in _DEAD:
                out.append(_violation("decomp-target-deprecated", op,
                                      f"{op} decomposes into {target}, which is {state}", (op, target), target))
            elif state == "deprecating":
                out.append(_violation("decomp-target-deprecating", op,
                                      f"{op} decomposes into {target}, which is being deprecated",
                                      (op, target), target))
    return out


def check_targets_core(g: _Graph) -> list[Violation]:
    """``decomp-target-not-core``: a rule's target that is not core and that only its
    CompositeImplicitAutograd kernel decomposes (a target with a rule of its own is followed by
    ``decomp-reaches-non-core``; one with neither is an error there). One finding per rule,
    naming every such target."""
    out: list[Violation] = []
    for op in sorted(g.rules):
        if not g.live(op) or g.category(op) == CORE:
            continue
        opaque = [t for t in g.rules[op] if g.category(t) != CORE and t not in g.rules and t in g.implicit]
        if opaque:
            out.append(_violation(
                "decomp-target-not-core", op,
                f"{op} decomposes into {', '.join(opaque)}, not core: only "
                f"{'its' if len(opaque) == 1 else 'their'} CompositeImplicitAutograd kernel decomposes "
                f"{'it' if len(opaque) == 1 else 'them'} further (give {'it' if len(opaque) == 1 else 'them'} "
                "a rule, or target core operators)", (op, *opaque), ",".join(opaque)))
    return out


def check_core_functional(g: _Graph) -> list[Violation]:
    """``core-not-functional``: core holds functional operators only (functionalization turns
    in-place and out= variants into their functional form before a backend sees them)."""
    return [_violation("core-not-functional", op,
                       f"{op} is core but {_article(g.kinds[op])} {g.kinds[op]} operator: core holds functional "
                       "operators only (functionalization removes the others)")
            for op in sorted(g.categories) if g.categories[op] == CORE and g.live(op)
            and g.kinds.get(op, "functional") != "functional"]


def _article(kind: str) -> str:
    return "an" if kind[:1] in ("a", "e", "i", "o", "u") else "a"


def check_core_implicit(g: _Graph) -> list[Violation]:
    """``core-composite-implicit``: a core operator whose kernel is CompositeImplicitAutograd
    is decomposed by torch.export unless the decomposition table keeps it (pytorch#116684).
    Operators that return no tensor (``sym_size.int``) are left out: tracing records those
    symbolic queries as they are."""
    return [_violation("core-composite-implicit", op,
                       f"{op} is core but its kernel is CompositeImplicitAutograd: torch.export decomposes it "
                       "unless the decomposition table keeps it")
            for op in sorted(g.implicit - g.no_tensor) if g.category(op) == CORE and g.live(op)]


def check_model_ops(g: _Graph) -> list[Violation]:
    """``model-op-uncovered``: an operator real models use that is neither core nor decomposed
    (graph operators, assertions and symbolic sizes, need no kernel: never uncovered)."""
    out: list[Violation] = []
    for op in sorted(g.used_by):
        if (g.category(op) == CORE or g.decomposes(op) or not g.known(op) or not g.live(op)
                or g.graph_op(op)):
            continue
        functional = g.functional_form(op)  # functionalization turns it into its functional form
        if functional is not None and (g.category(functional) == CORE or g.decomposes(functional)):
            continue
        models = g.used_by[op]
        shown = ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")
        out.append(_violation("model-op-uncovered", op,
                              f"{op} is used by {len(models)} model(s) ({shown}) but is neither core nor "
                              f"decomposed ({g.category(op)}, no rule)"))
    return out


def check_core_decomposed(g: _Graph) -> list[Violation]:
    """``core-decomposed``: a core operator with a rule (core operators are what rules end in)."""
    return [_violation("core-decomposed", op,
                       f"{op} is core but a rule decomposes it into {', '.join(g.rules[op]) or 'nothing'}",
                       (op, *g.rules[op]))
            for op in sorted(g.rules) if g.category(op) == CORE and g.lifecycle.get(op) != "deleted"]


def check_core_tag(g: _Graph) -> list[Violation]:
    """``core-tag-mismatch``: the yaml ``core`` tag and the category disagree."""
    out: list[Violation] = []
    for op in sorted(set(g.tagged) | {o for o, c in g.categories.items() if c == CORE}):
        if op not in g.tagged or g.lifecycle.get(op) == "deleted":
            continue
        tagged, is_core = g.tagged[op], g.category(op) == CORE
        why = f" (under review: {g.pending[op]})" if op in g.pending else ""
        if tagged and not is_core:
            out.append(_violation("core-tag-mismatch", op,
                                  f"{op} is tagged core in native_functions.yaml but its category is "
                                  f"{g.category(op)}{why}"))
        elif is_core and not tagged:
            out.append(_violation("core-tag-mismatch", op,
                                  f"{op} is core but native_functions.yaml does not tag it core{why}"))
    return out


def check_decomposable_has_rule(g: _Graph) -> list[Violation]:
    """``decomposable-without-rule``."""
    return [_violation("decomposable-without-rule", op, f"{op} is decomposable but no rule says into what")
            for op, c in sorted(g.categories.items())
            if c == DECOMPOSABLE and not g.decomposes(op) and g.lifecycle.get(op) != "deleted"]


def check_torch_keeps(g: _Graph) -> list[Violation]:
    """``torch-keeps-decomposable``."""
    t = g.torch
    if t is None:
        return []
    out = []
    for op in sorted(set(g.rules) | {o for o, c in g.categories.items() if c == DECOMPOSABLE}):
        if (op in t.default or not g.known(op) or not g.live(op) or g.kinds.get(op, "functional") != "functional"
                or g.category(op) == "core" or g.graph_op(op)):
            continue
        why = "a rule" if op in g.rules else "its category"
        then = ("torch._decomp has a decomposition, which the opset's generated code adds" if t.has(op)
                else "torch has no decomposition for it: exported programs hold it, a backend implements it")
        out.append(_violation("torch-keeps-decomposable", op,
                              f"{op} is decomposed by {why} but torch {t.version}'s default table keeps it; {then}"))
    return out


def check_torch_decomposes_core(g: _Graph) -> list[Violation]:
    """``torch-decomposes-core``."""
    t = g.torch
    if t is None:
        return []
    return [_violation("torch-decomposes-core", op,
                       f"{op} is core but torch {t.version}'s default table decomposes it; the opset's generated "
                       "code keeps it")
            for op, c in sorted(g.categories.items())
            if c == "core" and op in t.default and g.live(op) and not g.graph_op(op)]


_RULE_FUNCTIONS = (check_torch_keeps, check_torch_decomposes_core, check_reaches_core, check_cycles, check_targets, check_targets_core, check_core_decomposed,
                   check_core_functional, check_core_implicit, check_core_tag, check_decomposable_has_rule,
                   check_model_ops)


def check(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
          lifecycle: Mapping[str, str] | None = None,
          yaml_core_tag: Mapping[str, bool] | Iterable[str] | None = None, *,
          implicit: Iterable[str] = (), kinds: Mapping[str, str] | None = None,
          used_by: Mapping[str, Sequence[str]] | None = None, no_tensor: Iterable[str] = (),
          torch=None, pending: Mapping[str, str] | None = None, graph: Iterable[str] = ()) -> list[Violation]:
    """Every violation of :data:`CHECKS`, errors first, then by rule id and operator.

    ``categories`` maps operators to ``core``/``decomposable``/``custom`` (an operator missing
    from it is *uncategorized*); ``lifecycle`` maps them to ``active``/``deprecating``/
    ``deprecated``/``deleted`` (an operator in neither mapping is *unknown*). ``yaml_core_tag``
    is either ``{op: tagged}`` for the operators the yaml lists, or the set of operators it tags
    core — then every operator of ``categories`` or ``lifecycle`` absent from the set counts as
    untagged. ``None`` skips the tag check.

    ``implicit``: the operators whose kernel is CompositeImplicitAutograd (the kernel is a
    decomposition, into operators opgov does not record). ``kinds``: operator → kind
    (``functional``, ``inplace``, ``out``, ``mutable``, ``scratch``); an operator missing from it
    counts as functional. ``used_by``: operator → the real models that use it (for
    ``model-op-uncovered``; empty skips that check; an in-place operator whose functional form is
    core or decomposed counts as covered). ``no_tensor``: operators that return no tensor.
    ``torch``: the :class:`opgov.core.opset.TorchFacts` of a torch release, for the checks of
    disagreements with its default table (``None`` skips them). ``pending``: operator → why it
    waits for the committee (a release dropped its core tag): the drift says so. ``graph``: the
    graph operators of the snapshot's schemas (:func:`opgov.core.graph_ops.graph_ops_of`).
    """
    g = _graph(rules, categories, lifecycle, yaml_core_tag, implicit, kinds, used_by, no_tensor)
    if torch is not None or pending or graph:
        from dataclasses import replace

        g = replace(g, torch=torch, pending=dict(pending or {}), graph=frozenset(graph))
    found = [v for fn in _RULE_FUNCTIONS for v in fn(g)]
    return sorted(found, key=lambda v: (v.severity != "error", v.rule, v.operator, v.subject))


def _graph(rules, categories, lifecycle, yaml_core_tag, implicit=(), kinds=None, used_by=None,
           no_tensor=()) -> _Graph:
    lifecycle = dict(lifecycle or {})
    if yaml_core_tag is None:
        tagged: dict[str, bool] = {}
    elif isinstance(yaml_core_tag, Mapping):
        tagged = {op: bool(v) for op, v in yaml_core_tag.items()}
    else:
        tagged_set = set(yaml_core_tag)
        tagged = {op: op in tagged_set for op in set(categories) | set(lifecycle) | tagged_set}
    return _Graph({op: tuple(into) for op, into in rules.items()}, dict(categories), lifecycle, tagged,
                  frozenset(implicit), dict(kinds or {}),
                  {op: tuple(models) for op, models in (used_by or {}).items()}, frozenset(no_tensor))


# --------------------------------------------------------------------------------------------
# proposed changes


@dataclass(frozen=True)
class RuleChange:
    """Set the rule of ``op`` to ``into``; ``into=None`` removes the rule."""

    op: str
    into: tuple[str, ...] | None


@dataclass(frozen=True)
class CategoryChange:
    """Move ``op`` to ``category`` (``core``, ``decomposable``, ``custom``)."""

    op: str
    category: str


Change = RuleChange | CategoryChange


def apply_changes(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
                  changes: Change | Sequence[Change]) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The rules and categories after ``changes`` (inputs are not modified)."""
    new_rules = {op: tuple(into) for op, into in rules.items()}
    new_categories = dict(categories)
    for change in _as_list(changes):
        if isinstance(change, RuleChange):
            if change.into is None:
                new_rules.pop(change.op, None)
            else:
                new_rules[change.op] = tuple(change.into)
        elif isinstance(change, CategoryChange):
            if change.category not in (CORE, DECOMPOSABLE, CUSTOM):
                raise BadInput(f"unknown category {change.category!r} (core, decomposable or custom)",
                               subject=change.op)
            new_categories[change.op] = change.category
        else:  # pragma: no cover - typing guards this
            raise TypeError(f"not a change: {change!r}")
    return new_rules, new_categories


def would_break(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
                change: Change | Sequence[Change], *, lifecycle: Mapping[str, str] | None = None,
                include_warnings: bool = False, implicit: Iterable[str] = ()) -> list[Violation]:
    """The violations ``change`` would introduce: present after it, absent before.

    By default only errors: the governance service refuses a proposal that introduces one (its
    message carries the path). ``include_warnings=True`` adds new drift findings too. The tag
    check is not run: a category change is expected to disagree with the yaml until the sync
    bot writes the tag.
    """
    implicit = frozenset(implicit)
    before = {v.key for v in check(rules, categories, lifecycle, implicit=implicit)}
    new_rules, new_categories = apply_changes(rules, categories, change)
    after = check(new_rules, new_categories, lifecycle, implicit=implicit)
    return [v for v in after if v.key not in before and (include_warnings or v.severity == "error")]


def would_break_near(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
                     changes: Change | Sequence[Change], *, lifecycle: Mapping[str, str] | None = None,
                     implicit: Iterable[str] = (), callers: Mapping[str, set[str]] | None = None) -> list[Violation]:
    """:func:`would_break`, the same violations in the same order, checking only what ``changes``
    can change (a bulk triage or review checks a hundred change sets, each alone, against one copy of
    the registry: opgov.services.decomps.BreakChecks): a change set moves the operators it names, so a finding can appear only on those,
    on the operators whose rules reach them, and on what those reach before or after the change.
    ``callers``: :func:`_callers` of ``rules``, when the caller has it."""
    changes = _as_list(changes)
    implicit = frozenset(implicit)
    lifecycle = lifecycle or {}
    new_rules, new_categories = apply_changes(rules, categories, changes)
    near = _reach({c.op for c in changes}, _callers(rules) if callers is None else callers)
    region = _reach(near, rules) | _reach(near, new_rules)

    def part(rules_, categories_) -> list[Violation]:
        return check({op: rules_[op] for op in region if op in rules_},
                     {op: categories_[op] for op in region if op in categories_},
                     {op: lifecycle[op] for op in region if op in lifecycle}, implicit=implicit & region)

    before = {v.key for v in part(rules, categories)}
    return [v for v in part(new_rules, new_categories) if v.key not in before and v.severity == "error"]


def _callers(rules: Mapping[str, Sequence[str]]) -> dict[str, set[str]]:
    """target → the operators whose rules name it."""
    callers: dict[str, set[str]] = {}
    for op, into in rules.items():
        for target in into:
            callers.setdefault(target, set()).add(op)
    return callers


def _reach(start: Iterable[str], edges: Mapping[str, Iterable[str]]) -> set[str]:
    """``start`` and every operator ``edges`` lead to from it, transitively."""
    seen = set(start)
    todo = list(seen)
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _as_list(changes: Change | Sequence[Change]) -> list[Change]:
    if isinstance(changes, (RuleChange, CategoryChange)):
        return [changes]
    return list(changes)
