"""Decomposition governance, the build-your-own opset and model checks, end to end through the CLI:
`decomps load|import-torch|list`, `check-decomps`, the refusals of proposals that would break a
decomposition, `opset build` and `check-model`, on the sample registry and on PyTorch 2.13.0."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from conftest import REPO, SAMPLE, bad, refused, run_opgov
from opgov.formats.corpus import load_corpus
from opgov.formats.rules import load_rules_file

V1, V2, TAGS = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml", SAMPLE / "tags.yaml"
OUR_RULES = REPO / "data" / "decomps" / "export-composites.yaml"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
# the rules of the 2023 review that end in operators 2.13.0 does not hold core: mish and mish_
# (softplus) and hann_window.periodic (arange), while the database has no rule for those
REVIEW_BREAKING = ("aten::mish", "aten::mish_", "aten::hann_window.periodic")


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def write_rules(tmp_path: Path, rules: list[tuple[str, list[str]]], name: str = "rules.yaml") -> Path:
    path = tmp_path / name
    lines = ["# test rules", "format: 1", f"source: {path.stem}", "rules:"]
    lines += [f"  - {{op: {op}, into: [{', '.join(into)}]}}" for op, into in rules]
    path.write_text("\n".join(lines) + "\n")
    return path


def rules_by_op(cli) -> dict[str, dict]:
    return {r["operator"]: r for r in cli.ok("decomps", "list", "--json").json()}


# --- databases --------------------------------------------------------------------------------------


_run = run_opgov  # the CLI in-process (tests/conftest.py)


@pytest.fixture(scope="module")
def release_db(tmp_path_factory, pytorch_release) -> Path:
    """A simulation database holding PyTorch 2.13.0, built once for the module."""
    path = tmp_path_factory.mktemp("release") / "opgov.db"
    url = f"sqlite:///{path}"
    folder = pytorch_release("2.13.0")
    _run("--db", url, "db", "upgrade", "--simulation")
    _run("--db", url, "--now", at(0), "import", folder / "native_functions.yaml", "--tags-yaml",
         folder / "tags.yaml", "--label", "2.13.0")
    return path


@pytest.fixture(scope="module")
def rules_db(release_db, tmp_path_factory) -> Path:
    """2.13.0 with opgov's own rules file loaded."""
    path = tmp_path_factory.mktemp("rules") / "opgov.db"
    shutil.copyfile(release_db, path)
    _run("--db", f"sqlite:///{path}", "--now", at(0), "decomps", "load", OUR_RULES)
    return path


@pytest.fixture
def on_copy(make_cli, tmp_path):
    """A CLI on a private copy of a module database."""

    def open_copy(source: Path):
        path = tmp_path / "copy.db"
        shutil.copyfile(source, path)
        return make_cli(f"sqlite:///{path}", upgrade=False)

    return open_copy


@pytest.fixture
def sample(cli):
    """The sample registry, v1 then v2 (v2 adds aten::fused_rms_norm)."""
    cli.ok("import", V1, "--tags-yaml", TAGS, "--label", "v1", now=at(0))
    cli.ok("import", V2, "--tags-yaml", TAGS, "--label", "v2", now=at(0))
    return cli


# --- rules files on 2.13.0 ----------------------------------------------------------------------------


