"""Decomposition rules: the rules-file format, the checks, and refusing breaking proposals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from opgov.core.decomps import (
    CHECKS,
    CategoryChange,
    RuleChange,
    check,
    load_rules_file,
    render_violations,
    would_break,
)
from opgov.core.errors import BadInput
from opgov.core.names import canonical

REPO = Path(__file__).resolve().parent.parent
OUR_RULES = REPO / "data" / "decomps" / "export-composites.yaml"


def tagged_core(folder: Path) -> tuple[set[str], set[str]]:
    """(every operator, the operators tagged core) of one release's native_functions.yaml."""
    entries = yaml.load((folder / "native_functions.yaml").read_text(), Loader=yaml.CSafeLoader)
    names, core = set(), set()
    for entry in entries:
        op = "aten::" + entry["func"].split("(", 1)[0]
        names.add(op)
        tags = entry.get("tags") or []
        if isinstance(tags, str):
            tags = [t.strip() for t in tags.split(",")]
        if "core" in tags:
            core.add(op)
    return names, core


@pytest.fixture(scope="module")
def release_2_13(pytorch_release):
    return tagged_core(pytorch_release("2.13.0"))


def categories_for(names: set[str], core: set[str], rules) -> dict[str, str]:
    """core = tagged core; decomposable = has a rule; everything else custom."""
    return {op: "core" if op in core else "decomposable" if op in rules else "custom" for op in names}


# --- rules files ---------------------------------------------------------------------------


def test_review_facts_load_as_rules(decisions_2023):
    loaded = load_rules_file(decisions_2023)
    raw = yaml.safe_load(decisions_2023.read_text())
    assert loaded.shape == "review-decisions"
    assert loaded.source == "core-aten-review-2023"
    assert loaded.date == str(raw["reviewed_at"])
    expected = {canonical(item["op"]): tuple(canonical(t) for t in item["into"]) for item in raw["decomposed"]}
    assert loaded.mapping() == expected
    # line numbers point at the rule in the file
    lines = decisions_2023.read_text().splitlines()
    for rule in loaded.rules:
        assert rule.op.split("::")[1].split(".")[0] in lines[rule.line - 1]


def test_our_rules_file_reaches_core_on_2_13(release_2_13):
    names, core = release_2_13
    rules = load_rules_file(OUR_RULES).mapping()
    assert set(rules) <= names and all(t in names for into in rules.values() for t in into)
    found = check(rules, categories_for(names, core, rules), {op: "active" for op in names}, core)
    assert [v for v in found if v.severity == "error"] == []


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, line, words", [
    ("source: x\nrules:\n  - {op: aten::a, into: [aten::b]}\n  - {op: aten::a, into: []}\n", 4, "has a rule already"),
    ("source: x\nrules:\n  - {op: aten::a, into: [aten::b], why: no}\n", 3, "unknown key 'why'"),
    ("source: x\nrules:\n  - {op: aten::a}\n", 3, "without 'into'"),
    ("source: x\nrules:\n  - op: aten::a\n    into:\n      - aten::b\n      - not an op!\n", 6, "not an operator name"),
    ("source: x\nrules:\n  - {op: aten::a, into: [aten::b, aten::b]}\n", 3, "listed twice"),
    ("source: x\nrules:\n  - {op: aten::a, into: aten::b}\n", 3, "must be a list"),
    ("source: x\nrules: [\n  {op: aten::a\n", 4, "not valid YAML"),
    ("format: 2\nsource: x\nrules: []\n", 1, "unsupported rules format"),
    ("rules:\n  - {op: aten::a, into: []}\n", 1, "missing 'source:'"),
    ("hello: world\n", 1, "no 'rules:' list"),
])
def test_malformed_rules_name_file_and_line(tmp_path, text, line, words):
    path = write(tmp_path, text)
    with pytest.raises(BadInput) as err:
        load_rules_file(path)
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert words in str(err.value)


def test_rules_file_accepts_any_spelling_and_empty_targets(tmp_path):
    path = write(tmp_path, "# opgov decomposition rules, format 1\nformat: 1\nsource: mine\nrules:\n"
                           "  - {op: aten.relu_.default, into: [relu]}\n  - {op: lift_fresh, into: []}\n")
    loaded = load_rules_file(path)
    assert loaded.source == "mine"
    assert loaded.mapping() == {"aten::relu_": ("aten::relu",), "aten::lift_fresh": ()}


