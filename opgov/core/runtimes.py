"""What a runtime implements, which operators that gives it, and whether it runs a model.

A runtime (an engine: ExecuTorch's portable kernels, a delegate, a backend) is registered as the
operator entries it implements: ``aten::add.out``, ``aten::relu``, ... ExecuTorch's kernel
libraries implement the **out=** variants, while an exported model names functional operators
(``aten::add.Tensor``). A runtime *has* an operator when it implements it, or when the operator
is functional and the runtime implements an out= variant of the same torchgen family
(:func:`opgov.core.schema.family_key`: same base name and arguments apart from ``out``, same
returns). The registry (a snapshot of native_functions.yaml) gives the families.

Pure: plain data in, frozen dataclasses out; no database, no files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from opgov.core.graph_ops import is_graph_op, split_graph_ops
from opgov.core.errors import BadInput

_PART = r"[A-Za-z0-9][A-Za-z0-9_.+-]*"  # a runtime's name, or its version: ASCII letters, digits, _.+-
RUNTIME_ID_PATTERN = rf"^{_PART}@{_PART}$"  # the API's document states the same (opgov.usecases.fields)
_RUNTIME_NAME = re.compile(rf"^{_PART}$")
_VERSION = re.compile(rf"^{_PART}$")


@dataclass(frozen=True, order=True)
class RuntimeId:
    """``executorch@1.3.0``."""

    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"


def parse_runtime_id(text: str) -> RuntimeId:
    """``NAME@VERSION``; :class:`BadInput` otherwise."""
    name, at, version = text.strip().partition("@")
    if not at or not _RUNTIME_NAME.match(name) or not _VERSION.match(version):
        raise BadInput(f"{text!r} is not a runtime (expected NAME@VERSION, e.g. executorch@1.3.0)")
    return RuntimeId(name, version)


def version_key(version: str) -> tuple:
    """Orders ``0.2.0 < 0.5.0 < 1.0.0 < 1.3.0 < 1.10.0``: numbers as numbers, other parts as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"[.+-]", version))


def release_order(rid: RuntimeId) -> tuple:
    """Runtimes by name, and the versions of one runtime oldest first."""
    return (rid.name, version_key(rid.version))


# --- the registry's families ----------------------------------------------------------------------


@dataclass(frozen=True)
class RegistryOp:
    """One operator of a snapshot, as the family grouping needs it. ``schema`` is None for an
    operator only an ``autogen:`` line declares; ``autogen_of`` then names the declaring entry."""

    qualname: str
    schema: str | None
    kind: str  # functional | inplace | out | mutable | scratch
    autogen_of: str | None = None


def _base(qualname: str) -> str:
    """The family name to pre-select candidates by (the schema model's ``OperatorName.base`` decides)."""
    name = qualname.split("::", 1)[-1].split(".", 1)[0].rstrip("_")
    return name.removesuffix("_functional")


@dataclass(frozen=True)
class FamilyIndex:
    """The torchgen groups of the registry operators that kernels may name: each operator's
    family key and kind, each family's functional operators, and the view operator each
    ``*_copy`` operator is the copy variant of."""

    keys: Mapping[str, tuple]
    kinds: Mapping[str, str]
    functional: Mapping[tuple, tuple[str, ...]]
    view_of: Mapping[str, str]


_COPY = "_copy"


