"""The opset and its code, judged by torch.export: a model exported and lowered with the code
`opset build --format python` writes holds only operators the opset lists to implement, or graph
operators (assertions, symbolic sizes) it lists apart.

The registry is PyTorch 2.13.0's with the 2023 committee review and the shipped rules file, as a
backend author has it; the models are small modules with random weights, one per family of
operators the question is usually asked about."""

from __future__ import annotations

import json
import warnings

import pytest

from tests.api.test_api_serve import opgov

CHOICES = {
    "core-aten": ["--preset", "core-aten"],
    "full-decomp": ["--preset", "full-decomp"],
    "no-decomp": ["--preset", "no-decomp"],
    # a decomposable operator kept whole, and a core one decomposed by torch's own decomposition
    "keep-gelu-decompose-hardswish": ["--preset", "core-aten", "--keep", "aten::gelu",
                                      "--decompose", "aten::hardswish"],
}


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, decisions_2023):
    url = f"sqlite:///{tmp_path_factory.mktemp('opset') / 'opgov.db'}"
    folder = pytorch_release("2.13.0")
    opgov(url, "db", "upgrade")
    opgov(url, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
          "--label", "2.13.0")
    opgov(url, "decisions", "load", "core-aten-review-2023")
    opgov(url, "decomps", "load", "export-composites")
    return url


@pytest.fixture(scope="module")
def opsets_with_torch(db, tmp_path_factory):
    """The same choices once torch's facts for the installed release are recorded: exact."""
    import shutil

    path = tmp_path_factory.mktemp("opset-torch") / "opgov.db"
    shutil.copyfile(db.removeprefix("sqlite:///"), path)
    url = f"sqlite:///{path}"
    opgov(url, "decomps", "import-torch", "--budget", "300")  # the shipped facts of the installed release
    return {name: (json.loads(opgov(url, "opset", "build", *args, "--format", "json")),
                   opgov(url, "opset", "build", *args, "--format", "python"))
            for name, args in CHOICES.items()}


@pytest.fixture(scope="module")
def opsets(db):
    """choice → (the opset's JSON, the generated Python)."""
    return {name: (json.loads(opgov(db, "opset", "build", *args, "--format", "json")),
                   opgov(db, "opset", "build", *args, "--format", "python"))
            for name, args in CHOICES.items()}


def _modules(torch):
    nn, F = torch.nn, torch.nn.functional

    class Norms(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer, self.batch, self.group = nn.LayerNorm(8), nn.BatchNorm2d(4), nn.GroupNorm(2, 4)

        def forward(self, x):
            return self.layer(self.group(self.batch(x)).reshape(2, 4, 8)).sum()

    class Activations(nn.Module):
        def forward(self, x):
            return F.gelu(x) + F.silu(x) + F.hardswish(x) + F.softplus(x) + torch.tanh(x)

    class Reductions(nn.Module):
        def forward(self, x):
            return x.var(dim=1) + x.mean(dim=1) + x.amax(dim=1)

    class Maximum(nn.Module):
        def forward(self, x):
            return x.max()

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 24)

        def forward(self, x):
            q, k, v = self.proj(x).chunk(3, dim=-1)
            return F.scaled_dot_product_attention(q, k, v)

    class Interpolation(nn.Module):
        def forward(self, x):
            return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)

    class Shuffles(nn.Module):
        def forward(self, x):
            return torch.roll(F.pixel_shuffle(x, 2), shifts=1, dims=-1)

    class DataDependent(nn.Module):
        def forward(self, x):
            where = x.nonzero()
            return torch.relu(where.float().sum(1) + x.shape[0])

    image = torch.randn(1, 4, 4, 4)
    return {
        "norms": (Norms().eval(), (torch.randn(1, 4, 4, 4),), None),
        "activations": (Activations(), (torch.randn(3, 5),), None),
        "reductions": (Reductions(), (torch.randn(3, 5),), None),
        "max": (Maximum(), (torch.randn(3, 5),), None),
        "attention": (Attention(), (torch.randn(2, 3, 8),), None),
        "interpolation": (Interpolation(), (image,), None),
        "shuffles": (Shuffles(), (image,), None),
        "data-dependent": (DataDependent(), (torch.randn(8),), ({0: torch.export.Dim("n")},)),
    }


