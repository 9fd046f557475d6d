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

torch is imported only inside the functions here (and in the child processes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from opgov.errors import BadInput

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

    @property
    def traced(self) -> bool:
        return self.into is not None


# --------------------------------------------------------------------------------------------
# parent side


def torch_decomposition_rules(*, time_budget_s: float = 50.0, workers: int = 2,
                              only: Iterable[str] | None = None) -> list[TorchRule]:
    """Every ATen operator torch.export's default table decomposes, with observed targets.

    ``only`` restricts the run to these operators (canonical names); ``time_budget_s`` bounds the
    whole run; ``workers`` child processes trace in parallel. Raises :class:`BadInput` when torch
    cannot be imported. The result is sorted by operator name.
    """
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise BadInput(f"torch is not importable ({exc}); install torch to import its decompositions") from exc

    names = _table_operator_names()
    if only is not None:
        wanted = set(only)
        names = [n for n in names if n in wanted]
    deadline = time.monotonic() + time_budget_s
    workers = max(1, min(workers, len(names) or 1))
    chunks = [names[i::workers] for i in range(workers)]
    results: dict[str, TorchRule] = {}
    lock = threading.Lock()

    def run(chunk: list[str]) -> None:
        found = _run_worker_chunk(chunk, deadline)
        with lock:
            results.update(found)

    threads = [threading.Thread(target=run, args=(c,), daemon=True) for c in chunks if c]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [results[n] for n in sorted(results)]


def _table_operator_names() -> list[str]:
    import torch  # noqa: PLC0415
    from torch._decomp import core_aten_decompositions  # noqa: PLC0415

    names = {_op_name(op) for op in core_aten_decompositions().keys()
             if isinstance(op, torch._ops.OpOverload) and op.namespace == "aten"}
    return sorted(names)


def _run_worker_chunk(chunk: list[str], deadline: float) -> dict[str, TorchRule]:
    """Trace ``chunk`` in a child process, restarting after a crash, until done or out of time."""
    results: dict[str, TorchRule] = {}
    pending = list(chunk)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.setdefault("PYTHONWARNINGS", "ignore")
    while pending:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            break
        proc = subprocess.Popen(
            [sys.executable, "-c", "from opgov.torch_decomps import _worker_main; _worker_main()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            text=True,
        )
        timer = threading.Timer(remaining, proc.kill)
        timer.start()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps(pending))
            proc.stdin.close()
            for line in proc.stdout:
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if row.get("op") not in pending:
                    continue
                into = row.get("into")
                results[row["op"]] = TorchRule(
                    op=row["op"], into=tuple(into) if into is not None else None,
                    kind=row.get("kind", "functional"), reason=row.get("reason"))
            code = proc.wait()
        finally:
            timer.cancel()
        pending = [n for n in pending if n not in results]
        if code != 0 and pending and time.monotonic() < deadline:
            # the first unreported operator is the one the worker was tracing when it died
            crashed = pending.pop(0)
            results[crashed] = TorchRule(crashed, None, _kind_from_name(crashed),
                                         f"tracing crashed the process (exit code {code})")
    for name in pending:
        results[name] = TorchRule(name, None, _kind_from_name(name),
                                  "not traced: time budget exhausted")
    return results


def _kind_from_name(name: str) -> str:
    base, _, overload = name.partition("::")[2].partition(".")
    if overload == "out" or overload.endswith("_out"):
        return "out"
    return "inplace" if base.endswith("_") and not base.endswith("__") else "functional"


# --------------------------------------------------------------------------------------------
# child side


def _worker_main() -> None:
    """Entry point of a tracing child: operator names on stdin, one JSON line per operator."""
    import warnings  # noqa: PLC0415

    warnings.simplefilter("ignore")
    names = json.loads(sys.stdin.read())
    import torch  # noqa: PLC0415
    from torch._decomp import core_aten_decompositions  # noqa: PLC0415

    table = {_op_name(op): (op, fn) for op, fn in core_aten_decompositions().items()
             if isinstance(op, torch._ops.OpOverload) and op.namespace == "aten"}
    for name in names:
        op, fn = table[name]
        kind = _schema_kind(op)
        try:
            into, reason = _trace(op, fn, kind)
        except Exception as exc:  # noqa: BLE001 - any failure is recorded, never fatal
            into, reason = None, f"{type(exc).__name__}: {_first_line(exc)}"
        sys.stdout.write(json.dumps({"op": name, "into": into, "kind": kind, "reason": reason}) + "\n")
        sys.stdout.flush()


def _op_name(op) -> str:
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


def _trace(op, fn, kind: str) -> tuple[list[str] | None, str | None]:
    """Call ``fn`` on example inputs until one call succeeds; return (targets, None) or (None, why)."""
    from torch.utils._python_dispatch import TorchDispatchMode  # noqa: PLC0415

    class Recorder(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.append(_op_name(func))
            return func(*args, **(kwargs or {}))

    first: str | None = None  # the error of the most ordinary example explains best
    name = _op_name(op)
    examples = _examples(op._schema)
    while True:
        try:
            args, kwargs = next(examples)
        except StopIteration:
            break
        except _Unsupported as exc:
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
        targets = {_functional_name(t) for t in recorder.seen}
        if kind != "functional":
            targets -= _WRITE_BACK
        targets.discard(name)
        if kind != "functional":
            targets.discard(_functional_name(name))
        return sorted(targets), None
    return None, f"no example input worked; first error: {first}"


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