def test_rules_files_on_2_13(on_copy, release_db, decisions_2023, tmp_path):
    cli = on_copy(release_db)
    # the review's rules for mish, mish_ and hann_window.periodic end in non-core operators:
    # the whole file is refused, each path spelled out
    result = refused(cli, "decomps", "load", decisions_2023, now=at(1),
                     words=["would break 3 decomposition(s)", "aten::mish → aten::softplus (custom)",
                            "aten::mish_ → aten::softplus (custom)",
                            "aten::hann_window.periodic → aten::arange (custom)"])
    assert len(result.err.strip().splitlines()) == 1
    assert cli.ok("decomps", "list", "--json").json() == []

    # without those three rules the same facts load
    raw = yaml.safe_load(decisions_2023.read_text())
    raw["decomposed"] = [item for item in raw["decomposed"] if item["op"] not in REVIEW_BREAKING]
    trimmed = tmp_path / "core-aten-review-2023.yaml"
    trimmed.write_text(yaml.safe_dump(raw))
    loaded = cli.ok("decomps", "load", trimmed, "--json", now=at(1)).json()
    assert loaded["source"] == "core-aten-review-2023"
    assert loaded["rules"] == loaded["added"] == len(raw["decomposed"])

    # opgov's own rules: some give an operator the review already has a rule for; between two
    # files the later load wins, and the output says so
    ours = load_rules_file(OUR_RULES)
    review = {r.op: r.into for r in load_rules_file(trimmed).rules}
    replaced = {r.op for r in ours.rules if r.op in review and r.into != review[r.op]}
    same = {r.op for r in ours.rules if r.op in review and r.into == review[r.op]}
    text = cli.ok("decomps", "load", OUR_RULES, now=at(2)).out
    assert f"{len(ours.rules)} rules from opgov-export-composites" in text
    loaded = cli.ok("decomps", "load", OUR_RULES, "--json", now=at(2)).json()
    assert loaded["unchanged"] == len(ours.rules)  # loading a file twice changes nothing
    rules = rules_by_op(cli)
    for op in replaced:
        assert rules[op]["detail"].startswith("opgov-export-composites")
    for op in same:  # the same targets: the rule keeps its first source
        assert rules[op]["detail"].startswith("core-aten-review-2023")
    assert {r["source"] for r in rules.values()} == {"file"}
    shown = cli.ok("decomps", "list").out
    assert "file: opgov-export-composites" in shown and "aten::linear" in shown

    # once arange has a rule into core operators, hann_window.periodic's rule loads as well
    hann = write_rules(tmp_path, [("aten::hann_window.periodic", ["aten::arange", "aten::sin",
                                                                  "aten::pow.Tensor_Scalar"])], "hann.yaml")
    cli.ok("decomps", "load", hann, now=at(3))

    # no errors; drift is reported as warnings, exit 0. A CompositeImplicitAutograd kernel is a
    # decomposition: no decomposable operator of 2.13.0 lacks one, so none is reported for it
    checked = cli("check-decomps")
    assert checked.code == 0, checked.out
    assert "decomposable-without-rule" not in checked.out and checked.out.rstrip().endswith("warning(s)")
    report = cli("check-decomps", "--format", "json").json()
    assert report["errors"] == 0 and report["warnings"] > 0
    github = cli("check-decomps", "--format", "github").out.splitlines()
    assert github and all(line.startswith("::warning title=opgov ") for line in github)


def test_unknown_operators_in_a_rules_file(on_copy, release_db, tmp_path):
    cli = on_copy(release_db)
    path = write_rules(tmp_path, [("aten::silu", ["aten::sigmoid", "aten::mul.Tensor"]),
                                  ("aten::hardswish", ["aten::clamp", "aten::mull.Tensor"])])
    bad(cli, "decomps", "load", path, words=[f"{path}:6:", "unknown operator aten::mull.Tensor",
                                             "(a target of aten::hardswish)", "did you mean aten::mul.Tensor"])
    path = write_rules(tmp_path, [("aten::frobnicate", ["aten::sigmoid"])])
    bad(cli, "decomps", "load", path, words=[f"{path}:5:", "unknown operator aten::frobnicate"])
    bad(cli, "decomps", "load", tmp_path / "missing.yaml", words=[f"{tmp_path / 'missing.yaml'}: no such file"])


# --- check-decomps, proposals and the lifecycle on the sample registry ------------------------------


