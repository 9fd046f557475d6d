"""Build-your-own opset: presets, adjustments, model coverage and the renderings."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import pytest
import yaml

from opgov.core.corpus import ModelOps, merge_models
from opgov.formats.corpus import load_corpus
from opgov.formats.rules import load_rules_file
from opgov.core.errors import BadInput
from opgov.core.graph_ops import graph_ops_of
from opgov.core.opset import (
    ModelCoverage,
    OpInfo,
    build_opset,
    coverage,
    suggest_additions,
)
from opgov.render.decomps_text import render_opset, render_python, render_selective_build

REPO = Path(__file__).resolve().parents[2]
OUR_RULES = REPO / "data" / "decomps" / "export-composites.yaml"
ASSERT_META = "aten::_assert_tensor_metadata"  # the one non-core op left after decomposition (models README)


def kind_of(func: str) -> str:
    name, args = func.split("(", 1)
    base, _, overload = name.partition(".")
    args = args.rsplit("->", 1)[0]
    if overload == "out" or overload.endswith("_out") or re.search(r"\(\w!\) out\b", args):
        return "out"
    if base.endswith("_") and not base.endswith("__"):
        return "inplace"
    return "mutable" if "!)" in args else "functional"


SCHEMAS: dict[str, str] = {}  # every schema of the releases loaded, for the graph operators they declare


def load_release(folder: Path) -> tuple[dict[str, str], set[str]]:
    """({op: kind}, tagged core) from one release's native_functions.yaml."""
    entries = yaml.load((folder / "native_functions.yaml").read_text(), Loader=yaml.CSafeLoader)
    kinds, core = {}, set()
    for entry in entries:
        op = "aten::" + entry["func"].split("(", 1)[0]
        kinds[op] = kind_of(entry["func"])
        SCHEMAS[op] = entry["func"]
        tags = entry.get("tags") or []
        if "core" in ([t.strip() for t in tags.split(",")] if isinstance(tags, str) else tags):
            core.add(op)
    return kinds, core


@pytest.fixture(scope="module")
def release(pytorch_release):
    return load_release(pytorch_release("2.13.0"))


@pytest.fixture(scope="module")
def rules_2023(decisions_2023):
    return load_rules_file(decisions_2023).mapping()


def registry(release, rules) -> dict[str, OpInfo]:
    kinds, core = release
    graph = graph_ops_of((op, SCHEMAS.get(op)) for op in kinds)  # as the services do, from the schemas
    return {op: OpInfo("core" if op in core else "decomposable" if op in rules else "custom", "active", kind,
                       graph.get(op))
            for op, kind in kinds.items()}


@pytest.fixture(scope="module")
def models(models_dir):
    return merge_models([load_corpus(p) for p in sorted(models_dir.glob("*_ops.json"))])


# --- presets ---------------------------------------------------------------------------------


def test_core_aten_is_the_core_opset(release, rules_2023):
    kinds, core = release
    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="core-aten")
    functional_core = {op for op in core if kinds[op] == "functional"}
    # symbolic sizes are tagged core, yet a runtime answers them without a kernel: listed apart
    graph_core = {op for op in functional_core if op in opset.graph_ops}
    # sym_is_contiguous (core since 2.9.0) returns a SymBool: its schema says it needs no kernel
    assert graph_core == {"aten::sym_size.int", "aten::sym_stride.int", "aten::sym_numel", "aten::sym_storage_offset",
                          "aten::sym_is_contiguous"}
    assert "SymBool" in opset.graph_reasons["aten::sym_is_contiguous"]
    assert functional_core - graph_core <= opset.operators
    assert graph_core <= set(opset.graph_ops) and not set(opset.graph_ops) & opset.operators
    # the core opset holds functional operators only: the core tags on others are drift
    assert set(opset.not_functional) == core - functional_core == {
        "aten::resize_", "aten::atan2.out", "aten::_native_batch_norm_legit"}
    assert not set(opset.not_functional) & opset.operators
    assert all(kinds[e.op] == "functional" for e in opset.entries)
    assert any("3 core operator(s) are not functional" in n and "aten::resize_" in n for n in opset.notes)
    for entry in opset.entries:
        if entry.op not in core:  # only what a rule produces gets in besides core
            assert entry.why == "target" and entry.produced_by
            assert all(src in rules_2023 for src in entry.produced_by)
    assert not any(op in opset.operators for op in rules_2023 if op not in core)
    # functional non-core ops with no rule cannot go away: listed apart, not must-implement
    assert opset.without_rule and not set(opset.without_rule) & opset.operators
    assert all(kinds[op] == "functional" and op not in core for op in opset.without_rule)


