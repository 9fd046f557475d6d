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
from opgov.core.runtimes import (FamilyIndex, RegistryOp, RuntimeId, family_index, judge, parse_runtime_id,
                                 release_order, runtime_operators)
from opgov.db.tables import decomp_rules, operators, runtimes, snapshots
from opgov.services.common import Ctx, get_int_setting, log_event, require
from opgov.results.runtimes import (CoverageMatrix, ExportCheck, LifecycleNote, MatrixModel, MatrixOperator,
                                    MatrixRuntime, MissingOperator, OperatorRuntime, OpsSource, RuntimeAdded,
                                    RuntimeDetail, RuntimeFit, RuntimeList, RuntimeModelCheck, RuntimeSummary)

RUNTIME_FORMATS = ("kernel-yaml", "selected-operators", "opset-json", "opset-text", "list")
SERVED = "served by the runtime (prim op)"  # what gives an operator a runtime serves outside its kernels


# --- reading the registry -----------------------------------------------------------------------


class _Registry:
    """What the latest snapshot says, loaded once per command."""

    def __init__(self, session) -> None:
        c = operators.c
        self.session = session
        rows = session.execute(select(c.qualname, c.schema, c.kind, c.autogen_of, c.category, c.present)).all()
        self.present = [RegistryOp(r.qualname, r.schema, r.kind, r.autogen_of) for r in rows if r.present]
        self.present_names = {r.qualname for r in rows if r.present}
        self.categories = {r.qualname: r.category for r in rows}
        from opgov.core.graph_ops import graph_ops_of

        # the graph operators, from the snapshot's schemas: assertions and symbolic values need no kernel
        self.graph = graph_ops_of((r.qualname, r.schema) for r in rows if r.present)
        # the core operators a runtime implements as kernels: the symbolic sizes tagged core
        # (aten::sym_size.int, aten::sym_is_contiguous …) are answered by the runtime itself
        self.core = sorted(r.qualname for r in rows if r.present and r.category == "core" and r.qualname not in self.graph)
        from opgov.services.common import latest_snapshot_id

        latest_id = latest_snapshot_id(session)  # not a release stored with import --historical
        self.snapshot = None if latest_id is None else session.scalar(
            select(snapshots.c.label).where(snapshots.c.id == latest_id))
        self._index: FamilyIndex | None = None

    def index(self, kernels) -> FamilyIndex:
        if self._index is None:
            self._index = family_index(self.present, kernels)
        return self._index


class _Runtime:
    def __init__(self, row) -> None:
        self.id = RuntimeId(row.name, row.version)
        self.row = row
        self.kernels: list[str] = list(row.kernels)
        self.released: date | None = row.released
        self.served: list[str] = list(row.served or [])  # outside its kernel registries (prim ops)
        self.torch: str | None = row.torch_release
        self.has: dict[str, str] = {}


def _runtimes(ctx: Ctx, registry: _Registry) -> list[_Runtime]:
    """Every registered runtime, by name and version (oldest first), with the operators it has."""
    found = [_Runtime(row) for row in ctx.session.execute(select(runtimes))]
    found.sort(key=lambda r: release_order(r.id))
    index = registry.index([k for r in found for k in r.kernels])
    for r in found:
        r.has = runtime_operators(r.kernels, index)
        for op in r.served:  # served by the runtime itself (ExecuTorch's prim ops): no kernel entry
            r.has.setdefault(op, SERVED)
    return found


def runtimes_by_name(ctx: Ctx) -> dict[str, list[_Runtime]]:
    """Every registered runtime by name, its versions oldest first, each with what it has: read
    once for any number of :func:`runtimes_of_operator` calls (a site's operator pages)."""
    by_name: dict[str, list[_Runtime]] = {}
    for r in _runtimes(ctx, _Registry(ctx.session)):
        by_name.setdefault(r.id.name, []).append(r)
    return dict(sorted(by_name.items()))


def runtimes_of_operator(op: str, by_name: dict[str, list[_Runtime]]) -> list[OperatorRuntime]:
    """For each registered runtime (``by_name``: :func:`runtimes_by_name`) that has ever
    implemented ``op``: since which version."""
    out = []
    for name, versions in by_name.items():
        having = [r for r in versions if op in r.has]
        if not having:
            continue
        newest = versions[-1]
        since = None
        for r in reversed(versions):  # back from the newest while it has it
            if op not in r.has:
                break
            since = str(r.id)
        out.append(OperatorRuntime(runtime=name, latest=str(newest.id), kernel=newest.has.get(op), since=since,
                                   versions=[str(r.id) for r in having]))
    return out


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


def served_operators(files: Sequence[str | Content]) -> list[str]:
    """The operators the files name (register_prim_ops.cpp sources, or lists), first occurrence first."""
    from opgov.formats.oplists import parse_op_file
    from opgov.formats.runtime_files import looks_like_prim_ops, prim_ops

    found: dict[str, None] = {}
    for file in files:
        text, name = _text(file)
        names = prim_ops(text, name) if looks_like_prim_ops(text) else parse_op_file(text, name, accept=("list",)).ops
        found.update(dict.fromkeys(names))
    return list(found)