def test_cycles_are_refused_and_reported(sample, tmp_path):
    cycle = write_rules(tmp_path, [("aten::glu", ["aten::softplus"]), ("aten::softplus", ["aten::glu"])])
    refused(sample, "decomps", "load", cycle, now=at(1),
            words=["decomposition cycle: aten::glu → aten::softplus → aten::glu"])
    # rules written behind opgov's back (another tool, an old version): check-decomps finds them
    from sqlalchemy import create_engine, insert

    from opgov.db.tables import decomp_rules

    engine = create_engine(sample.url)
    with engine.begin() as conn:
        conn.execute(insert(decomp_rules), [
            {"operator": "aten::glu", "targets": ["aten::softplus"], "source": "file", "source_detail": "x",
             "created_at": T0, "created_by": "someone"},
            {"operator": "aten::softplus", "targets": ["aten::glu"], "source": "file", "source_detail": "x",
             "created_at": T0, "created_by": "someone"}])
    engine.dispose()
    result = sample("check-decomps")
    assert result.code == 1
    assert "decomp-cycle" in result.out and "aten::glu → aten::softplus → aten::glu" in result.out
    report = sample("check-decomps", "--format", "json")
    assert report.code == 1
    [cycle_found] = [v for v in report.json()["violations"] if v["rule"] == "decomp-cycle"]
    assert cycle_found["path"] == ["aten::glu", "aten::softplus", "aten::glu"]
    github = sample("check-decomps", "--format", "github")
    assert github.code == 1 and "::error title=opgov decomp-cycle::" in github.out


def test_a_deprecated_target_is_an_error(sample, tmp_path):
    rules = write_rules(tmp_path, [("aten::hardswish", ["aten::clamp", "aten::add.Tensor", "aten::mul.Tensor",
                                                        "aten::div.Tensor"])])
    sample.ok("decomps", "load", rules, now=at(1))
    assert sample("check-decomps").code == 0
    sample.ok("deprecate", "aten::div.Tensor", "--reason", "use div.Tensor_mode", "--replacement",
              "aten::div.Tensor_mode", now=at(1))
    result = sample("check-decomps")
    assert result.code == 0  # deprecating: a warning
    assert "decomp-target-deprecating" in result.out and "aten::div.Tensor, which is being deprecated" in result.out
    sample.ok("mark-deprecated", "aten::div.Tensor", now=at(16))
    result = sample("check-decomps")
    assert result.code == 1
    assert "error   decomp-target-deprecated" in result.out
    assert "aten::hardswish decomposes into aten::div.Tensor, which is deprecated" in result.out
    assert sample("check-decomps", "--format", "json").json()["errors"] == 1


def test_drift_warnings(sample, tmp_path):
    before = {v["rule"] for v in sample("check-decomps", "--format", "json").json()["violations"]}
    # fresh heuristic categories: decomposable means a CompositeImplicitAutograd kernel, which is
    # a decomposition, so no operator is "decomposable without a rule"
    assert "decomposable-without-rule" not in before
    # a core operator with a rule: drift, allowed
    rules = write_rules(tmp_path, [("aten::addmm", ["aten::bmm", "aten::add.Tensor"])])
    sample.ok("decomps", "load", rules, now=at(1))
    # a core-tagged operator decided custom: the yaml tag now disagrees with the category
    sample.ok("propose-custom", "aten::atan", "--rationale", "needs special handling", actor="alice", now=at(1))
    sample.ok("review", "1", "--approve", "--comment", "ok", actor="bob", now=at(2))
    sample.ok("review", "1", "--approve", "--comment", "ok", actor="carol", now=at(2))
    result = sample("check-decomps")
    assert result.code == 0
    assert "aten::addmm is core but a rule decomposes it into aten::bmm, aten::add.Tensor" in result.out
    assert "aten::atan is tagged core in native_functions.yaml but its category is custom" in result.out
    assert "aten::to.dtype is decomposable" not in result.out  # its kernel is the decomposition


