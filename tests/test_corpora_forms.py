"""`--models` as users have them: a folder of .pt2 archives (each a model) and a corpus holding only
core_aten_ops; runtimes coverage and opset build read both."""

from __future__ import annotations

import json

import pytest

from test_runtimes import NOW, executorch_dir, rt, runtimes_db  # noqa: F401 (fixtures)


@pytest.fixture
def archives(torch_mod, tmp_path):
    torch = torch_mod

    class Clip(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.hardtanh(x) + 1

    class Flat(torch.nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0], -1).relu()

    folder = tmp_path / "exported"
    folder.mkdir()
    torch.export.save(torch.export.export(Clip(), (torch.randn(2, 3),)), str(folder / "clip.pt2"))
    batch = torch.export.Dim("batch", min=2)
    flat = torch.export.export(Flat(), (torch.randn(4, 3, 2),), dynamic_shapes={"x": {0: batch}})
    torch.export.save(flat.run_decompositions(), str(folder / "flat.pt2"))
    graph = {str(n.target) for n in flat.run_decompositions().graph.nodes if n.op == "call_function"}
    assert "aten.sym_size.int" in graph  # a symbolic size: a graph operator, as torch exports it
    return folder


def test_a_folder_of_archives(rt, archives):
    data = rt("runtimes", "coverage", "--models", str(archives), "--format", "json").json()
    rows = {m["model"]: m for m in data["models"]}
    assert set(rows) == {"pt2#clip", "pt2#flat"}
    assert rows["pt2#flat"]["graph_ops"] == ["aten::sym_size.int"]
    for name in ("clip", "flat"):
        for runtime, missing in rows[f"pt2#{name}"]["missing"].items():
            check = rt("check-model", archives / f"{name}.pt2", "--runtime", runtime, "--format", "json").json()
            assert missing == [m["op"] for m in check["missing"]], (name, runtime)
            assert "aten::sym_size.int" not in missing
    assert rows["pt2#flat"]["missing"]["executorch@1.3.0"] == []  # sym_size needs no kernel
    opset = rt("opset", "build", "--models", str(archives), "--format", "json").json()
    per_model = {m["model"]: m for m in opset["coverage"]["per_model"]}
    assert set(per_model) == {"pt2#clip", "pt2#flat"}
    # the lowered archive is covered by the core-aten opset; its symbolic size is no operator to implement
    assert per_model["pt2#flat"]["covered"] and "aten::sym_size.int" not in per_model["pt2#flat"]["needed"]


def test_a_corpus_with_only_core_aten_ops(rt, models_dir, tmp_path):
    real = json.loads((models_dir / "torchvision_ops.json").read_text())
    names = sorted(real["models"])[:4]
    trimmed = {"source": real.get("source", ""),
               "models": {n: {"core_aten_ops": real["models"][n]["core_aten_ops"]} for n in names}}
    path = tmp_path / "torchvision_ops.json"
    path.write_text(json.dumps(trimmed))
    full = tmp_path / "full" / "torchvision_ops.json"
    full.parent.mkdir()
    full.write_text(json.dumps({"source": real.get("source", ""), "models": {n: real["models"][n] for n in names}}))
    ours = rt("runtimes", "coverage", "--models", str(path), "--format", "json").json()
    theirs = rt("runtimes", "coverage", "--models", str(full), "--format", "json").json()
    assert ours["models"] == theirs["models"] and len(ours["models"]) == 4
    built = rt("opset", "build", "--models", str(path), "--format", "json").json()["coverage"]
    reference = rt("opset", "build", "--models", str(full), "--format", "json").json()["coverage"]
    unnamed = [{**m, "family": ""} for m in reference["per_model"]]  # the trimmed copy has no family
    assert built["per_model"] == unnamed and built["models"] == 4
