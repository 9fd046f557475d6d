"""Runtimes: register what an engine implements, and ask whether it runs a model.

Use cases (each returns a frozen dataclass of :mod:`opgov.results.runtimes`; an API endpoint is a
call and a return):

- :func:`add_runtime` — ``opgov runtimes add NAME@VERSION --ops FILE ... [--released DATE]``
- :func:`list_runtimes` — ``opgov runtimes list``: every runtime with its core coverage, and what
  each version gained over the previous one of the same runtime
- :func:`show_runtime` — ``opgov runtimes show NAME@VERSION``
- :func:`coverage_matrix` — ``opgov runtimes coverage``: core operators × runtimes, and which
  real models each runtime runs
- :func:`check_model_on_runtime` — ``opgov check-model MODEL... --runtime NAME@VERSION``, and
  :func:`check_model` (``opgov check-model``, either check) and :func:`check_model_operators`

The logic is pure (:mod:`opgov.core.runtimes`); files are read by :mod:`opgov.formats.oplists`.
Every query uses the Core tables, so these run on a Core connection (``orm=False``) and on an
ORM session alike. Which functional operators a runtime has is worked out when asked, from the
latest snapshot's operator families: importing a newer registry needs no re-registration.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from sqlalchemy import delete, insert, select

from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.formats.files import Content
from opgov.core.runtimes import RuntimeId, judge, parse_runtime_id, release_order
from opgov.db.tables import decomp_rules, operators, runtimes, snapshots
from opgov.reads.common import Ctx, get_int_setting
from opgov.services.common import log_event, require
from opgov.results.runtimes import (CoverageMatrix, ExportCheck, KernelProblem, LifecycleNote, MatrixModel,
                                    MatrixOperator,
                                    MatrixRuntime, MissingOperator, OpsSource, RuntimeAdded,
                                    RuntimeDetail, RuntimeFit, RuntimeList, RuntimeModelCheck, RuntimeSummary)
from opgov.reads.runtimes import (SERVED, _dtypes_by_release, _Registry, _Runtime, _runtimes,  # noqa: F401
                                  dtypes_by_release, known_releases, pre_release_of, shipped_kernel_facts,
                                  shipped_release)

RUNTIME_FORMATS = ("kernel-yaml", "selected-operators", "opset-json", "opset-text", "list")


def _find(found: list[_Runtime], text: str) -> _Runtime:
    rid = parse_runtime_id(text)
    for r in found:
        if r.id == rid:
            return r
    known = ", ".join(str(r.id) for r in found) or "none; register one with `opgov runtimes add`"
    raise NotFound(f"unknown runtime {rid} (registered: {known})")


def _summaries(found: list[_Runtime], registry: _Registry) -> dict[RuntimeId, RuntimeSummary]:
    out: dict[RuntimeId, RuntimeSummary] = {}
    previous: dict[str, tuple[str, set[str]]] = {}
    for r in found:
        core_have = {op for op in registry.core if op in r.has}
        before = previous.get(r.id.name)
        total = len(registry.core)
        out[r.id] = RuntimeSummary(
            runtime=str(r.id), name=r.id.name, version=r.id.version, released=r.released, kernels=len(r.kernels),
            operators=len(r.has), served=len(r.served), torch=r.torch, core_have=len(core_have), core_total=total,
            core_share=round(len(core_have) / total, 4) if total else 0.0,
            previous=before[0] if before else None,
            core_gained=sorted(core_have - before[1]) if before else [],
            core_lost=sorted(before[1] - core_have) if before else [])
        previous[r.id.name] = (str(r.id), core_have)
    return out


# --- use cases --------------------------------------------------------------------------------------


def _text(file: str | Content) -> tuple[str, str]:
    """(text, name) of a file or an upload; one line of bad input when it is not UTF-8 text."""
    from opgov.formats.files import read_text, text_of

    if isinstance(file, Content):
        return text_of(file.data, file.name), file.name
    return read_text(file), str(file)


def _served_operators(files: Sequence[str | Content]) -> list[str]:
    """The operators the files name (register_prim_ops.cpp sources, or lists), first occurrence first."""
    from opgov.formats.oplists import parse_op_file
    from opgov.formats.runtime_files import looks_like_prim_ops, prim_ops

    found: dict[str, None] = {}
    for file in files:
        text, name = _text(file)
        names = prim_ops(text, name) if looks_like_prim_ops(text) else parse_op_file(text, name, accept=("list",)).ops
        found.update(dict.fromkeys(names))
    return list(found)


def _facts_by_kernel(facts: dict, optimized: Sequence[str]) -> dict[str, dict]:
    """Each kernel entry → its facts: the optimized kernel's where the runtime has one."""
    out = dict(facts.get("kernels", {}))
    for op in optimized:
        if op in facts.get("optimized_kernels", {}):
            out[op] = facts["optimized_kernels"][op]
    return out