def test_proposals_that_would_break_a_decomposition_are_refused(sample, tmp_path):
    rules = write_rules(tmp_path, [("aten::hardswish", ["aten::clamp", "aten::add.Tensor", "aten::mul.Tensor",
                                                        "aten::div.Tensor"])])
    sample.ok("decomps", "load", rules, now=at(1))
    # a rule's target may not leave core
    refused(sample, "propose-custom", "aten::clamp", "--rationale", "special", actor="dave", now=at(1),
            words=["proposal custom for aten::clamp would break", "aten::hardswish → aten::clamp (custom)"])
    # a decomposition may not produce a custom operator
    refused(sample, "propose-decompose", "aten::glu", "--into", "aten::softplus,aten::mul.Tensor", "--rationale",
            "x", actor="dave", now=at(1), words=["aten::glu → aten::softplus (custom)"])
    # accepted while nothing depended on it, refused when it is decided after a rule came to
    sample.ok("propose-custom", "aten::sigmoid", "--rationale", "special", actor="dave", now=at(1))
    silu = write_rules(tmp_path, [("aten::glu", ["aten::sigmoid", "aten::mul.Tensor"])], "glu.yaml")
    sample.ok("decomps", "load", silu, now=at(2))
    sample.ok("review", "1", "--approve", "--comment", "ok", actor="bob", now=at(3))
    refused(sample, "review", "1", "--approve", "--comment", "ok", actor="carol", now=at(3),
            words=["deciding proposal 1 would break", "aten::glu → aten::sigmoid (custom)"])
    # and a rules file that would use a custom operator is refused with its path too
    worse = write_rules(tmp_path, [("aten::hardswish", ["aten::clamp", "aten::softplus"])], "worse.yaml")
    refused(sample, "decomps", "load", worse, now=at(3),
            words=["aten::hardswish → aten::softplus (custom)"])


def test_precedence_decision_over_file(sample, tmp_path):
    sample.ok("propose-decompose", "aten::hardswish", "--into", "aten::clamp,aten::mul.Tensor,aten::div.Tensor",
              "--rationale", "exact", actor="dave", now=at(1))
    sample.ok("review", "1", "--approve", "--comment", "ok", actor="bob", now=at(2))
    sample.ok("review", "1", "--approve", "--comment", "ok", actor="carol", now=at(2))
    assert rules_by_op(sample)["aten::hardswish"]["source"] == "decision"
    # a file with another rule for it (which alone would break: softplus is custom) is loaded;
    # the decision's rule is kept and the output says why
    path = write_rules(tmp_path, [("aten::hardswish", ["aten::softplus"]),
                                  ("aten::glu", ["aten::sigmoid", "aten::mul.Tensor"])])
    result = sample.ok("decomps", "load", path, now=at(3))
    assert "1 added, 1 kept" in result.out
    assert "kept 1 rule(s) from decision (a decision's rule outranks file's; decision > file > torch)" in result.out
    rules = rules_by_op(sample)
    assert rules["aten::hardswish"]["source"] == "decision" and rules["aten::hardswish"]["detail"] == "proposal 1"
    assert rules["aten::hardswish"]["into"] == ["aten::clamp", "aten::mul.Tensor", "aten::div.Tensor"]
    assert rules["aten::glu"]["source"] == "file"


# --- torch ------------------------------------------------------------------------------------------


