"""No operator torch removes by itself is ever listed, and every listed operator a module calls
survives: the opset, its generated code and torch 2.13's export agree, both ways.

torch.export decomposes some operators whatever the table says: the CompositeImplicitAutograd ones
it cannot preserve (``batch_norm``, ``flatten.using_ints``, ``reshape``, ``dropout``: they alias or
mutate an input, or are tagged so) and ``native_batch_norm``. Small modules with random weights
that call them (and LayerNorm, var, Linear, GELU, which torch can keep) are exported once and
lowered with the code of every preset and several custom choices, on two databases: a fresh one
(PyTorch 2.13.0's registry, the 2023 review and opgov's rules file, as the README sets it up: the
opset follows opgov's shipped facts) and the same after ``opgov decomps import-torch`` (the facts
of the installed torch). Each time:

- every operator of the lowered graph is one the opset lists (``operators``) or a graph operator;
- every listed operator the exported program called is still in the lowered graph;
- no operator torch removes by itself is listed, nor needed by the model (``--models``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings

import pytest
from tests.conftest import opgov_in_process

pytestmark = pytest.mark.torch

# the operators torch 2.13's export removes whatever the table says, that the modules call
REMOVED = ("aten::batch_norm", "aten::flatten.using_ints", "aten::reshape", "aten::dropout")

CHOICES = {
    "core-aten": [],
    "full-decomp": ["--preset", "full-decomp"],
    "no-decomp": ["--preset", "no-decomp"],
    "decompose-layer-norm-and-var": ["--decompose", "aten::native_layer_norm", "--decompose", "aten::var.correction"],
    "keep-layer-norm-linear-gelu": ["--keep", "aten::layer_norm", "--keep", "aten::linear", "--keep", "aten::gelu"],
    "no-decomp-keep-linear-decompose-layer-norm": ["--preset", "no-decomp", "--keep", "aten::linear",
                                                   "--decompose", "aten::layer_norm"],
    "full-decomp-keep-var": ["--preset", "full-decomp", "--keep", "aten::var.dim"],
}


def _opgov(db: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = opgov_in_process(["--db", db, "--actor", "setup", *args], env={**os.environ, "OPGOV_SERVER": ""})
    if check:
        assert done.returncode == 0, f"opgov {' '.join(args)}: {done.stderr}"
    return done


@pytest.fixture(scope="module")
def fresh(tmp_path_factory, pytorch_release) -> str:
    """The README's path: a release imported, the shipped decisions and rules; no import-torch."""
    url = f"sqlite:///{tmp_path_factory.mktemp('fresh') / 'opgov.db'}"
    folder = pytorch_release("2.13.0")
    _opgov(url, "db", "upgrade")
    _opgov(url, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
           "--label", "2.13.0")
    _opgov(url, "decisions", "load", "core-aten-review-2023")
    _opgov(url, "decomps", "load", "export-composites")
    return url


@pytest.fixture(scope="module")
def traced(fresh, tmp_path_factory) -> str:
    """The same database once `decomps import-torch` recorded the installed torch's facts."""
    path = tmp_path_factory.mktemp("traced") / "opgov.db"
    shutil.copyfile(fresh.removeprefix("sqlite:///"), path)
    url = f"sqlite:///{path}"
    _opgov(url, "decomps", "import-torch", "--budget", "1200")  # the shipped facts of the installed release
    return url


def _modules(torch):
    nn = torch.nn

    class Vision(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn, self.drop = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Dropout(0.2)
            self.fc = nn.Linear(16, 5)

        def forward(self, x):
            y = self.drop(torch.relu(self.bn(self.conv(x)))).flatten(1)
            return self.fc(y)

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln, self.fc, self.drop = nn.LayerNorm(8), nn.Linear(8, 8), nn.Dropout(0.1)

        def forward(self, x):
            h = self.drop(nn.functional.gelu(self.fc(self.ln(x.reshape(2, 3, 8)))))
            return h + h.var(dim=-1, keepdim=True)

    return {"vision": (Vision().eval(), (torch.randn(1, 3, 4, 4),)),
            "transformer": (Transformer().eval(), (torch.randn(6, 8),))}


def _ops(torch, program) -> set[str]:
    from opgov.formats.torch_decomps import overload_name

    return {overload_name(n.target) for n in program.graph.nodes
            if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)}


@pytest.fixture(scope="module")
def exported(torch_mod, tmp_path_factory):
    """name → (the exported program, the operators it calls, its .pt2 archive)."""
    folder = tmp_path_factory.mktemp("pt2")
    out = {}
    with torch_mod.no_grad():
        for name, (module, args) in _modules(torch_mod).items():
            program = torch_mod.export.export(module, args)
            torch_mod.export.save(program, folder / f"{name}.pt2")
            out[name] = (program, _ops(torch_mod, program), folder / f"{name}.pt2")
    return out


def _lowered(torch, program, code: str) -> set[str]:
    scope: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(code, "opgov-opset.py", "exec"), scope)  # noqa: S102 - the code opgov generated
        return _ops(torch, program.run_decompositions(scope["decomp_table"]))


def _check_both_ways(db: str, torch, exported, choice: str) -> dict:
    args = CHOICES[choice]
    report = json.loads(_opgov(db, "opset", "build", *args, "--format", "json").stdout)
    code = _opgov(db, "opset", "build", *args, "--format", "python").stdout
    listed = {e["op"] for e in report["operators"]}
    assert not listed & set(REMOVED), f"{choice}: lists what torch removes by itself: {sorted(listed & set(REMOVED))}"
    assert set(REMOVED) <= set(report["torch_removes"]), choice
    for name, (program, called, _) in exported.items():
        held = _lowered(torch, program, code)
        beyond = held - listed - set(report["graph_ops"])
        assert not beyond, f"{choice}: {name}'s graph holds operators the opset does not list: {sorted(beyond)}"
        lost = (called & listed) - held
        assert not lost, f"{choice}: {name} called listed operators the code did not keep: {sorted(lost)}"
    return report


