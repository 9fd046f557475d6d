"""The closure proof of a torch release's default decomposition table: does every operator the
table decomposes end, following the table transitively as traced, in core operators only?

torch.export's ``run_decompositions`` with the default table replaces each operator of the table
by what its decomposition calls, and again for each of those the table holds, until only
operators outside the table remain. ``decomps import-torch`` recorded each decomposition's
targets one step deep (:class:`opgov.core.opset.TorchFacts`); :func:`closure` follows them. An
operator is **closed** when every operator it ends in is core (in the given core set) or a graph
operator (an assertion or a symbolic size: no kernel runs it). Otherwise its ``why`` says what
stops it: the non-core operators it ends in (with one path to the first), a decomposition on the
way that could not be traced, or a cycle.

Pure: plain values in, plain values out (standard library only).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass

from opgov.core.graph_ops import is_graph_op

#: the kinds ``why`` words an operator with (out= and in-place keys are in the table too)
_KIND_WORDS = {"out": "an out= variant", "inplace": "an in-place variant"}


@dataclass(frozen=True)
class ClosureItem:
    """One operator of the table. ``ends_in``: the operators it ends in (sorted); ``not_core``:
    those of them that are neither core nor graph operators; ``untraced``: decompositions on the
    way (itself included) whose targets were not recorded, with why; ``path``: from ``op`` to the
    first operator that stops it (empty when closed)."""

    op: str
    closed: bool
    ends_in: tuple[str, ...]
    not_core: tuple[str, ...] = ()
    untraced: tuple[tuple[str, str], ...] = ()
    cycle: bool = False
    path: tuple[str, ...] = ()
    why: str | None = None


@dataclass(frozen=True)
class Closure:
    """The closure of ``version``'s default table against the core set of ``snapshot``."""

    version: str
    snapshot: str | None
    core: int
    items: tuple[ClosureItem, ...]

    @property
    def closed(self) -> int:
        return sum(i.closed for i in self.items)

    @property
    def open(self) -> tuple[ClosureItem, ...]:
        return tuple(i for i in self.items if not i.closed)

    def item(self, op: str) -> ClosureItem | None:
        for i in self.items:
            if i.op == op:
                return i
        return None


@dataclass(frozen=True)
class ClosureChange:
    """What changed from the closure ``before`` to ``after``: operators that stopped closing
    (a regression), started closing, joined the table or left it, and closed ones that end in
    other operators now."""

    before: str
    after: str
    stopped: tuple[str, ...]
    started: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    ends_changed: tuple[str, ...]


def closure(*, version: str, default: Iterable[str], targets: Mapping[str, tuple[str, ...] | None],
            reasons: Mapping[str, str], core: Collection[str], snapshot: str | None = None,
            kind: Callable[[str], str] | None = None, forced: Collection[str] = (),
            graph: Collection[str] = ()) -> Closure:
    """The closure of the table ``default`` (the operators it decomposes) whose decompositions
    call ``targets`` (one step, as traced; ``None`` or missing: not traced, ``reasons`` says why)
    against the ``core`` operators. ``kind(op)`` names an operator's kind (``out``, ``inplace``,
    ``functional``) for the words of ``why``. ``forced``: the operators export decomposes whatever
    the table says (followed as the table's are); ``graph``: the graph operators of the snapshot
    (opgov.core.graph_ops: a symbolic size, an assertion), which no kernel runs: never followed as
    a target, never a non-core end (the table's own entries for them are listed as the table has them)."""
    held = frozenset(graph) | frozenset(op for op in default if is_graph_op(op))
    table = frozenset(default)
    core_set = frozenset(core)
    walker = _Walker((table | frozenset(forced)) - held, targets, reasons)
    items = []
    for op in sorted(table):
        leaves, untraced, cycle = walker(op)
        not_core = tuple(sorted(t for t in leaves if t not in core_set and not is_graph_op(t) and t not in held))
        closed = not not_core and not untraced and not cycle
        path: tuple[str, ...] = ()
        why = None
        if not closed:
            stop = untraced[0][0] if untraced else (not_core[0] if not_core else op)
            path = walker.path(op, stop)
            why = _why(op, not_core, untraced, cycle, path, kind)
        items.append(ClosureItem(op=op, closed=closed, ends_in=tuple(sorted(leaves)), not_core=not_core,
                                 untraced=untraced, cycle=cycle, path=path, why=why))
    return Closure(version=version, snapshot=snapshot, core=len(core_set), items=tuple(items))


def compare(before: Closure, after: Closure) -> ClosureChange:
    """The operators whose closure changed from ``before`` to ``after``."""
    old = {i.op: i for i in before.items}
    new = {i.op: i for i in after.items}
    both = sorted(old.keys() & new.keys())
    return ClosureChange(
        before=_name(before), after=_name(after),
        stopped=tuple(op for op in both if old[op].closed and not new[op].closed),
        started=tuple(op for op in both if not old[op].closed and new[op].closed),
        added=tuple(sorted(new.keys() - old.keys())), removed=tuple(sorted(old.keys() - new.keys())),
        ends_changed=tuple(op for op in both if old[op].closed and new[op].closed
                           and old[op].ends_in != new[op].ends_in))


