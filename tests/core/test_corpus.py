"""Model corpora, what a model uses (check-model's OPS), and the model check."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from opgov.core.corpus import OpState, check_model, merge_models
from opgov.formats.corpus import load_corpus, resolve_model_ops
from opgov.render.decomps_text import render_model_check
from opgov.core.errors import BadInput
from opgov.core.names import canonical


def raw_models(path: Path) -> dict:
    return json.loads(path.read_text())["models"]


# --- corpora ---------------------------------------------------------------------------------


def test_corpora_load_with_canonical_names(models_dir):
    for path in sorted(models_dir.glob("*_ops.json")):
        corpus = load_corpus(path)
        raw = raw_models(path)
        assert corpus.name == path.stem.removesuffix("_ops")
        assert list(corpus.models) == list(raw)
        for name, m in corpus.models.items():
            assert m.exported_ops == tuple(dict.fromkeys(canonical(x) for x in raw[name]["exported_ops"]))
            assert not any(op.endswith(".default") for op in m.exported_ops + m.core_aten_ops)


def test_merged_models_are_keyed_by_corpus(models_dir):
    corpora = [load_corpus(p) for p in sorted(models_dir.glob("*_ops.json"))]
    merged = merge_models(corpora)
    assert len(merged) == sum(len(c.models) for c in corpora)
    assert all(key == f"{m.corpus}#{m.name}" for key, m in merged.items())


@pytest.mark.parametrize("text, words", [
    ("{not json", "not valid JSON"),
    ('{"models": []}', "not a corpus"),
    ('{"models": {"m": {"exported_ops": "aten::abs", "core_aten_ops": []}}}', "'exported_ops' must be a list"),
    ('{"models": {"m": {"exported_ops": ["bad name!"], "core_aten_ops": []}}}', "model 'm'"),
])
def test_malformed_corpus(tmp_path, text, words):
    path = tmp_path / "mine_ops.json"
    path.write_text(text)
    with pytest.raises(BadInput, match=words) as err:
        load_corpus(path)
    assert str(path) in str(err.value)


# --- OPS specs -------------------------------------------------------------------------------


def test_corpus_model_by_bare_name_and_by_path(models_dir):
    raw = raw_models(models_dir / "torchvision_ops.json")["resnet18"]
    expected = [canonical(x) for x in raw["exported_ops"]]
    assert resolve_model_ops("torchvision#resnet18", corpora_dir=models_dir) == expected
    assert resolve_model_ops(f"{models_dir / 'torchvision_ops.json'}#resnet18") == expected
    after = resolve_model_ops("torchvision#resnet18@core-aten", corpora_dir=models_dir)
    assert after == [canonical(x) for x in raw["core_aten_ops"]]


def test_unknown_model_lists_close_names(models_dir):
    with pytest.raises(BadInput) as err:
        resolve_model_ops("torchvision#resnet19", corpora_dir=models_dir)
    message = str(err.value)
    assert "no model 'resnet19'" in message and "resnet18" in message


def test_unknown_corpus_lists_the_known_ones(models_dir):
    with pytest.raises(BadInput) as err:
        resolve_model_ops("keras#resnet18", corpora_dir=models_dir)
    assert "no corpus named 'keras'" in str(err.value) and "torchvision" in str(err.value)


def test_unknown_stage(models_dir):
    with pytest.raises(BadInput, match="unknown stage"):
        resolve_model_ops("torchvision#resnet18@edge", corpora_dir=models_dir)


def test_ops_file_one_per_line(tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text("# my model\naten::add.Tensor\n\naten.relu.default   # activation\nconvolution\naten::add.Tensor\n")
    assert resolve_model_ops(str(path)) == ["aten::add.Tensor", "aten::relu", "aten::convolution"]


def test_ops_file_bad_name_names_the_line(tmp_path):
    path = tmp_path / "ops.txt"
    path.write_text("aten::add.Tensor\naten::add.Tensor.extra\n")
    with pytest.raises(BadInput) as err:
        resolve_model_ops(str(path))
    assert str(err.value).startswith(f"{path}:2: ")


def test_ops_json_list(tmp_path):
    path = tmp_path / "ops.json"
    path.write_text(json.dumps(["aten::abs.default", "aten::mm"]))
    assert resolve_model_ops(str(path)) == ["aten::abs", "aten::mm"]
    path.write_text('{"models": {}}')
    with pytest.raises(BadInput, match="FILE#model"):
        resolve_model_ops(str(path))


def test_missing_ops_file(tmp_path):
    with pytest.raises(BadInput, match="neither a file nor CORPUS#model"):
        resolve_model_ops(str(tmp_path / "nothing.txt"))


# --- check-model -----------------------------------------------------------------------------

STATE = {
    "aten::add.Tensor": OpState("core"),
    "aten::old": OpState("core", "deleted", replacement="aten::new"),
    "aten::stale": OpState("decomposable", "deprecated"),
    "aten::fading": OpState("core", "deprecating", datetime(2025, 3, 30, 23, 30, tzinfo=timezone.utc),
                            "aten::add.Tensor"),
    "aten::glu": OpState("decomposable"),
    "aten::odd": OpState(None),
}


def test_errors_warnings_and_notes():
    ops = ["aten::add.Tensor", "aten::old", "aten::stale", "aten::fading", "aten::glu", "aten::mystery", "aten::odd"]
    result = check_model(ops, state=STATE, runtime_ops={"aten::add.Tensor", "aten::glu", "aten::fading"},
                         deprecating_period_days=14)
    errors = {(f.rule, f.op) for f in result.errors}
    assert ("operator-deleted", "aten::old") in errors
    assert ("operator-deprecated", "aten::stale") in errors
    assert ("unknown-operator", "aten::mystery") in errors
    assert {op for rule, op in errors if rule == "runtime-missing"} == {
        "aten::old", "aten::stale", "aten::mystery", "aten::odd"}
    assert not result.ok
    [warning] = result.warnings
    assert warning.op == "aten::fading" and warning.replacement == "aten::add.Tensor"
    assert warning.date == datetime(2025, 4, 13, 23, 30, tzinfo=timezone.utc)
    assert "2025-04-13 (UTC)" in warning.message and "use aten::add.Tensor instead" in warning.message
    assert {f.op for f in result.notes} == {"aten::stale", "aten::glu", "aten::odd"}
    assert "uncategorized" in next(f.message for f in result.notes if f.op == "aten::odd")
    assert "use aten::new instead" in next(f.message for f in result.errors if f.op == "aten::old")


def test_naive_deprecation_time_counts_as_utc():
    state = {"aten::x": OpState("core", "deprecating", datetime(2025, 1, 1, 12, 0))}
    [warning] = check_model(["aten::x"], state=state, deprecating_period_days=30).warnings
    assert warning.date == datetime(2025, 1, 31, 12, 0, tzinfo=timezone.utc)


def test_a_clean_model_passes():
    result = check_model(["aten::add.Tensor"], state=STATE)
    assert result.ok and not result.warnings and not result.notes


def test_an_operator_gone_from_the_latest_snapshot_is_a_warning():
    snaps = [("v1", {"aten::glu", "aten::add.Tensor"}), ("v2", {"aten::add.Tensor"})]
    result = check_model(["aten::glu", "aten::add.Tensor"], state=STATE, snapshots=snaps)
    assert [(w.rule, w.op) for w in result.warnings] == [("operator-removed", "aten::glu")]
    assert "not in the latest snapshot (v2); last in v1" in result.warnings[0].message
    assert result.ok and result.earliest_snapshot == "v1"


def test_earliest_snapshot():
    snaps = [("2.0.0", {"aten::a"}), ("2.6.0", {"aten::a", "aten::b"}), ("2.13.0", {"aten::a", "aten::b", "aten::c"})]
    assert check_model(["aten::a", "aten::b"], state={}, snapshots=snaps).earliest_snapshot == "2.6.0"
    assert check_model(["aten::a", "aten::z"], state={}, snapshots=snaps).earliest_snapshot is None


def registry_ops(folder: Path) -> set[str]:
    entries = yaml.load((folder / "native_functions.yaml").read_text(), Loader=yaml.CSafeLoader)
    return {"aten::" + e["func"].split("(", 1)[0] for e in entries}


def test_earliest_release_of_real_models(models_dir, pytorch_release, pytorch_versions):
    snaps = [(v, registry_ops(pytorch_release(v))) for v in pytorch_versions]
    for spec in ("torchvision#resnet18", "transformers#llama"):
        ops = resolve_model_ops(spec, corpora_dir=models_dir)
        label = check_model(ops, state={}, snapshots=snaps).earliest_snapshot
        assert label is not None
        index = [v for v, _ in snaps].index(label)
        assert set(ops) <= snaps[index][1]
        assert all(not set(ops) <= have for _, have in snaps[:index])


def test_renderings():
    result = check_model(["aten::old", "aten::fading", "aten::glu"], state=STATE,
                         snapshots=[("2.0.0", {"aten::glu"}), ("2.13.0", {"aten::glu", "aten::fading", "aten::old"})])
    text = render_model_check(result)
    assert text.splitlines()[0] == "3 operators: 1 error(s), 1 warning(s), 1 note(s)"
    assert "earliest snapshot with every operator: 2.13.0" in text
    assert "none of the 1 snapshots" in render_model_check(check_model(["aten::zz"], state={},
                                                                       snapshots=[("2.13.0", {"aten::glu"})]))
    data = json.loads(render_model_check(result, "json"))
    assert data["ok"] is False and data["warnings"][0]["date"].startswith("2025-04-13T23:30")
    github = render_model_check(result, "github").splitlines()
    assert [line.split(" ", 1)[0] for line in github] == ["::error", "::warning", "::notice"]
    with pytest.raises(BadInput):
        render_model_check(result, "html")