def _tree(shipped: dict) -> str:
    tree = shipped["pre_release"]
    said = tree.get("note") or "its version.txt names the release; there was no tag for it"
    return f"the pre-release tree {tree['ref']} at {tree['commit'][:12]} of {tree['date']} ({said})"


def _provenance(shipped: dict) -> str:
    return f"; read from {_tree(shipped)}" if shipped.get("pre_release") else ""


def add_runtime(ctx: Ctx, runtime: str, ops: Sequence[str | Content] = (), *, released: date | None = None,
                replace: bool = False, served: Sequence[str | Content] = (), torch: str | None = None,
                torch_pin: str | Content | None = None, source: str | None = None) -> RuntimeAdded:
    """Register ``runtime`` (NAME@VERSION) as implementing the operators of the files ``ops`` (their
    union): paths, or uploads as :class:`~opgov.formats.files.Content` (recorded by the names the
    client gave them). ``served``: files naming the operators it serves outside its kernel
    registries (ExecuTorch's prim ops); ``torch`` (or ``torch_pin``, its PyTorch pin file): the
    PyTorch release its kernels follow.

    For an ExecuTorch release opgov ships data about (``opgov runtimes add executorch@1.3.0``), no
    file is needed: its portable and optimized kernel registries, prim ops, PyTorch pin, release
    date and what each kernel accepts (dtypes, argument checks) come from the package's data, and
    any of them given here wins. ``source``: an ExecuTorch source tree (a checkout of another
    release) to read all of that from instead. Registering the same again changes nothing; another
    registration of a registered runtime is refused unless ``replace``. A member without the role
    is refused before the files are read."""
    from opgov.core.names import canonical
    from opgov.formats.oplists import parse_op_file, read_op_file, union

    rid = parse_runtime_id(runtime)
    require(ctx, "runtimes", "register runtimes")
    shipped = shipped_release(rid)
    tree = _source_tree_facts(source) if source is not None else None
    facts = tree if tree is not None else shipped_kernel_facts(rid) if shipped is not None else None
    registries = tree if tree is not None else shipped
    if not ops and registries is None:
        _refuse_unknown_release(rid)
    lists = [parse_op_file(f.data, f.name, accept=RUNTIME_FORMATS) if isinstance(f, Content)
             else read_op_file(f, accept=RUNTIME_FORMATS) for f in ops]
    if ops:
        kernels = list(union(lists))
    else:
        kernels = list(dict.fromkeys(canonical(k) for k in [*registries["portable"], *registries["optimized"]]))
    kernel_facts = _kernel_facts_of(facts, registries, kernels) if facts is not None and registries is not None else None
    if torch is not None and torch_pin is not None:
        raise BadInput("give the torch release (--torch) or its pin file (--torch-pin), not both")
    if torch_pin is not None:
        from opgov.formats.runtime_files import pytorch_pin

        torch = pytorch_pin(*_text(torch_pin))
    served_ops = (_served_operators(served) if served else list(registries["served"]) if registries else [])
    if torch is None and registries is not None:
        torch = registries["torch"]
    if released is None and tree is None and shipped is not None and shipped.get("released"):
        released = date.fromisoformat(shipped["released"])
    sources = [OpsSource(path=lst.path, format=lst.format, entries=len(lst), sha256=_digest(file))
               for file, lst in zip(ops, lists, strict=True)]
    if not ops:  # the registries of the shipped data, or of the source tree
        origin = f"{source} (source tree)" if tree is not None else f"{rid} (shipped with opgov{_provenance(shipped)})"
        sources = [OpsSource(path=f"{origin}: {kind} kernels", format="kernel-yaml",
                             entries=len(registries[kind]),
                             sha256=hashlib.sha256("\n".join(registries[kind]).encode()).hexdigest())
                   for kind in ("portable", "optimized") if registries[kind]]
    outcome = _record_runtime(ctx, rid, replace=replace, released=released, kernels=kernels, served_ops=served_ops,
                              torch=torch, kernel_facts=kernel_facts, sources=sources)
    registry = _Registry(ctx.session)
    summary = _summaries(_runtimes(ctx, registry), registry)[rid]
    missing = [k for k in kernels if k not in registry.present_names] if registry.snapshot else []
    note = None
    if tree is None and shipped is not None and shipped.get("pre_release"):
        note = (f"opgov read {rid} from {_tree(shipped)}; the release as tagged may differ "
                "(--source DIR reads a tagged tree)")
    return RuntimeAdded(outcome=outcome, runtime=summary, sources=sources, not_in_registry=missing, note=note)


