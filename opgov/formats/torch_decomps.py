"""The decompositions torch.export applies by default, read from an installed PyTorch.

``torch_decomposition_rules()`` answers two questions for ``opgov decomps import-torch``:

1. **Which operators does torch.export's core ATen decomposition table decompose?**
   Derived exactly: the ATen ``OpOverload`` keys of ``torch._decomp.core_aten_decompositions()``
   (in 2.13 the same table as ``torch.export.default_decompositions()``: PyTorch's hand-written
   decompositions plus every CompositeImplicitAutograd ATen operator it does not preserve).
   Keys outside the ``aten`` namespace (test and TorchBind operators) are left out.

2. **Into which operators?** Not stored anywhere in PyTorch: a decomposition is a Python function.
   opgov *observes* it: it calls the function once on small example inputs built from the
   operator's schema (tensors on the ``meta`` device, so no real arithmetic happens) under a
   ``TorchDispatchMode`` that records every operator reaching the dispatcher. The targets are
   therefore

   - one step deep: an operator the decomposition calls is recorded as it is, even when the table
     decomposes it further (opgov follows the chain itself, as ``check-decomps`` does);
   - after CompositeImplicitAutograd: a composite operator called inside the decomposition shows
     up as the operators its composite kernel calls, as it does during export;
   - true for the example inputs only: a decomposition that branches on dtype, rank or argument
     values may call other operators for other inputs;
   - for an in-place or ``out=`` key, functionalized: an in-place target ``aten::foo_`` is
     recorded as its functional form ``aten::foo``, and the write-back into the mutated argument
     (``copy_``, ``resize_``, ``_resize_output_``) is dropped, as torch.export's
     functionalization does.

   What is *not* derived: operators the decomposition calls only for other inputs, and targets of
   operators whose example call fails (a schema type opgov cannot build, shape checks no example
   satisfies, a decomposition that reads tensor values, which ``meta`` tensors do not have).
   Those operators are still returned, with ``into=None`` and the reason.

Tracing runs in child processes (``workers``, default 2): a C++ kernel given an odd example input
can crash its process, and that must cost one operator, not the import. A crashed operator is
recorded with the reason and the worker restarts after it. The whole run is bounded by
``time_budget_s``; operators not reached in time are returned with that reason.

torch is imported only in the child processes: importing it costs seconds, and the parent needs
nothing from it (the version comes from the package metadata).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from opgov.core.errors import BadInput

# Operators an in-place or out= decomposition calls to write its result back into the mutated
# argument. Functionalization removes them, so they are not targets.
_WRITE_BACK = frozenset({"aten::copy_", "aten::copy", "aten::resize_", "aten::resize",
                         "aten::_resize_output_", "aten::_resize_output"})


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
    forced: dict[str, str] = dict(table.forced)
    preservable = set(table.preservable)
    complete = whole
    if previous is not None and previous.version == table.version:
        complete = complete or previous.complete
        targets = {op: list(t) if t is not None else None for op, t in previous.targets.items()}
        reasons = dict(previous.reasons)
        forced = {**previous.forced, **forced}
        preservable |= previous.preservable
    for rule in table.rules:
        targets[rule.op] = list(rule.into) if rule.into is not None else None
        if rule.into is None:
            reasons[rule.op] = rule.reason or "not traced"
        else:
            reasons.pop(rule.op, None)
    return {"version": table.version, "default": sorted(table.default), "targets": dict(sorted(targets.items())),
            "reasons": dict(sorted(reasons.items())), "complete": complete, "forced": dict(sorted(forced.items())),
            "preservable": sorted(preservable)}


def facts_file_text(table) -> str:
    """The shipped facts file of a whole ``table`` (``scripts/build_torch_facts.py``): its JSON form,
    one operator to a line (readable diffs)."""
    data = facts_json(table, whole=True)
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
                     only: Iterable[str] | None = None) -> TorchTable:
    """Like :func:`torch_decomposition_rules`, with the torch version, the absent names, the
    default table's operators, and also the decompositions of ``torch._decomp.decomposition_table``
    outside the default table (``in_default=False``): those a table can add.

    This process never imports torch (that costs seconds): the child processes read the table
    themselves, each tracing its share (``part i of n``) or the names it is given.
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