def test_core_aten_covers_every_model_an_assertion_is_no_missing_kernel(release, rules_2023, models):
    """13 real transformers models keep `_assert_tensor_metadata` after PyTorch's decompositions:
    an assertion lowering strips, not an operator a backend implements."""
    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="core-aten")
    cov = coverage(opset, models)
    assert cov.start == "core-aten"
    users = [key for key, m in models.items() if ASSERT_META in m.core_aten_ops]
    assert len(users) >= 10
    assert ASSERT_META in opset.graph_ops and ASSERT_META not in opset.operators
    for m in cov.models:
        assert m.covered and m.missing == () and ASSERT_META not in m.needed, m
    assert cov.covered == len(models) and cov.share == 1.0 and cov.suggestions == ()


def test_rules_alone_reach_the_same_verdict_from_exported_ops(release, models):
    """Start from what export produced and apply our rules file instead of PyTorch's run."""
    rules = load_rules_file(OUR_RULES).mapping()
    opset = build_opset(operators=registry(release, rules), rules=rules, preset="core-aten")
    from_exported = coverage(opset, models, start="exported")
    from_core = coverage(opset, models, start="core-aten")
    assert [m.covered for m in from_exported.models] == [m.covered for m in from_core.models]
    assert {op for m in from_exported.models for op in m.missing} == set()


def test_no_decomp_requires_every_exported_op(release, rules_2023, models):
    kinds, core = release
    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="no-decomp")
    assert opset.decomposed == () and opset.without_rule == ()
    assert all(kinds[op] in ("functional", "inplace", "mutable") or op in core for op in opset.operators)
    assert not any(kinds[op] == "out" and op not in core for op in opset.operators)
    cov = coverage(opset, models)
    assert cov.start == "exported"
    for m in cov.models:
        assert set(m.needed) == set(models[m.model].exported_ops) - {ASSERT_META}  # no kernel for an assertion
        assert set(m.missing) == set(m.needed) - set(kinds)


def test_full_decomp_also_decomposes_core_ops_with_rules(release, rules_2023):
    kinds, core = release
    ops = registry(release, rules_2023)
    core_aten = build_opset(operators=ops, rules=rules_2023, preset="core-aten")
    full = build_opset(operators=ops, rules=rules_2023, preset="full-decomp")
    decomposed_core = {op for op in rules_2023 if op in core}
    assert decomposed_core and set(full.beyond_default) == decomposed_core
    produced = {op for e in full.entries for op in [e.op] if e.why == "target"}
    assert not (decomposed_core - produced) & full.operators
    assert len(full) < len(core_aten)
    assert full.operators - core_aten.operators <= produced


def test_deleted_operators_are_never_implemented(release, rules_2023):
    ops = registry(release, rules_2023)
    ops["aten::abs"] = OpInfo("core", "deleted", "functional")
    for preset in ("core-aten", "no-decomp", "full-decomp"):
        assert "aten::abs" not in build_opset(operators=ops, rules=rules_2023, preset=preset).operators


# --- adjustments -----------------------------------------------------------------------------


def test_keep_and_decompose(release, rules_2023):
    ops = registry(release, rules_2023)
    opset = build_opset(operators=ops, rules=rules_2023, preset="core-aten",
                        keep=["aten.glu.default"], decompose=["aten::expm1"])
    assert opset.choice.keep == ("aten::glu",) and opset.choice.decompose == ("aten::expm1",)
    entry = {e.op: e for e in opset.entries}
    assert entry["aten::glu"].why == "kept"
    assert "aten::expm1" not in opset.operators
    assert all(t in opset.operators for t in rules_2023["aten::expm1"])
    assert "aten::expm1" in entry[rules_2023["aten::expm1"][0]].produced_by


def test_decomposing_an_op_without_rule_says_so(release, rules_2023):
    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="core-aten",
                        decompose=["aten::abs"])
    assert "aten::abs" in opset.without_rule
    assert opset.notes and "aten::abs has no decomposition rule" in opset.notes[0]