def _source_tree_facts(source: str) -> dict:
    """What an ExecuTorch source tree says of its release (:func:`opgov.formats.et_sources.release_facts`)."""
    from opgov.formats.et_sources import directory_reader, release_facts

    if not Path(source).is_dir():
        raise BadInput(f"source: {source} is not a folder (an ExecuTorch source tree)")
    try:
        return release_facts(*directory_reader(source))
    except BadInput as err:
        raise BadInput(f"{source}: {err.message}") from None


def _refuse_unknown_release(rid: RuntimeId) -> None:
    """No file given for a release opgov ships no data about: refused, naming what it knows."""
    known = ", ".join(f"{rid.name}@{v}" + (" (pre-release tree)" if pre_release_of(rid.name, v) else "")
                      for v in known_releases(rid.name))
    raise BadInput(f"opgov ships no data about {rid}"
                   + (f" (it knows {known}): read that release's source tree with --source DIR, or give its "
                      "kernels with --ops FILE" if known else
                      ": give its kernels with --ops FILE (or an ExecuTorch source tree with --source DIR)"))


def _kernel_facts_of(facts: dict, registries: dict, kernels: list[str]) -> dict:
    """What is recorded of each kernel (the optimized one's where there is one), and of to_edge."""
    from opgov.core.names import canonical

    optimized = {canonical(k) for k in registries.get("optimized", [])}
    return {"kernels": {canonical(k): v for k, v in _facts_by_kernel(facts, sorted(optimized)).items()
                        if canonical(k) in kernels},
            "edge": facts.get("edge", {}), "mixed_types": facts.get("mixed_types", [])}


def _digest(file: str | Content) -> str:
    if isinstance(file, Content):
        data = file.data.encode("utf-8") if isinstance(file.data, str) else file.data
    else:
        data = Path(file).read_bytes()
    return hashlib.sha256(data).hexdigest()


def _record_runtime(ctx: Ctx, rid: RuntimeId, *, replace: bool, released: date | None, kernels: list[str],
                    served_ops: list[str], torch: str | None, kernel_facts: dict | None,
                    sources: list[OpsSource]) -> str:
    """Write the registration and its event, unless the same is registered already: ``added``,
    ``unchanged`` or ``replaced``; another registration is refused unless ``replace``."""
    r = runtimes.c
    existing = ctx.session.execute(select(runtimes).where(r.name == rid.name, r.version == rid.version)).first()
    outcome = "added"
    if existing is not None:
        same = (list(existing.kernels) == kernels and existing.released == (released or existing.released)
                and list(existing.served or []) == served_ops and existing.torch_release == torch
                and (existing.kernel_facts or None) == kernel_facts)
        if same:
            return "unchanged"
        if not replace:
            raise PolicyRefusal(f"{rid} is registered already with {len(existing.kernels)} kernels "
                                f"(added {existing.added_at:%Y-%m-%d} by {existing.added_by}); "
                                "--replace to register this instead", subject=str(rid))
        outcome = "replaced"
        ctx.session.execute(delete(runtimes).where(r.id == existing.id))
    ctx.session.execute(insert(runtimes).values(
        name=rid.name, version=rid.version, released=released, kernels=kernels,
        sources=[dataclasses.asdict(s) for s in sources], added_at=ctx.now(), added_by=ctx.actor,
        served=served_ops, torch_release=torch, kernel_facts=kernel_facts))
    log_event(ctx, f"runtime-{outcome}", str(rid),
              before={"kernels": len(existing.kernels)} if existing is not None else None,
              after={"kernels": len(kernels), "released": released.isoformat() if released else None,
                     "sources": [s.path for s in sources], "served": len(served_ops), "torch": torch,
                     "kernel_facts": len((kernel_facts or {}).get("kernels", {}))})
    return outcome