def _run_worker(job: list[str] | dict, deadline: float) -> tuple[dict[str, TorchRule], list[str], set[str], dict]:
    """Trace ``job`` (names, or ``{"part": i, "of": n}`` of the table) in a child process,
    restarting after a crash, until done or out of time. Returns (rules, names not in the table,
    every operator of the default table, the child's plan: ``forced`` and ``preservable``)."""
    results: dict[str, TorchRule] = {}
    absent: list[str] = []
    default: set[str] = set()
    plan: dict = {}
    # the names still to trace; for a part of the table, unknown until the child lists them
    pending: list[str] | None = list(job) if isinstance(job, list) else None
    request = job
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.setdefault("PYTHONWARNINGS", "ignore")
    while pending is None or pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        proc = subprocess.Popen(
            [sys.executable, "-c", "from opgov.formats.torch_decomps import _worker_main; _worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            text=True,
        )
        timer = threading.Timer(remaining, proc.kill)
        timer.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(request))
            proc.stdin.close()
            for line in proc.stdout:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if "names" in row:  # the child's plan: what it traces, what the table lacks
                    pending = [n for n in row["names"] if n not in results]
                    absent.extend(row.get("absent", []))
                    default.update(row.get("default", []))
                    plan = {"forced": row.get("forced", {}), "preservable": row.get("preservable", [])}
                    continue
                if pending is None or row.get("op") not in pending:
                    continue
                into = row.get("into")
                results[row["op"]] = TorchRule(
                    op=row["op"], into=tuple(into) if into is not None else None,
                    kind=row.get("kind", "functional"), reason=row.get("reason"), in_default=row["op"] in default)
            code = proc.wait()
        finally:
            timer.cancel()
        if pending is None:  # the child died before reading the table
            if code != 0 and time.monotonic() < deadline:
                raise BadInput(f"torch could not read its decomposition table (exit code {code})")
            break
        pending = [n for n in pending if n not in results]
        if code == 0 or not pending:
            break
        if time.monotonic() < deadline:
            # the first unreported operator is the one the child was tracing when it died
            crashed = pending.pop(0)
            results[crashed] = TorchRule(crashed, None, _kind_from_name(crashed),
                                         f"tracing crashed the process (exit code {code})", crashed in default)
            request = pending
    for name in pending or ():
        results[name] = TorchRule(name, None, _kind_from_name(name), "not traced: time budget exhausted",
                                  name in default)
    return results, absent, default, plan


def _kind_from_name(name: str) -> str:
    base, _, overload = name.partition("::")[2].partition(".")
    if overload == "out" or overload.endswith("_out"):
        return "out"
    return "inplace" if base.endswith("_") and not base.endswith("__") else "functional"


# --------------------------------------------------------------------------------------------
# child side


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

    core = {overload_name(op): (op, fn) for op, fn in core_aten_decompositions().items()
            if isinstance(op, torch._ops.OpOverload) and op.namespace == "aten"}
    # torch's other decompositions, which a table can add (the default table's win)
    table = {overload_name(op): (op, fn) for op, fn in decomposition_table.items()
             if isinstance(op, torch._ops.OpOverload) and op.namespace == "aten"}
    table.update(core)
    forced, preservable = _export_forced(torch)
    cia = torch._C.DispatchKey.CompositeImplicitAutograd
    for name, (op, _) in forced.items():
        # what export runs: its CompositeImplicitAutograd kernel, Python's where torch registers one
        table[name] = (op, op.py_kernels.get(cia) or op.decompose)
    if isinstance(request, dict):
        names, absent = sorted(table)[request["part"]::request["of"]], []
    else:
        names = [n for n in request if n in table]
        absent = [n for n in request if n not in table]
    sys.stdout.write(json.dumps({"names": names, "absent": absent, "default": sorted(core),
                                 "forced": {name: why for name, (_, why) in sorted(forced.items())},
                                 "preservable": sorted(preservable)}) + "\n")
    sys.stdout.flush()
    for name in names:
        op, fn = table[name]
        kind = _schema_kind(op)
        try:
            # an operator export always decomposes: what every example input gives (batch_norm with
            # and without running statistics), so that a model's call is covered whatever it passes
            into, reason = _trace(op, fn, kind, every=name in forced)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded, never fatal
            into, reason = None, f"{type(exc).__name__}: {_first_line(exc)}"
        sys.stdout.write(json.dumps({"op": name, "into": into, "kind": kind, "reason": reason}) + "\n")
        sys.stdout.flush()


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