@pytest.mark.parametrize("kwargs, words", [
    ({"preset": "tiny"}, "unknown preset"),
    ({"preset": "core-aten", "keep": ["aten::no_such_op"]}, "unknown operator"),
    ({"preset": "core-aten", "keep": ["aten::glu"], "decompose": ["glu"]}, "both decomposed and kept"),
    ({"preset": "core-aten", "keep": ["not an op"]}, "not an operator name"),
])
def test_bad_choices(release, rules_2023, kwargs, words):
    with pytest.raises(BadInput, match=words):
        build_opset(operators=registry(release, rules_2023), rules=rules_2023, **kwargs)


def test_chains_and_cycles_in_rules():
    ops = {"aten::a": OpInfo("decomposable"), "aten::b": OpInfo("decomposable"), "aten::c": OpInfo("core"),
           "aten::x": OpInfo("decomposable"), "aten::y": OpInfo("decomposable")}
    rules = {"aten::a": ("aten::b",), "aten::b": ("aten::c",), "aten::x": ("aten::y",), "aten::y": ("aten::x",)}
    opset = build_opset(operators=ops, rules=rules, preset="core-aten")
    entry = {e.op: e for e in opset.entries}
    assert entry["aten::c"].produced_by == ("aten::a", "aten::b")
    assert {"aten::x", "aten::y"} <= opset.operators  # a cycle cannot be decomposed away


# --- suggestions -----------------------------------------------------------------------------


def model(name: str, *missing: str) -> ModelCoverage:
    return ModelCoverage(model=name, family="", needed=tuple(missing), missing=tuple(sorted(missing)))


def test_suggestions_cover_the_most_further_models_first():
    models = [model("a", "aten::x"), model("b", "aten::x", "aten::y"), model("c", "aten::y", "aten::z"),
              model("d", "aten::w"), model("e")]
    steps = suggest_additions(models)
    # x and w each complete one model, x is needed by more; then y and w each complete one,
    # y is needed by more; then w and z tie and the name decides
    assert [s.op for s in steps] == ["aten::x", "aten::y", "aten::w", "aten::z"]
    assert [s.newly_covered for s in steps] == [("a",), ("b",), ("d",), ("c",)]
    assert [s.covered_after for s in steps] == [2, 3, 4, 5]
    assert steps[-1].share_after == 1.0
    assert suggest_additions(models, limit=1)[0].op == "aten::x"


def test_suggestion_ties_go_to_the_name():
    steps = suggest_additions([model("a", "aten::q"), model("b", "aten::p")])
    assert [s.op for s in steps] == ["aten::p", "aten::q"]


def test_kept_op_the_model_exported_is_needed():
    ops = {"aten::c": OpInfo("core"), "aten::k": OpInfo("decomposable")}
    opset = build_opset(operators=ops, rules={"aten::k": ("aten::c",)}, preset="core-aten", keep=["aten::k"])
    m = ModelOps("m", "f", exported_ops=("aten::k",), core_aten_ops=("aten::c",))
    assert coverage(opset, {"m": m}).models[0].needed == ("aten::c", "aten::k")


def test_operators_outside_the_registry_are_named():
    ops = {"aten::c": OpInfo("core")}
    opset = build_opset(operators=ops, rules={}, preset="core-aten")
    m = ModelOps("m", "f", exported_ops=("aten::new_op",), core_aten_ops=("aten::c", "aten::new_op"))
    cov = coverage(opset, {"m": m}, known=ops)
    assert cov.not_in_registry == ("aten::new_op",)
    text = render_opset(opset, cov)
    assert "aten::new_op" in text.split("add, in this order")[1].splitlines()[1]
    assert "(not in the registry)" in text and "1 operators the models need are not in the registry" in text
    assert json.loads(render_opset(opset, cov, "json"))["coverage"]["not_in_registry"] == ["aten::new_op"]
    assert coverage(opset, {"m": m}).not_in_registry == ()  # unknown unless told


# --- renderings ------------------------------------------------------------------------------