def list_runtimes(ctx: Ctx) -> RuntimeList:
    registry = _Registry(ctx.session)
    found = _runtimes(ctx, registry)
    summaries = _summaries(found, registry)
    return RuntimeList(snapshot=registry.snapshot, runtimes=[summaries[r.id] for r in found])


def show_runtime(ctx: Ctx, runtime: str) -> RuntimeDetail:
    registry = _Registry(ctx.session)
    found = _runtimes(ctx, registry)
    r = _find(found, runtime)
    summary = _summaries(found, registry)[r.id]
    gives = {op: k for op, k in r.has.items() if op != k}
    return RuntimeDetail(
        runtime=summary, sources=[OpsSource(**s) for s in r.row.sources], added_at=r.row.added_at,
        added_by=r.row.added_by, kernels=r.kernels, gives=dict(sorted(gives.items())), served=r.served,
        core_missing=[op for op in registry.core if op not in r.has],
        not_in_registry=[k for k in r.kernels if k not in registry.present_names] if registry.snapshot else [])


def _rules(session) -> dict[str, tuple[str, ...]]:
    return {row.operator: tuple(row.targets) for row in session.execute(select(decomp_rules.c.operator,
                                                                               decomp_rules.c.targets))}


def _lifecycle_notes(ctx: Ctx, ops: Sequence[str]) -> list[LifecycleNote]:
    from opgov.core.lifecycle import Periods, next_timed_step

    c = operators.c
    periods = Periods(get_int_setting(ctx.session, "deprecating_days"), get_int_setting(ctx.session, "deprecated_days"))
    rows = {row.qualname: row for row in ctx.session.execute(
        select(c.qualname, c.lifecycle, c.lifecycle_since, c.replacement)
        .where(c.qualname.in_(set(ops)), c.lifecycle != "active"))}
    notes = []
    for op in ops:
        row = rows.get(op)
        if row is None:
            continue
        due = next_timed_step(row.lifecycle, row.lifecycle_since, periods)
        notes.append(LifecycleNote(op=op, state=row.lifecycle, since=row.lifecycle_since,
                                   next_step=due.to_state if due else None, next_step_on=due.due_at if due else None,
                                   replacement=row.replacement))
    return notes


def _kernel_args(registry: _Registry, kernel: str, op: str) -> tuple[list[str], list[str]]:
    """The argument names of the kernel's operator, and which are its out arguments (from the
    registry; for a kernel only an ``autogen:`` line declares, the functional operator's with
    ``out``)."""
    from opgov.core.schema import FunctionSchema

    schemas = registry.schemas()
    for name in (kernel, op):
        text = schemas.get(name)
        if text is None:
            continue
        try:
            schema = FunctionSchema.parse(text)
        except BadInput:
            continue
        names = [a.name for a in schema.arguments.flat]
        outs = [a.name for a in schema.arguments.out]
        if name == kernel:
            return names, outs
        return names + ["out"], ["out"]
    return [], []