def test_missing_file_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="no such file"):
        load_rules_file(tmp_path / "nope.yaml")


# --- checks ----------------------------------------------------------------------------------

CATS = {"aten::foo": "decomposable", "aten::bar": "decomposable", "aten::baz": "custom",
        "aten::mul.Tensor": "core", "aten::add.Tensor": "core"}


def by_rule(found, rule):
    return [v for v in found if v.rule == rule]


def test_path_to_the_first_non_core_leaf():
    rules = {"aten::foo": ("aten::mul.Tensor", "aten::bar"), "aten::bar": ("aten::baz",)}
    found = by_rule(check(rules, CATS), "decomp-reaches-non-core")
    foo = [v for v in found if v.operator == "aten::foo"]
    assert len(foo) == 1
    assert foo[0].path == ("aten::foo", "aten::bar", "aten::baz")
    assert "aten::foo → aten::bar → aten::baz (custom)" in foo[0].message
    assert foo[0].severity == "error"
    assert {v.operator for v in found} == {"aten::foo", "aten::bar"}


def test_core_targets_stop_the_walk():
    rules = {"aten::foo": ("aten::bar",), "aten::bar": ("aten::mul.Tensor", "aten::add.Tensor")}
    assert check(rules, CATS) == []


def test_uncategorized_and_unknown_leaves():
    rules = {"aten::foo": ("aten::new_op",), "aten::bar": ("aten::ghost",)}
    found = check(rules, CATS, {"aten::new_op": "active"})
    reach = {v.operator: v.message for v in by_rule(found, "decomp-reaches-non-core")}
    assert "(uncategorized)" in reach["aten::foo"]
    assert "(unknown)" in reach["aten::bar"]
    assert [v.operator for v in by_rule(found, "decomp-target-unknown")] == ["aten::bar"]


def test_cycles_are_reported_once_with_the_cycle():
    rules = {"aten::a": ("aten::b",), "aten::b": ("aten::c", "aten::mul.Tensor"), "aten::c": ("aten::a",),
             "aten::d": ("aten::d",), "aten::e": ("aten::a",)}
    cats = {op: "decomposable" for op in rules} | {"aten::mul.Tensor": "core"}
    cycles = by_rule(check(rules, cats), "decomp-cycle")
    assert [v.path for v in cycles] == [("aten::a", "aten::b", "aten::c", "aten::a"), ("aten::d", "aten::d")]
    assert "aten::a → aten::b → aten::c → aten::a" in cycles[0].message


def test_deprecated_deleted_and_deprecating_targets():
    rules = {"aten::foo": ("aten::mul.Tensor", "aten::add.Tensor", "aten::baz")}
    life = {"aten::mul.Tensor": "deprecated", "aten::add.Tensor": "deprecating", "aten::baz": "deleted"}
    found = check(rules, CATS, life)
    assert {(v.subject, v.severity) for v in by_rule(found, "decomp-target-deprecated")} == {
        ("aten::mul.Tensor", "error"), ("aten::baz", "error")}
    assert [(v.subject, v.severity) for v in by_rule(found, "decomp-target-deprecating")] == [
        ("aten::add.Tensor", "warning")]


def test_drift_findings():
    rules = {"aten::mul.Tensor": ("aten::add.Tensor",)}
    tags = {"aten::mul.Tensor": True, "aten::add.Tensor": False, "aten::baz": True}
    found = check(rules, CATS, None, tags)
    assert [v.operator for v in by_rule(found, "core-decomposed")] == ["aten::mul.Tensor"]
    assert sorted(v.operator for v in by_rule(found, "core-tag-mismatch")) == ["aten::add.Tensor", "aten::baz"]
    assert sorted(v.operator for v in by_rule(found, "decomposable-without-rule")) == ["aten::bar", "aten::foo"]
    assert all(v.severity == "warning" for v in found)
    # a set of tagged operators means: everything else is untagged
    as_set = by_rule(check(rules, CATS, None, {"aten::mul.Tensor", "aten::baz"}), "core-tag-mismatch")
    assert sorted(v.operator for v in as_set) == ["aten::add.Tensor", "aten::baz"]


