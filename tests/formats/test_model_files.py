"""Model files: real torch.export archives (.pt2), read without torch; operator-list files of every
format `check-model` and `runtimes add` accept; bad files are one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from conftest import SHARED
from opgov.core.errors import BadInput
from opgov.core.names import canonical
from opgov.formats.oplists import read_model_specs, read_op_file, union
from opgov.formats.pt2 import read_pt2

EXECUTORCH = SHARED / "executorch"


def _targets(torch, gm) -> list[str]:
    """torch's own view of the operators of a graph module, nested graphs included."""
    found = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload):
            found.append(canonical(f"{node.target.namespace}::{node.target._schema.name.split('::')[1]}"
                                   f".{node.target._overloadname}"))
    for _, sub in gm.named_children():
        if isinstance(sub, torch.fx.GraphModule):
            found += _targets(torch, sub)
    return list(dict.fromkeys(found))


@pytest.fixture(scope="module")
def archives(torch_mod, tmp_path_factory):
    """Small modules exported and saved with torch.export.save, and torch's own operator lists."""
    torch = torch_mod
    folder = tmp_path_factory.mktemp("pt2")

    class Small(torch.nn.Module):
        def forward(self, x, y):
            return torch.nn.functional.relu(x + y).sum(dim=0)

    class Branchy(torch.nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.pool = torch.nn.AdaptiveAvgPool2d((5, 5))
            self.fc = torch.nn.Linear(4 * 25, 10)

        def forward(self, x):
            x = torch.nn.functional.hardswish(self.conv(x))
            return self.fc(torch.flatten(self.pool(x), 1))

    made = {}
    for name, module, args in (("small", Small(), (torch.randn(3, 4), torch.randn(3, 4))),
                               ("branchy", Branchy(), (torch.randn(3, 4),)),
                               ("net", Net().eval(), (torch.randn(1, 3, 16, 16),))):
        ep = torch.export.export(module, args)
        path = folder / f"{name}.pt2"
        torch.export.save(ep, path)
        made[name] = (path, _targets(torch, ep.graph_module))
        if name == "net":
            core = ep.run_decompositions()
            torch.export.save(core, folder / "net_core.pt2")
            made["net_core"] = (folder / "net_core.pt2", _targets(torch, core.graph_module))
    return made


def test_archive_operators_are_torchs(archives):
    for name, (path, expected) in archives.items():
        assert read_pt2(path) == tuple(expected), name
    assert read_pt2(archives["small"][0]) == ("aten::add.Tensor", "aten::relu", "aten::sum.dim_IntList")
    # the branches of torch.cond are nested graphs: their operators count, the cond itself does not
    assert set(read_pt2(archives["branchy"][0])) >= {"aten::sin", "aten::cos", "aten::gt.Scalar"}
    assert not any("cond" in op for op in read_pt2(archives["branchy"][0]))


def test_reading_needs_no_torch(archives):
    """A fresh interpreter that cannot import torch reads the archive all the same."""
    path, expected = archives["net"]
    code = ("import sys; sys.modules['torch'] = None\n"
            "from opgov.formats.pt2 import read_pt2\n"
            f"print('\\n'.join(read_pt2({str(path)!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == expected


def test_archive_is_recognised_by_content(archives, tmp_path):
    path, expected = archives["small"]
    renamed = tmp_path / "model.bin"
    renamed.write_bytes(path.read_bytes())
    got = read_op_file(renamed)
    assert got.format == "pt2" and got.ops == tuple(expected)


def test_several_models_give_their_union(archives):
    lists = read_model_specs([str(archives["small"][0]), str(archives["net_core"][0])])
    ops = union(lists)
    assert ops == tuple(dict.fromkeys(archives["small"][1] + archives["net_core"][1]))


def _bad(path: Path, *words: str) -> str:
    with pytest.raises(BadInput) as err:
        read_op_file(path)
    message = str(err.value)
    assert str(path) in message and "\n" not in message
    for word in words:
        assert word in message, message
    return message


def test_broken_archives(archives, tmp_path):
    good = archives["small"][0].read_bytes()
    truncated = tmp_path / "truncated.pt2"
    truncated.write_bytes(good[: len(good) // 2])
    _bad(truncated, "not a readable torch.export archive")
    garbage = tmp_path / "garbage.pt2"
    garbage.write_bytes(bytes(range(256)) * 8)
    _bad(garbage, "not a readable torch.export archive")
    text = tmp_path / "text.pt2"
    text.write_text("aten::add.Tensor\n")
    _bad(text, "not a readable torch.export archive")
    # a zip that holds no serialized program
    empty = tmp_path / "weights.pt2"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("m/data/weights/model_weights_config.json", "{}")
    _bad(empty, "no serialized program")
    # a program that is not JSON, or not a graph
    for name, payload, words in (("notjson", "{graph", ("not valid JSON",)),
                                 ("nograph", json.dumps({"graph_module": {}}), ("no graph nodes",)),
                                 ("badnode", json.dumps({"graph_module": {"graph": {"nodes": [{"x": 1}],
                                                                                    "outputs": []}}}),
                                  ("without a target",)),
                                 ("deep", "[" * 100000 + "]" * 100000, ("nested too deeply",))):
        path = tmp_path / f"{name}.pt2"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("m/models/model.json", payload)
        message = _bad(path, *words)
        assert "m/models/model.json" in message


def test_binary_file_is_not_a_list(tmp_path):
    path = tmp_path / "blob.txt"
    path.write_bytes(b"\x7fELF\x00\x01\x02")
    _bad(path, "binary file")


# --- operator-list formats ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def executorch_dir():
    if not (EXECUTORCH / "1.3.0" / "portable-functions.yaml").is_file():
        pytest.skip("ExecuTorch registries not available")
    return EXECUTORCH


@pytest.mark.parametrize("version", ["0.2.0", "0.5.0", "1.0.0", "1.3.0"])
def test_executorch_kernel_registries(executorch_dir, version):
    for name in ("portable-functions.yaml", "optimized.yaml"):
        path = executorch_dir / version / name
        entries = yaml.safe_load(path.read_text())
        got = read_op_file(path)
        assert got.format == "kernel-yaml"
        expected = [canonical(e["op"]) if "op" in e else canonical(e["func"].split("(")[0]) for e in entries]
        assert got.ops == tuple(dict.fromkeys(expected))


def test_kernel_yaml_errors_name_the_line(tmp_path):
    path = tmp_path / "functions.yaml"
    path.write_text("- op: add.out\n  kernels: []\n- kernels: []\n")
    _bad(path, f"{path}:3:", "without 'op' or 'func'")
    path.write_text("- op: add.out\n- op: 'not an op!'\n")
    _bad(path, f"{path}:2:", "not an operator name")
    path.write_text("- op: add.out\n  op: sub.out\n")
    _bad(path, "appears twice")
    path.write_text("- op: [add.out\n")
    _bad(path, "not valid YAML")


def test_selected_operators(tmp_path):
    path = tmp_path / "selected_operators.yaml"
    path.write_text("build_features: []\ninclude_all_non_op_selectives: false\ninclude_all_operators: false\n"
                    "operators:\n  aten::add.out:\n    is_root_operator: true\n    include_all_overloads: false\n"
                    "  aten::relu.out: {is_root_operator: true}\n  aten::add.out2: {}\n")
    got = read_op_file(path)
    assert got.format == "selected-operators"
    assert got.ops == ("aten::add.out", "aten::relu.out", "aten::add.out2")
    path.write_text("include_all_operators: true\noperators: {}\n")
    _bad(path, f"{path}:1:", "selects every operator")
    path.write_text("build_features: []\n")
    _bad(path, "no 'operators:'")


def test_opset_build_outputs(tmp_path):
    text = tmp_path / "opset.txt"
    text.write_text("opset core-aten: 2 operators to implement\n  aten::abs                 core\n"
                    "  aten::add.Tensor          core\n1457 operators would be decomposed but have no rule\n"
                    "models (core-aten operators): 1/1 covered (100%)\n  torchvision#alexnet    covered\n")
    got = read_op_file(text)
    assert got.format == "opset-text" and got.ops == ("aten::abs", "aten::add.Tensor")
    js = tmp_path / "opset.json"
    js.write_text(json.dumps({"preset": "core-aten", "operators": [{"op": "aten::abs"}, {"op": "aten::add.Tensor"}]}))
    assert read_op_file(js).ops == ("aten::abs", "aten::add.Tensor")
    # a model accepts no opset output: the list reader says what the object is not
    with pytest.raises(BadInput, match="JSON object, not a list"):
        read_model_specs([str(js)])


def test_plain_lists(tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text("# mine\naten::add.Tensor\naten.relu.default\n\nmul.Tensor  # scaled\n")
    assert read_op_file(path).ops == ("aten::add.Tensor", "aten::relu", "aten::mul.Tensor")
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    _bad(empty, "names no operators")


# --- check-model on archives, through the CLI -------------------------------------------------------

SAMPLE_V2 = Path(__file__).resolve().parents[2] / "data" / "sample"


def test_check_model_reads_archives(cli, archives, tmp_path):
    cli.ok("import", SAMPLE_V2 / "native_functions.v2.yaml", "--tags-yaml", SAMPLE_V2 / "tags.yaml", "--label", "v2")
    small = cli("check-model", archives["small"][0], "--format", "json")
    assert small.code == 0, small.err
    assert small.json()["operators"] == ["aten::add.Tensor", "aten::relu", "aten::sum.dim_IntList"]
    # two models: their union; the cond branches' aten::cos and aten::gt.Scalar are not in the sample
    both = cli("check-model", archives["small"][0], archives["branchy"][0], "--format", "json")
    assert both.code == 1
    data = both.json()
    assert data["operators"] == list(dict.fromkeys(archives["small"][1] + archives["branchy"][1]))
    assert {e["op"] for e in data["errors"] if e["rule"] == "unknown-operator"} >= {"aten::cos", "aten::gt.Scalar"}
    # a broken archive: one line naming the file, exit 2
    broken = tmp_path / "broken.pt2"
    broken.write_bytes(archives["small"][0].read_bytes()[:300])
    result = cli("check-model", archives["small"][0], broken)
    assert result.code == 2 and result.out == ""
    assert result.err.count("\n") == 1 and str(broken) in result.err and "Traceback" not in result.err