def family_index(registry: Sequence[RegistryOp], kernels: Iterable[str]) -> FamilyIndex:
    """Index the families of the operators of ``registry`` whose base name one of ``kernels``
    shares, and of the view operators those are copy variants of (only these are parsed: a few
    hundred of ~2,600)."""
    from opgov.core.schema import FunctionSchema, family_key

    bases = {_base(k) for k in kernels}
    bases |= {b[: -len(_COPY)] for b in bases if b.endswith(_COPY)}
    candidates = [op for op in registry if _base(op.qualname) in bases]
    schemas = {op.qualname: op.schema for op in candidates if op.schema is not None}
    keys: dict[str, tuple] = {}
    for op in candidates:
        text = op.schema if op.schema is not None else schemas.get(op.autogen_of or "")
        if text is None:
            continue
        try:
            keys[op.qualname] = (op.qualname.split("::", 1)[0], family_key(FunctionSchema.parse(text)))
        except BadInput:
            continue  # the registry reader reports unparsable schemas; here they just have no family
    functional: dict[tuple, list[str]] = {}
    for op in candidates:  # what a model names: functional operators, and mutable ones (batch norm's)
        if op.kind in ("functional", "mutable") and op.qualname in keys:
            functional.setdefault(keys[op.qualname], []).append(op.qualname)
    # torchgen's view groups: `permute_copy` is the copy variant of the view `permute` (same
    # overload name, same arguments and returns but for alias annotations); an engine that
    # implements the copy runs the view (ExecuTorch's edge dialect swaps one for the other)
    view_of: dict[str, str] = {}
    for op in candidates:
        ns, _, func = op.qualname.partition("::")
        name, dot, overload = func.partition(".")
        if op.kind != "functional" or not name.endswith(_COPY) or op.qualname not in keys:
            continue
        view = f"{ns}::{name[: -len(_COPY)]}{dot}{overload}"
        if view in keys and keys[view][1][2:] == keys[op.qualname][1][2:]:
            view_of[op.qualname] = view
    return FamilyIndex(keys=keys, kinds={op.qualname: op.kind for op in candidates},
                       functional={k: tuple(v) for k, v in functional.items()}, view_of=view_of)


def runtime_operators(kernels: Iterable[str], index: FamilyIndex) -> dict[str, str]:
    """Every operator a runtime implementing ``kernels`` has → the kernel entry that gives it.

    Each kernel entry gives itself; an out= kernel also gives the functional operators of its
    family (functional or mutable), and a ``*_copy`` operator it has gives the view it copies (``index``:
    :func:`family_index` over the registry and at least these kernels).
    """
    kernels = list(dict.fromkeys(kernels))
    have: dict[str, str] = {k: k for k in kernels}
    for kernel in kernels:
        if index.kinds.get(kernel) != "out" or kernel not in index.keys:
            continue
        for functional in index.functional.get(index.keys[kernel], ()):
            have.setdefault(functional, kernel)
    for copy, view in index.view_of.items():
        if copy in have:
            have.setdefault(view, have[copy])
    return have


# --- lowering a missing operator by the recorded decomposition rules ------------------------------


@dataclass(frozen=True)
class Lowering:
    """How ``op`` lowers to what a runtime has by the recorded rules.

    ``steps``: each rule applied (``op → targets``), in the order met; ``into``: the runtime's
    operators it ends in; ``blocked``: operators on the way that the runtime lacks and that have no
    rule (or only one that leads back to itself). It lowers when nothing is blocked.
    """

    op: str
    steps: tuple[tuple[str, tuple[str, ...]], ...]
    into: tuple[str, ...]
    blocked: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.blocked and bool(self.steps)


def lower(op: str, has: Mapping[str, object] | set[str] | frozenset[str],
          rules: Mapping[str, Sequence[str]]) -> Lowering:
    """Follow the rules from ``op`` until every operator reached is one the runtime has."""
    steps: list[tuple[str, tuple[str, ...]]] = []
    into: dict[str, None] = {}
    blocked: dict[str, None] = {}
    seen: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name != op and name in has:
            into[name] = None
            return
        targets = rules.get(name)
        if targets is None or name in path:
            blocked[name] = None
            return
        if name not in seen:
            seen.add(name)
            steps.append((name, tuple(targets)))
        for target in targets:
            visit(target, path + (name,))

    visit(op, ())
    return Lowering(op=op, steps=tuple(steps), into=tuple(into), blocked=tuple(blocked))


# --- the check -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Missing:
    """An operator the model uses that the runtime lacks, and how it would lower."""

    op: str
    lowering: Lowering