def _trace(op, fn, kind: str, *, every: bool = False) -> tuple[list[str] | None, str | None]:
    """Call ``fn`` on example inputs until one call succeeds (``every``: on each example input, keeping
    every operator any of them calls); return (targets, None) or (None, why)."""
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []
            self.depth = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is op and self.depth < 4:
                # the decomposition calls its own operator (roll flattens, then rolls again):
                # run_decompositions decomposes that call too, so follow it
                self.depth += 1
                try:
                    with self:
                        out = fn(*args, **(kwargs or {}))
                finally:
                    self.depth -= 1
                if out is not NotImplemented:
                    return out
            self.seen.append(overload_name(func))
            return func(*args, **(kwargs or {}))

    first: str | None = None  # the error of the most ordinary example explains best
    name = overload_name(op)
    examples = _examples(op._schema)
    found: set[str] | None = None  # with ``every``: the targets of the examples that worked so far
    while True:
        try:
            args, kwargs = next(examples)
        except StopIteration:
            break
        except _Unsupported as exc:
            if found is not None:
                break
            return None, f"opgov builds no example value of the argument type {exc}"
        recorder = Recorder()
        try:
            with recorder:
                out = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001
            first = first or f"{type(exc).__name__}: {_first_line(exc)}"
            continue
        if out is NotImplemented:
            first = first or "the decomposition returned NotImplemented (declined the input)"
            continue
        seen = set(recorder.seen)
        # a decomposition may branch on a flag left at its default (var with keepdim=True
        # broadcasts): run it again with each such flag flipped, and keep every operator seen;
        # with ``every`` also each flag the call must pass (dropout's train, batch_norm's training)
        variants = [(args, v) for v in _flag_variants(op._schema, kwargs)]
        if every:
            variants += list(_required_flag_variants(op._schema, args, kwargs))
        for positional, variant in variants:
            again = Recorder()
            try:
                with again:
                    fn(*positional, **variant)
            except Exception:  # noqa: BLE001, S112 - that input is not valid for the operator
                continue
            seen |= set(again.seen)
        targets = {_functional_name(t) for t in seen}
        if kind != "functional":
            targets -= _WRITE_BACK
        targets.discard(name)
        if kind != "functional":
            targets.discard(_functional_name(name))
        if not every:
            return sorted(targets), None
        found = (found or set()) | targets
    if found is not None:
        return sorted(found), None
    return None, f"no example input worked; first error: {first}"


def _flag_variants(schema, kwargs: dict):
    """``kwargs`` with one defaulted ``bool`` argument flipped, for each such argument; then with
    a defaulted optional ``dim`` given."""
    for arg in schema.arguments:
        if not arg.has_default_value() or arg.is_out:
            continue
        typ = str(arg.type)
        if typ == "bool" and isinstance(arg.default_value, bool):
            yield {**kwargs, arg.name: not arg.default_value}
        elif arg.name == "dim" and arg.default_value is None and "int" in typ:
            yield {**kwargs, arg.name: [0] if "List" in typ or "[]" in typ else 0}


def _required_flag_variants(schema, args: list, kwargs: dict):
    """(args, kwargs) with one ``bool`` argument that has no default flipped, for each such argument
    (:func:`_build` passes those positionally unless keyword-only)."""
    index = 0
    for arg in schema.arguments:
        if arg.has_default_value():
            continue
        positional = not arg.kwarg_only
        if str(arg.type) == "bool" and not arg.is_out:
            if positional and index < len(args) and isinstance(args[index], bool):
                yield [*args[:index], not args[index], *args[index + 1:]], kwargs
            elif not positional and isinstance(kwargs.get(arg.name), bool):
                yield args, {**kwargs, arg.name: not kwargs[arg.name]}
        index += positional


def _functional_name(name: str) -> str:
    """``aten::mul_.Tensor`` → ``aten::mul.Tensor`` when torch has that overload."""
    import torch  # noqa: PLC0415

    ns, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    if not base.endswith("_") or base.endswith("__"):
        return name
    functional = base[:-1]
    packet = getattr(getattr(torch.ops, ns), functional, None)
    if packet is None or (overload or "default") not in packet.overloads():
        return name
    return f"{ns}::{functional}" + (f".{overload}" if overload else "")


