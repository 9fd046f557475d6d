"""Ask ExecuTorch's runtime: export each program with torch, decompose it to core ATen, save the
archive (what check-model reads), lower it to a .pte with the executorch package and run it in its
runtime. Prints one JSON object: program → {"runs": bool, "failed_op": the operator the runtime
names in its log, "lowering": the lowering's error, if it refused}.

    python executorch_oracle.py OUT_DIR [PROGRAM ...]

Run as its own process (tests/services/test_executorch_runtime.py): the runtime logs to the
process's stderr, which is read here around each run.
"""

from __future__ import annotations

import json
import os
import re
import sys

import torch

F = torch.nn.functional
DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "i32": torch.int32,
          "i64": torch.int64, "u8": torch.uint8, "b": torch.bool}


def tensor(shape, name):
    dtype = DTYPES[name]
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(0, 3, shape).to(dtype)


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def conv(dims, dtype):
    layer = (torch.nn.Conv1d, torch.nn.Conv2d, torch.nn.Conv3d)[dims - 1](2, 2, 1).to(DTYPES[dtype])
    return layer, (tensor((1, 2) + (3,) * dims, dtype),)


PROGRAMS = {}
for _d in ("f32", "f16", "bf16"):
    PROGRAMS[f"gelu_{_d}"] = lambda d=_d: (Fn(F.gelu), (tensor((2, 3), d),))
PROGRAMS["linear_bf16"] = lambda: (torch.nn.Linear(4, 3).to(torch.bfloat16), (tensor((2, 4), "bf16"),))
PROGRAMS["softmax_f16"] = lambda: (Fn(lambda x: F.softmax(x, -1)), (tensor((2, 3), "f16"),))
for _d in ("i32", "i64", "u8", "b"):
    PROGRAMS[f"add_{_d}"] = lambda d=_d: (Fn(lambda x, y: x + y), (tensor((2, 3), d), tensor((2, 3), d)))
for _d in ("i32", "b"):
    PROGRAMS[f"sigmoid_{_d}"] = lambda d=_d: (Fn(torch.sigmoid), (tensor((2, 3), d),))
PROGRAMS["not_b"] = lambda: (Fn(lambda x: ~x), (tensor((2, 3), "b"),))
PROGRAMS["mm_b"] = lambda: (Fn(torch.mm), (tensor((2, 3), "b"), tensor((3, 2), "b")))
PROGRAMS["gather_i64"] = lambda: (Fn(lambda x, i: torch.gather(x, 1, i)), (tensor((2, 3), "f32"), tensor((2, 3), "i64")))
PROGRAMS["gather_i32"] = lambda: (Fn(lambda x, i: torch.gather(x, 1, i)), (tensor((2, 3), "f32"), tensor((2, 3), "i32")))
PROGRAMS["conv2d_f32"] = lambda: conv(2, "f32")
PROGRAMS["conv3d_f32"] = lambda: conv(3, "f32")
PROGRAMS["add_f16_f32"] = lambda: (Fn(lambda x, y: x + y), (tensor((2, 3), "f16"), tensor((2, 3), "f32")))
PROGRAMS["cat_f16_f32"] = lambda: (Fn(lambda x, y: torch.cat([x, y])), (tensor((2, 3), "f16"), tensor((2, 3), "f32")))


def main() -> None:
    out_dir = sys.argv[1]
    names = sys.argv[2:] or list(PROGRAMS)
    from executorch.exir import to_edge
    from executorch.runtime import Runtime

    runtime = Runtime.get()
    log = os.path.join(out_dir, "runtime.log")
    results = {}
    torch.manual_seed(0)
    for name in names:
        module, args = PROGRAMS[name]()
        program = torch.export.export(module, args).run_decompositions()
        torch.export.save(program, os.path.join(out_dir, f"{name}.pt2"))
        result = {"runs": False, "failed_op": None, "lowering": None}
        saved = os.dup(2)
        with open(log, "w") as handle:
            os.dup2(handle.fileno(), 2)
            try:
                try:
                    pte = to_edge(program).to_executorch()
                except Exception as exc:  # the lowering refuses it (the edge dialect's verifier)
                    result["lowering"] = f"{type(exc).__name__}: {exc}"[:2000]
                else:
                    method = runtime.load_program(pte.buffer).load_method("forward")
                    try:
                        method.execute(list(args))
                        result["runs"] = True
                    except RuntimeError:
                        pass
            finally:
                os.dup2(saved, 2)
                os.close(saved)
        found = re.search(r"in operator ([\w:.]+)", open(log).read())
        result["failed_op"] = found.group(1).rstrip(":") if found else None
        results[name] = result
    print(json.dumps(results))


if __name__ == "__main__":
    main()