def test_import_torch(on_copy, rules_db, decisions_2023, torch_mod):
    cli = on_copy(rules_db)
    # mish has no rule in our file; hardswish and softplus have; relu is core (not in torch's table)
    result = cli.ok("decomps", "import-torch", "--only", "aten::mish", "--only", "aten::hardswish",
                    "--only", "aten::softplus", "--only", "aten::relu", "--budget", "60", "--json",
                    now=at(1)).json()
    assert result["torch"] == torch_mod.__version__
    assert result["not_in_table"] == ["aten::relu"]
    assert result["added"] == 1 and result["kept"] == 2
    assert {k["operator"]: k["previous"]["source"] for k in result["changes"]} == {
        "aten::hardswish": "file", "aten::softplus": "file"}
    rules = rules_by_op(cli)
    assert rules["aten::mish"]["source"] == "torch"
    assert rules["aten::mish"]["detail"].startswith(f"torch {torch_mod.__version__}")
    assert rules["aten::hardswish"]["source"] == "file"
    report = cli("check-decomps", "--format", "json")
    assert report.code == 0, report.out
    # with our rules for softplus and arange (into core operators) the whole 2023 review loads:
    # mish's path goes on through softplus, hann_window's through arange
    cli.ok("decomps", "load", decisions_2023, now=at(2))
    assert cli("check-decomps").code == 0
    bad(cli, "decomps", "import-torch", "--only", "aten::not_an_op", words=["unknown operator aten::not_an_op"])


# --- opset build ------------------------------------------------------------------------------------


def opset(cli, *args) -> dict:
    return cli.ok("opset", "build", *args, "--format", "json").json()


def test_opset_presets_and_adjustments(on_copy, rules_db, tmp_path):
    cli = on_copy(rules_db)
    core = opset(cli, "--preset", "core-aten")
    names = {e["op"] for e in core["operators"]}
    assert core["count"] == len(names) > 100
    assert core["torch_facts"] == "torch 2.13.0+cpu: opgov's shipped facts"  # 2.13.0's, with no trace
    assert {e["why"] for e in core["operators"]} <= {"core", "target", "torch-keeps"}
    assert "aten::add.Tensor" in names and "aten::linear" not in names and "aten::permute" in names
    assert "aten::linear" in core["decomposed"]
    no_decomp = opset(cli, "--preset", "no-decomp")
    # (with torch's facts a decomposition may end outside ATen, e.g. in prims::scalar_tensor: never no-decomp's)
    assert {n for n in names if n.startswith("aten::")} < {e["op"] for e in no_decomp["operators"]}
    assert "aten::linear" in {e["op"] for e in no_decomp["operators"]}
    assert set(no_decomp["decomposed"]) <= set(no_decomp["torch_removes"])  # only what torch removes by itself
    text = cli.ok("opset", "build", "--preset", "core-aten").out
    assert text.startswith(f"opset core-aten: {core['count']} operators to implement")

    kept = opset(cli, "--keep", "aten::linear")
    assert {e["op"]: e["why"] for e in kept["operators"]}["aten::linear"] == "kept"
    assert "aten::linear" not in kept["decomposed"]

    # decomposing a core operator needs a rule for it (drift, but allowed)
    rules = write_rules(tmp_path, [("aten::addmm", ["aten::mm", "aten::add.Tensor"])])
    cli.ok("decomps", "load", rules, now=at(1))
    extra = opset(cli, "--decompose", "aten::addmm")
    extra_names = {e["op"] for e in extra["operators"]}
    assert "aten::addmm" not in extra_names and {"aten::mm", "aten::add.Tensor"} <= extra_names
    assert extra["decompose"] == ["aten::addmm"]
    full = opset(cli, "--preset", "full-decomp")
    assert "aten::addmm" not in {e["op"] for e in full["operators"]}
    assert "aten::addmm" in {e["op"] for e in opset(cli, "--preset", "full-decomp", "--keep", "aten::addmm")["operators"]}

    bad(cli, "opset", "build", "--decompose", "aten::addmm", "--keep", "addmm", words=["both decomposed and kept"])
    bad(cli, "opset", "build", "--keep", "aten::nope", words=["--keep aten::nope: unknown operator"])
    result = cli("opset", "build", "--preset", "some-ir")
    assert result.code == 2


