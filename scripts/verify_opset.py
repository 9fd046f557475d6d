"""Check an opset against torch itself: `python scripts/verify_opset.py OPSET.json LOWER.py`.

OPSET.json is `opgov opset build ... --format json`, LOWER.py the same choice's
`--format python`. The script exports a small module (layer, batch and group norm, activations,
`max()`, `var`, attention, interpolation, roll, pixel_shuffle) and a data-dependent one
(nonzero, item) with torch.export, lowers both with LOWER.py's `decomp_table`, and prints every
operator of the lowered graphs that the opset neither lists to implement nor as a graph
operator, and every listed operator the exported program called that the lowering lost. Exit 0
when there is none, 1 otherwise. Needs torch.
"""

from __future__ import annotations

import json
import sys
import warnings

from opgov.formats.torch_decomps import overload_name


def modules(torch):
    F = torch.nn.functional

    class Zoo(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln, self.bn, self.gn = torch.nn.LayerNorm(8), torch.nn.BatchNorm2d(4), torch.nn.GroupNorm(2, 4)

        def forward(self, x, q):
            y = self.gn(torch.nn.functional.dropout(self.bn(x), 0.1, self.training))
            y = F.hardswish(y) + F.gelu(y) + F.silu(y)
            y = torch.roll(F.interpolate(y, scale_factor=2, mode="bilinear"), 1, 2)
            a = self.ln(F.scaled_dot_product_attention(q, q, q))
            return F.pixel_shuffle(y, 2).flatten(1).sum() + a.max() + a.reshape(-1).var()

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            n = (x > 0).sum().item()
            torch._check(n >= 0)
            return torch.nonzero(x).float().sum() + torch.ones(n).sum()

    return {"zoo": (Zoo().eval(), (torch.randn(1, 4, 4, 4), torch.randn(1, 2, 3, 8))),
            "data-dependent": (DataDependent(), (torch.randn(5),))}


def _ops(torch, program) -> set[str]:
    return {overload_name(n.target) for n in program.graph.nodes
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)}


def main(argv: list[str]) -> int:
    warnings.filterwarnings("ignore")
    import torch

    opset = json.loads(open(argv[0]).read())
    scope: dict = {}
    exec(compile(open(argv[1]).read(), argv[1], "exec"), scope)  # noqa: S102 - the user's own lowering code
    listed = {e["op"] for e in opset["operators"]} | set(opset["graph_ops"])
    unlisted = 0
    for label, (module, args) in modules(torch).items():
        with torch.no_grad():
            exported = torch.export.export(module, args)
            ep = exported.run_decompositions(scope["decomp_table"])
        ops = sorted(_ops(torch, ep))
        missing = [op for op in ops if op not in listed]
        lost = sorted((_ops(torch, exported) & listed) - set(ops))  # listed, called, and gone
        unlisted += len(missing) + len(lost)
        print(f"{label}: {len(ops)} operators after lowering, {len(missing)} not in the opset"
              + (f": {', '.join(missing)}" if missing else "")
              + (f"; listed but lost by the lowering: {', '.join(lost)}" if lost else ""))
    print(f"torch {torch.__version__}; opset exact for {opset.get('torch_facts') or opset.get('torch')}")
    return 1 if unlisted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