def test_errors_come_first_and_every_rule_id_is_registered():
    rules = {"aten::foo": ("aten::baz",), "aten::mul.Tensor": ("aten::add.Tensor",)}
    found = check(rules, CATS, None, set())
    severities = [v.severity for v in found]
    assert severities == sorted(severities, key=lambda s: s != "error")
    assert {v.rule for v in found} <= set(CHECKS)
    assert all(v.severity == CHECKS[v.rule].severity for v in found)


def test_2023_review_against_2_13(decisions_2023, release_2_13):
    """The review's suggested decompositions, measured against 2.13's core tags."""
    names, core = release_2_13
    rules = load_rules_file(decisions_2023).mapping()
    found = check(rules, categories_for(names, core, rules), {op: "active" for op in names}, core)
    # ops the review suggested decomposing that 2.13 tags core are drift, each reported
    assert {v.operator for v in by_rule(found, "core-decomposed")} == set(rules) & core
    for v in by_rule(found, "decomp-reaches-non-core"):
        assert v.path[0] == v.operator and v.path[-1] not in core
        assert all(step in rules for step in v.path[:-1])


# --- proposals -------------------------------------------------------------------------------


def test_making_a_target_custom_is_refused_with_the_path():
    rules = {"aten::foo": ("aten::bar",), "aten::bar": ("aten::mul.Tensor",)}
    broken = would_break(rules, CATS, CategoryChange("aten::mul.Tensor", "custom"))
    assert {v.path for v in broken} == {("aten::foo", "aten::bar", "aten::mul.Tensor"),
                                         ("aten::bar", "aten::mul.Tensor")}
    assert all(v.rule == "decomp-reaches-non-core" for v in broken)


def test_a_good_proposal_introduces_nothing():
    rules = {"aten::foo": ("aten::mul.Tensor",)}
    change = [CategoryChange("aten::baz", "decomposable"), RuleChange("aten::baz", ("aten::foo",))]
    assert would_break(rules, CATS, change) == []


def test_new_rules_that_break():
    rules = {"aten::foo": ("aten::mul.Tensor",)}
    non_core = would_break(rules, CATS, RuleChange("aten::foo", ("aten::baz",)))
    assert [v.path for v in non_core] == [("aten::foo", "aten::baz")]
    cycle = would_break({"aten::foo": ("aten::bar",)}, CATS, RuleChange("aten::bar", ("aten::foo",)))
    assert [v.rule for v in cycle] == ["decomp-cycle"]


def test_existing_violations_are_not_blamed_on_the_change():
    rules = {"aten::foo": ("aten::baz",), "aten::bar": ("aten::mul.Tensor",)}
    assert would_break(rules, CATS, RuleChange("aten::bar", ("aten::add.Tensor",))) == []
    # core → decomposable without a rule is drift, reported only on request
    change = CategoryChange("aten::add.Tensor", "decomposable")
    assert would_break(rules, CATS, change) == []
    assert [v.rule for v in would_break(rules, CATS, change, include_warnings=True)] == ["decomposable-without-rule"]


def test_unknown_category_is_bad_input():
    with pytest.raises(BadInput, match="unknown category"):
        would_break({}, CATS, CategoryChange("aten::foo", "special"))


# --- rendering -------------------------------------------------------------------------------


def test_renderings():
    found = check({"aten::foo": ("aten::baz",)}, CATS)
    text = render_violations(found)
    assert "decomp-reaches-non-core" in text and text.rstrip().endswith("1 warning(s)")
    data = json.loads(render_violations(found, "json"))
    assert data["errors"] == 1 and data["violations"][0]["path"] == ["aten::foo", "aten::baz"]
    github = render_violations(found, "github").splitlines()
    assert github[0].startswith("::error title=opgov decomp-reaches-non-core::")
    assert github[1].startswith("::warning ")
    assert render_violations([]) == "decomposition rules: no violations\n"
    with pytest.raises(BadInput):
        render_violations(found, "xml")