_SHAPES = ((2, 2), (2, 2, 2, 2), (2, 2, 2), (2,), (2, 2, 2, 2, 2))
# argument names that hold per-channel parameters (1-D, one value per channel)
_PER_CHANNEL = frozenset({"weight", "bias", "running_mean", "running_var", "mean", "invstd",
                          "save_mean", "save_invstd", "save_var", "var", "gamma", "beta"})
_INDEX_NAMES = frozenset({"index", "indices", "target", "offsets", "per_sample_weights_idx"})
_STRINGS = {"padding": "valid", "reduce": "sum", "approximate": "none", "rounding_mode": "floor",
            "interpolation_mode": "bilinear", "mode": "bilinear", "side": "left", "indexing": "ij"}


def _examples(schema):
    """Candidate (args, kwargs) for ``schema``: shapes × per-channel parameters × dtype."""
    for dtype_name in ("float32", "int64"):
        for shape in _SHAPES:
            for per_channel in (False, True):
                for optional_tensors in (False, True):
                    yield _build(schema, shape, dtype_name, per_channel, optional_tensors)


class _Unsupported(Exception):
    pass


def _build(schema, shape, dtype_name, per_channel, optional_tensors):
    import torch  # noqa: PLC0415

    dtype = getattr(torch, dtype_name)

    def tensor(arg_name: str):
        if arg_name in _INDEX_NAMES:
            return torch.zeros(shape[:1], dtype=torch.int64, device="meta")
        if "mask" in arg_name:
            return torch.empty(shape, dtype=torch.bool, device="meta")
        if per_channel and arg_name in _PER_CHANNEL:
            return torch.empty((shape[1] if len(shape) > 1 else shape[0],), dtype=dtype, device="meta")
        return torch.empty(shape, dtype=dtype, device="meta")

    spatial = max(len(shape) - 2, 1)
    args: list = []
    kwargs: dict = {}
    for arg in schema.arguments:
        if arg.has_default_value():
            continue
        typ = str(arg.type)
        name = arg.name
        optional = typ.startswith("Optional[") or typ.endswith("?")
        inner = typ[len("Optional["):-1] if typ.startswith("Optional[") else typ.rstrip("?")
        if arg.is_out:
            value = torch.empty((0,), dtype=dtype, device="meta")
        elif inner == "Tensor":
            value = tensor(name) if (not optional or optional_tensors) else None
        elif inner in ("List[Tensor]", "Tensor[]"):
            value = [tensor(name), tensor(name)]
        elif inner in ("List[Optional[Tensor]]", "Tensor?[]"):
            value = [torch.zeros((1,), dtype=torch.int64, device="meta")]
        elif optional:
            value = None
        elif inner in ("int", "SymInt"):
            value = 0 if "dim" in name else 1
        elif inner in ("List[int]", "List[SymInt]", "int[]", "SymInt[]"):
            if name in ("dim", "dims"):
                value = [0]
            elif name in ("size", "shape", "sizes"):
                value = list(shape)
            elif name == "normalized_shape":
                value = list(shape[-1:])
            elif "padding" in name:
                value = [0] * spatial
            else:
                value = [1] * spatial
        elif inner in ("List[bool]", "bool[]"):
            value = [True, True, True]  # output_mask of the *_backward operators
        elif inner in ("List[float]", "float[]"):
            value = [1.0] * spatial
        elif inner in ("List[number]", "Scalar[]"):
            value = [1, 1]
        elif inner == "float":
            value = 0.5
        elif inner in ("number", "Scalar", "complex"):
            value = 1
        elif inner == "bool":
            value = False
        elif inner == "str":
            value = _STRINGS.get(name, "none")
        elif inner == "ScalarType":
            value = dtype
        elif inner == "Layout":
            value = torch.strided
        elif inner in ("Device", "DeviceObjType"):
            value = torch.device("meta")
        elif inner == "MemoryFormat":
            value = torch.contiguous_format
        else:
            raise _Unsupported(typ)
        if arg.kwarg_only:
            kwargs[name] = value
        else:
            args.append(value)
    return args, kwargs