def test_selective_build_yaml_loads_in_torchgen(release, rules_2023, torch_mod):
    from torchgen.selective_build.selector import SelectiveBuilder

    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="core-aten")
    data = yaml.safe_load(render_selective_build(opset, out_variants={"aten::add.Tensor": "aten::add.out"}))
    assert list(data) == ["operators"]
    assert all(set(v) == {"is_root_operator", "is_used_for_training", "include_all_overloads", "debug_info"}
               for v in data["operators"].values())
    selector = SelectiveBuilder.from_yaml_dict(data)
    assert selector.is_operator_selected("aten::add.Tensor")
    assert selector.is_operator_selected("aten::abs")
    assert selector.is_operator_selected("aten::add.out")  # asked for via out_variants
    assert not selector.is_operator_selected("aten::abs.out")  # exactly the overloads listed
    assert not selector.is_operator_selected("aten::glu")  # decomposed
    assert selector.is_root_operator("aten::convolution")


def test_selective_build_shape_without_torch(release, rules_2023):
    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="core-aten")
    data = yaml.safe_load(render_selective_build(opset))
    assert set(data["operators"]) == opset.operators
    assert data["operators"]["aten::abs"]["include_all_overloads"] is False


def test_python_snippet_compiles_for_every_preset(release, rules_2023):
    ops = registry(release, rules_2023)
    for preset in ("core-aten", "no-decomp", "full-decomp"):
        snippet = render_python(build_opset(operators=ops, rules=rules_2023, preset=preset, keep=["aten::glu"]))
        compile(snippet, f"<{preset}>", "exec")


def _name(op) -> str:
    """torch's OpOverload as opgov spells it."""
    return f"{op.namespace}::{op._opname}" + ("" if op._overloadname == "default" else f".{op._overloadname}")


def run_snippet(snippet: str) -> dict:
    scope: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(snippet, "<opgov>", "exec"), scope)  # noqa: S102 - our own generated code
    scope["_warnings"] = [str(w.message) for w in caught]
    return scope


def test_python_snippet_builds_the_table(release, rules_2023, torch_mod):
    aten = torch_mod.ops.aten
    ops = registry(release, rules_2023)
    opset = build_opset(operators=ops, rules=rules_2023, preset="core-aten",
                        keep=["aten::hardswish"], decompose=["aten::expm1"])
    table = run_snippet(render_python(opset))["decomp_table"]
    default = torch_mod.export.default_decompositions()
    assert aten.hardswish.default in default and aten.hardswish.default not in table
    assert aten.expm1.default not in default and aten.expm1.default in table
    # every operator of the opset reaches the backend whole: torch's table loses them all
    listed = {op for op in default if _name(op) in opset.operators}
    assert aten.hardswish.default in listed and aten.squeeze.dim in listed  # kept; core yet in torch's table
    assert set(table) == (set(default) - listed) | {aten.expm1.default}

    nothing = run_snippet(render_python(build_opset(operators=ops, rules=rules_2023, preset="no-decomp")))
    assert nothing["decomp_table"] == {}

    full = run_snippet(render_python(build_opset(operators=ops, rules=rules_2023, preset="full-decomp")))
    assert aten.expm1.default in full["decomp_table"] and aten.log1p.default in full["decomp_table"]
    # a core op with a rule but no decomposition in torch is reported, not silently dropped
    assert any("aten::full_like" in w for w in full["_warnings"])


def test_text_and_json(release, rules_2023, models):
    opset = build_opset(operators=registry(release, rules_2023), rules=rules_2023, preset="core-aten")
    cov = coverage(opset, models)
    text = render_opset(opset, cov)
    assert text.startswith(f"opset core-aten: {len(opset)} operators to implement")
    assert f"{len(models)}/{len(models)} covered" in text and "add, in this order" not in text
    assert f"not to implement: {len(opset.graph_ops)} graph operators" in text and ASSERT_META in text
    assert len(opset.graph_ops) > 14  # the hand list's, and every assertion and symbolic value the schemas declare
    data = json.loads(render_opset(opset, cov, "json"))
    assert data["count"] == len(opset) and data["coverage"]["covered"] == cov.covered == len(models)
    assert data["coverage"]["suggestions"] == [] and data["coverage"]["missing_ops"] == {}
    assert "assertion" in data["graph_ops"][ASSERT_META] and "symbolic size" in data["graph_ops"]["aten::sym_size.int"]
    assert not set(data["graph_ops"]) & {e["op"] for e in data["operators"]}