def kernel_problems(registry: _Registry, r: _Runtime, calls: Sequence) -> list[KernelProblem] | None:
    """Each call of ``calls`` the runtime has a kernel for, against what that kernel accepts (None:
    the runtime records nothing about its kernels). Graph operators and missing operators are not
    kernel calls. One problem per operator, status, argument and dtype, naming the first call."""
    from opgov.core.kernels import check_cast, check_edge_call, check_kernel_call, coerce_mixed_types

    recorded = r.row.kernel_facts
    if recorded is None:
        return None
    facts, edge = recorded.get("kernels", {}), recorded.get("edge", {})
    # the kernel to_edge's casts run on: _to_dim_order_copy from ExecuTorch 0.5.0 (dim order by default)
    cast_kernel = "aten::_to_copy.out"
    if "dim_order_ops::_to_dim_order_copy.out" in facts and (
            r.id.name != "executorch" or release_order(r.id) >= release_order(RuntimeId("executorch", "0.5.0"))):
        cast_kernel = "dim_order_ops::_to_dim_order_copy.out"
    found: dict[tuple, KernelProblem] = {}
    for call in calls:
        if call.op in registry.graph:
            continue
        kernel = r.has.get(call.op)
        if kernel is None or kernel == SERVED:
            continue
        names, outs = _kernel_args(registry, kernel, call.op)
        # to_edge casts a mixed-dtype call of some operators to its result's dtype first
        tensors, casts = coerce_mixed_types(call.op, call.tensors, recorded.get("mixed_types") or ())
        findings = [f for t in casts if (f := check_cast(call.op, t, tensors, cast_kernel, facts.get(cast_kernel)))]
        if not findings:
            lowering = check_edge_call(call.op, edge.get(call.op), tensors)
            findings = [lowering] if lowering is not None else check_kernel_call(
                call.op, kernel, facts.get(kernel), tensors, names, outs)
        for f in findings[:1]:
            key = (f.status, f.op, f.argument, f.dtype)
            if key in found:
                found[key] = dataclasses.replace(found[key], calls=found[key].calls + 1)
            else:
                found[key] = KernelProblem(status=f.status, op=f.op, kernel=f.kernel or kernel, argument=f.argument,
                                           dtype=f.dtype, message=f.message, call=call.node)
    order = {"dtype": 0, "argument": 0, "unknown": 1}
    return sorted(found.values(), key=lambda p: (order.get(p.status, 2), p.op, p.argument or "", p.dtype or ""))


class _Verdicts:
    """The whole verdict of one model on each registered runtime (operators, arguments, kernels),
    worked out once per runtime."""

    def __init__(self, ctx: Ctx, registry: _Registry, models, ops: Sequence[str], rules) -> None:
        from opgov.formats.oplists import read_archives

        self.ctx, self.registry, self.models, self.ops, self.rules = ctx, registry, models, ops, rules
        self.archives = read_archives(models)
        self.calls = [c for _, programs in self.archives for _, cs in programs for c in cs]
        self._args: dict[str | None, list] = {}
        self._seen: dict[RuntimeId, tuple] = {}

    def arguments(self, r: _Runtime) -> list:
        from opgov.services.model_args import model_arguments

        if r.torch not in self._args:
            self._args[r.torch] = model_arguments(self.ctx, self.models, runtime=str(r.id), release=r.torch,
                                                  archives=self.archives, skip=set(self.registry.graph))
        return self._args[r.torch]

    def of(self, r: _Runtime) -> tuple:
        """(operator verdict, argument checks, kernel problems or None, verdict word, first reason)."""
        if r.id in self._seen:
            return self._seen[r.id]
        verdict = judge(str(r.id), self.ops, r.has, self.rules, self.registry.graph)
        arguments = self.arguments(r)
        kernels = kernel_problems(self.registry, r, self.calls)
        refused = [k for k in kernels or [] if k.status != "unknown"]
        unknown = [k for k in kernels or [] if k.status == "unknown"]
        arg_errors = [p for a in arguments for p in a.problems if p.severity == "error"]
        if verdict.missing or refused or arg_errors:
            word = "does not run"
        elif unknown:
            word = "unknown"
        else:
            word = "runs"
        reason = None
        if verdict.missing:
            reason = f"{r.id.version} lacks {verdict.missing[0].op}"
        elif refused:
            reason = f"{r.id.version}: {refused[0].message}"
        elif arg_errors:
            reason = f"{r.id.version}: {arg_errors[0].message}"
        elif unknown:
            reason = f"{r.id.version}: {unknown[0].message}"
        self._seen[r.id] = (verdict, arguments, kernels, word, reason)
        return self._seen[r.id]