@pytest.mark.parametrize("choice", list(CHOICES))
def test_a_fresh_database_agrees_with_torch_both_ways(fresh, exported, torch_mod, choice):
    report = _check_both_ways(fresh, torch_mod, exported, choice)
    assert report["torch_facts"].startswith(f"torch {torch_mod.__version__}: opgov's shipped facts")


@pytest.mark.parametrize("choice", list(CHOICES))
def test_with_import_torch_it_agrees_both_ways(traced, exported, torch_mod, choice):
    report = _check_both_ways(traced, torch_mod, exported, choice)
    assert "decomps import-torch" in report["torch_facts"]


def test_no_decomp_lists_what_torch_turns_them_into(fresh, exported, torch_mod):
    report = json.loads(_opgov(fresh, "opset", "build", "--preset", "no-decomp", "--format", "json").stdout)
    why = {e["op"]: (e["why"], e["produced_by"]) for e in report["operators"]}
    program, called, _ = exported["vision"]
    lowered = _lowered(torch_mod, program, _opgov(fresh, "opset", "build", "--preset", "no-decomp",
                                                  "--format", "python").stdout)
    # what export made of batch_norm, reshape/flatten and dropout in eval is listed, and said why
    assert {"aten::_native_batch_norm_legit_no_training", "aten::view", "aten::clone"} <= lowered
    assert {"aten::_native_batch_norm_legit_no_training", "aten::view", "aten::clone"} <= set(why)
    assert "aten::native_batch_norm" in why["aten::_native_batch_norm_legit_no_training"][1]
    removed = report["torch_removes"]
    assert "alias" in removed["aten::reshape"]["why"] and removed["aten::reshape"]["into"] == ["aten::view"]
    assert "maybe_aliasing_or_mutating" in removed["aten::batch_norm"]["why"]
    text = _opgov(fresh, "opset", "build", "--preset", "no-decomp").stdout
    line = next(line for line in text.splitlines() if line.startswith("not listed: "))
    assert f"{len(removed)} operator(s) torch {torch_mod.__version__} removes by itself at export" in line
    assert "aten::adjoint (→ aten::transpose.int)" in line  # the functional ones first, by name


def test_a_model_never_needs_what_torch_removes(fresh, traced, exported):
    for db in (fresh, traced):
        for preset in ("no-decomp", "core-aten"):
            for name, (_, called, archive) in exported.items():
                report = json.loads(_opgov(db, "opset", "build", "--preset", preset, "--models", str(archive),
                                           "--format", "json").stdout)
                (model,) = report["coverage"]["per_model"]
                assert called & set(REMOVED), name  # the archive does call them
                assert not set(model["needed"]) & set(REMOVED), (preset, name, model["needed"])
                if preset == "no-decomp":
                    assert model["covered"], (name, model["missing"])


def test_keeping_what_torch_cannot_preserve_is_refused_with_the_reason(fresh, torch_mod):
    done = _opgov(fresh, "opset", "build", "--preset", "no-decomp", "--keep", "aten::batch_norm", check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "--keep aten::batch_norm" in done.stderr and "decomposes it at export whatever the table says" in done.stderr
    assert "aten::_native_batch_norm_legit_no_training" in done.stderr  # what to keep instead


def test_the_layer_norm_and_var_choice_of_the_issue_holds_nothing_outside_the_list(fresh, exported, torch_mod):
    """Without import-torch, decomposing native_layer_norm and var.correction used to leave
    var_mean.correction in the graph, outside the list: the shipped facts know torch's real targets
    (native_layer_norm → var_mean.correction, whose own decomposition leaves ATen, so it is listed)."""
    args = CHOICES["decompose-layer-norm-and-var"]
    report = json.loads(_opgov(fresh, "opset", "build", *args, "--format", "json").stdout)
    code = _opgov(fresh, "opset", "build", *args, "--format", "python").stdout
    held = _lowered(torch_mod, exported["transformer"][0], code)
    listed = {e["op"]: e for e in report["operators"]}
    assert "aten::var_mean.correction" in held and "aten::native_layer_norm" in listed["aten::var_mean.correction"][
        "produced_by"]
    assert held <= set(listed) | set(report["graph_ops"])
    assert any("var_mean.correction" in note and "leaves ATen" in note for note in report["notes"])


def test_the_shipped_facts_are_what_the_installed_torch_gives(traced, torch_mod):
    """data/torch/torch-<release>.json (scripts/build_torch_facts.py) holds what tracing the
    installed torch records now: they cannot drift apart."""
    from opgov.resources import shipped_torch_facts

    release = torch_mod.__version__.split("+")[0]
    shipped = shipped_torch_facts()
    assert release in shipped, f"no shipped facts for torch {release}: run scripts/build_torch_facts.py"
    from sqlalchemy import create_engine, text

    engine = create_engine(traced)
    try:
        with engine.connect() as conn:
            recorded = json.loads(conn.execute(text("select value from settings where key = 'torch_facts'")).scalar())
    finally:
        engine.dispose()
    assert json.loads(shipped[release].read_text()) == recorded, (
        f"{shipped[release]} differs from what torch {torch_mod.__version__} traces: run scripts/build_torch_facts.py")
