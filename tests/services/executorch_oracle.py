"""Ask ExecuTorch's runtime: export each program with torch, decompose it to core ATen, save the
archive (what check-model reads), lower it to a .pte with the executorch package and run it in its
runtime (the package's runtime registers the optimized kernels where it has them, the portable
ones elsewhere). Prints one JSON object: program → {"runs": bool, "failed_op": the operator the
runtime names in its log, "lowering": the lowering's error, if it refused, "crashed": the signal
that ended the run, if a kernel's check aborted it}. A program torch itself refuses (eager, or
export) is left out: it is not a question for the runtime.

    python executorch_oracle.py OUT_DIR [PROGRAM ... | --all]   (--list [--all]: the programs' names)

By default the quick set (:func:`quick`); ``--all`` every program (~480 that torch runs, ~30 minutes
on a busy machine).

Run as its own process (tests/services/test_executorch_runtime.py): the runtime logs to the
process's stderr, which is read here around each run; each run is in a forked child, since a
kernel's ET_CHECK aborts the process.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from fn_module import fn_module  # noqa: E402

F = torch.nn.functional
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
          "i64": torch.int64, "u8": torch.uint8, "b": torch.bool}
FLOATS = ("f32", "f16", "bf16")
ALL = ("f32", "f16", "bf16", "i32", "i64", "b")


def tensor(shape, name, low=0):
    dtype = DTYPES[name]
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape) + 0.5 if low else torch.randn(shape)).to(dtype)
    return torch.randint(low, 3, shape).to(dtype)


def fn(f, *args):
    return lambda: (fn_module(torch, f), args)


def layer(make, d, *shape):
    return lambda: (make().to(DTYPES[d]), (tensor(shape, d),))


PROGRAMS: dict = {}
UNARY = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "exp": torch.exp, "log": torch.log,
    "sqrt": torch.sqrt, "abs": torch.abs, "neg": torch.neg, "gelu": F.gelu, "softmax": lambda x: F.softmax(x, -1),
    "logsoftmax": lambda x: F.log_softmax(x, -1), "sum": lambda x: x.sum(-1), "mean": lambda x: x.mean(-1),
    "amax": lambda x: x.amax(-1), "argmax": lambda x: x.argmax(-1), "cumsum": lambda x: x.cumsum(-1),
    "clamp": lambda x: x.clamp(0, 1), "floor": torch.floor, "round": torch.round, "rsqrt": torch.rsqrt,
    "erf": torch.erf, "sin": torch.sin, "not": lambda x: ~x, "lnot": torch.logical_not,
    "hardtanh": F.hardtanh, "leakyrelu": F.leaky_relu, "elu": F.elu, "flip": lambda x: x.flip(0),
    "permute": lambda x: x.t().contiguous() * 1, "expand": lambda x: x[:1].expand(4, 3) * 1,
    "pad": lambda x: F.pad(x, (1, 1)), "any": lambda x: x.any(-1), "var": lambda x: x.var(-1),
    "sign": torch.sign, "reciprocal": torch.reciprocal, "isnan": torch.isnan, "tohalf": lambda x: x.to(torch.float16),
    "toint": lambda x: x.to(torch.int32), "topk": lambda x: x.topk(2)[0], "triu": torch.triu,
    "maxdim": lambda x: x.max(-1)[0], "split": lambda x: x.split([1, 2], 1)[1] * 1,
}
for _op, _f in UNARY.items():
    for _d in ALL:
        PROGRAMS[f"{_op}_{_d}"] = lambda f=_f, d=_d, op=_op: (fn_module(torch, f), (tensor((2, 3), d, low=int(op in ("log", "sqrt", "rsqrt"))),))
BINARY = {
    "add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div, "pow": torch.pow,
    "maximum": torch.maximum, "minimum": torch.minimum, "eq": torch.eq, "lt": torch.lt,
    "land": torch.logical_and, "band": torch.bitwise_and, "remainder": torch.remainder,
    "floordiv": torch.floor_divide, "atan2": torch.atan2, "fmod": torch.fmod,
    "cat": lambda x, y: torch.cat([x, y]), "stack": lambda x, y: torch.stack([x, y]),
    "where": lambda x, y: torch.where(x > y, x, y), "mmT": lambda x, y: x @ y.t(),
    "bmm": lambda x, y: torch.bmm(x[None], y.t()[None]),
}
for _op, _f in BINARY.items():
    for _d in ALL:
        PROGRAMS[f"{_op}_{_d}"] = lambda f=_f, d=_d: (fn_module(torch, f), (tensor((2, 3), d, 1), tensor((2, 3), d, 1)))
# a Tensor-Scalar call whose result's dtype differs from its tensor's (type promotion), and one whose does not
SCALAR = {"addf": lambda x: x + 1.5, "muli": lambda x: x * 2, "divi": lambda x: x / 2, "gtf": lambda x: x > 0.5,
          "powi": lambda x: x ** 2, "rsubi": lambda x: 1 - x, "addb": lambda x: x + True, "mulf": lambda x: x * 0.5,
          "fill": lambda x: torch.full_like(x, 2) + x, "masked": lambda x: x.masked_fill(x > 1, 0)}
for _op, _f in SCALAR.items():
    for _d in ALL:
        PROGRAMS[f"{_op}_{_d}"] = lambda f=_f, d=_d: (fn_module(torch, f), (tensor((2, 3), d, 1),))
# mixed dtypes
for _a, _b in (("f16", "f32"), ("i32", "f32"), ("bf16", "f16"), ("b", "i64"), ("i32", "i64")):
    for _op in ("add", "mul", "cat", "where"):
        PROGRAMS[f"{_op}_{_a}{_b}"] = lambda f=BINARY[_op], a=_a, b=_b: (fn_module(torch, f), (tensor((2, 3), a, 1), tensor((2, 3), b, 1)))
# indices: an int64 index, an int32 one, a bool mask
for _i in ("i64", "i32"):
    PROGRAMS[f"gather_{_i}"] = fn(lambda x, i: torch.gather(x, 1, i), tensor((2, 3), "f32"), tensor((2, 3), _i))
    PROGRAMS[f"indexselect_{_i}"] = fn(lambda x, i: torch.index_select(x, 0, i), tensor((4, 3), "f32"), tensor((2,), _i))
    PROGRAMS[f"index_{_i}"] = fn(lambda x, i: x[i], tensor((4, 3), "f32"), tensor((2,), _i))
    PROGRAMS[f"embedding_{_i}"] = fn(lambda w, i: F.embedding(i, w), tensor((4, 3), "f32"), tensor((2,), _i))
    PROGRAMS[f"scatter_{_i}"] = fn(lambda x, i, s: x.scatter(1, i, s), tensor((2, 3), "f32"), tensor((2, 2), _i), tensor((2, 2), "f32"))
    PROGRAMS[f"indexput_{_i}"] = fn(lambda x, i, v: x.index_put((i,), v), tensor((4, 3), "f32"), tensor((2,), _i), tensor((2, 3), "f32"))
for _d in ("f32", "f16", "bf16", "i64"):
    PROGRAMS[f"gatherx_{_d}"] = fn(lambda x, i: torch.gather(x, 1, i), tensor((2, 3), _d), tensor((2, 3), "i64"))
    PROGRAMS[f"mask_{_d}"] = fn(lambda x, m: x[m], tensor((2, 3), _d), tensor((2, 3), "b"))
    PROGRAMS[f"indexselectx_{_d}"] = fn(lambda x, i: torch.index_select(x, 0, i), tensor((4, 3), _d), tensor((2,), "i64"))
PROGRAMS["maskrow_f32"] = fn(lambda x, m: x[m], tensor((4, 3), "f32"), tensor((4,), "b"))
PROGRAMS["masku8_f32"] = fn(lambda x, m: x[m], tensor((2, 3), "f32"), tensor((2, 3), "u8"))
# layers: convolution of 1-D, 2-D and 3-D (a 5-D input), pooling, normalisation, resampling
for _d in ("f32", "f16", "bf16", "i64"):
    PROGRAMS[f"sort_{_d}"] = fn(lambda x: torch.sort(x)[0], tensor((2, 3), _d))
for _d in FLOATS:
    PROGRAMS[f"linear_{_d}"] = layer(lambda: torch.nn.Linear(4, 3), _d, 2, 4)
    PROGRAMS[f"conv1d_{_d}"] = layer(lambda: torch.nn.Conv1d(2, 2, 1), _d, 1, 2, 3)
    PROGRAMS[f"conv2d_{_d}"] = layer(lambda: torch.nn.Conv2d(2, 2, 1), _d, 1, 2, 3, 3)
    PROGRAMS[f"conv3d_{_d}"] = layer(lambda: torch.nn.Conv3d(2, 2, 1), _d, 1, 2, 3, 3, 3)
    PROGRAMS[f"convt2d_{_d}"] = layer(lambda: torch.nn.ConvTranspose2d(2, 2, 2), _d, 1, 2, 3, 3)
    PROGRAMS[f"maxpool2d_{_d}"] = layer(lambda: torch.nn.MaxPool2d(2), _d, 1, 2, 4, 4)
    PROGRAMS[f"avgpool2d_{_d}"] = layer(lambda: torch.nn.AvgPool2d(2), _d, 1, 2, 4, 4)
    PROGRAMS[f"avgpool3d_{_d}"] = layer(lambda: torch.nn.AvgPool3d(2), _d, 1, 2, 4, 4, 4)
    PROGRAMS[f"adaptivepool_{_d}"] = layer(lambda: torch.nn.AdaptiveAvgPool2d(1), _d, 1, 2, 4, 4)
    PROGRAMS[f"layernorm_{_d}"] = layer(lambda: torch.nn.LayerNorm(3), _d, 2, 3)
    PROGRAMS[f"batchnorm_{_d}"] = layer(lambda: torch.nn.BatchNorm2d(2).eval(), _d, 1, 2, 3, 3)
    PROGRAMS[f"groupnorm_{_d}"] = layer(lambda: torch.nn.GroupNorm(1, 2), _d, 1, 2, 3, 3)
    PROGRAMS[f"upnearest_{_d}"] = layer(lambda: torch.nn.Upsample(scale_factor=2), _d, 1, 2, 3, 3)
    PROGRAMS[f"upbilinear_{_d}"] = layer(lambda: torch.nn.Upsample(scale_factor=2, mode="bilinear"), _d, 1, 2, 3, 3)
    PROGRAMS[f"pixelshuffle_{_d}"] = layer(lambda: torch.nn.PixelShuffle(2), _d, 1, 4, 2, 2)



def quick() -> list[str]:
    """The default set (~170 programs, a few minutes): each unary and binary operator once, their
    dtypes taken in turn (float32, float16, bfloat16, int32, int64, bool); every Tensor-Scalar
    program in int32, bool and float16 (type promotion); every mixed-dtype and index program; each
    layer in float32 and bfloat16 (and convolution on a 5-D input in float16); sort. ``--all``: all."""
    names = [f"{op}_{ALL[i % len(ALL)]}" for i, op in enumerate(UNARY)]
    names += [f"{op}_{ALL[(i + 3) % len(ALL)]}" for i, op in enumerate(BINARY)]
    names += [f"{op}_{d}" for op in SCALAR for d in ("i32", "b", "f16")]
    names += [n for n in PROGRAMS if "_" in n and n.rsplit("_", 1)[1] in ("f16f32", "i32f32", "bf16f16", "bi64", "i32i64")]
    names += [n for n in PROGRAMS if n.split("_")[0] in ("gather", "indexselect", "index", "embedding", "scatter",
                                                             "indexput", "gatherx", "mask", "indexselectx", "maskrow",
                                                             "masku8")]
    names += [n for n in PROGRAMS if n.rsplit("_", 1)[1] in ("f32", "bf16") and n.split("_")[0] in (
        "linear", "conv1d", "conv2d", "conv3d", "convt2d", "maxpool2d", "avgpool2d", "avgpool3d", "adaptivepool",
        "layernorm", "batchnorm", "groupnorm", "upnearest", "upbilinear", "pixelshuffle")]
    names += ["conv3d_f16", "sort_f32"]
    return list(dict.fromkeys(n for n in names if n in PROGRAMS))


def run(runtime, pte: bytes, args, log: str) -> dict:
    """Load and run the program in a forked child (a kernel's failed ET_CHECK aborts the process)."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            handle = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(handle, 2)
            method = runtime.load_program(pte).load_method("forward")
            try:
                method.execute(list(args))
                code = 0
            except RuntimeError:
                code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    result = {"runs": os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, "lowering": None, "crashed": None}
    if os.WIFSIGNALED(status):
        result["crashed"] = signal.Signals(os.WTERMSIG(status)).name
    return result


def main() -> None:
    if sys.argv[1:2] == ["--list"]:
        print("\n".join(PROGRAMS if sys.argv[2:] == ["--all"] else quick()))
        return
    out_dir = sys.argv[1]
    names = list(PROGRAMS) if sys.argv[2:] == ["--all"] else sys.argv[2:] or quick()
    from executorch.exir import to_edge
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    log = os.path.join(out_dir, "runtime.log")
    results = {}
    for name in names:
        torch.manual_seed(0)
        try:
            module, args = PROGRAMS[name]()
            with torch.no_grad():
                module(*args)
            program = torch.export.export(module, args).run_decompositions()
        except Exception:  # torch itself refuses it: not a question for the runtime
            continue
        torch.export.save(program, os.path.join(out_dir, f"{name}.pt2"))
        saved = os.dup(2)
        try:
            with open(log, "w") as handle:
                os.dup2(handle.fileno(), 2)
                try:
                    pte = to_edge(program).to_executorch().buffer
                except Exception as exc:  # the lowering refuses it (the edge dialect's verifier)
                    pte = None
                    result = {"runs": False, "lowering": f"{type(exc).__name__}: {exc}"[:2000], "crashed": None}
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        if pte is not None:
            result = run(runtime, pte, args, log)
        with open(log, errors="replace") as handle:
            found = re.search(r"in operator ([\w:.]+)", handle.read())
        result["failed_op"] = found.group(1).rstrip(":") if found and not result["runs"] else None
        results[name] = result
        with open(os.path.join(out_dir, "results.json"), "w") as handle:  # so far
            json.dump(results, handle)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