def check_model_on_runtime(ctx: Ctx, models: Sequence[str | Content], runtime: str) -> RuntimeModelCheck:
    """Does ``runtime`` (a registered NAME@VERSION) run the union of ``models`` (files,
    ``CORPUS#model`` specs, or uploads as :class:`~opgov.formats.files.Content`)? Each operator it
    lacks, with the decomposition by the recorded rules that would lower it to what it has (or that
    none exists); for an archive, each call's arguments against the torch release the runtime
    follows and each call's tensors (dtype, rank) against what its kernel accepts; the
    deprecating, deprecated and deleted operators with their dates; the earliest snapshot that
    holds every operator, and the earliest version of the runtime whose whole verdict (operators,
    arguments, kernels) is "runs"."""
    from opgov.formats.oplists import read_model_specs, union
    from opgov.reads.models import corpora_dir

    from opgov.core.corpus import check_operator_count

    lists = read_model_specs(models, corpora_dir=corpora_dir())
    ops = list(union(lists))
    check_operator_count(len(ops))
    registry = _Registry(ctx.session)
    found = _runtimes(ctx, registry)
    r = _find(found, runtime)
    rules = _rules(ctx.session)
    verdicts = _Verdicts(ctx, registry, models, ops, rules)
    verdict, arguments, kernels, word, _ = verdicts.of(r)
    missing = [MissingOperator(op=m.op, category=registry.categories.get(m.op), lowers=m.lowering.ok,
                               steps=[f"{op} → {', '.join(into) or '(nothing)'}" for op, into in m.lowering.steps],
                               into=list(m.lowering.into), blocked=list(m.lowering.blocked))
               for m in verdict.missing]
    running = [str(x.id) for x in found if verdicts.of(x)[3] == "runs"]
    same = [x for x in found if x.id.name == r.id.name]
    earliest = next((x for x in same if verdicts.of(x)[3] == "runs"), None)
    before = None
    if earliest is not None:
        older = [x for x in same if release_order(x.id) < release_order(earliest.id)]
        before = verdicts.of(older[-1])[4] if older else None

    def lowered_runs(x: _Runtime) -> bool:
        """Runs once its missing operators are lowered by the rules on record: every other check passes."""
        v, args, k, word_x, _ = verdicts.of(x)
        if word_x == "runs":
            return True
        return v.runs_after_lowering and not k and all(a.runs for a in args)

    after_lowering = next((str(x.id) for x in same if lowered_runs(x)), None)
    from opgov.db.entries import snapshots_holding

    in_registry = set(ops)  # graph operators are operators of the registry all the same
    history = snapshots_holding(ctx.session, in_registry)
    earliest_snapshot = next((label for label, have in history if in_registry <= have), None)
    unplaced = [k for k in r.kernels if k not in registry.present_names] if registry.snapshot and missing else []
    return RuntimeModelCheck(
        runtime=str(r.id), released=r.released, snapshot=registry.snapshot,
        models=[OpsSource(path=lst.path, format=lst.format, entries=len(lst)) for lst in lists],
        operators=ops, runs=word == "runs",
        runs_after_lowering=lowered_runs(r), arguments=arguments,
        provided=dict(verdict.provided), missing=missing,
        graph_ops={op: registry.graph[op] for op in verdict.graph_ops}, lifecycle=_lifecycle_notes(ctx, ops),
        earliest_snapshot=earliest_snapshot, earliest_version=str(earliest.id) if earliest else None,
        earliest_version_after_lowering=after_lowering, runtimes_running=running,
        kernel_problems=kernels or [], kernels_checked=kernels is not None, verdict=word, before_earliest=before,
        unplaced_kernels=unplaced)


