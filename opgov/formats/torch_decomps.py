"""What torch.export's default decompositions make of each ATen operator, asked of an installed PyTorch.

``read_torch_table()`` answers, for ``opgov decomps import-torch`` and for the facts opgov ships
(``scripts/build_torch_facts.py``, the same code):

1. **Which operators does torch.export's default table decompose?** Derived exactly: the ATen
   ``OpOverload`` keys of ``torch._decomp.core_aten_decompositions()`` (in 2.13 the same table as
   ``torch.export.default_decompositions()``), and the operators export decomposes whatever the
   table says (``forced``: CompositeImplicitAutograd ones it cannot preserve, with why).

2. **Into which operators?** Asked of torch.export itself. For each operator, a small module
   calling it on sample inputs is exported (``torch.export.export(strict=False)``) and decomposed
   with ``run_decompositions(default_decompositions())``; the targets are the operators the
   decomposed program holds, without graph operators (assertions, symbolic sizes:
   :mod:`opgov.core.graph_ops`). The samples, a few per operator, their targets united:

   - torch's own: the OpInfo samples of ``torch.testing._internal.common_methods_invocations``
     whose name is the operator's (``linalg.cross`` → ``linalg_cross``; an in-place or ``out=``
     overload takes the functional form's samples, with result tensors for ``out=``);
   - else the calls of the operator made while related OpInfo samples run forwards and backwards
     (``col2im`` from ``unfold``'s backward, a ``*_backward`` operator from its forward);
   - else the calls made while torch's ModuleInfos of its name, or of its forward's, run
     (``lstm_cell`` from ``nn.LSTMCell``, ``gru`` from ``nn.GRU``, ``nll_loss2d_backward`` from
     ``nn.NLLLoss``);
   - else, for an RNN's packed-sequence overload (``gru.data``), its padded sibling's calls as a
     packed sequence; for a sparse COO constructor, the parts of a real sparse tensor;
   - else more of the OpInfo samples (``linalg.matrix_norm``'s numeric ``ord`` after its strings);
   - else opgov's examples built from the schema.

   An operator whose inputs must agree in ways the schema cannot say (``trace_backward``'s 0-D
   grad, ``affine_grid_generator``'s theta and size, a sparse COO input) is traced on the calls a
   small table describes instead (``_BUILT``): data, run by torch like any sample.

   A sample is fitted to the overload's types first (a one-element tensor where a ``Scalar`` is
   asked, a 0-dim tensor where a number is given for a ``Tensor``, an int64 tensor for a list of
   ints and back, ``reduction="mean"`` as ATen's enum), and given the required arguments a
   sibling's sample lacks, valued as opgov's examples value them (``linalg_cond.p_str``'s ``p``).
   An ``out=`` or in-place operator none of whose samples exports takes what export leaves of its
   functional overload (``zeros_like.out`` → ``zeros_like``; ``inputs`` says so, with the call's
   own error): an exported program never holds such a call, functionalization replaces it by that
   overload (and for some, ``zeros_like.out``, torch.export itself fails: functionalization passes
   the out= call's arguments to an overload that does not take them).

   A sample is checked on fake tensors first (no CPU kernel runs an input it does not check; input
   shapes static, as export makes them), and the samples are exported together, else one by one.

   Where no sample exports, or fake tensors cannot run any (a result whose shape depends on the
   data: ``ctc_loss``; an operator without a fake kernel), the samples that run on real CPU tensors
   are traced by torch's own ``make_fx`` on those real tensors, functionalized and decomposed with
   the same table (``inputs`` then starts with :data:`opgov.core.opset.TRACED_BY_MAKE_FX`, followed
   by export's error). Such a graph is kept only when it computes, into non-empty results, what the
   call itself computes, and any constant it holds stays the same for other values of the inputs (a
   kernel that writes through raw memory leaves a graph that does not); an operator that returns
   numbers, only when the graph reads them from the data (``_local_scalar_dense``). Else the
   operator stays unknown, with torch's error. The targets are therefore what an exported
   (functionalized) program holds after the whole table: in-place forms become functional, what
   the table decomposes further is decomposed, and an operator whose decomposition declines its
   input (``upsample_nearest2d``) is among its own targets: export keeps it.

   For an operator export decomposes whatever the table says (``forced``) and that the table
   lacks, the targets are what an empty table leaves of it (``adjoint`` → ``transpose.int``,
   which a table may keep): an opset with another table follows them from there.

   For an operator only ``torch._decomp.decomposition_table`` decomposes (``elu``, ``embedding``,
   ``any``), the targets are what its rule makes of it when a table adds the rule to the default
   table, and ``exported`` what the default table alone leaves of it (itself: export keeps it).
   An operator no sample exports is recorded with ``into=None`` and torch's error.

Tracing runs in child processes (``workers``, default 2): a kernel can crash or hang its process,
and that must cost one operator, not the import. A crashed operator, or one silent longer than
``_OP_CAP_S``, is recorded with the reason and the worker restarts after it. The whole run is
bounded by ``time_budget_s``; operators not reached in time are returned with that reason.

torch is imported only in the child processes: importing it costs seconds, and the parent needs
nothing from it (the version comes from the package metadata). torch's test helpers (the OpInfo
samples) need numpy and expecttest; without them only opgov's examples are used.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.core.opset import TRACED_BY_MAKE_FX

@dataclass(frozen=True)
class TorchRule:
    """One key of torch.export's default decomposition table.

    ``into`` is the sorted tuple of operators observed (see the module docstring), or ``None``
    when they could not be observed; ``reason`` then says why. ``kind`` is ``functional``,
    ``inplace`` or ``out`` (read from the schema's alias annotations).
    """

    op: str
    into: tuple[str, ...] | None
    kind: str
    reason: str | None = None
    in_default: bool = True
    #: for an operator the default table lacks (``into`` is then what torch._decomp's rule makes of
    #: it when a table adds that rule): what export with the default table alone leaves of it
    exported: tuple[str, ...] | None = None
    #: where the sample inputs that exported came from (``3 OpInfo, 1 captured``)
    inputs: str | None = None

    @property
    def traced(self) -> bool:
        return self.into is not None


# --------------------------------------------------------------------------------------------
# parent side


@dataclass(frozen=True)
class TorchTable:
    """What :func:`read_torch_table` found: the installed torch's version, one
    :class:`TorchRule` per operator of its table (sorted by name), and the operators asked for
    with ``only`` that the table does not hold."""

    version: str
    rules: tuple[TorchRule, ...]
    absent: tuple[str, ...] = ()
    default: frozenset[str] = frozenset()
    forced: dict[str, str] = field(default_factory=dict)  # decomposed at export whatever the table → why
    preservable: frozenset[str] = frozenset()  # CompositeImplicitAutograd operators export can keep


def facts_json(table, previous=None, *, whole: bool) -> dict:
    """The JSON form of the facts ``table`` (a :class:`opgov.formats.torch_decomps.TorchTable`)
    holds; a partial table (``--only``) of the ``previous`` facts' release adds to them."""
    targets: dict[str, list[str] | None] = {}
    reasons: dict[str, str] = {}
    exported: dict[str, list[str]] = {}
    inputs: dict[str, str] = {}
    forced: dict[str, str] = dict(table.forced)
    preservable = set(table.preservable)
    complete = whole
    if previous is not None and previous.version == table.version:
        complete = complete or previous.complete
        targets = {op: list(t) if t is not None else None for op, t in previous.targets.items()}
        reasons = dict(previous.reasons)
        exported = {op: list(t) for op, t in previous.exported.items()}
        inputs = dict(previous.inputs)
        forced = {**previous.forced, **forced}
        preservable |= previous.preservable
    for rule in table.rules:
        targets[rule.op] = list(rule.into) if rule.into is not None else None
        exported.pop(rule.op, None)
        inputs.pop(rule.op, None)
        if rule.into is None:
            reasons[rule.op] = rule.reason or "not traced"
        else:
            reasons.pop(rule.op, None)
            if rule.inputs:
                inputs[rule.op] = rule.inputs
        if rule.exported is not None:
            exported[rule.op] = list(rule.exported)
    return {"version": table.version, "default": sorted(table.default), "targets": dict(sorted(targets.items())),
            "reasons": dict(sorted(reasons.items())), "complete": complete, "forced": dict(sorted(forced.items())),
            "preservable": sorted(preservable), "exported": dict(sorted(exported.items())),
            "inputs": dict(sorted(inputs.items())), "method": METHOD}


#: how the facts were made (the ``method`` key of their JSON form)
METHOD = ("torch.export.export(strict=False) of a module calling the operator on torch's OpInfo sample inputs "
          "(else calls captured running them, else opgov's examples), then run_decompositions(default_decompositions()); "
          "where export cannot trace them, make_fx of the functionalized call on real tensors with the same table, "
          "kept when its graph computes what the call does, any constant it holds the same for other input values "
          "(the operator's inputs say so), or, for an operator returning numbers, reads them from the data")


def facts_file_text(table, previous=None) -> str:
    """The shipped facts file of a whole ``table`` (``scripts/build_torch_facts.py``), or of a part
    of it traced again over the ``previous`` facts: its JSON form, one operator to a line (readable
    diffs)."""
    data = facts_json(table, previous, whole=previous is None)
    lines = []
    for key, value in data.items():
        if isinstance(value, dict):
            body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{json.dumps(key)}: {{\n{body}\n}}" if value else f"{json.dumps(key)}: {{}}")
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def torch_decomposition_rules(*, time_budget_s: float = 50.0, workers: int = 2,
                              only: Iterable[str] | None = None) -> list[TorchRule]:
    """Every ATen operator torch.export's default table decomposes, with observed targets.

    ``only`` restricts the run to these operators (canonical names; names outside the table are
    skipped); ``time_budget_s`` bounds the whole run; ``workers`` child processes trace in
    parallel. Raises :class:`Unavailable` when torch is not installed. Sorted by operator name.
    """
    table = read_torch_table(time_budget_s=time_budget_s, workers=workers, only=only)
    # (no child ran within the budget: which operators are in the default table is unknown)
    return [rule for rule in table.rules if rule.in_default or not table.default]


def read_torch_table(*, time_budget_s: float = 50.0, workers: int = 2,
                     only: Iterable[str] | None = None, shipped: Mapping[str, Path] | None = None) -> TorchTable:
    """Like :func:`torch_decomposition_rules`, with the torch version, the absent names, the
    default table's operators, and also the decompositions of ``torch._decomp.decomposition_table``
    outside the default table (``in_default=False``): those a table can add.

    This process never imports torch (that costs seconds): the child processes read the table
    themselves, each tracing its share (``part i of n``) or the names it is given.

    ``shipped`` (release → facts file, :func:`opgov.resources.shipped_torch_facts`): for the whole
    table of a release opgov ships facts for, made by this same code (their ``method`` is
    :data:`METHOD`), those facts are read instead of tracing again (the same answer, an hour of CPU
    sooner). ``scripts/build_torch_facts.py``, which writes them, always traces.
    """
    import importlib.metadata  # noqa: PLC0415
    import importlib.util  # noqa: PLC0415

    if importlib.util.find_spec("torch") is None:
        from opgov.core.errors import Unavailable  # noqa: PLC0415

        raise Unavailable("torch is not installed where opgov runs; install torch (a test and import-time "
                          "dependency only) to import its decompositions")
    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a torch without metadata
        version = "unknown"
    release = version.split("+")[0]
    if only is None and shipped is not None and release in shipped:
        table = shipped_table(shipped[release], version)
        if table is not None:
            return table
    deadline = time.monotonic() + time_budget_s
    if only is not None:
        names = sorted(set(only))
        workers = max(1, min(workers, len(names) // 8 + 1))  # a few operators: one child is enough
        jobs: list = [names[i::workers] for i in range(workers)]
        jobs = [job for job in jobs if job]
    else:
        workers = max(1, workers)
        jobs = [{"part": i, "of": workers} for i in range(workers)]
    results: dict[str, TorchRule] = {}
    absent: set[str] = set()
    default: set[str] = set()
    forced: dict[str, str] = {}
    preservable: set[str] = set()
    lock = threading.Lock()

    def run(job) -> None:
        found, missing, in_default, plan = _run_worker(job, deadline)
        with lock:
            results.update(found)
            absent.update(missing)
            default.update(in_default)
            forced.update(plan.get("forced", {}))
            preservable.update(plan.get("preservable", []))

    threads = [threading.Thread(target=run, args=(job,), daemon=True) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return TorchTable(version=version, rules=tuple(results[n] for n in sorted(results)),
                      absent=tuple(sorted(absent)), default=frozenset(default), forced=dict(sorted(forced.items())),
                      preservable=frozenset(preservable))


def shipped_table(path: Path, version: str) -> TorchTable | None:
    """The :class:`TorchTable` a facts file made by :func:`facts_file_text` with this code's
    :data:`METHOD` holds, as the installed torch ``version``; None for a file made otherwise."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("method") != METHOD or not data.get("complete"):
        return None
    default = frozenset(data["default"])
    exported = data.get("exported", {})
    rules = tuple(
        TorchRule(op, tuple(into) if into is not None else None, _kind_from_name(op),
                  data["reasons"].get(op) if into is None else None, op in default,
                  tuple(exported[op]) if op in exported else None, data.get("inputs", {}).get(op))
        for op, into in sorted(data["targets"].items()))
    return TorchTable(version=version, rules=rules, default=default, forced=dict(data.get("forced", {})),
                      preservable=frozenset(data.get("preservable", ())))


def _run_worker(job: list[str] | dict, deadline: float) -> tuple[dict[str, TorchRule], list[str], set[str], dict]:
    """Trace ``job`` (names, or ``{"part": i, "of": n}`` of the table) in a child process,
    restarting after a crash, until done or out of time. Returns (rules, names not in the table,
    every operator of the default table, the child's plan: ``forced`` and ``preservable``)."""
    worker = _Worker(job, deadline)
    request = job
    while worker.pending is None or worker.pending:
        if deadline - time.monotonic() <= 0:
            break
        code = worker.run_child(request)
        if worker.pending is None:  # the child died before reading the table
            if code != 0 and time.monotonic() < deadline:
                raise BadInput(f"torch could not read its decomposition table (exit code {code})")
            break
        worker.pending = [n for n in worker.pending if n not in worker.results]
        if code == 0 or not worker.pending:
            break
        if time.monotonic() < deadline:
            worker.crashed(code)
            request = worker.pending
    for name in worker.pending or ():
        worker.results[name] = TorchRule(name, None, _kind_from_name(name), "not traced: time budget exhausted",
                                         name in worker.default)
    return worker.results, worker.absent, worker.default, worker.plan


class _Worker:
    """The parent's side of one tracing child (restarted after a crash): what it has reported."""

    def __init__(self, job: list[str] | dict, deadline: float) -> None:
        self.deadline = deadline
        self.results: dict[str, TorchRule] = {}
        self.absent: list[str] = []
        self.default: set[str] = set()
        self.plan: dict = {}
        # the names still to trace; for a part of the table, unknown until the child lists them
        self.pending: list[str] | None = list(job) if isinstance(job, list) else None
        self.log = os.environ.get("OPGOV_TORCH_TRACE_LOG")  # each operator's line, as it comes
        self.env = dict(os.environ)
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.env.setdefault("PYTHONWARNINGS", "ignore")

    def run_child(self, request) -> int:
        """Start a child on ``request``, read its lines until it ends; its exit code."""
        proc = subprocess.Popen(
            [sys.executable, "-c", "from opgov.formats.torch_decomps import _worker_main; _worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=self.env,
            text=True,
        )
        heard = [time.monotonic(), False]  # (last line, the plan was read)
        finished = threading.Event()
        threading.Thread(target=self.watch, args=(proc, heard, finished), daemon=True).start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(request))
            proc.stdin.close()
            for line in proc.stdout:
                heard[0] = time.monotonic()
                if self.read(line):
                    heard[1] = True
            return proc.wait()
        finally:
            finished.set()

    def watch(self, proc, heard: list, finished: threading.Event) -> None:
        """Kill the child at the deadline, or when one operator takes longer than its cap (a kernel
        that hangs); the first line waits for torch's import and the plan."""
        while not finished.wait(1.0):
            now = time.monotonic()
            cap = _OP_CAP_S if heard[1] else _START_CAP_S
            if now >= self.deadline or now - heard[0] > cap:
                proc.kill()
                return

    def read(self, line: str) -> bool:
        """Take one line of the child's: its plan (True) or one operator's rule."""
        if self.log:
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(line)
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            return False
        if "names" in row:  # the child's plan: what it traces, what the table lacks
            self.pending = [n for n in row["names"] if n not in self.results]
            self.absent.extend(row.get("absent", []))
            self.default.update(row.get("default", []))
            self.plan = {"forced": row.get("forced", {}), "preservable": row.get("preservable", [])}
            return True
        if self.pending is None or row.get("op") not in self.pending:
            return False
        into, exported = row.get("into"), row.get("exported")
        self.results[row["op"]] = TorchRule(
            op=row["op"], into=tuple(into) if into is not None else None,
            kind=row.get("kind", "functional"), reason=row.get("reason"), in_default=row["op"] in self.default,
            exported=tuple(exported) if exported is not None else None, inputs=row.get("inputs"))
        return False

    def crashed(self, code: int) -> None:
        """Record the operator the child was tracing when it died: the first unreported one."""
        assert self.pending
        name = self.pending.pop(0)
        why = (f"tracing took longer than {_OP_CAP_S:.0f} s" if code == -9 else
               f"tracing crashed the process (exit code {code})")
        self.results[name] = TorchRule(name, None, _kind_from_name(name), why, name in self.default)


#: seconds one operator may take before its child is killed (a kernel that hangs), and the child's start
_OP_CAP_S, _START_CAP_S = 60.0, 180.0


def _kind_from_name(name: str) -> str:
    base, _, overload = name.partition("::")[2].partition(".")
    if overload == "out" or overload.endswith("_out"):
        return "out"
    return "inplace" if base.endswith("_") and not base.endswith("__") else "functional"


# --------------------------------------------------------------------------------------------
# child side


#: backward kernels autograd runs with gradients off, which assert it: traced as autograd calls them
_NO_GRAD = frozenset({"aten::_thnn_fused_lstm_cell_backward"})


def _worker_main() -> None:
    """Entry point of a tracing child. stdin: a JSON list of operator names, or ``{"part": i,
    "of": n}`` (every n-th operator of the table from the i-th). stdout: first ``{"names": [...],
    "absent": [...], "default": [...]}`` (what it will trace, asked-for names torch has no
    decomposition for, the default table's operators), then one JSON line per operator.
    The table traced is the default table and ``torch._decomp.decomposition_table``."""
    import warnings  # noqa: PLC0415

    warnings.simplefilter("ignore")
    request = json.loads(sys.stdin.read())
    import torch  # noqa: PLC0415
    from torch._decomp import core_aten_decompositions, decomposition_table  # noqa: PLC0415

    torch.manual_seed(0)
    core = {overload_name(op): (op, fn) for op, fn in core_aten_decompositions().items()
            if isinstance(op, torch._ops.OpOverload) and op.namespace == "aten"}
    # torch's other decompositions, which a table can add (the default table's win)
    table = {overload_name(op): (op, fn) for op, fn in decomposition_table.items()
             if isinstance(op, torch._ops.OpOverload) and op.namespace == "aten"}
    table.update(core)
    forced, preservable = _export_forced(torch)
    for name, (op, _) in forced.items():
        table[name] = (op, None)  # export decomposes it while tracing: no table entry needed
    if isinstance(request, dict):
        names, absent = sorted(table)[request["part"]::request["of"]], []
    else:
        names = [n for n in request if n in table]
        absent = [n for n in request if n not in table]
    sys.stdout.write(json.dumps({"names": names, "absent": absent, "default": sorted(core),
                                 "forced": {name: why for name, (_, why) in sorted(forced.items())},
                                 "preservable": sorted(preservable)}) + "\n")
    sys.stdout.flush()
    samples = _Samples(torch)
    samples.index()  # torch's OpInfos load in seconds: not on the first operator's clock
    for name in names:
        op, fn = table[name]
        kind = _schema_kind(op)
        by_default = name in core or name in forced
        try:
            # an operator export decomposes whatever the table says, outside the table: what an empty
            # table leaves of it (adjoint → transpose.int, which a table may keep or decompose)
            with torch.no_grad() if name in _NO_GRAD else contextlib.nullcontext():
                into, exported, inputs, reason = _trace(torch, samples, op, None if by_default else fn,
                                                        alone=name in forced and name not in core)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded, never fatal
            into, exported, inputs, reason = None, None, None, f"{type(exc).__name__}: {_first_line(exc)}"
        if into is None and by_default and kind != "functional":
            into, inputs, reason = _as_functional(torch, samples, op, reason, alone=name in forced and name not in core)
        sys.stdout.write(json.dumps({"op": name, "into": into, "kind": kind, "reason": reason,
                                     "exported": exported, "inputs": inputs}) + "\n")
        sys.stdout.flush()


def _as_functional(torch, samples, op, reason, *, alone: bool = False):
    """(targets, inputs, reason) of an ``out=`` or in-place operator no sample exported, as export
    gives them: an exported program never holds such a call (functionalization replaces it by its
    functional overload, and the result's copy into the given tensor is the program's output or
    input mutation), so what export leaves of ``foo.out`` is what it leaves of ``foo``. The
    functional overload is traced itself; None, None and the reasons when it has none or it fails."""
    functional = _functional_overload(torch, op)
    if functional is None:
        return None, None, reason
    name = overload_name(functional)
    try:
        into, _, inputs, why = _trace(torch, samples, functional, None, alone=alone)
    except Exception as exc:  # noqa: BLE001
        into, inputs, why = None, None, f"{type(exc).__name__}: {_first_line(exc)}"
    if into is None:
        return None, None, f"{reason}; as its functional overload {name}: {why}"
    return into, f"as its functional overload {name} ({inputs}); the call itself: {reason}", None


#: the arguments a factory's functional overload has that its out= overload lacks
_TENSOR_OPTIONS = frozenset({"dtype", "layout", "device", "pin_memory"})


def _functional_overload(torch, op):
    """The functional overload that functionalization calls for ``op`` (``out=`` or in-place): of
    the same name without the trailing ``_``, taking the same arguments but the ``out=`` ones
    (the functional overload may add defaulted ones: a factory's dtype, layout, device), fewest
    extra first; None when there is none."""
    args = [(a.name, str(a.type)) for a in op._schema.arguments if not a.is_out]
    base = op._opname
    if _schema_kind(op) == "inplace":
        base = base[:-1]
    packet = getattr(torch.ops.aten, base, None)
    if packet is None:
        return None
    best = None
    for overload in packet.overloads():
        candidate = getattr(packet, overload)
        schema = candidate._schema
        if _schema_kind(candidate) != "functional" or any(a.alias_info is not None for a in schema.arguments):
            continue
        theirs = [(a.name, str(a.type)) for a in schema.arguments]
        extra = [a for a in schema.arguments if (a.name, str(a.type)) not in args]
        if [x for x in theirs if x in args] != args or len(theirs) - len(extra) != len(args):
            continue
        if any(not a.has_default_value() and not a.kwarg_only for a in extra) or \
                any(not a.has_default_value() and a.name not in _TENSOR_OPTIONS for a in extra):
            continue
        if best is None or len(extra) < best[0]:
            best = (len(extra), candidate)
    return best[1] if best else None


#: Why torch.export decomposes an operator whatever the table says (``TorchTable.forced``).
FORCED_WHY = {
    "tagged": "tagged maybe_aliasing_or_mutating: export must know statically whether it aliases or mutates",
    "batch_norm": "native_batch_norm's schema is wrong: torch always replaces it",
    "metadata": "a metadata function: functionalization answers it",
    "aliasing": "CompositeImplicitAutograd, and it aliases or mutates an input (its schema says so): export "
                "cannot preserve it",
    "no_kernel": "CompositeImplicitAutograd without a kernel to preserve",
}


def _export_forced(torch) -> tuple[dict[str, tuple[object, str]], set[str]]:
    """(the ATen operators torch.export decomposes whatever the table says → (the overload, why),
    the CompositeImplicitAutograd ones it can preserve: those a table that lacks them keeps), as
    ``torch.export`` decides it (``torch._export.utils``: a CompositeImplicitAutograd operator is
    preserved only when functional, neither aliasing nor mutating; ``torch._decomp``: some are
    always decomposed)."""
    from torch._decomp import _should_decompose_because_unsafe_op  # noqa: PLC0415
    from torch._export.utils import _collect_all_valid_cia_ops_for_aten_namespace, _is_cia_op  # noqa: PLC0415
    from torch._subclasses.functional_tensor import FunctionalTensor  # noqa: PLC0415

    preservable = _collect_all_valid_cia_ops_for_aten_namespace()  # materializes every CIA operator too
    forced: dict[str, tuple[object, str]] = {}
    for packet_name in list(torch.ops.aten):
        packet = getattr(torch.ops.aten, packet_name)
        for op in packet.op_overloads():
            try:
                cia = _is_cia_op(op)
            except RuntimeError:  # a TorchScript-only overload (aten::add.t): not a dispatcher operator
                continue
            if _should_decompose_because_unsafe_op(op):
                why = "batch_norm" if op is torch.ops.aten.native_batch_norm.default else "tagged"
            elif not cia or op in preservable:
                continue
            elif op in FunctionalTensor.metadata_fns:
                why = "metadata"
            elif op._schema.is_mutable or any(a.alias_info is not None for a in op._schema.arguments):
                why = "aliasing"
            else:
                why = "no_kernel"
            forced[overload_name(op)] = (op, FORCED_WHY[why])
    return forced, {overload_name(op) for op in preservable}


def overload_name(op) -> str:
    """A torch ``OpOverload`` as opgov spells it: ``aten::add.Tensor``, ``aten::abs`` for the default
    overload. Reads the object's attributes only: no torch import here."""
    overload = op._overloadname
    base = f"{op.namespace}::{op._opname}"
    return base if overload == "default" else f"{base}.{overload}"


def _schema_kind(op) -> str:
    args = op._schema.arguments
    if any(a.is_out for a in args):
        return "out"
    if args and args[0].alias_info is not None and args[0].alias_info.is_write:
        return "inplace"
    return "functional"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else "")[:160]


#: samples exported per operator (their targets are united), seconds spent finding them, OpInfo
#: samples tried per OpInfo first and, after the captured calls, up to (``linalg.matrix_norm``'s
#: numeric ``ord`` comes after its strings)
_WANTED, _OP_SECONDS, _SAMPLES_PER_INFO = 3, 20.0, (8, 24)


def _trace(torch, samples, op, rule, *, alone: bool = False
           ) -> tuple[list[str] | None, list[str] | None, str | None, str | None]:
    """Export a module calling ``op`` on each of its sample inputs and run the default
    decompositions (with ``rule`` added to the table, for an operator the default table lacks;
    ``alone``: an empty table, for an operator export decomposes by itself).
    Returns (the union of the operators the decomposed programs hold, what the default table alone
    leaves of ``op`` when ``rule`` is given, where the inputs came from, None) or (None, None,
    None, why) when no sample exports.

    The samples that run eagerly are exported together first (one program calling the operator
    on each: one export, one decomposition run); when that fails, one by one; then those opgov's
    fake tensors refused (export fakes its inputs itself). When none exports, the samples are
    traced on real tensors (:func:`_trace_real`)."""
    chosen = _choose(samples, op)
    first: str | None = None
    if chosen:
        found, first = _export_samples(torch, op, rule, chosen, alone)
        if found is not None:
            return found
    deferred = [call for call in samples.deferred if all(call[1] is not c[1] for c in chosen)]
    if deferred and not alone:
        # opgov's fake tensors could not run them (a sparse compressed layout, a data-dependent
        # result): export fakes its inputs itself and may trace them
        found, why = _export_samples(torch, op, rule, deferred[:_WANTED], alone)
        if found is not None:
            return found
        first = first or why
    # (an empty table: export keeps the CompositeImplicitAutograd operators make_fx would decompose)
    real = None if alone else _trace_real(torch, op, rule, chosen + deferred, alone)
    if real is not None:
        into, exported, inputs = real
        why = first or (samples.errors[0] if samples.errors else "fake tensors cannot run it")
        return into, exported, f"{inputs}; torch.export of them: {why}", None
    if not chosen:
        why = f"; the first error: {samples.errors[0]}" if samples.errors else ""
        return None, None, None, f"no sample input fits the operator (torch's OpInfo samples, opgov's examples){why}"
    return None, None, None, f"no sample input exported; first error: {first}"


def _choose(samples, op) -> list:
    """Up to :data:`_WANTED` (source, args, kwargs) samples ``op`` accepts on fake tensors, found
    within :data:`_OP_SECONDS`."""
    start = time.monotonic()
    chosen: list = []
    for source, args, kwargs in _guarded(samples(op, start + _OP_SECONDS)):
        chosen.append((source, args, kwargs))
        if len(chosen) >= _WANTED or time.monotonic() - start > _OP_SECONDS:
            break
    return chosen


def _export_samples(torch, op, rule, chosen: list, alone: bool):
    """((targets, exported, inputs, None), None) from exporting the ``chosen`` samples together,
    else one by one (the union of those that export alone); (None, the first error) when none does."""
    first: str | None = None
    groups = [chosen] if len(chosen) > 1 else []
    groups += [[one] for one in chosen]
    for group in groups:
        try:
            into, exported = _export_group(torch, op, rule, [(a, k) for _, a, k in group], alone)
        except Exception as exc:  # noqa: BLE001 - those inputs do not export
            first = first or f"{type(exc).__name__}: {_first_line(exc)}"
            continue
        if len(group) == 1 and len(chosen) > 1:
            # the group failed: unite what every sample that exports alone gives
            done = [group[0]]
            for other in chosen[chosen.index(group[0]) + 1:]:
                try:
                    more, more_exported = _export_group(torch, op, rule, [(other[1], other[2])], alone)
                except Exception:  # noqa: BLE001, S112
                    continue
                into |= more
                if exported is not None and more_exported is not None:
                    exported |= more_exported
                done.append(other)
            group = done
        inputs = _sources(group)
        return (sorted(into), sorted(exported) if exported is not None else None, inputs, None), None
    return None, first


def _sources(group: list) -> str:
    """``3 OpInfo, 1 captured``: where the samples of ``group`` came from."""
    used: dict[str, int] = {}
    for source, *_ in group:
        used[source] = used.get(source, 0) + 1
    return ", ".join(f"{n} {s}" for s, n in used.items())


def _trace_real(torch, op, rule, candidates: list, alone: bool):
    """(targets, exported, inputs) of ``op`` traced by torch's ``make_fx`` on real tensors, for
    samples export cannot trace (a result that depends on the data, an operator without a fake
    kernel): each sample must run eagerly first; the function is functionalized and decomposed by
    the same table as export's (``rule`` added, or an empty table when ``alone``), so the graph is
    what torch's decompositions make of that call. None when no sample runs."""
    into: set[str] = set()
    exported: set[str] | None = set() if rule is not None else None
    done: list = []
    for source, args, kwargs in candidates[:3 * _WANTED]:
        if len(done) >= _WANTED:
            break
        call = _fit_real(torch, op, args, kwargs)
        if call is None:
            continue
        try:
            into |= _make_fx_ops(torch, op, rule, [call], alone)
            if exported is not None:
                exported |= _make_fx_ops(torch, op, None, [call], alone)
        except Exception:  # noqa: BLE001, S112 - torch cannot trace that call either
            continue
        done.append((source,))
    if not done:
        return None
    return sorted(into), sorted(exported) if exported is not None else None, f"{TRACED_BY_MAKE_FX}: {_sources(done)}"


def _fit_real(torch, op, args: list, kwargs: dict):
    """(args, kwargs) of a call of ``op`` that runs on real tensors (copies: the sample is kept
    intact), with result tensors for an ``out=`` overload; None when it raises."""
    from torch.utils import _pytree  # noqa: PLC0415

    def copy(value):
        return _pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, value)

    try:
        if _schema_kind(op) == "out":
            kwargs = _with_outs(torch, op, args, kwargs, copy, torch.empty_like)
            if kwargs is None:
                return None
        op(*copy(args), **copy(kwargs))
    except Exception:  # noqa: BLE001 - the sample does not run here
        return None
    return args, kwargs


def _with_outs(torch, op, args: list, kwargs: dict, wrap, like) -> dict | None:
    """``kwargs`` of a sample of the functional form, with a tensor for each of the ``out=``
    overload ``op``'s out arguments: ``like`` of each result of the functional call (its arguments
    passed through ``wrap``); None when the results do not match the out arguments."""
    from torch.utils import _pytree  # noqa: PLC0415

    outs = [a.name for a in op._schema.arguments if a.is_out]
    kwargs = {k: v for k, v in kwargs.items() if k not in outs}
    result = getattr(torch.ops.aten, op._opname)(*wrap(args), **wrap(kwargs))
    results = [r for r in _pytree.tree_leaves(result) if isinstance(r, torch.Tensor)]
    if len(results) != len(outs):
        return None
    return {**kwargs, **{name: like(r) for name, r in zip(outs, results, strict=True)}}


def _make_fx_ops(torch, op, rule, calls, alone: bool) -> set[str]:
    """The operators of ``op`` called on each of ``calls`` (real tensors) as ``make_fx`` traces it,
    functionalized and decomposed by export's default table (``alone``: none), ``rule`` added.
    A decomposition that mutates is functionalized again (as export's functional graph has it); a
    copy into an input (the mutation of an in-place call) is the program's, not an operator's."""
    from torch.export import default_decompositions  # noqa: PLC0415
    from torch.fx.experimental.proxy_tensor import make_fx  # noqa: PLC0415
    from torch.func import functionalize  # noqa: PLC0415

    table = {} if alone else dict(default_decompositions().materialize())
    if rule is not None:
        table[op] = rule
    tensors = _tensor_leaves(torch, calls)
    fn = _Call(op, calls)
    for _ in range(3):
        graph = make_fx(functionalize(fn, remove="mutations"), decomposition_table=table,
                        tracing_mode="real", _error_on_data_dependent_ops=False)(*[t.clone() for t in tensors])
        if not any(n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)
                   and n.target._schema.is_mutable and not _copies_into_input(n) for n in graph.graph.nodes):
            break
        fn = graph
    else:
        raise ValueError("the traced graph still mutates")  # not what an exported program holds
    numbers = _returns_numbers(op)
    # as export's graph: a call whose result nothing uses is gone (but the reads of the numbers an
    # operator returns, which a graph cannot output on real tensors)
    graph.graph.eliminate_dead_code(is_impure_node=lambda n: n.is_impure() or (numbers and _reads_number(n)))
    graph.recompile()
    call = _Call(op, calls)
    if not _reproduces(torch, graph, call, tensors):
        raise ValueError("the traced graph does not compute what the call computes")
    constant = any(n.op == "get_attr" for n in graph.graph.nodes)
    if constant and not _reproduces(torch, graph, call, _redrawn(torch, tensors)):
        # a tensor the trace holds as a constant, which other values of the inputs change: computed
        # where make_fx does not see (a kernel's raw memory). One that only the shapes decide is the
        # exported program's constant (export specializes shapes).
        raise ValueError("the traced graph holds a constant it did not derive from its inputs")
    found = _program_ops(torch, graph, skip=_copies_into_input)
    if numbers and not any(_reads_number(n) for n in graph.graph.nodes):
        raise ValueError("the traced graph reads no number from a tensor")  # computed where make_fx does not see
    if not found and op._schema.returns and not constant:
        # a result computed where make_fx does not see it: nothing to learn, left unknown (an
        # operator that returns nothing, a check of its arguments' values, leaves nothing, as in export)
        raise ValueError("the traced graph calls no operator")
    return found


def _returns_numbers(op) -> bool:
    """Whether ``op`` returns numbers only (``is_nonzero``'s bool, a quantization's scale and zero
    point): what they are computed from is the tensors' data, read through ``_local_scalar_dense``."""
    kinds = [r.type.kind() for r in op._schema.returns]
    return bool(kinds) and all(k in ("BoolType", "IntType", "FloatType", "NumberType", "SymIntType",
                                     "SymFloatType", "SymBoolType") for k in kinds)


def _reads_number(node) -> bool:
    """A graph node reading a tensor's value as a number (``_local_scalar_dense``, ``item``)."""
    return node.op == "call_function" and str(node.target) in ("aten._local_scalar_dense.default", "aten.item.default")


def _redrawn(torch, tensors) -> tuple:
    """``tensors`` with the floating-point ones drawn again (same shapes and dtypes, other values);
    the others (indices, masks) as they are. Raises when none is floating: nothing would change."""
    drawn = tuple(torch.randn_like(t) if t.is_floating_point() and t.layout == torch.strided else t for t in tensors)
    if all(a is b for a, b in zip(drawn, tensors, strict=True)):
        raise ValueError("the traced graph holds a constant, and no input can show it does not depend on the data")
    return drawn


def _reproduces(torch, graph, fn, tensors) -> bool:
    """Whether ``graph`` computes on ``tensors`` what ``fn`` does, into non-empty results (a kernel
    that writes its result through raw memory leaves a graph that does not: make_fx sees only the
    calls of the dispatcher)."""
    from torch.utils import _pytree  # noqa: PLC0415

    got = [t for t in _pytree.tree_leaves(graph(*[t.clone() for t in tensors])) if isinstance(t, torch.Tensor)]
    want = [t for t in _pytree.tree_leaves(fn(*[t.clone() for t in tensors])) if isinstance(t, torch.Tensor)]
    if len(got) != len(want) or any(t.numel() == 0 for t in want):
        return False  # (an empty result shows nothing of what the kernel computes)
    for a, b in zip(got, want, strict=True):
        if a.shape != b.shape or a.dtype != b.dtype or a.layout != b.layout:
            return False
        if a.layout != torch.strided:  # a sparse result: its values where they are
            a, b = a.to_dense(), b.to_dense()
        if a.is_floating_point() or a.is_complex():
            if not torch.allclose(a, b, equal_nan=True):
                return False
        elif not torch.equal(a, b):
            return False
    return True


def _copies_into_input(node) -> bool:
    """A functionalized graph's copy into one of its inputs: an in-place call's mutation."""
    return str(node.target).startswith("aten.copy_") and getattr(node.args[0], "op", None) == "placeholder"


def _guarded(generator):
    """``generator``'s items until it raises (a sample input builder that fails ends the samples)."""
    while True:
        try:
            yield next(generator)
        except StopIteration:
            return
        except Exception:  # noqa: BLE001
            return


def _export_group(torch, op, rule, calls, alone: bool = False) -> tuple[set[str], set[str] | None]:
    """(what ``op`` called on each of ``calls`` becomes in an exported program decomposed by the
    default table (``alone``: by an empty one), with ``rule`` added when given; when given, what the
    default table alone leaves)."""
    from torch.export import default_decompositions, export  # noqa: PLC0415

    program = export(_Call(op, calls), _tensor_leaves(torch, calls), strict=False)
    table = {} if alone else default_decompositions()
    exported = None
    if rule is not None:
        exported = _program_ops(torch, program.run_decompositions(default_decompositions()))
        table[op] = rule
    return _program_ops(torch, program.run_decompositions(table)), exported


class _Call:
    """Built on demand as a ``torch.nn.Module`` (torch is imported in the child only): calls one
    operator on each sample's tensors (module inputs) and its other arguments (constants)."""

    def __new__(cls, op, calls):
        import torch  # noqa: PLC0415
        from torch.utils import _pytree  # noqa: PLC0415

        leaves, spec = _pytree.tree_flatten(calls)
        where = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

        class Call(torch.nn.Module):
            def forward(self, *tensors):
                filled = list(leaves)
                for i, t in zip(where, tensors, strict=True):
                    filled[i] = t
                outs = []
                for a, k in _pytree.tree_unflatten(filled, spec):
                    out = op(*a, **k)
                    outs += [x for x in _pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]
                return tuple(outs)

        return Call()


def _tensor_leaves(torch, value) -> tuple:
    from torch.utils import _pytree  # noqa: PLC0415

    return tuple(leaf for leaf in _pytree.tree_leaves(value) if isinstance(leaf, torch.Tensor))


def _program_ops(torch, program, skip=None) -> set[str]:
    """The ATen (and other) operators an exported program calls, without graph operators
    (assertions, symbolic sizes: :mod:`opgov.core.graph_ops`) and Python's own (``getitem``)."""
    from opgov.core.graph_ops import GRAPH_OPS  # noqa: PLC0415

    found = set()
    for node in program.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        if skip is not None and skip(node):
            continue
        name = overload_name(node.target)
        if name in GRAPH_OPS or _schema_is_graph(node.target._schema):
            continue
        found.add(name)
    return found


def _schema_is_graph(schema) -> bool:
    """As :func:`opgov.core.graph_ops.schema_reason` decides it: only symbolic returns, or no
    return and no argument written."""
    returns = [str(r.type) for r in schema.returns]
    if returns:
        return all(t.startswith("Sym") for t in returns)
    return not schema.is_mutable


def _stem(base: str) -> str:
    """The forward operator's name in an operator's (``nll_loss2d`` of ``nll_loss2d_backward``)."""
    stem = base.lstrip("_")
    for suffix in ("_backward_data", "_backward_input", "_backward", "_forward", "_legit_no_training",
                   "_legit_functional", "_legit", "_no_update", "_impl_index", "_with_indices"):
        stem = stem.replace(suffix, "")
    return stem


class _Samples:
    """Sample inputs for an ATen operator, most trusted first: torch's own OpInfo samples
    (``common_methods_invocations.op_db``) of the operators of its name; the calls of that
    operator made while those run forwards and backwards (``native_batch_norm_backward``,
    ``col2im`` from ``fold``); then opgov's own examples built from the schema."""

    def __init__(self, torch) -> None:
        self.torch = torch
        self._index: dict[str, list] | None = None
        self.errors: list[str] = []
        #: calls fake tensors cannot run though they may be valid (data-dependent results, no fake
        #: kernel): tried on real tensors when nothing exports (:func:`_trace_real`)
        self.deferred: list = []

    def index(self) -> dict[str, list]:
        if self._index is None:
            index: dict[str, list] = {}
            try:
                from torch.testing._internal.common_methods_invocations import op_db  # noqa: PLC0415
            except ImportError:  # torch's test helpers need numpy and expecttest: opgov's examples only
                op_db = []
            for info in op_db:
                keys = {info.name.replace(".", "_"), info.name.rpartition(".")[2], info.aten_name or ""}
                keys |= {a.name.replace(".", "_") for a in info.aliases}
                keys |= {a.name.rpartition(".")[2] for a in info.aliases}
                for key in keys - {""}:
                    index.setdefault(key, []).append(info)
            self._index = index
        return self._index

    def infos(self, base: str) -> list:
        index = self.index()
        stem = base.rstrip("_") if not base.endswith("__") else base
        found: list = []
        for key in (stem, stem.lstrip("_"), stem.removeprefix("native_"), stem.removeprefix("_native_")):
            for info in index.get(key, ()):
                if all(info is not known for known in found):  # (OpInfo == compares fields)
                    found.append(info)
        return found

    def related(self, base: str) -> list:
        """OpInfos whose forward or backward may call ``base`` (``x_backward`` → ``x``)."""
        stem = _stem(base)
        names = {stem, stem.rpartition("_")[0], re.sub(r"\d+d$", "", stem), "pad" if "_pad" in stem else stem, stem.removeprefix("native_"), stem.removeprefix("cudnn_"), stem.removeprefix("fused_"),
                 stem.replace("upsample_", "interpolate"), "fold" if stem in ("col2im", "im2col") else stem,
                 "unfold" if stem in ("col2im", "im2col") else stem, "interpolate" if stem.startswith("upsample") else stem}
        found: list = []
        for name in names:
            for info in self.infos(name):
                if all(info is not known for known in found):  # (OpInfo == compares fields)
                    found.append(info)
        return found

    def modules(self, base: str):
        """(a runner, its samples) for torch's ModuleInfos (``common_modules.module_db``) of the
        operator's name: nn.LSTMCell for ``lstm_cell``, nn.RNN for ``rnn_tanh``: the samples are the
        modules built and called as torch's tests do."""
        from types import SimpleNamespace  # noqa: PLC0415

        torch = self.torch
        stem = base.lstrip("_").replace("rnn_tanh", "rnn").replace("rnn_relu", "rnn").replace("_", "")
        # and the module of a *_backward operator's forward (nll_loss2d_backward: nn.NLLLoss)
        stems = {stem, re.sub(r"\d+d$", "", _stem(base)).replace("_", "")}
        try:
            from torch.testing._internal.common_modules import module_db  # noqa: PLC0415
        except ImportError:
            return
        for info in module_db:
            if info.name.rpartition(".")[2].lower() not in stems:
                continue
            try:
                built = [SimpleNamespace(input=info.module_cls(*m.constructor_input.args, **m.constructor_input.kwargs),
                                         args=m.forward_input.args, kwargs=m.forward_input.kwargs)
                         for m in info.module_inputs_func(info, device="cpu", dtype=torch.float32,
                                                          requires_grad=False, training=False)[:8]]
            except Exception:  # noqa: BLE001, S112 - a ModuleInfo that cannot build its samples here
                continue
            yield SimpleNamespace(op=lambda module, *a, **k: module(*a, **k)), iter(built)

    def raw(self, info, dtype):
        try:
            yield from info.sample_inputs("cpu", dtype, requires_grad=False)
        except Exception:  # noqa: BLE001 - an OpInfo that cannot build its samples here
            return

    def dtype_of(self, info):
        torch = self.torch
        try:
            dtypes = info.supported_dtypes("cpu")
        except Exception:  # noqa: BLE001
            return torch.float32
        for dtype in (torch.float32, torch.int64, torch.bool, torch.float64):
            if dtype in dtypes:
                return dtype
        return next(iter(dtypes), torch.float32)

    def fit(self, source: str, op, kind: str, args: list, kwargs: dict, *, trusted: bool = False):
        """:func:`_fit` of one sample; one fake tensors cannot run is kept (with ``source``) in
        :attr:`deferred`. ``trusted``: a call valid by construction (:data:`_BUILT`), kept whatever
        fake tensors refused (a check of the indices' values): real tensors run it or refuse it."""
        deferred: list = []
        call = _fit(self.torch, op, kind, args, kwargs, self.errors, deferred)
        if call is None and trusted and not deferred:
            deferred.append((args, kwargs))
        if deferred and len(self.deferred) < 2 * _WANTED:
            self.deferred.append((source, *deferred[0]))
        return call

    def __call__(self, op, until: float):
        """(source, args, kwargs) of the samples ``op`` accepts on fake tensors, most trusted first
        (for an operator :data:`_BUILT` describes, its calls only):
        OpInfo samples, calls captured running related OpInfos and ModuleInfos, more OpInfo samples
        (``linalg.matrix_norm``'s numeric ``ord`` after its strings), opgov's examples; until ``until``."""
        self.errors = []  # the first error of a sample that does not fit
        self.deferred = []
        kind = _schema_kind(op)
        built = list(self.built(op, kind))
        if built:  # the calls :data:`_BUILT` describes for it: those only (others may crash a kernel)
            yield from built
            return
        steps = (self.opinfo_samples(op, kind, until, 0, _SAMPLES_PER_INFO[0]), self.captured(op, kind, until),
                 self.packed(op, kind, until), self.sparse_parts(op, kind),
                 self.opinfo_samples(op, kind, until, *_SAMPLES_PER_INFO), self.examples(op, kind))
        for step in steps:
            for call in step:
                if time.monotonic() > until:
                    return
                yield call

    def opinfo_samples(self, op, kind: str, until: float, first: int, last: int):
        """The OpInfo samples ``first`` to ``last`` of each OpInfo of ``op``'s name that fit it."""
        for info in self.infos(op._opname)[:4]:
            ordered = _varied(list(_take(self.raw(info, self.dtype_of(info)), _SAMPLES_PER_INFO[1])))
            for sample in ordered[first:last]:
                if time.monotonic() > until:
                    return
                call = self.fit("OpInfo", op, kind, [sample.input, *sample.args], dict(sample.kwargs))
                if call is not None:
                    yield ("OpInfo", *call)

    def captured(self, op, kind: str, until: float):
        """The calls of ``op`` made running its related OpInfos' and ModuleInfos' samples that fit it."""
        base = op._opname
        related = self.infos(base)[:4]
        related += [info for info in self.related(base) if all(info is not known for known in related)]
        for info, inputs in [*((i, None) for i in related), *self.modules(base)]:
            if time.monotonic() > until:
                return
            inputs = inputs if inputs is not None else self.raw(info, self.dtype_of(info))
            for args, kwargs in _capture(self.torch, op, info, inputs):
                call = self.fit("captured", op, kind, args, kwargs)
                if call is not None:
                    yield ("captured", *call)

    def packed(self, op, kind: str, until: float):
        """For an RNN's packed-sequence overload (``lstm.data``: ``data``, ``batch_sizes``, ...), the
        captured calls of its padded sibling (``lstm.input``) as a packed sequence whose sequences
        all run the whole length: ``data`` the time-major input's rows, ``batch_sizes`` the batch
        size at each step; the other arguments matched by name."""
        torch = self.torch
        names = [a.name for a in op._schema.arguments]
        sibling = getattr(getattr(torch.ops.aten, op._opname), "input", None)
        if names[:2] != ["data", "batch_sizes"] or sibling is None:
            return
        for _, args, kwargs in self.captured(sibling, _schema_kind(sibling), until):
            given = dict(zip([a.name for a in sibling._schema.arguments], args, strict=False)) | kwargs
            x = given.get("input")
            if not isinstance(x, torch.Tensor) or x.dim() != 3:
                continue
            if given.get("batch_first"):
                x = x.transpose(0, 1)
            given["data"] = x.reshape(x.shape[0] * x.shape[1], x.shape[2])
            given["batch_sizes"] = torch.full((x.shape[0],), x.shape[1], dtype=torch.int64)
            if any(name not in given for name in names):
                continue
            call = self.fit("sibling", op, kind, [given[name] for name in names], {})
            if call is not None:
                yield ("sibling", *call)

    def sparse_parts(self, op, kind: str):
        """For a sparse tensor's constructor (``sparse_coo_tensor.indices``, ``sparse_csr_tensor``,
        ``_sparse_compressed_tensor_unsafe``: arguments named for the parts), the parts of a real
        sparse tensor torch made of a dense one, in the layout the operator's name says."""
        torch = self.torch
        names = [a.name for a in op._schema.arguments]
        layouts = {"bsr": torch.sparse_bsr, "bsc": torch.sparse_bsc, "csc": torch.sparse_csc}
        layout = next((v for k, v in layouts.items() if k in op._opname), torch.sparse_csr)
        dense = torch.rand(4, 4) * (torch.arange(16).reshape(4, 4) % 3 != 0)
        if names[:2] == ["indices", "values"]:
            sparse = dense.to_sparse().coalesce()
            parts = {"indices": sparse.indices(), "values": sparse.values()}
            layout = torch.sparse_coo
        elif "values" in names and any(n in names for n in ("crow_indices", "ccol_indices", "compressed_indices")):
            sparse = dense.to_sparse(layout=layout, blocksize=(2, 2) if layout in (torch.sparse_bsr, torch.sparse_bsc)
                                     else None)
            rows = layout in (torch.sparse_csr, torch.sparse_bsr)
            compressed = sparse.crow_indices() if rows else sparse.ccol_indices()
            plain = sparse.col_indices() if rows else sparse.row_indices()
            parts = {"crow_indices": compressed, "ccol_indices": compressed, "compressed_indices": compressed,
                     "col_indices": plain, "row_indices": plain, "plain_indices": plain, "values": sparse.values()}
        else:
            return
        parts.update({"size": list(dense.shape), "layout": layout})
        args = [parts[a.name] for a in op._schema.arguments if not a.kwarg_only and a.name in parts]
        kwargs = {a.name: parts[a.name] for a in op._schema.arguments if a.kwarg_only and a.name in parts}
        for size_given in (True, False):  # the overload with a size, and the one without
            if not size_given:
                args = [a for a in args if a is not parts["size"]]
            call = self.fit("sparse", op, kind, list(args), dict(kwargs))
            if call is not None:
                yield ("sparse", *call)
                return

    def built(self, op, kind: str):
        """The calls :data:`_BUILT` describes for ``op`` (shapes that must agree, values an
        argument needs: what the schema alone cannot say), built as real tensors, that fit it."""
        for args, kwargs in _BUILT.get(overload_name(op).removeprefix("aten::"), ()):
            call = self.fit("built", op, kind, [_built(self.torch, a) for a in args],
                            {k: _built(self.torch, v) for k, v in kwargs.items()}, trusted=True)
            if call is not None:
                yield ("built", *call)

    def examples(self, op, kind: str):
        """opgov's examples built from ``op``'s schema that fit it."""
        examples = _examples(op._schema, device="cpu")
        while True:
            try:
                args, kwargs = next(examples)
            except (StopIteration, _Unsupported):
                return
            call = self.fit("opgov", op, kind, args, kwargs)
            if call is not None:
                yield ("opgov", *call)


#: inputs of operators whose samples cannot be built from the schema alone: operator (overload
#: name) → calls, each (args, kwargs). A value is plain, a list of values, or a tagged tuple:
#: ``("randn", shape)`` a random float32 tensor, ``("tensor", data, dtype)`` one of these values,
#: ``("sparse", shape)`` a random sparse COO tensor (a third of it zeros), ``("dtype", name)`` a
#: ``torch.dtype``, ``("layout", name)`` a ``torch.layout``. torch still runs every call; the facts
#: are what export (or make_fx) makes of it.
_BUILT: dict[str, tuple] = {
    "thnn_conv2d": (((("randn", (1, 2, 5, 5)), ("randn", (3, 2, 3, 3)), [3, 3], ("randn", (3,)), [1, 1], [1, 1]), {}),
                    ((("randn", (1, 2, 5, 5)), ("randn", (3, 2, 3, 3)), [3, 3]), {})),
    "trace_backward": (((("randn", ()), [3, 3]), {}),),
    # conv_tbc: input (time, batch, in), weight (width, in, out), bias (out); self: the output's grad
    "conv_tbc_backward": (((("randn", (5, 2, 4)), ("randn", (5, 2, 3)), ("randn", (3, 3, 4)), ("randn", (4,)), 1),
                           {}),),
    "affine_grid_generator": (((("randn", (2, 2, 3)), [2, 3, 4, 5], False), {}),
                              ((("randn", (2, 3, 4)), [2, 3, 2, 4, 5], True), {})),
    "affine_grid_generator.out": (((("randn", (2, 2, 3)), [2, 3, 4, 5], False), {}),),
    "value_selecting_reduction_backward": (((("randn", (3,)), 1, ("tensor", [0, 3, 1], "int64"), [3, 4], False), {}),
                                           ((("randn", (3, 1)), 1, ("tensor", [[2], [0], [1]], "int64"), [3, 4], True),
                                            {})),
    "rnn_tanh.input": (((("randn", (5, 2, 3)), ("randn", (1, 2, 4)),
                         [("randn", (4, 3)), ("randn", (4, 4)), ("randn", (4,)), ("randn", (4,))],
                         True, 1, 0.0, False, False, False), {}),),
    "rnn_tanh.data": (((("randn", (10, 3)), ("tensor", [2, 2, 2, 2, 2], "int64"), ("randn", (1, 2, 4)),
                        [("randn", (4, 3)), ("randn", (4, 4)), ("randn", (4,)), ("randn", (4,))],
                        True, 1, 0.0, False, False), {}),),
    "_reshape_from_tensor": (((("randn", (2, 3)), ("tensor", [3, 2], "int64")), {}),),
    "unflatten_dense_tensors": (((("randn", (6,)), [("randn", (2, 2)), ("randn", (2,))]), {}),),
    "gradient.tensorarrayint": (((("randn", (4,)),), {"spacing": [("tensor", [0.0, 1.0, 3.0, 4.0], "float32")],
                                                       "dim": 0}),),
    "fake_quantize_per_channel_affine": (((("randn", (2, 3)), ("tensor", [0.1, 0.2, 0.3], "float32"),
                                           ("tensor", [0, 1, 2], "int32"), 1, 0, 255), {}),),
    "fake_quantize_per_tensor_affine.tensor_qparams": (((("randn", (2, 3)), ("tensor", 0.1, "float32"),
                                                         ("tensor", 3, "int32"), 0, 255), {}),),
    # a packed sequence of 3 sequences of lengths 3, 2, 1: 6 rows, batch sizes 3, 2, 1
    "_pack_padded_sequence_backward": (((("randn", (6, 3)), [3, 3, 3], ("tensor", [3, 2, 1], "int64"), False), {}),),
    # a fused LSTM cell's backward (batch 2, hidden 3): the gradients of hy and cy, cx, cy, the gates (2, 12)
    "_thnn_fused_lstm_cell_backward": (((("randn", (2, 3)), ("randn", (2, 3)), ("randn", (2, 3)), ("randn", (2, 3)),
                                         ("randn", (2, 12)), True), {}),),
    # a GRU cell's gates (batch 2, hidden 4): gates (2, 12)
    "_thnn_differentiable_gru_cell_backward": (((("randn", (2, 4)), ("randn", (2, 12)), ("randn", (2, 12)),
                                                 ("randn", (2, 4)), ("randn", (12,)), ("randn", (12,))), {}),),
    # sparse COO inputs: the kernels of torch's sparse tensors
    "_sparse_sum": (((("sparse", (3, 4)),), {}),),
    "_sparse_sum.dtype": (((("sparse", (3, 4)),), {"dtype": ("dtype", "float64")}),),
    "_sparse_sum.dim_dtype": (((("sparse", (3, 4)), [0]), {"dtype": ("dtype", "float64")}),),
    "_sparse_softmax.int": (((("sparse", (3, 4)), 1), {}),),
    "_sparse_log_softmax.int": (((("sparse", (3, 4)), 1), {}),),
    # the arguments of a sparse tensor for the checks of its constructors: a 2 × 2 tensor of 2 values
    # (COO indices; compressed: a row or column pointer and its indices), blocks of 2 × 2 for BSR/BSC
    "_validate_sparse_coo_tensor_args": (((("tensor", [[0, 1], [1, 0]], "int64"), ("randn", (2,)), [2, 2]), {}),),
    "_validate_sparse_csr_tensor_args": (((("tensor", [0, 1, 2], "int64"), ("tensor", [1, 0], "int64"),
                                           ("randn", (2,)), [2, 2]), {}),),
    "_validate_sparse_csc_tensor_args": (((("tensor", [0, 1, 2], "int64"), ("tensor", [1, 0], "int64"),
                                           ("randn", (2,)), [2, 2]), {}),),
    "_validate_sparse_bsr_tensor_args": (((("tensor", [0, 1, 2], "int64"), ("tensor", [1, 0], "int64"),
                                           ("randn", (2, 2, 2)), [4, 4]), {}),),
    "_validate_sparse_bsc_tensor_args": (((("tensor", [0, 1, 2], "int64"), ("tensor", [1, 0], "int64"),
                                           ("randn", (2, 2, 2)), [4, 4]), {}),),
    "_validate_sparse_compressed_tensor_args": (((("tensor", [0, 1, 2], "int64"), ("tensor", [1, 0], "int64"),
                                                  ("randn", (2,)), [2, 2], ("layout", "sparse_csr")), {}),),
    # a packed sequence of 3 sequences of lengths 3, 2, 1 (6 rows of width 2), padded to length 3
    "_pad_packed_sequence": (((("randn", (6, 2)), ("tensor", [3, 2, 1], "int64"), False, 0.0, 3), {}),),
    "_rowwise_prune": (((("randn", (4, 3)), ("tensor", [True, False, True, True], "bool"), ("dtype", "int32")), {}),),
    "_test_check_tensor": (((("tensor", [True], "bool"),), {}),),
    "is_nonzero": (((("tensor", [1.5], "float32"),), {}), ((("tensor", [0.0], "float32"),), {})),
    # a sparse COO self and mat1 (3 × 2, 3 × 3), a dense mat2 (3 × 2)
    "sspaddmm": (((("sparse", (3, 2)), ("sparse", (3, 3)), ("randn", (3, 2))), {}),),
    "smm": (((("sparse", (3, 3)), ("randn", (3, 2))), {}),),
    # embedding_bag (mode sum) of 2 bags of 2 indices into 5 embeddings of width 3
    "_embedding_bag_sparse_backward": (((("randn", (2, 3)), ("tensor", [0, 1, 2, 3], "int64"),
                                         ("tensor", [0, 2], "int64"), ("tensor", [0, 0, 1, 1], "int64"),
                                         ("tensor", [2, 2], "int64"), 5, False, 0, None), {}),),
}


def _built(torch, spec):
    """The value :data:`_BUILT`'s ``spec`` describes."""
    if isinstance(spec, list):
        return [_built(torch, v) for v in spec]
    if not isinstance(spec, tuple) or not spec or spec[0] not in ("randn", "tensor", "sparse", "dtype", "layout"):
        return spec
    tag, *rest = spec
    if tag in ("dtype", "layout"):
        return getattr(torch, rest[0])
    dtype = getattr(torch, rest[1]) if len(rest) > 1 else torch.float32
    if tag == "tensor":
        return torch.tensor(rest[0], dtype=dtype)
    if tag == "sparse":
        dense = torch.rand(tuple(rest[0]))
        return (dense * (torch.arange(dense.numel()).reshape(dense.shape) % 3 != 0)).to_sparse().coalesce()
    return torch.randn(tuple(rest[0]), dtype=dtype)


def _varied(samples: list) -> list:
    """``samples`` with the first of each way of calling first (which arguments are given: linear
    with and without its bias), then the others in torch's order: the targets united over a few
    samples are those of every way of calling the operator, not of the first one only."""
    def given(sample) -> tuple:
        args = [sample.input, *sample.args]
        return len(args), tuple(a is None for a in args), tuple(sorted(k for k, v in sample.kwargs.items()
                                                                       if v is not None))

    seen: set = set()
    first: list = []
    for sample in samples:
        key = given(sample)
        if key not in seen:
            seen.add(key)
            first.append(sample)
    return first + [sample for sample in samples if all(sample is not f for f in first)]


def _take(iterable, n: int, first: int = 0):
    """The items ``first`` to ``n`` of ``iterable``."""
    for i, item in enumerate(iterable):
        if i >= n:
            return
        if i >= first:
            yield item


def _fit(torch, op, kind: str, args: list, kwargs: dict, errors: list | None = None, deferred: list | None = None):
    """(args, kwargs) that ``op`` accepts, or None: called on fake tensors (shapes and dtypes only:
    no kernel runs, so an input a CPU kernel does not check cannot crash the process). A sample of
    the functional form gets result tensors for an ``out=`` overload; copies for an in-place one.
    Input shapes are static, as export makes them when no dynamic shape is asked for. A call fake
    tensors cannot answer (:func:`_fake_cannot`) is added to ``deferred``."""
    from torch._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily  # noqa: PLC0415
    from torch.fx.experimental.symbolic_shapes import ShapeEnv  # noqa: PLC0415
    from torch.utils import _pytree  # noqa: PLC0415

    args, kwargs = _pytree.tree_map(lambda x: x.clone() if isinstance(x, torch.Tensor) else x, (args, kwargs))
    args, kwargs = _coerce(torch, op._schema, args, kwargs)
    try:
        # a shape environment, as export has: data-dependent sizes (argwhere) become symbols
        with FakeTensorMode(shape_env=ShapeEnv(), static_shapes=True) as mode:
            def fake(value):
                return _pytree.tree_map(lambda x: mode.from_tensor(x) if isinstance(x, torch.Tensor) else x, value)

            def real_like(r):  # real result tensors: the module's inputs at export
                with unset_fake_temporarily():
                    return torch.empty(tuple(int(d) for d in r.shape), dtype=r.dtype)

            if kind == "out":
                kwargs = _with_outs(torch, op, args, kwargs, fake, real_like)
                if kwargs is None:
                    return None
            op(*fake(args), **fake(kwargs))
    except Exception as exc:  # noqa: BLE001 - the sample does not fit this overload
        if errors is not None and not errors:
            errors.append(f"{type(exc).__name__}: {_first_line(exc)}")
        if deferred is not None and _fake_cannot(exc):
            deferred.append((args, kwargs))
        return None
    return args, kwargs


#: errors of fake tensors, not of the input: a result that depends on the data, an operator without
#: a fake (meta) kernel, a kernel that reads the data
_FAKE_ONLY = ("DataDependentOutputException", "DynamicOutputShapeException", "UnsupportedOperatorException",
              "GuardOnDataDependentSymNode", "PendingUnbackedSymbolNotFound")
_FAKE_ONLY_WORDS = ("data is not allocated yet", "Cannot access storage", "has no data", "symbolic sizes",
                    "Please convert all Tensors to FakeTensors", "NYI")


def _fake_cannot(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a call on fake tensors, is fake tensors' limit rather than the input's."""
    return type(exc).__name__ in _FAKE_ONLY or any(w in str(exc) for w in _FAKE_ONLY_WORDS)


#: ATen's reduction enum (at::Reduction) by nn.functional's names
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _coerce(torch, schema, args: list, kwargs: dict) -> tuple[list, dict]:
    """A sample of a sibling overload made to fit ``schema``'s types (:func:`_fit_type`), and given
    the required arguments it lacks (:func:`_missing`: ``linalg_cond.p_str``'s ``p`` from
    ``linalg_cond``'s samples)."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    args = [_fit_type(torch, v, str(positional[i].type), positional[i].name) if i < len(positional) else v
            for i, v in enumerate(args)]
    types = {a.name: str(a.type) for a in schema.arguments}
    kwargs = {k: _fit_type(torch, v, types[k], k) if k in types else v for k, v in kwargs.items()}
    return _missing(torch, schema, args, kwargs)


def _fit_type(torch, value, typ: str, name: str = ""):
    """``value`` as the type ``typ`` takes it: a one-element tensor's number where a ``Scalar`` is
    asked (``xlogy.Scalar_Self`` from ``xlogy``'s samples), a 0-dim tensor where a number is given
    for a ``Tensor`` (``fill.Tensor``), an int64 tensor where a list of ints is given for one and
    the list where a 1-D integer tensor is given for an ``int[]`` (``ctc_loss``'s lengths), ATen's
    reduction enum for nn.functional's name."""
    inner = _inner(typ)
    if inner == "int" and name == "reduction" and value in _REDUCTIONS:  # nn.functional's "mean"
        return _REDUCTIONS[value]
    if inner in ("number", "Scalar") and isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.item()
    if inner == "Tensor" and isinstance(value, (bool, int, float)):
        return torch.tensor(value)
    if inner == "Tensor" and isinstance(value, (list, tuple)) and value and all(type(v) is int for v in value):
        return torch.tensor(value, dtype=torch.int64)
    if inner in ("List[int]", "int[]") and isinstance(value, torch.Tensor) and value.dim() == 1 \
            and not value.is_floating_point() and not value.is_complex():
        return [int(v) for v in value.tolist()]
    return value


def _missing(torch, schema, args: list, kwargs: dict) -> tuple[list, dict]:
    """``args`` and ``kwargs`` with the arguments ``schema`` requires (no default) that a sibling's
    sample lacks, valued as opgov's examples value them (:func:`_plain`; a dtype is the sample's);
    unchanged when a missing one is a tensor or has no example value."""
    given = len(args)
    missing = [a for i, a in enumerate(a for a in schema.arguments if not a.kwarg_only) if i >= given
               and not a.has_default_value() and a.name not in kwargs and not a.is_out]
    missing += [a for a in schema.arguments if a.kwarg_only and not a.has_default_value()
                and a.name not in kwargs and not a.is_out]
    if not missing or any("Tensor" in str(a.type) for a in missing):
        return args, kwargs
    tensors = [x for x in [*args, *kwargs.values()] if isinstance(x, torch.Tensor)]
    dtype = tensors[0].dtype if tensors else torch.float32
    shape = tuple(tensors[0].shape) if tensors else (2, 2)
    context = _Context(torch, schema, shape, dtype, "cpu")
    args, kwargs = list(args), dict(kwargs)
    try:
        for arg in missing:
            value = None if _is_optional(str(arg.type)) else _plain(context, _inner(str(arg.type)), arg.name,
                                                                     str(arg.type), arg.N)
            if arg.kwarg_only:
                kwargs[arg.name] = value
            else:
                args.append(value)
    except _Unsupported:
        return args[:given], {k: v for k, v in kwargs.items() if k not in {a.name for a in missing}}
    return args, kwargs


def _capture(torch, op, info, samples):
    """The calls of ``op`` made while ``info``'s samples run forwards and backwards: as the
    dispatcher sees them (an operator that is not CompositeImplicitAutograd), and the calls of the
    Python function or method of its name (``torch.einsum`` inside an OpInfo's lambda)."""
    from torch.overrides import TorchFunctionMode  # noqa: PLC0415
    from torch.utils import _pytree  # noqa: PLC0415
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415

    calls: list = []

    def keep(args, kwargs) -> None:
        if len(calls) < 4:
            calls.append(_pytree.tree_map(
                lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x, (list(args), dict(kwargs))))

    class Dispatched(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is op:
                keep(args, kwargs)
            return func(*args, **kwargs)

    class Called(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if getattr(func, "__name__", None) == op._opname:
                keep(args, kwargs)
            return func(*args, **kwargs)

    given = 0
    # up to 12 samples until 4 calls: reflection_pad2d_backward comes after nn.functional.pad's 1-d samples
    for sample in _take(samples, 12):
        if given >= 4:
            return
        def grad(x):
            if isinstance(x, torch.Tensor) and x.is_floating_point():
                return x.detach().clone().requires_grad_(True)
            return x
        a, k = _pytree.tree_map(grad, ([sample.input, *sample.args], dict(sample.kwargs)))
        try:
            with Called(), Dispatched():
                out = info.op(*a, **k)
                leaves = [t for t in _pytree.tree_leaves(out) if isinstance(t, torch.Tensor) and t.requires_grad]
                if leaves:
                    sum(t.float().sum() for t in leaves).backward()
        except Exception:  # noqa: BLE001, S112 - that sample fails here
            calls.clear()
            continue
        while calls:
            given += 1
            yield calls.pop(0)


_SHAPES = ((2, 2), (2, 2, 2, 2), (2, 2, 2), (2,), (2, 2, 2, 2, 2))
# argument names that hold per-channel parameters (1-D, one value per channel)
_PER_CHANNEL = frozenset({"weight", "bias", "running_mean", "running_var", "mean", "invstd",
                          "save_mean", "save_invstd", "save_var", "var", "gamma", "beta"})
_INDEX_NAMES = frozenset({"index", "indices", "target", "offsets", "per_sample_weights_idx"})
_STRINGS = {"padding": "valid", "reduce": "sum", "approximate": "none", "rounding_mode": "floor",
            "interpolation_mode": "bilinear", "mode": "bilinear", "side": "left", "indexing": "ij",
            "ord": "fro", "p": "fro"}


def _examples(schema, device: str = "meta"):
    """Candidate (args, kwargs) for ``schema``: shapes × per-channel parameters × dtype (tensors on
    ``device``: ``meta`` has no values, ``cpu`` small random ones)."""
    for dtype_name in ("float32", "int64"):
        for shape in _SHAPES:
            for per_channel in (False, True):
                for optional_tensors in (False, True):
                    for fill in (0, 1, 2, 3):
                        yield _build(schema, shape, dtype_name, per_channel, optional_tensors, device, fill)


def _optional_plain(arg) -> bool:
    """An optional argument that is not a tensor (``Scalar? min``)."""
    typ = str(arg.type)
    return (typ.startswith("Optional[") or typ.endswith("?")) and "Tensor" not in typ


class _Unsupported(Exception):
    pass


def _build(schema, shape, dtype_name, per_channel, optional_tensors, device="meta", fill=0):
    """One candidate (args, kwargs) for ``schema``: tensors of ``shape`` (:func:`_example_tensor`),
    other values by type and name (:func:`_plain`); of the optional non-tensor arguments, the
    ``fill``-th alone is given a value."""
    import torch  # noqa: PLC0415

    dtype = getattr(torch, dtype_name)
    context = _Context(torch, schema, tuple(shape), dtype, device, per_channel)
    args: list = []
    kwargs: dict = {}
    optionals = 0  # the optional arguments that are not tensors met so far
    # after those without a default, the optional ones that default to None (clip's min, max)
    later = sum(1 for a in schema.arguments if not a.has_default_value() and _optional_plain(a))
    for arg in schema.arguments:
        if arg.has_default_value():
            if _optional_plain(arg) and arg.default_value is None:
                later += 1
                if later == fill:
                    try:
                        kwargs[arg.name] = _plain(context, _inner(str(arg.type)), arg.name, str(arg.type))
                    except _Unsupported:
                        pass
            continue
        optional = _is_optional(str(arg.type))
        if optional and _optional_plain(arg):
            # ``fill``: the one optional argument given a value (``upsample_*.vec`` takes exactly one
            # of output_size and scale_factors); 0: none
            optionals += 1
        value = _argument_value(context, arg, optional_tensors, given=optionals == fill)
        if arg.kwarg_only:
            kwargs[arg.name] = value
        else:
            args.append(value)
    return args, kwargs


@dataclass(frozen=True)
class _Context:
    """What the example values of one schema are made from."""

    torch: object
    schema: object
    shape: tuple
    dtype: object
    device: str
    per_channel: bool = False


def _is_optional(typ: str) -> bool:
    return typ.startswith("Optional[") or typ.endswith("?")


def _inner(typ: str) -> str:
    """``Tensor`` of ``Optional[Tensor]`` or ``Tensor?``."""
    return typ[len("Optional["):-1] if typ.startswith("Optional[") else typ.rstrip("?")


def _argument_value(context: _Context, arg, optional_tensors: bool, *, given: bool):
    """The example value of ``arg`` (one without a default): ``given`` says whether an optional
    non-tensor argument gets a value (else None)."""
    torch = context.torch
    typ = str(arg.type)
    inner = _inner(typ)
    optional = _is_optional(typ)
    if arg.is_out:
        return torch.empty((0,), dtype=context.dtype, device=context.device)
    if inner == "Tensor":
        return _example_tensor(context, arg.name) if (not optional or optional_tensors) else None
    if inner in ("List[Tensor]", "Tensor[]"):
        return [_example_tensor(context, arg.name), _example_tensor(context, arg.name)]
    if inner in ("List[Optional[Tensor]]", "Tensor?[]"):
        return [torch.zeros((1,), dtype=torch.int64, device=context.device)]
    if optional:
        return _plain(context, inner, arg.name, typ, arg.N) if given else None
    return _plain(context, inner, arg.name, typ, arg.N)


def _make(context: _Context, size, kind):
    torch = context.torch
    if context.device == "meta" or kind is torch.bool:
        return torch.empty(size, dtype=kind, device=context.device) if kind is not torch.bool else \
            torch.ones(size, dtype=kind, device=context.device)
    if kind.is_floating_point:
        return torch.rand(size, dtype=kind, device=context.device) + 0.5
    return torch.zeros(size, dtype=kind, device=context.device)


def _example_tensor(context: _Context, arg_name: str):
    """A tensor for the argument ``arg_name``: by its name, a bool condition or mask, int64 indices,
    a per-channel parameter, else one of the example's shape and dtype."""
    torch, shape = context.torch, context.shape
    if arg_name == "condition":  # where's
        return _make(context, shape, torch.bool)
    if arg_name in _INDEX_NAMES:
        return _make(context, shape[:1], torch.int64)
    if "mask" in arg_name:
        return _make(context, shape, torch.bool)
    if context.per_channel and arg_name in _PER_CHANNEL:
        return _make(context, (shape[1] if len(shape) > 1 else shape[0],), context.dtype)
    return _make(context, shape, context.dtype)


def _plain(context: _Context, inner: str, name: str, typ: str, size: int | None = None):
    """A value of the non-optional, non-tensor type ``inner`` for the argument ``name``."""
    if inner in ("int", "SymInt"):
        if name in ("dtype", "out_dtype", "output_dtype"):  # a ScalarType: an int in the schema's types
            return context.dtype
        if name == "steps":  # linspace: one step is a fill
            return 4
        return 0 if "dim" in name else 1
    if inner in ("List[int]", "List[SymInt]", "int[]", "SymInt[]"):
        return _int_list(context, name, size)
    if inner in ("List[bool]", "bool[]"):
        return [True, True, True]  # output_mask of the *_backward operators
    if inner in ("List[float]", "float[]"):
        return [1.0] * max(len(context.shape) - 2, 1)
    if inner in ("List[number]", "Scalar[]"):
        return [1, 1]
    if inner == "float":
        return 0.5
    if inner in ("number", "Scalar", "complex"):
        return 3  # not 1 nor 2: pow.Scalar(1, x) decomposes to a fill, pow.Scalar(2, x) to exp2
    if inner == "bool":
        return False
    if inner == "str":
        return _STRINGS.get(name, "none")
    return _plain_object(context, inner, typ)


def _int_list(context: _Context, name: str, size: int | None) -> list:
    """An ``int[]`` for the argument ``name``: dimensions, the shape, paddings, else ones."""
    shape = context.shape
    spatial = max(len(shape) - 2, 1)
    if name in ("dim", "dims"):
        return list(range(size or 1))  # nuclear_norm.dim's int[2]
    if name in ("size", "shape", "sizes"):
        return list(shape)
    if name == "normalized_shape":
        return list(shape[-1:])
    if name == "padding" and "_pad" in str(context.schema.name):  # reflection_pad2d: (left, right) per dimension
        padded = re.search(r"_pad(\d)d", str(context.schema.name))
        return [1, 1] * (int(padded.group(1)) if padded else spatial)
    if "padding" in name:
        return [0] * spatial
    if name == "pad":  # (before, after) per padded dimension
        return [0, 0] * spatial
    return [1] * spatial


def _plain_object(context: _Context, inner: str, typ: str):
    """A dtype, layout, device or memory format."""
    torch = context.torch
    if inner == "ScalarType":
        return context.dtype
    if inner == "Layout":
        return torch.strided
    if inner in ("Device", "DeviceObjType"):
        return torch.device(context.device)
    if inner == "MemoryFormat":
        return torch.contiguous_format
    raise _Unsupported(typ)