def test_opset_coverage_of_real_models(on_copy, rules_db, models_dir):
    cli = on_copy(rules_db)
    corpora = [load_corpus(p) for p in sorted(models_dir.glob("*_ops.json"))]
    models = {f"{c.name}#{name}": m for c in corpora for name, m in c.models.items()}
    report = opset(cli, "--preset", "core-aten", "--models", models_dir)
    cov = report["coverage"]
    assert cov["start"] == "core-aten" and cov["models"] == len(models)
    assert cov["share"] == pytest.approx(cov["covered"] / cov["models"])
    # the models README: after torch's core ATen decompositions, every operator but
    # aten::_assert_tensor_metadata is core; that one is an assertion, which needs no kernel
    assert cov["suggestions"] == [] and cov["covered"] == len(models)
    assert "aten::_assert_tensor_metadata" in report["graph_ops"]
    for entry in cov["per_model"]:
        assert entry["covered"] and "aten::_assert_tensor_metadata" not in entry["needed"]
        assert entry["missing"] == []
    assert cov["not_in_registry"] == []

    text = cli.ok("opset", "build", "--preset", "core-aten", "--models", models_dir).out
    assert f"models (core-aten operators): {cov['covered']}/{len(models)} covered" in text
    assert "torchvision#resnet18" in text
    assert "add, in this order" not in text and f"not to implement: {len(report['graph_ops'])} graph operators" in text
    assert "aten::sym_is_contiguous" in report["graph_ops"]  # core-tagged, returns a SymBool: no kernel

    # one corpus file; without decompositions a backend implements what export produced
    one = models_dir / "torchvision_ops.json"
    tv = opset(cli, "--preset", "no-decomp", "--models", one)["coverage"]
    assert tv["start"] == "exported" and tv["models"] == len(load_corpus(one).models)
    assert tv["covered"] == tv["models"]
    bad(cli, "opset", "build", "--models", models_dir / "nothing.json", words=["no such corpus file"])


def test_opset_selective_build_and_python(on_copy, rules_db):
    cli = on_copy(rules_db)
    chosen = {e["op"] for e in opset(cli, "--keep", "aten::linear")["operators"]}
    text = cli.ok("opset", "build", "--keep", "aten::linear", "--format", "selective-build").out
    data = yaml.safe_load(text)
    # the chosen operators, and the out= variants ExecuTorch's kernels implement
    outs = {op for op in data["operators"] if op not in chosen}
    assert set(data["operators"]) >= chosen
    assert {"aten::add.out", "aten::convolution.out", "aten::_adaptive_avg_pool2d.out"} <= outs  # last: autogen
    assert all(data["operators"][op]["debug_info"][0].endswith(tuple(chosen)) for op in outs)
    assert "aten::sort.values" in outs  # out= overloads need not be called "out"
    entry = data["operators"]["aten::linear"]
    assert entry["is_root_operator"] is True and entry["is_used_for_training"] is False
    assert entry["include_all_overloads"] is False and entry["debug_info"]
    snippet = cli.ok("opset", "build", "--keep", "aten::linear", "--decompose", "aten::hardswish",
                     "--format", "python").out
    compile(snippet, "opset.py", "exec")
    assert "'aten::linear'" in snippet