def _forced_world():
    from opgov.core.opset import TorchFacts

    ops = {"aten::batch_norm": OpInfo("decomposable"), "aten::native_batch_norm": OpInfo("decomposable"),
           "aten::_native_batch_norm_legit_no_training": OpInfo("core"), "aten::reshape": OpInfo(None),
           "aten::view": OpInfo("core"), "aten::layer_norm": OpInfo("decomposable"),
           "aten::native_layer_norm": OpInfo("core"), "aten::add.Tensor": OpInfo("core")}
    facts = TorchFacts(version="2.13.0", default=frozenset({"aten::layer_norm"}),
                       targets={"aten::layer_norm": ("aten::native_layer_norm",),
                                "aten::batch_norm": ("aten::native_batch_norm",),
                                "aten::native_batch_norm": ("aten::_native_batch_norm_legit_no_training",),
                                "aten::reshape": ("aten::view",)},
                       forced={"aten::batch_norm": "tagged", "aten::native_batch_norm": "wrong schema",
                               "aten::reshape": "aliases its input"},
                       preservable=frozenset({"aten::layer_norm"}), source="shipped")
    return ops, facts


@pytest.mark.parametrize("preset", ["no-decomp", "core-aten", "full-decomp"])
def test_what_torch_removes_by_itself_is_never_listed_nor_needed(preset):
    ops, facts = _forced_world()
    opset = build_opset(operators=ops, rules={}, preset=preset, torch=facts)
    assert not opset.operators & set(facts.forced)
    assert dict(opset.torch_removes) == dict(facts.forced)
    assert opset.torch_facts == "torch 2.13.0: opgov's shipped facts"
    model = ModelOps(name="m", family="f", exported_ops=("aten::batch_norm", "aten::reshape", "aten::add.Tensor"),
                     core_aten_ops=("aten::_native_batch_norm_legit_no_training", "aten::view", "aten::add.Tensor"))
    (cov,) = coverage(opset, {"m": model}, {}).models
    assert set(cov.needed) == {"aten::_native_batch_norm_legit_no_training", "aten::view", "aten::add.Tensor"}
    if preset == "no-decomp":
        why = {e.op: e for e in opset.entries}
        assert why["aten::_native_batch_norm_legit_no_training"].produced_by == ("aten::batch_norm",
                                                                                "aten::native_batch_norm")
        assert "aten::layer_norm" in opset.operators  # preservable: no-decomp keeps it


def test_keeping_what_torch_removes_is_refused_with_what_it_becomes():
    from opgov.core.errors import PolicyRefusal

    ops, facts = _forced_world()
    with pytest.raises(PolicyRefusal, match=r"--keep aten::batch_norm: .*\(tagged\).*instead: "
                                            r"aten::_native_batch_norm_legit_no_training$"):
        build_opset(operators=ops, rules={}, preset="no-decomp", keep=["aten::batch_norm"], torch=facts)
    kept = build_opset(operators=ops, rules={}, preset="core-aten", keep=["aten::layer_norm"], torch=facts)
    assert "aten::layer_norm" in kept.operators and "aten::layer_norm" in kept.code_keep


@pytest.mark.parametrize(("label", "expected"), [("2.13.0", "2.13.0"), ("2.12.0", "2.13.0"), ("2.15.0", "2.14.1"),
                                                 ("2.14.0.dev20260101", "2.14.1"), ("v2", None), ("main", None)])
def test_a_snapshot_uses_the_nearest_release_shipped(label, expected):
    from opgov.core.opset import nearest_release

    assert nearest_release(label, ["2.13.0", "2.14.1"]) == expected


def test_every_shipped_torch_facts_file_loads_by_its_release():
    """data/torch/: one file per torch release opgov was built with, each whole and named by it."""
    from opgov.resources import shipped_torch_facts
    from opgov.reads.torch import facts_of

    shipped = shipped_torch_facts()
    assert {"2.13.0", "2.14.1"} <= set(shipped)
    for release, path in shipped.items():
        facts = facts_of(json.loads(path.read_text()), source="shipped")
        assert facts.version.split("+")[0] == release and facts.complete
        assert {"aten::batch_norm", "aten::reshape", "aten::flatten.using_ints", "aten::dropout"} <= set(facts.forced)
        assert "aten::layer_norm" in facts.preservable and "aten::layer_norm" in facts.default
        assert facts.targets["aten::reshape"] == ("aten::view",)