@pytest.fixture(scope="module")
def exported(torch_mod):
    return {name: torch_mod.export.export(module, args, dynamic_shapes=shapes)
            for name, (module, args, shapes) in _modules(torch_mod).items()}


def _graph_ops(program) -> set[str]:
    found = set()
    for node in program.graph.nodes:
        op = node.target
        if node.op == "call_function" and hasattr(op, "_schema") and hasattr(op, "_overloadname"):
            found.add(f"{op.namespace}::{op._opname}" + ("" if op._overloadname == "default" else f".{op._overloadname}"))
    return found


# x.max(): the 2023 review decided aten::max decomposes (into amax/argmax); torch 2.13 has no
# decomposition for it at all, so the graph keeps it. Without `decomps import-torch` the opset
# follows opgov's shipped facts of that release, which know it: every case holds either way.
CASES = [(choice, model) for choice in CHOICES for model in ("norms", "activations", "reductions", "max", "attention",
                                                              "interpolation", "shuffles", "data-dependent")]


MODELS = ("norms", "activations", "reductions", "max", "attention", "interpolation", "shuffles", "data-dependent")


@pytest.mark.parametrize(("choice", "model"), CASES)
def test_the_generated_code_leaves_only_listed_operators(opsets, exported, choice, model):
    _lower_and_compare(opsets, exported, choice, model)


@pytest.mark.parametrize(("choice", "model"), [(c, m) for c in CHOICES for m in MODELS])
def test_with_torchs_facts_every_case_holds(opsets_with_torch, exported, torch_mod, choice, model):
    """With the facts of the installed torch recorded, aten::max is listed too."""
    report = opsets_with_torch[choice][0]
    assert report["torch"] == torch_mod.__version__
    _lower_and_compare(opsets_with_torch, exported, choice, model)


def _lower_and_compare(opsets, exported, choice, model):
    report, code = opsets[choice]
    scope: dict = {}
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        exec(compile(code, f"<opset {choice}>", "exec"), scope)  # noqa: S102 - the code opgov wrote
    program = exported[model].run_decompositions(scope["decomp_table"])
    held = _graph_ops(program)
    listed = {e["op"] for e in report["operators"]}
    beyond = held - listed - set(report["graph_ops"])
    assert not beyond, f"{choice}: {model}'s graph holds operators the opset does not list: {sorted(beyond)}"


def test_core_by_decision_operators_survive_the_code(opsets, exported):
    """roll and pixel_shuffle are core by the 2023 review; torch's default table decomposes roll.
    The code keeps every operator the opset lists."""
    report, _ = opsets["core-aten"]
    listed = {e["op"]: e["why"] for e in report["operators"]}
    assert listed.get("aten::roll") == "core" and listed.get("aten::pixel_shuffle") == "core"
    _, code = opsets["core-aten"]
    scope: dict = {}
    exec(compile(code, "<opset>", "exec"), scope)  # noqa: S102
    held = _graph_ops(exported["shuffles"].run_decompositions(scope["decomp_table"]))
    assert {"aten::roll", "aten::pixel_shuffle"} <= held


def test_a_kept_decomposable_operator_stays_and_a_decomposed_core_one_goes(opsets, exported):
    report, code = opsets["keep-gelu-decompose-hardswish"]
    listed = {e["op"] for e in report["operators"]}
    assert "aten::gelu" in listed and "aten::hardswish" not in listed
    scope: dict = {}
    exec(compile(code, "<opset>", "exec"), scope)  # noqa: S102
    held = _graph_ops(exported["activations"].run_decompositions(scope["decomp_table"]))
    assert "aten::gelu" in held and "aten::hardswish" not in held