def test_opset_formats_with_torch(on_copy, rules_db, torch_mod):
    from torchgen.selective_build.selector import SelectiveBuilder

    cli = on_copy(rules_db)
    text = cli.ok("opset", "build", "--keep", "aten::linear", "--format", "selective-build").out
    builder = SelectiveBuilder.from_yaml_dict(yaml.safe_load(text))
    assert builder.is_operator_selected("aten::linear")
    assert builder.is_operator_selected("aten::add.Tensor")
    assert not builder.is_operator_selected("aten::conv2d")  # decomposed into convolution

    namespace: dict = {}
    exec(cli.ok("opset", "build", "--keep", "aten::linear", "--format", "python").out, namespace)  # noqa: S102
    table = namespace["decomp_table"]
    default = torch_mod.export.default_decompositions()
    aten = torch_mod.ops.aten
    assert aten.linear.default in default and aten.linear.default not in table
    # the table loses linear and every other operator the opset lists (they reach the backend whole)
    built = json.loads(cli.ok("opset", "build", "--keep", "aten::linear", "--format", "json").out)
    listed = {e["op"] for e in built["operators"]} | set(built["graph_ops"])  # graph operators need no kernel
    lost = {op for op in default if op not in table}
    names = {f"aten::{op._opname}" + ("" if op._overloadname == "default" else f".{op._overloadname}") for op in lost}
    functional = {n for n in names if not n.endswith(".out") and "_out" not in n.partition(".")[2]}
    assert functional <= listed  # an out= variant never reaches an exported graph (export functionalizes it)
    added = {op for op in table if op not in default}  # decompositions the code adds for opgov's rules
    assert len(lost) >= 1 and {f"aten::{op._opname}" + ("" if op._overloadname == "default" else f".{op._overloadname}")
                               for op in added} <= set(built["code_decompose"])
    namespace = {}
    exec(cli.ok("opset", "build", "--preset", "no-decomp", "--decompose", "aten::hardswish",
                "--format", "python").out, namespace)  # noqa: S102
    assert list(namespace["decomp_table"]) == [aten.hardswish.default]


def test_the_demo_on_the_sample_registry(sample, models_dir):
    """The README demo runs this on the small sample registry: missing operators that the
    registry does not even hold are said to be so."""
    result = sample.ok("opset", "build", "--preset", "core-aten", "--models", models_dir, now=at(1))
    assert "operators the models need are not in the registry" in result.out
    assert "(not in the registry)" in result.out


# --- check-model ------------------------------------------------------------------------------------


def test_check_model_against_snapshots_and_lifecycle(sample, tmp_path):
    ops = tmp_path / "model.txt"
    ops.write_text("# what my model uses\naten::add.Tensor\naten::fused_rms_norm\n\naten::glu  # gated\n")
    result = sample("check-model", ops)
    assert result.code == 0
    assert result.out.startswith("3 operators: 0 error(s), 0 warning(s), 2 note(s)")
    assert "note    aten::glu is not core (custom)" in result.out
    assert "earliest snapshot with every operator: v2" in result.out  # fused_rms_norm is new in v2
    old = sample("check-model", ops, "--runtime", "v1")
    assert old.code == 1 and "error   snapshot v1 lacks aten::fused_rms_norm" in old.out
    assert sample("check-model", ops, "--runtime", "v2").code == 0
    bad(sample, "check-model", ops, "--runtime", "v9", words=["unknown snapshot 'v9' (known: v1, v2)"])

    # deprecating: a warning with the replacement and the date it becomes deprecated
    sample.ok("deprecate", "aten::glu", "--reason", "rarely used", "--replacement", "aten::sigmoid", now=at(1))
    listed = tmp_path / "model.json"
    listed.write_text(json.dumps(["aten.glu.default", "add.Tensor"]))
    result = sample("check-model", listed)
    assert result.code == 0
    due = (T0 + timedelta(days=15)).date().isoformat()  # deprecating_days defaults to 14
    assert (f"warning aten::glu is being deprecated and becomes deprecated on {due} (UTC); "
            "use aten::sigmoid instead") in result.out
    data = sample("check-model", listed, "--format", "json").json()
    assert data["ok"] is True and data["operators"] == ["aten::glu", "aten::add.Tensor"]
    assert data["warnings"][0]["replacement"] == "aten::sigmoid" and data["warnings"][0]["date"].startswith(due)
    assert "::warning title=opgov operator-deprecating::" in sample("check-model", listed, "--format", "github").out

    # deprecated, then deleted: errors
    sample.ok("mark-deprecated", "aten::glu", now=at(16))
    result = sample("check-model", listed, "--format", "github")
    assert result.code == 1 and "::error title=opgov operator-deprecated::aten::glu is deprecated" in result.out
    sample.ok("delete", "aten::glu", now=at(200))
    result = sample("check-model", listed)
    assert result.code == 1 and "aten::glu has been deleted; use aten::sigmoid instead" in result.out

    # a model using an operator v2 removed (never deprecated): a warning, and older runtimes run it
    removed = tmp_path / "named.txt"
    removed.write_text("aten::unbind.Dimname\n")
    result = sample("check-model", removed)
    assert result.code == 0 and "aten::unbind.Dimname is not in the latest snapshot (v2); last in v1" in result.out
    assert sample("check-model", removed, "--runtime", "v2").code == 1