def check_model(ctx: Ctx, models: Sequence[str | Content] = (), runtime: str | None = None,
                specs: Sequence[str] | None = None, operators: Sequence[str] | None = None):
    """``opgov check-model``: with ``runtime`` a registered ``NAME@VERSION``, does it run the union
    of ``models`` (:func:`check_model_on_runtime`: a :class:`RuntimeModelCheck`)? Otherwise their
    operators against the registry and, with ``runtime`` a snapshot label, that snapshot (a
    ``ModelCheckReport``: ``ok`` is false on deleted, deprecated or missing operators). ``models``
    are uploads (:class:`~opgov.formats.files.Content`); ``specs``, instead, files and
    ``CORPUS#model`` specs on this machine; ``operators``, instead, the operators the model uses
    (:func:`check_model_operators`: the API's JSON body)."""
    if operators is not None:
        return check_model_operators(ctx, operators, runtime)
    if specs is not None:
        models = specs
    if not models:
        raise BadInput("models: upload at least one model file (.pt2, selected_operators.yaml, op list)")
    if runtime is not None and "@" in runtime:
        return check_model_on_runtime(ctx, models, runtime)
    from opgov.results.runtimes import ModelCheckReport
    from opgov.services.decomps import check_model as against_registry

    report = ModelCheckReport.of(against_registry(ctx, list(models), runtime=runtime))
    if runtime is None:
        return report
    from opgov.services.model_args import model_arguments

    # a snapshot label given as the runtime stands for torch of that release
    arguments = model_arguments(ctx, models, runtime=f"snapshot {runtime}", release=runtime)
    return dataclasses.replace(report, arguments=arguments, ok=report.ok and all(a.runs for a in arguments))


def check_model_operators(ctx: Ctx, operators: Sequence[str], runtime: str | None = None):
    """:func:`check_model` of a model given as its operators' names (any spelling opgov reads)."""
    from opgov.core.names import canonical

    ops: list[str] = []
    for name in operators:
        try:
            ops.append(canonical(name))
        except BadInput as err:
            raise BadInput(f"operators: {err}") from None
    ops = list(dict.fromkeys(ops))
    from opgov.core.corpus import check_operator_count

    check_operator_count(len(ops))
    if runtime is not None and "@" in runtime:
        return check_model_on_runtime(ctx, [Content("\n".join(ops) + "\n", "operators")], runtime)
    from opgov.results.runtimes import ModelCheckReport
    from opgov.services.decomps import check_model_ops

    return ModelCheckReport.of(check_model_ops(ctx, ops, runtime=runtime))


def coverage_matrix(ctx: Ctx, *, models: str | None = None, stage: str = "core-aten") -> CoverageMatrix:
    """Core operators × registered runtimes; with ``models`` (a corpus JSON, or a folder of
    ``*_ops.json`` corpora and ``.pt2`` archives), which models each runtime runs, using the models' operators at
    ``stage`` (``core-aten``: after torch.export's default decompositions, as an edge runtime
    receives them; ``exported``: as exported)."""
    from opgov.core.corpus import STAGES

    if stage not in STAGES:
        raise BadInput(f"unknown stage {stage!r} ({' or '.join(STAGES)})")
    registry = _Registry(ctx.session)
    found = _runtimes(ctx, registry)
    summaries = _summaries(found, registry)
    model_ops: dict[str, tuple[str, ...]] = {}
    if models is not None:
        from opgov.reads.models import load_corpora

        merged = load_corpora(models)
        model_ops = {key: m.ops(stage) for key, m in merged.items()}
    from opgov.core.graph_ops import is_graph_op

    graph = registry.graph
    columns = []
    by_release = {d.runtime: d for d in _dtypes_by_release(found, registry.core)}
    dtypes = {r.id: by_release[str(r.id)].dtypes for r in found}
    for r in found:
        s = summaries[r.id]
        gained, lost = by_release[str(r.id)].dtypes_gained, by_release[str(r.id)].dtypes_lost
        runs = [m for m, ops in model_ops.items() if all(op in r.has or is_graph_op(op, graph) for op in ops)]
        columns.append(MatrixRuntime(runtime=s.runtime, released=s.released, kernels=s.kernels, core_have=s.core_have,
                                     core_total=s.core_total, core_share=s.core_share, previous=s.previous,
                                     core_gained=s.core_gained,
                                     core_lost=s.core_lost, models_run=runs, models_total=len(model_ops),
                                     dtypes_gained=gained, dtypes_lost=lost))
    rows = [MatrixOperator(op=op, kernels={str(r.id): r.has.get(op) for r in found},
                           dtypes={str(r.id): dtypes[r.id][op] for r in found}) for op in registry.core]
    model_rows = [MatrixModel(model=m, missing={str(r.id): [op for op in ops if op not in r.has and not is_graph_op(op, graph)]
                                                for r in found},
                              graph_ops=[op for op in ops if is_graph_op(op, graph)])
                  for m, ops in model_ops.items()]
    return CoverageMatrix(snapshot=registry.snapshot, stage=stage, runtimes=columns, operators=rows, models=model_rows)