def shipped_release(rid: RuntimeId) -> dict | None:
    """What opgov ships about this runtime release (``{"torch": "2.12", "served": [...]}``), else None."""
    import json

    from opgov.resources import shipped_runtimes

    path = shipped_runtimes(rid.name)
    if path is None:
        return None
    return json.loads(path.read_text(encoding="utf-8"))["releases"].get(rid.version)


def add_runtime(ctx: Ctx, runtime: str, ops: Sequence[str | Content], *, released: date | None = None,
                replace: bool = False, served: Sequence[str | Content] = (), torch: str | None = None,
                torch_pin: str | Content | None = None) -> RuntimeAdded:
    """Register ``runtime`` (NAME@VERSION) as implementing the operators of the files ``ops`` (their
    union): paths, or uploads as :class:`~opgov.formats.files.Content` (recorded by the names the
    client gave them). ``served``: files naming the operators it serves outside its kernel
    registries (ExecuTorch's prim ops); ``torch`` (or ``torch_pin``, its PyTorch pin file): the
    PyTorch release its kernels follow. For a release opgov ships data about (ExecuTorch 0.2.0 to
    1.3.0), both default to that release's. Registering the same again changes nothing; another
    registration of a registered runtime is refused unless ``replace``. A member without the role
    is refused before the files are read."""
    from opgov.formats.oplists import parse_op_file, read_op_file, union

    rid = parse_runtime_id(runtime)
    require(ctx, "runtimes", "register runtimes")
    if not ops:
        raise BadInput("give at least one --ops FILE")
    lists = [parse_op_file(f.data, f.name, accept=RUNTIME_FORMATS) if isinstance(f, Content)
             else read_op_file(f, accept=RUNTIME_FORMATS) for f in ops]
    kernels = list(union(lists))
    if torch is not None and torch_pin is not None:
        raise BadInput("give the torch release (--torch) or its pin file (--torch-pin), not both")
    if torch_pin is not None:
        from opgov.formats.runtime_files import pytorch_pin

        torch = pytorch_pin(*_text(torch_pin))
    shipped = shipped_release(rid)
    served_ops = served_operators(served) if served else list(shipped["served"]) if shipped else []
    if torch is None and shipped is not None:
        torch = shipped["torch"]

    def digest(file: str | Content) -> str:
        if isinstance(file, Content):
            data = file.data.encode("utf-8") if isinstance(file.data, str) else file.data
        else:
            data = Path(file).read_bytes()
        return hashlib.sha256(data).hexdigest()

    sources = [OpsSource(path=lst.path, format=lst.format, entries=len(lst), sha256=digest(file))
               for file, lst in zip(ops, lists, strict=True)]
    r = runtimes.c
    existing = ctx.session.execute(select(runtimes).where(r.name == rid.name, r.version == rid.version)).first()
    outcome = "added"
    if existing is not None:
        same = (list(existing.kernels) == kernels and existing.released == (released or existing.released)
                and list(existing.served or []) == served_ops and existing.torch_release == torch)
        if same:
            outcome = "unchanged"
        elif not replace:
            raise PolicyRefusal(f"{rid} is registered already with {len(existing.kernels)} kernels "
                                f"(added {existing.added_at:%Y-%m-%d} by {existing.added_by}); "
                                "--replace to register this instead", subject=str(rid))
        else:
            outcome = "replaced"
            ctx.session.execute(delete(runtimes).where(r.id == existing.id))
    if outcome != "unchanged":
        ctx.session.execute(insert(runtimes).values(
            name=rid.name, version=rid.version, released=released, kernels=kernels,
            sources=[dataclasses.asdict(s) for s in sources], added_at=ctx.now(), added_by=ctx.actor,
            served=served_ops, torch_release=torch))
        log_event(ctx, f"runtime-{outcome}", str(rid),
                  before={"kernels": len(existing.kernels)} if existing is not None else None,
                  after={"kernels": len(kernels), "released": released.isoformat() if released else None,
                         "sources": [s.path for s in sources], "served": len(served_ops), "torch": torch})
    registry = _Registry(ctx.session)
    found = _runtimes(ctx, registry)
    summary = _summaries(found, registry)[rid]
    missing = [k for k in kernels if k not in registry.present_names] if registry.snapshot else []
    return RuntimeAdded(outcome=outcome, runtime=summary, sources=sources, not_in_registry=missing)


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