def test_check_model_bad_input(sample, tmp_path):
    typo = tmp_path / "typo.txt"
    typo.write_text("aten::add.Tensor\naten::reluu\n")
    result = sample("check-model", typo)
    assert result.code == 1 and "aten::reluu is not in the registry; did you mean aten::relu" in result.out
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("aten::add.Tensor\nnot an operator!\n")
    bad(sample, "check-model", garbage, words=[f"{garbage}:2:"])
    bad(sample, "check-model", tmp_path / "none.txt", words=["neither a file nor CORPUS#model"])


def test_check_model_from_corpora(on_copy, release_db, models_dir, monkeypatch):
    cli = on_copy(release_db)
    corpus = models_dir / "torchvision_ops.json"
    resnet = load_corpus(corpus).models["resnet18"]
    result = cli("check-model", f"{corpus}#resnet18", "--runtime", "2.13.0", "--format", "json")
    assert result.code == 0
    data = result.json()
    assert data["operators"] == list(resnet.exported_ops) and data["earliest_snapshot"] == "2.13.0"
    assert {n["op"] for n in data["notes"]} == set(resnet.exported_ops) - {
        e["op"] for e in opset(cli, "--preset", "core-aten")["operators"]}
    # a bare corpus name: the corpora opgov ships, or those of OPGOV_MODELS_DIR when it is set
    assert cli("check-model", "transformers#llama", "--format", "json").json()["operators"] == list(
        load_corpus(models_dir / "transformers_ops.json").models["llama"].exported_ops)
    monkeypatch.setenv("OPGOV_MODELS_DIR", str(models_dir))
    after = cli("check-model", "transformers#llama@core-aten", "--format", "json").json()
    assert [n["op"] for n in after["notes"]] == ["aten::_assert_tensor_metadata"]
    bad(cli, "check-model", "transformers#lama", words=["has no model 'lama'; did you mean llama?"])
    bad(cli, "check-model", "vision#resnet18", words=["no corpus named 'vision'", "torchvision, transformers"])


def test_on_sqlite_and_postgres(make_cli, any_db_url, tmp_path):
    """The rule, check, opset and model use cases run on a Core connection on both databases."""
    cli = make_cli(any_db_url, simulation=True)
    cli.ok("import", V1, "--tags-yaml", TAGS, "--label", "v1", now=at(0))
    cli.ok("import", V2, "--tags-yaml", TAGS, "--label", "v2", now=at(0))
    rules = write_rules(tmp_path, [("aten::hardswish", ["aten::clamp", "aten::mul.Tensor"])])
    assert cli.ok("decomps", "load", rules, "--json", now=at(1)).json()["added"] == 1
    refused(cli, "propose-custom", "aten::clamp", "--rationale", "x", now=at(1),
            words=["aten::hardswish → aten::clamp (custom)"])
    assert cli("check-decomps", "--format", "json").json()["errors"] == 0
    built = opset(cli, "--preset", "core-aten")
    assert "aten::clamp" in {e["op"] for e in built["operators"]} and "aten::hardswish" in built["decomposed"]
    model = tmp_path / "model.txt"
    model.write_text("aten::fused_rms_norm\n")
    assert cli("check-model", model, "--runtime", "v1").code == 1
    assert cli("check-model", model, "--runtime", "v2", "--format", "json").json()["earliest_snapshot"] == "v2"