def public_version(version: str) -> str:
    """``2.13.0+cpu`` → ``2.13.0``: the release a snapshot is labelled after."""
    return version.partition("+")[0]


def functional_form(op: str, kinds) -> str:
    """What functionalization turns ``op`` into in an exported graph (``kinds``: operator → kind):
    a mutable operator's ``_functional`` sibling (torchgen's autogen), an in-place one's functional
    form, when the registry has it; else ``op``."""
    kind = kinds.get(op)
    if kind not in ("mutable", "inplace"):
        return op
    namespace, _, rest = op.partition("::")
    base, dot, overload = rest.partition(".")
    form = f"{namespace}::{base.rstrip('_') if kind == 'inplace' else base + '_functional'}{dot}{overload}"
    return form if kinds.get(form) == "functional" else op


def _name(c: Closure) -> str:
    return f"torch {c.version}" + (f" against {c.snapshot}" if c.snapshot else "")


def _why(op: str, not_core: tuple[str, ...], untraced: tuple[tuple[str, str], ...], cycle: bool,
         path: tuple[str, ...], kind: Callable[[str], str] | None) -> str:
    parts = []
    if untraced:
        first, reason = untraced[0]
        if first == op:
            parts.append(f"its decomposition could not be traced ({reason})")
        else:
            more = f" (and {len(untraced) - 1} more)" if len(untraced) > 1 else ""
            parts.append(f"reaches {first}, whose decomposition could not be traced ({reason}){more}")
    if op in not_core:
        parts.append("torch.export keeps it: its decomposition declines some of torch's sample inputs")
        not_core = tuple(t for t in not_core if t != op)
    if not_core:
        named = [t + (f" ({_KIND_WORDS[k]})" if kind and (k := kind(t)) in _KIND_WORDS else "") for t in not_core]
        parts.append(f"ends in {len(not_core)} non-core operator{'s' if len(not_core) > 1 else ''}: "
                     + ", ".join(named))
    if cycle:
        parts.append("its decompositions form a cycle")
    text = "; ".join(parts)
    if len(path) > 1:
        text += f" (via {' → '.join(path)})"
    return text


class _Walker:
    """Memoized: the leaves an operator of the table ends in, the untraced decompositions met on the
    way, and whether a cycle was met. A result touched by a cycle depends on its path and is not kept."""

    def __init__(self, table: frozenset[str], targets: Mapping[str, tuple[str, ...] | None],
                 reasons: Mapping[str, str]) -> None:
        self.table, self.targets, self.reasons = table, targets, reasons
        self.cache: dict[str, tuple[frozenset[str], tuple[tuple[str, str], ...], bool]] = {}

    def expands(self, op: str) -> bool:
        return op in self.table

    def __call__(self, op: str) -> tuple[frozenset[str], tuple[tuple[str, str], ...], bool]:
        leaves, untraced, cycle, _ = self._walk(op, ())
        return leaves, untraced, cycle

    def _walk(self, op: str, path: tuple[str, ...]):
        """(leaves, untraced, cycle, whether the result depends on the path)."""
        if op in self.cache:
            return (*self.cache[op], False)
        into = self.targets.get(op)
        if into is None:
            reason = self.reasons.get(op) or "no targets recorded"
            return frozenset(), ((op, reason),), False, False
        here = (*path, op)
        leaves: set[str] = set()
        untraced: dict[str, str] = {}
        cycle = depends = False
        for target in into:
            if not self.expands(target) or target == op:
                # (itself: export keeps the operator, its decomposition declined the input)
                leaves.add(target)
            elif target in here:
                leaves.add(target)
                cycle = depends = True
            else:
                sub_leaves, sub_untraced, sub_cycle, sub_depends = self._walk(target, here)
                leaves |= sub_leaves
                untraced.update(dict(sub_untraced))
                cycle = cycle or sub_cycle
                depends = depends or sub_depends
        result = (frozenset(leaves), tuple(sorted(untraced.items())), cycle)
        if not depends:
            self.cache[op] = result
        return (*result, depends)

    def path(self, op: str, stop: str) -> tuple[str, ...]:
        """A shortest path of decompositions from ``op`` to ``stop`` (``(op,)`` when it is ``op``)."""
        if op == stop:
            return (op,)
        seen = {op}
        frontier = [(op,)]
        while frontier:
            following = []
            for trail in frontier:
                for target in self.targets.get(trail[-1]) or ():
                    if target == stop:
                        return (*trail, target)
                    if target in seen or not self.expands(target):
                        continue
                    seen.add(target)
                    following.append((*trail, target))
            frontier = following
        return (op, stop)