def check_model_on_runtime(ctx: Ctx, models: Sequence[str | Content], runtime: str) -> RuntimeModelCheck:
    """Does ``runtime`` (a registered NAME@VERSION) run the union of ``models`` (files,
    ``CORPUS#model`` specs, or uploads as :class:`~opgov.formats.files.Content`)? For each operator it
    lacks, the decomposition by the recorded rules that would lower it to what it has (or that
    none exists); the deprecating, deprecated and deleted operators with their dates; the earliest
    snapshot that holds every operator and the earliest version of the runtime that runs it."""
    from opgov.formats.oplists import read_model_specs, union
    from opgov.services.decomps import corpora_dir

    from opgov.core.corpus import check_operator_count

    lists = read_model_specs(models, corpora_dir=corpora_dir())
    ops = list(union(lists))
    check_operator_count(len(ops))
    registry = _Registry(ctx.session)
    found = _runtimes(ctx, registry)
    r = _find(found, runtime)
    rules = _rules(ctx.session)
    verdict = judge(str(r.id), ops, r.has, rules, registry.graph)
    missing = [MissingOperator(op=m.op, category=registry.categories.get(m.op), lowers=m.lowering.ok,
                               steps=[f"{op} → {', '.join(into) or '(nothing)'}" for op, into in m.lowering.steps],
                               into=list(m.lowering.into), blocked=list(m.lowering.blocked))
               for m in verdict.missing]
    needed = set(verdict.ops) - set(verdict.graph_ops)  # what needs a kernel
    running = [str(x.id) for x in found if needed <= x.has.keys()]
    earliest_version = next((str(x.id) for x in found if x.id.name == r.id.name and needed <= x.has.keys()), None)
    after_lowering = next((str(x.id) for x in found if x.id.name == r.id.name
                           and judge(str(x.id), ops, x.has, rules, registry.graph).runs_after_lowering), None)
    from opgov.db.entries import snapshots_holding

    in_registry = set(ops)  # graph operators are operators of the registry all the same
    history = snapshots_holding(ctx.session, in_registry)
    earliest_snapshot = next((label for label, have in history if in_registry <= have), None)
    from opgov.services.model_args import model_arguments

    arguments = model_arguments(ctx, models, runtime=str(r.id), release=r.torch)
    return RuntimeModelCheck(
        runtime=str(r.id), released=r.released, snapshot=registry.snapshot,
        models=[OpsSource(path=lst.path, format=lst.format, entries=len(lst)) for lst in lists],
        operators=ops, runs=verdict.runs and all(a.runs for a in arguments),
        runs_after_lowering=verdict.runs_after_lowering, arguments=arguments,
        provided=dict(verdict.provided), missing=missing,
        graph_ops={op: registry.graph[op] for op in verdict.graph_ops}, lifecycle=_lifecycle_notes(ctx, ops),
        earliest_snapshot=earliest_snapshot, earliest_version=earliest_version,
        earliest_version_after_lowering=after_lowering, runtimes_running=running)


def check_model(ctx: Ctx, models: Sequence[str | Content] = (), runtime: str | None = None,
                specs: Sequence[str] | None = None):
    """``opgov check-model``: with ``runtime`` a registered ``NAME@VERSION``, does it run the union
    of ``models`` (:func:`check_model_on_runtime`: a :class:`RuntimeModelCheck`)? Otherwise their
    operators against the registry and, with ``runtime`` a snapshot label, that snapshot (a
    ``ModelCheckReport``: ``ok`` is false on deleted, deprecated or missing operators). ``models``
    are uploads (:class:`~opgov.formats.files.Content`); ``specs``, instead, files and
    ``CORPUS#model`` specs on this machine."""
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
        from opgov.services.decomps import load_corpora

        merged = load_corpora(models)
        model_ops = {key: m.ops(stage) for key, m in merged.items()}
    from opgov.core.graph_ops import is_graph_op

    graph = registry.graph
    columns = []
    for r in found:
        s = summaries[r.id]
        runs = [m for m, ops in model_ops.items() if all(op in r.has or is_graph_op(op, graph) for op in ops)]
        columns.append(MatrixRuntime(runtime=s.runtime, released=s.released, kernels=s.kernels, core_have=s.core_have,
                                     core_total=s.core_total, core_share=s.core_share, previous=s.previous,
                                     core_gained=s.core_gained,
                                     core_lost=s.core_lost, models_run=runs, models_total=len(model_ops)))
    rows = [MatrixOperator(op=op, kernels={str(r.id): r.has.get(op) for r in found}) for op in registry.core]
    model_rows = [MatrixModel(model=m, missing={str(r.id): [op for op in ops if op not in r.has and not is_graph_op(op, graph)]
                                                for r in found},
                              graph_ops=[op for op in ops if is_graph_op(op, graph)])
                  for m, ops in model_ops.items()]
    return CoverageMatrix(snapshot=registry.snapshot, stage=stage, runtimes=columns, operators=rows, models=model_rows)


def coverage(ctx: Ctx, *, stage: str = "core-aten", format: str = "json", models: str | None = None):  # noqa: A002
    """``opgov runtimes coverage``: :func:`coverage_matrix` with the models of ``models`` (a corpus
    on this machine), else those of ``OPGOV_MODELS_DIR`` when it names a folder (on the server: the
    models it bundles), else the corpora opgov ships (``OPGOV_MODELS_DIR=none``: no models); ``format`` md or text answers its text (opgov.render.runtimes.render_matrix)."""
    from opgov.services.decomps import models_location

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
