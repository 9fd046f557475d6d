"""`--models` takes corpora as users have them: a folder of `.pt2` archives torch.export saved, and
a corpus that records only the lowered programs (`core_aten_ops`)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.api.test_api_serve import opgov


@pytest.fixture(scope="module")
def folder(tmp_path_factory, torch_mod, models_dir):
    """Two archives exported and lowered with torch 2.13, and bert and gpt2 of the real
    transformers corpus with their exported operators left out."""
    nn = torch_mod.nn
    where = tmp_path_factory.mktemp("corpus")
    for name, module, args in (("tiny_mlp", nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 4)),
                                (torch_mod.randn(2, 8),)),
                               ("tiny_conv", nn.Sequential(nn.Conv2d(3, 4, 3), nn.Hardswish(), nn.AdaptiveAvgPool2d(1)),
                                (torch_mod.randn(1, 3, 8, 8),))):
        program = torch_mod.export.export(module.eval(), args).run_decompositions()
        torch_mod.export.save(program, where / f"{name}.pt2")
    real = json.loads((models_dir / "transformers_ops.json").read_text())
    lowered = {"source": "lowered programs only",
               "models": {m: {"family": "transformers", "core_aten_ops": real["models"][m]["core_aten_ops"]}
                          for m in ("bert", "gpt2")}}
    (where / "lowered_ops.json").write_text(json.dumps(lowered))
    return where


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, shared_dir):
    folder = pytorch_release("2.13.0")
    url = f"sqlite:///{tmp_path_factory.mktemp('corpora') / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    opgov(url, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
          "--label", "2.13.0")
    opgov(url, "decomps", "load", "export-composites")
    opgov(url, "runtimes", "add", "executorch@1.3.0",
          "--ops", str(shared_dir / "executorch" / "1.3.0" / "portable-functions.yaml"),
          "--ops", str(shared_dir / "executorch" / "1.3.0" / "optimized.yaml"))
    return url


def test_opset_build_covers_archives_and_a_lowered_only_corpus(db, folder, torch_mod):
    report = json.loads(opgov(db, "opset", "build", "--models", str(folder), "--format", "json"))
    per_model = {m["model"]: m for m in report["coverage"]["per_model"]}
    assert set(per_model) == {"pt2#tiny_mlp", "pt2#tiny_conv", "lowered#bert", "lowered#gpt2"}
    # an archive's operators are its program's, as torch saved it
    program = torch_mod.export.load(folder / "tiny_conv.pt2")
    held = {f"aten::{n.target._opname}" + ("" if n.target._overloadname == "default" else f".{n.target._overloadname}")
            for n in program.graph.nodes if n.op == "call_function" and hasattr(n.target, "_opname")}
    assert set(per_model["pt2#tiny_conv"]["needed"]) == {op for op in held if op not in report["graph_ops"]}
    assert all(m["covered"] for m in per_model.values()), per_model


def test_runtimes_coverage_and_the_site_read_the_same_folder(db, folder, tmp_path):
    matrix = json.loads(opgov(db, "runtimes", "coverage", "--models", str(folder), "--format", "json"))
    assert {m["model"] for m in matrix["models"]} == {"pt2#tiny_mlp", "pt2#tiny_conv", "lowered#bert", "lowered#gpt2"}
    opgov(db, "site", "build", str(tmp_path / "site"), "--models", str(folder), "--ops", "aten::gelu")
    assert "tiny_conv" in (tmp_path / "site" / "opset.html").read_text()


def test_a_corpus_model_with_neither_list_is_refused(db, tmp_path):
    bad = tmp_path / "bad_ops.json"
    bad.write_text(json.dumps({"source": "x", "models": {"m": {"family": "f"}}}))
    done = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "opset", "build", "--models", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "needs 'exported_ops' or 'core_aten_ops'" in done.stderr
    assert done.stderr.count("\n") == 1