def coverage(ctx: Ctx, *, stage: str = "core-aten", format: str = "json", models: str | None = None):  # noqa: A002
    """``opgov runtimes coverage``: :func:`coverage_matrix` with the models of ``models`` (a corpus
    on this machine), else those of ``OPGOV_MODELS_DIR`` when it names a folder (on the server: the
    models it bundles), else the corpora opgov ships (``OPGOV_MODELS_DIR=none``: no models); ``format`` md or text answers its text (opgov.render.runtimes.render_matrix)."""
    from opgov.reads.models import models_location

    if models is None:
        bundled = models_location()
        models = bundled if bundled is not None and Path(bundled).is_dir() else None
    result = coverage_matrix(ctx, models=models, stage=stage)
    if format == "json":
        return result
    from opgov.render.runtimes import render_matrix
    from opgov.results.rendered import Rendered

    return Rendered(render_matrix(result, format))


# --- the export-time check ---------------------------------------------------------------------------

def export_check(ctx: Ctx, operators: Sequence[str], runtime: str | None = None, torch_version: str | None = None,
                 calls: Sequence | None = None) -> ExportCheck:
    """The export-time check of a program's operators (canonical names). With ``runtime`` (a
    registered NAME@VERSION, or a snapshot label standing for torch of that release) and the
    program's ``calls`` (written by torch ``torch_version``): the calls checked argument by argument
    against the torch release it follows, as ``check-model`` checks an archive's."""
    from opgov.core.names import canonical

    seen: dict[str, None] = {}  # in order, each once (a dict: 10⁵ names are not compared with each other)
    for op in operators:
        try:
            seen[canonical(op)] = None
        except BadInput as err:
            raise BadInput(f"operators: {err}") from None
    names = list(seen)
    from opgov.core.corpus import check_operator_count

    check_operator_count(len(names))
    registry = _Registry(ctx.session)
    graph = {op: registry.graph[op] for op in names if op in registry.graph}
    fits = []
    found = _runtimes(ctx, registry)
    for r in found:
        verdict = judge(str(r.id), names, r.has, {}, registry.graph)
        fits.append(RuntimeFit(runtime=str(r.id), runs=verdict.runs, missing=[m.op for m in verdict.missing]))
    arguments = None
    if runtime is not None:
        from opgov.services.model_args import program_arguments

        if "@" in runtime:
            r = _find(found, runtime)
            target, release = str(r.id), r.torch
        else:  # a snapshot label stands for torch of that release
            labels = list(ctx.session.scalars(select(snapshots.c.label).order_by(snapshots.c.position)))
            if runtime not in labels:
                raise NotFound(f"runtime: {runtime!r} is neither a registered NAME@VERSION nor a snapshot "
                               f"(snapshots: {', '.join(labels) or 'none'})")
            target, release = f"snapshot {runtime}", runtime
        if calls is not None:
            arguments = program_arguments(ctx, calls, torch_version=torch_version, runtime=target, release=release)
    return ExportCheck(operators=names, graph_ops=graph,
                       unknown=[op for op in names if op not in registry.categories],
                       lifecycle=_lifecycle_notes(ctx, names), runtimes=fits, arguments=arguments)