@dataclass(frozen=True)
class RuntimeVerdict:
    runtime: str
    ops: tuple[str, ...]
    provided: Mapping[str, str]  # op → the kernel that gives it, for the ops the runtime has
    missing: tuple[Missing, ...]
    graph_ops: tuple[str, ...] = ()  # assertions and symbolic sizes: no kernel needed (core.graph_ops)

    @property
    def runs(self) -> bool:
        return not self.missing

    @property
    def runs_after_lowering(self) -> bool:
        """Every missing operator lowers, by the rules on record, to operators the runtime has."""
        return all(m.lowering.ok for m in self.missing)


def judge(runtime: str, ops: Sequence[str], has: Mapping[str, str],
          rules: Mapping[str, Sequence[str]], graph: Mapping[str, str] | None = None) -> RuntimeVerdict:
    """Which of ``ops`` the runtime has (``has``: :func:`runtime_operators`), and how each of the
    others would lower by ``rules``. Graph operators (assertions, symbolic sizes; ``graph``: the
    snapshot's, :func:`opgov.core.graph_ops.graph_ops_of`) need no kernel: they are listed apart
    and never missing."""
    ops = tuple(dict.fromkeys(ops))
    kernels, graph_names = split_graph_ops(ops, graph)
    provided = {op: has[op] for op in kernels if op in has}
    missing = tuple(Missing(op, lower(op, has, rules)) for op in kernels if op not in has)
    return RuntimeVerdict(runtime=runtime, ops=ops, provided=provided, missing=missing, graph_ops=tuple(graph_names))


# --- the coverage matrix --------------------------------------------------------------------------


@dataclass(frozen=True)
class CoverageColumn:
    runtime: str
    released: date | None
    kernels: int
    core_have: int
    core_total: int
    gained: tuple[str, ...]  # core operators this version has that the previous version of the runtime lacked
    lost: tuple[str, ...]
    models_run: tuple[str, ...]
    models_total: int

    @property
    def core_share(self) -> float:
        return self.core_have / self.core_total if self.core_total else 0.0


@dataclass(frozen=True)
class CoverageMatrix:
    runtimes: tuple[CoverageColumn, ...]
    operators: tuple[tuple[str, tuple[str | None, ...]], ...]  # core op → the kernel of each runtime (None: lacks)
    models: tuple[tuple[str, tuple[tuple[str, ...], ...]], ...]  # model → what each runtime lacks for it
    stage: str


def coverage_matrix(core: Sequence[str], runtimes: Sequence[tuple[RuntimeId, date | None, int, Mapping[str, str]]],
                    models: Mapping[str, Sequence[str]] | None = None, stage: str = "core-aten",
                    graph: Mapping[str, str] | None = None) -> CoverageMatrix:
    """Core operators × runtimes (in the order given: group versions of one runtime oldest first),
    and, for each model, which operators each runtime lacks (none: it runs)."""
    core = sorted(core)
    columns: list[CoverageColumn] = []
    models = models or {}
    previous: dict[str, set[str]] = {}
    for rid, released, kernels, has in runtimes:
        core_have = {op for op in core if op in has}
        before = previous.get(rid.name)
        gained = tuple(sorted(core_have - before)) if before is not None else ()
        lost = tuple(sorted(before - core_have)) if before is not None else ()
        previous[rid.name] = core_have
        runs = tuple(m for m, ops in models.items() if all(op in has or is_graph_op(op, graph) for op in ops))
        columns.append(CoverageColumn(runtime=str(rid), released=released, kernels=kernels,
                                      core_have=len(core_have), core_total=len(core), gained=gained, lost=lost,
                                      models_run=runs, models_total=len(models)))
    rows = tuple((op, tuple(has.get(op) for _, _, _, has in runtimes)) for op in core)
    model_rows = tuple((m, tuple(tuple(op for op in ops if op not in has and not is_graph_op(op, graph))
                                   for _, _, _, has in runtimes))
                       for m, ops in models.items())
    return CoverageMatrix(runtimes=tuple(columns), operators=rows, models=model_rows, stage=stage)
