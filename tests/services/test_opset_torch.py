"""The opset is what torch.export really produces: for every preset and several custom choices,
the code opgov generates is run with torch 2.13 on exported modules, and every operator of the
resulting graphs must be one opgov lists (to implement, or as a graph operator).

The database holds PyTorch 2.13.0's registry, the 2023 review, opgov's rules file and the facts
`opgov decomps import-torch` recorded from the installed torch. Exports are made once per module
(small shapes: the machine is slow)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_opgov

from opgov.core.errors import PolicyRefusal

# (preset, decompose, keep): keeping decomposable operators, decomposing core operators torch can
# decompose (var.correction goes to prims::var), adding to no-decomp
CHOICES = [
    ("core-aten", [], []),
    ("no-decomp", [], []),
    ("full-decomp", [], []),
    ("core-aten", [], ["aten::hardswish", "aten::upsample_bilinear2d.vec", "aten::linear"]),
    ("core-aten", ["aten::native_layer_norm", "aten::var.correction"], []),
    ("no-decomp", ["aten::roll", "aten::hardswish"], ["aten::linear"]),
    ("full-decomp", [], ["aten::roll"]),
]
# core by the committee's decision while torch's default table decomposes them
CORE_BY_DECISION = ("aten::roll", "aten::pixel_shuffle")


_run = run_opgov  # the CLI in-process (tests/conftest.py)


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release) -> str:
    """2.13.0, the 2023 review, opgov's rules and torch's facts (import-torch, the whole table)."""
    path = tmp_path_factory.mktemp("torchfacts") / "opgov.db"
    url = f"sqlite:///{path}"
    folder = pytorch_release("2.13.0")
    now = "2026-01-05T09:00:00+00:00"
    _run("--db", url, "db", "upgrade", "--simulation")
    _run("--db", url, "--now", now, "import", folder / "native_functions.yaml", "--tags-yaml",
         folder / "tags.yaml", "--label", "2.13.0")
    _run("--db", url, "--now", now, "decisions", "load", "core-aten-review-2023")
    _run("--db", url, "--now", now, "decomps", "load", "export-composites")
    _run("--db", url, "--now", now, "decomps", "import-torch", "--budget", "300")  # the shipped facts
    return url


def build(url: str, preset: str, decompose=(), keep=()):
    from opgov.core.clock import SystemClock
    from opgov.db.engine import make_engine, transaction
    from opgov.reads.common import Ctx
    from opgov.services.decomps import build as build_opset

    engine = make_engine(url)
    try:
        with transaction(engine) as session:
            ctx = Ctx(session=session, actor="test", clock=SystemClock())
            return build_opset(ctx, preset=preset, decompose=list(decompose), keep=list(keep), models=None)[0]
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def exported(torch_mod):
    """Small modules exported once: norms, activations, reductions, attention, interpolation,
    roll/pixel_shuffle, linear; and a data-dependent shape (nonzero, item)."""
    torch = torch_mod
    F = torch.nn.functional

    class Zoo(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln = torch.nn.LayerNorm(8)
            self.bn = torch.nn.BatchNorm2d(4)
            self.gn = torch.nn.GroupNorm(2, 4)
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x, q):
            y = self.gn(self.bn(x))
            y = F.hardswish(y) + F.gelu(y) + F.silu(y) + torch.relu(y)
            y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
            y = torch.roll(y, 1, 2)
            z = F.pixel_shuffle(y, 2)
            a = F.scaled_dot_product_attention(q, q, q)
            h = self.fc(self.ln(a))
            return z.sum() + h.max() + h.var() + h.var(dim=1).sum() + x.max()

    class DataDependent(torch.nn.Module):
        def forward(self, x):
            n = (x > 0).sum().item()
            torch._check(n >= 0)
            return torch.nonzero(x).float().sum() + torch.ones(n).sum()

    zoo = Zoo().eval()
    with torch.no_grad():
        programs = {
            "zoo": torch.export.export(zoo, (torch.randn(1, 4, 4, 4), torch.randn(1, 2, 3, 8))),
            "data-dependent": torch.export.export(DataDependent(), (torch.randn(5),)),
        }
    return programs


def graph_ops(torch_mod, ep) -> set[str]:
    out = set()
    for node in ep.graph.nodes:
        target = node.target
        if node.op == "call_function" and isinstance(target, torch_mod._ops.OpOverload):
            overload = target._overloadname
            out.add(f"{target.namespace}::{target._opname}" + ("" if overload == "default" else f".{overload}"))
    return out


def lower(torch_mod, ep, code: str):
    scope: dict = {}
    exec(compile(code, "opgov-snippet.py", "exec"), scope)  # noqa: S102 - opgov's own generated code
    return ep.run_decompositions(scope["decomp_table"])


@pytest.mark.parametrize(("preset", "decompose", "keep"), CHOICES)
def test_the_generated_code_produces_only_listed_operators(db, exported, torch_mod, preset, decompose, keep):
    from opgov.render.decomps_text import render_python

    opset = build(db, preset, decompose, keep)
    assert opset.torch_version == torch_mod.__version__
    code = render_python(opset)
    assert f"Exact for torch {torch_mod.__version__}" in code
    allowed = opset.operators | set(opset.graph_ops)
    for name, ep in exported.items():
        found = graph_ops(torch_mod, lower(torch_mod, ep, code))
        assert found <= allowed, f"{preset} -{decompose} +{keep} {name}: {sorted(found - allowed)} not listed"
        if name == "zoo" and preset != "full-decomp":
            # core by decision, decomposed by torch's default table: the code keeps them
            assert set(CORE_BY_DECISION) - set(decompose) <= found
        for op in keep:
            assert op in opset.operators
        for op in decompose:
            assert op not in found


def test_decided_decomposable_that_torch_keeps_is_listed_with_a_note(db, exported, torch_mod):
    from opgov.render.decomps_text import render_python

    opset = build(db, "core-aten")
    why = {e.op: e.why for e in opset.entries}
    # the 2023 review decomposes aten::max into amax/argmax; torch 2.13 has no decomposition for it
    assert why["aten::max"] == "torch-keeps"
    assert any("has no decomposition for them" in n and "aten::max," in n for n in opset.notes)
    assert any("kept by the generated code" in n and "aten::roll" in n for n in opset.notes)
    assert "aten::max" in graph_ops(torch_mod, lower(torch_mod, exported["zoo"], render_python(opset)))
    assert "aten::roll" in opset.code_keep and "aten::pixel_shuffle" in opset.code_keep


def test_a_decomposition_follows_torch_not_the_rules(db, exported, torch_mod):
    opset = build(db, "core-aten", ["aten::var.correction", "aten::native_layer_norm"])
    # torch's own decompositions and their real targets, in any namespace
    assert "prims::var" in opset.operators
    assert "aten::var.correction" not in opset.operators and "aten::native_layer_norm" not in opset.operators
    plain = build(db, "core-aten")
    # unasked, a decomposition that leaves ATen is not added: the rule's operator is implemented
    assert "prims::var" not in plain.operators
    assert "aten::var.correction" in plain.operators
    assert {"aten::var.correction", "aten::native_layer_norm"} <= set(opset.code_decompose)


def test_a_decomposition_torch_cannot_do_is_refused_with_the_reason(db):
    with pytest.raises(PolicyRefusal, match=r"aten::max: torch 2\.13\.0\S* has no decomposition"):
        build(db, "core-aten", ["aten::max"])
    with pytest.raises(PolicyRefusal, match="aten::convolution"):
        build(db, "no-decomp", ["aten::convolution"])


def test_the_cli_says_which_torch_release_it_is_exact_for(db, torch_mod, tmp_path: Path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "opset", "build", "--decompose", "aten::max"],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "has no decomposition" in done.stderr and "Traceback" not in done.stderr
    text = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "opset", "build"], capture_output=True,
                          text=True, check=True).stdout
    assert f"(exact for torch {torch_mod.__version__}: the facts `opgov decomps import-torch` recorded)" in \
        text.splitlines()[0]
    assert "not to implement:" in text and "aten::_assert_scalar" in text


def test_check_decomps_reports_each_disagreement_with_torch(db, torch_mod):
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "check-decomps", "--format", "json"],
                          capture_output=True, text=True)
    assert "Traceback" not in done.stderr, done.stderr
    found: dict[str, set[str]] = {}
    for v in json.loads(done.stdout)["violations"]:
        found.setdefault(v["rule"], set()).add(v["operator"])
    # asked of torch itself: its default table and its decompositions
    from torch._decomp import core_aten_decompositions, decomposition_table

    aten = torch_mod.ops.aten
    assert aten.max.default not in core_aten_decompositions() and aten.max.default not in decomposition_table
    assert "aten::max" in found["torch-keeps-decomposable"]
    assert aten.roll.default in core_aten_decompositions()
    assert {"aten::roll", "aten::pixel_shuffle"} <= found["torch-decomposes-core"]
    assert not found["torch-decomposes-core"] & {"aten::add.Tensor", "aten::convolution"}
