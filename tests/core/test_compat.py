"""BC/FC rules, one folder per rule; the seed policy's examples; the policy; the renderers."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
import yaml

from opgov.core.compat import (
    RULES,
    BcException,
    RawFinding,
    apply_policy,
    bc_breaks,
    compare,
    expired_exceptions,
    fc_breaks,
    rules_for,
)
from opgov.render.compat import render_github, render_json, render_text
from opgov.results.compat import CheckReport
from opgov.core.names import from_func_name
from opgov.core.schema import FunctionSchema

CASES = Path(__file__).resolve().parents[1] / "compat" / "cases"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_registry(path: Path) -> dict[str, FunctionSchema]:
    """Canonical name → schema for a native_functions.yaml-format file."""
    with open(path, encoding="utf-8") as handle:
        entries = yaml.load(handle, Loader=_LOADER) or []
    schemas = [FunctionSchema.parse(e["func"]) for e in entries]
    return {str(from_func_name(s.func_name)): s for s in schemas}


def load_autogen(path: Path) -> dict[str, str]:
    """Canonical name → declaring entry, for the operators a file declares by ``autogen:``."""
    with open(path, encoding="utf-8") as handle:
        entries = yaml.load(handle, Loader=_LOADER) or []
    return {f"aten::{name.strip()}": str(from_func_name(FunctionSchema.parse(e["func"]).func_name))
            for e in entries for name in (e.get("autogen") or "").split(",") if name.strip()}


def bc_rules(old: str, new: str) -> list[str]:
    return [b.rule for b in bc_breaks(FunctionSchema.parse(old), FunctionSchema.parse(new))]


def fc_rules(old: str, new: str) -> list[str]:
    return [b.rule for b in fc_breaks(FunctionSchema.parse(old), FunctionSchema.parse(new))]


# --- the seed policy's own examples -------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        ("foo(Tensor self, int a) -> int", "foo(Tensor self, int a) -> Scalar", "return-type-changed"),
        ("foo(Tensor self, Scalar a) -> int", "foo(Tensor self, int a) -> int", "argument-type-narrowed"),
        ("foo(Tensor self, int a) -> int", "foo(Tensor self, int a, int b) -> int", "argument-added-without-default"),
    ],
)
def test_seed_bc_breaks(old, new, rule):
    assert bc_rules(old, new) == [rule]


def test_seed_not_a_break_new_last_argument_with_default():
    old, new = "foo(Tensor self, int a) -> int", "foo(Tensor self, int a, int z=100) -> int"
    assert bc_rules(old, new) == []
    assert fc_rules(old, new) == []


@pytest.mark.parametrize(
    ("old", "new", "rule"),
    [
        # a new default argument c=1 before b=1 when out arguments follow
        ("foo.out(Tensor self, int a, int b=1, *, Tensor(a!) out) -> Tensor(a!)",
         "foo.out(Tensor self, int a, int c=1, int b=1, *, Tensor(a!) out) -> Tensor(a!)",
         "default-argument-not-before-out"),
        # an out argument added before existing arguments
        ("foo.out(Tensor self, *, int a, int b=1, Tensor(a!) out) -> Tensor(a!)",
         "foo.out(Tensor self, *, int a, Tensor(d!) d, int b=1, Tensor(a!) out) -> Tensor(a!)",
         "out-argument-not-at-end"),
        # a new int[2] c=1 default
        ("foo(Tensor self, int a, int b=1) -> Tensor", "foo(Tensor self, int a, int b=1, int[2] c=1) -> Tensor",
         "container-default-added"),
        # a default argument renamed
        ("foo(Tensor self, int a, int b=1) -> Tensor", "foo(Tensor self, int a, int c=1) -> Tensor",
         "default-argument-renamed"),
        # a default value changed b=1 -> b=4
        ("foo(Tensor self, int a, int b=1) -> Tensor", "foo(Tensor self, int a, int b=4) -> Tensor",
         "default-changed"),
    ],
)
def test_seed_fc_breaks(old, new, rule):
    assert fc_rules(old, new) == [rule]


def test_fine_new_keyword_argument_with_scalar_default_right_before_outs():
    old = "foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
    new = "foo.out(Tensor self, *, int z=1, Tensor(a!) out) -> Tensor(a!)"
    assert bc_rules(old, new) == [] and fc_rules(old, new) == []


# --- one folder per rule ------------------------------------------------------------------

CASE_DIRS = sorted(p for p in CASES.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_rule_case(case: Path):
    findings = compare(load_registry(case / "old.yaml"), load_registry(case / "new.yaml"),
                       load_autogen(case / "old.yaml"))
    got = [{"operator": f.operator, "kind": f.kind, "rule": f.rule} for f in findings]
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    assert got == expected
    if not case.name.startswith("no-finding-"):
        assert case.name in {f["rule"] for f in expected}, "a rule's folder shows that rule"
    for f in findings:
        assert f.message.endswith(".") and f.message[0].isupper()


def test_every_rule_has_a_case_folder():
    names = {p.name for p in CASE_DIRS}
    pairwise_only = {"name-changed"}  # compare() pairs operators by name; see the test below
    assert {r.id for r in RULES} - pairwise_only <= names
    assert all(n in {r.id for r in RULES} or n.startswith("no-finding-") for n in names)


def test_registry_ids_kinds_and_purposes():
    keys = [(r.id, r.kind) for r in RULES]
    assert len(keys) == len(set(keys))
    for r in RULES:
        assert r.kind in ("bc", "fc", "new")
        assert r.id == r.id.lower() and " " not in r.id
        assert r.purpose.endswith(".") and "\n" not in r.purpose
        # one function per rule, named after its id (buf's style); operator rules are compare()'s
        if r.subjects == ("operator",):
            assert r.check is None
        else:
            assert r.check.__name__ == r.id.replace("-", "_")
    assert {r.id for r in rules_for("fc", "added")} == {"argument-added-without-default", "container-default-added"}


def test_name_changed_only_when_comparing_different_operators():
    breaks = bc_breaks(FunctionSchema.parse("foo.a(Tensor self) -> Tensor"),
                       FunctionSchema.parse("foo.b(Tensor self) -> Tensor"))
    assert [(b.kind, b.rule) for b in breaks] == [("bc", "name-changed")]
    assert [b.rule for b in fc_breaks(FunctionSchema.parse("foo(Tensor self) -> Tensor"),
                                      FunctionSchema.parse("bar(Tensor self) -> Tensor"))] == ["name-changed"]


# --- more semantics -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "bc", "fc"),
    [
        # TorchScript sees SymInt, ScalarType, Layout, MemoryFormat as int
        ("f(Tensor self, int a) -> Tensor", "f(Tensor self, SymInt a) -> Tensor", [], []),
        ("f(Tensor self, ScalarType? a=None) -> Tensor", "f(Tensor self, int? a=None) -> Tensor", [], []),
        # T <: T?, int <: Scalar; lists are invariant; fixed sizes must stay
        ("f(Tensor self, int a) -> Tensor", "f(Tensor self, int? a) -> Tensor", [], ["argument-type-widened"]),
        ("f(Tensor self, int a) -> Tensor", "f(Tensor self, Scalar a) -> Tensor", [], ["argument-type-widened"]),
        ("f(Tensor self, int[] a) -> Tensor", "f(Tensor self, Scalar[] a) -> Tensor",
         ["argument-type-narrowed"], ["argument-type-widened"]),
        ("f(Tensor self, int[2] a) -> Tensor", "f(Tensor self, int[3] a) -> Tensor",
         ["argument-type-narrowed"], ["argument-type-widened"]),
        # defaults compare as values
        ("f(Tensor self, float eps=1e-05) -> Tensor", "f(Tensor self, float eps=0.00001) -> Tensor", [], []),
        ("f(Tensor self, float eps=1) -> Tensor", "f(Tensor self, float eps=1.0) -> Tensor", [], []),
        ("f(Tensor self, Scalar a=1) -> Tensor", "f(Tensor self, Scalar a=1.0) -> Tensor",
         ["default-changed"], ["default-changed"]),
        ("f(Tensor self, int[2] s=1) -> Tensor", "f(Tensor self, int[2] s=[1, 1]) -> Tensor", [], []),
        ("f(Tensor self, str m=\"mean\") -> Tensor", "f(Tensor self, str m='mean') -> Tensor", [], []),
        ("f(Tensor self, int r=Mean) -> Tensor", "f(Tensor self, int r=1) -> Tensor", [], []),
        ("f(Tensor self, bool b=False) -> Tensor", "f(Tensor self, bool b=0) -> Tensor",
         ["default-changed"], ["default-changed"]),
        # returns: more specific is fine for BC; FC does not look at return types
        ("f(Tensor self) -> Scalar", "f(Tensor self) -> int", [], []),
        ("f(Tensor self) -> Tensor", "f(Tensor self) -> Tensor?", ["return-type-changed"], []),
        # keyword-only → positional is fine both ways
        ("f(Tensor self, *, int a) -> Tensor", "f(Tensor self, int a) -> Tensor", [], []),
        # an out argument removed
        ("f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) out2) -> Tensor(a!)",
         "f.out(Tensor self, int x=1, int y=2, *, Tensor(a!) out) -> Tensor(a!)",
         ["out-argument-changed"], ["out-count-changed"]),
        # removing a trailing default argument only breaks BC
        ("f(Tensor self, int a, int b=1) -> Tensor", "f(Tensor self, int a) -> Tensor", ["argument-removed"], []),
    ],
)
def test_semantics(old, new, bc, fc):
    assert bc_rules(old, new) == bc
    assert fc_rules(old, new) == fc


def test_messages_name_the_argument_and_types():
    [b] = bc_breaks(FunctionSchema.parse("foo(Tensor self, Scalar a) -> int"),
                    FunctionSchema.parse("foo(Tensor self, int a) -> int"))
    assert b.message == "Argument 'a' changed type from Scalar to int, which does not accept every Scalar value."
    [b] = bc_breaks(FunctionSchema.parse("foo(Tensor self, int a) -> int"),
                    FunctionSchema.parse("foo(Tensor self, int a) -> Scalar"))
    assert b.message == "Type of return 0 changed from int to Scalar, which is more generic than int."


def test_dimname_schemas_are_checked_although_torch_cannot_parse_them():
    old = "all.dimname(Tensor self, Dimname dim, bool keepdim=False) -> Tensor"
    assert bc_rules(old, "all.dimname(Tensor self, Dimname[1] dim, bool keepdim=False) -> Tensor") == [
        "argument-type-narrowed"]
    assert bc_rules(old, "all.dimname(Tensor self, Dimname dim, bool keepdim=True) -> Tensor") == ["default-changed"]
    assert bc_rules(old, "all.dimname(Tensor self, Dimname? dim, bool keepdim=False) -> Tensor") == []
    assert fc_rules(old, "all.dimname(Tensor self, Dimname? dim, bool keepdim=False) -> Tensor") == [
        "argument-type-widened"]


def test_named_tensor_removal_between_2_12_and_2_13(pytorch_release):
    """Documented fact: 2.12.0 → 2.13.0 removed 108 named-tensor overloads and added one."""
    folder = "native_functions.yaml"
    findings = compare(load_registry(pytorch_release("2.12.0") / folder),
                       load_registry(pytorch_release("2.13.0") / folder))
    removed = [f for f in findings if f.rule == "operator-removed"]
    assert len(removed) == 108
    assert all(f.kind == "bc" and f.old_schema and f.new_schema is None for f in removed)
    # The Dimname schemas among them are checked like any other (torch cannot parse them).
    assert any("Dimname" in f.old_schema for f in removed)
    assert len([f for f in findings if f.kind == "new"]) == 1


def test_one_finding_per_operator_and_kind_first_rule_names_it():
    old = {"aten::foo": FunctionSchema.parse("foo(Tensor self, int a, int b=1) -> Tensor")}
    new = {"aten::foo": FunctionSchema.parse("foo(Tensor self, int? a, int b=2) -> Tensor?")}
    findings = compare(old, new)
    assert [(f.kind, f.rule) for f in findings] == [("bc", "return-type-changed"), ("fc", "argument-type-widened")]
    bc = findings[0]
    assert bc.also == ("default-changed",)
    assert "Also: Default of argument 'b' changed from 1 to 2." in bc.message
    assert bc.old_schema == "foo(Tensor self, int a, int b=1) -> Tensor"
    assert findings[1].also == ("default-changed",)


def test_removed_overload_lists_the_remaining_ones():
    old = {"aten::foo.a": FunctionSchema.parse("foo.a(Tensor self) -> Tensor"),
           "aten::foo.b": FunctionSchema.parse("foo.b(Tensor self) -> Tensor")}
    new = {"aten::foo.b": FunctionSchema.parse("foo.b(Tensor self) -> Tensor")}
    [f] = compare(old, new)
    assert (f.operator, f.kind, f.rule) == ("aten::foo.a", "bc", "operator-removed")
    assert "aten::foo.b" in f.message


def test_unchanged_registries_have_no_findings(pytorch_versions, pytorch_release):
    schemas = load_registry(pytorch_release(pytorch_versions[-1]) / "native_functions.yaml")
    assert compare(schemas, dict(schemas)) == []


# --- policy -------------------------------------------------------------------------------

TODAY = date(2025, 6, 1)


def _raw(operator="aten::foo", kind="bc", rule="argument-removed"):
    return RawFinding(operator, kind, rule, "Argument 'b' of type int was removed.", "old", "new")


def _exc(pattern, expires_on=date(2025, 12, 31)):
    return BcException(pattern, "migration in progress", "alice", expires_on)


def test_core_bc_break_is_an_error_that_no_exception_waives():
    [f] = apply_policy([_raw()], core={"aten::foo"}, exceptions=[_exc("aten::*")], today=TODAY)
    assert f.severity == "error"
    assert "add a new native function" in f.message


def test_core_may_be_a_predicate():
    [f] = apply_policy([_raw()], core=lambda name: name.startswith("aten::f"), today=TODAY)
    assert f.severity == "error" and "core ATen operator" in f.message


def test_exception_covers_non_core_operator():
    [f] = apply_policy([_raw("aten::_foreach_add.List")], core=set(), exceptions=[_exc("aten::_foreach_*")],
                       today=TODAY)
    assert f.severity == "waived"
    assert "aten::_foreach_*" in f.message and "alice" in f.message


def test_exception_pattern_without_namespace():
    assert _exc("_foreach_*").covers("aten::_foreach_add.List")
    assert not _exc("aten::_foreach_*").covers("aten::add")


def test_exception_applies_through_its_expiry_day_and_not_after():
    exc = _exc("aten::foo", expires_on=TODAY)
    [f] = apply_policy([_raw()], core=set(), exceptions=[exc], today=TODAY)
    assert f.severity == "waived"
    [f] = apply_policy([_raw()], core=set(), exceptions=[exc], today=date(2025, 6, 2))
    assert f.severity == "error"
    assert "expired on 2025-06-01" in f.message
    assert expired_exceptions([exc, _exc("aten::bar")], date(2025, 6, 2)) == [exc]


def test_completed_deletion_is_not_an_error():
    raw = [_raw("aten::old_op", rule="operator-removed"), _raw("aten::other_op", rule="operator-removed")]
    found = apply_policy(raw, core=set(), completed_deletions={"aten::old_op"}, today=TODAY)
    assert [(f.operator, f.severity) for f in found] == [("aten::old_op", "info"), ("aten::other_op", "error")]


def test_fc_break_is_a_warning_and_a_new_operator_is_information():
    found = apply_policy([_raw(kind="fc", rule="default-changed"), _raw(kind="new", rule="operator-added")],
                         core={"aten::foo"}, today=TODAY)
    assert [f.severity for f in found] == ["warning", "info"]


def test_locate_gives_file_and_line():
    [f] = apply_policy([_raw()], core=set(), today=TODAY, locate=lambda raw: ("nf.yaml", 12))
    assert (f.file, f.line) == ("nf.yaml", 12)


# --- report and renderers -----------------------------------------------------------------


def _report():
    raw = [_raw("aten::a"), _raw("aten::b", kind="fc", rule="default-changed"),
           _raw("aten::c", kind="new", rule="operator-added"), _raw("aten::_foreach_x")]
    exceptions = [_exc("aten::_foreach_*"), _exc("aten::gone", expires_on=date(2024, 1, 1))]
    findings = apply_policy(raw, core={"aten::a"}, exceptions=exceptions, today=TODAY,
                            locate=lambda f: ("a,b:c.yaml", 7) if f.operator == "aten::a" else (None, None))
    return CheckReport.of(findings, expired_exceptions(exceptions, TODAY))


def test_json_shape():
    data = json.loads(render_json(_report()))
    assert set(data) == {"findings", "summary", "expired_exceptions", "not_compared"}
    assert set(data["findings"][0]) == {"operator", "kind", "rule", "severity", "message", "old_schema",
                                        "new_schema", "file", "line", "upgrader", "suggested_upgrader",
                                        "version_map_entry"}
    assert data["summary"] == {"errors": 1, "warnings": 1, "waived": 1, "infos": 1, "bc": 2, "fc": 1, "new": 1}
    assert data["expired_exceptions"][0]["pattern"] == "aten::gone"
    assert data["expired_exceptions"][0]["expires_on"] == "2024-01-01"


def test_github_workflow_commands_escape_properties_and_data():
    report = _report()
    lines = render_github(report).splitlines()
    first = "::error file=a%2Cb%3Ac.yaml,line=7,title=BC break argument-removed%3A aten%3A%3Aa::"
    assert lines[0].startswith(first)
    assert lines[1].startswith("::warning title=FC break default-changed%3A aten%3A%3Ab::")
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::warning", "::notice", "::notice", "::warning"]
    assert "expired BC exception" in lines[-1]


def test_github_escapes_newlines_and_percent_in_messages():
    raw = RawFinding("aten::a", "fc", "default-changed", "50% done\nnext\rline", None, None)
    report = CheckReport.of(apply_policy([raw], core=set(), today=TODAY))
    expected = "::warning title=FC break default-changed%3A aten%3A%3Aa::50%25 done%0Anext%0Dline\n"
    assert render_github(report) == expected


def test_text_groups_by_severity_errors_first_with_a_summary():
    text = render_text(_report())
    order = [text.index(h) for h in ("Errors (1)", "Warnings (1)", "Waived (1)", "Information (1)",
                                     "Expired exceptions (1)")]
    assert order == sorted(order)
    assert "a,b:c.yaml:7: aten::a [bc argument-removed]" in text
    assert text.rstrip().splitlines()[-1] == "1 error, 1 warning, 1 waived, 1 info (2 BC, 1 FC, 1 new)"
    assert "\x1b[" not in text


def test_empty_report():
    report = CheckReport.of([])
    assert render_github(report) == ""
    assert render_text(report) == "0 errors, 0 warnings, 0 waived, 0 infos (0 BC, 0 FC, 0 new)\n"


def test_the_report_json_is_pydantics():
    # `opgov check-bc` of two files prints its report's JSON without pydantic: the same text as
    # pydantic's for the same dataclasses (what the API answers), quotes, non-ASCII and control codes included
    from pydantic import TypeAdapter

    raw = [_raw("aten::a"), _raw("aten::b", kind="fc", rule="default-changed"),
           _raw("aten::c", kind="new", rule="operator-added"), _raw("aten::_foreach_x"),
           RawFinding("aten::d", "fc", "default-changed", 'quote " back\\slash é ∞ \x01\x1f\x7f\t\n', "d(int a)", None)]
    exceptions = [_exc("aten::_foreach_*"), _exc("aten::gone", expires_on=date(2024, 1, 1))]
    findings = apply_policy(raw, core={"aten::a"}, exceptions=exceptions, today=TODAY,
                            locate=lambda f: ("a,b:c.yaml", 7) if f.operator == "aten::a" else (None, None))
    adapter = TypeAdapter(CheckReport)
    for report in (CheckReport.of(findings, expired_exceptions(exceptions, TODAY), not_compared=["aten::x.out"]),
                   CheckReport.of([])):
        assert render_json(report) == adapter.dump_json(report, indent=2).decode()
        assert adapter.validate_json(render_json(report)) == report  # what the CLI reads back from a server


def test_every_openapi_schema_name_is_chosen_not_a_module_path():
    # a generated client carries these names: each is a class's own name, never the module path
    # FastAPI falls back to when two classes share a name (docs/service.md lists the two renamed)
    from opgov.api.app import create_app
    from opgov.api.config import Config

    schemas = create_app(Config(db="sqlite:///unused.db")).openapi()["components"]["schemas"]
    assert schemas["CheckReport"]["properties"]["findings"]["items"] == {"$ref": "#/components/schemas/CheckBcFinding"}
    assert schemas["ModelCheckReport"]["properties"]["errors"]["items"] == {"$ref": "#/components/schemas/ModelFinding"}
    assert {"Summary", "ExceptionOut", "CheckBcFinding", "ModelFinding"} <= set(schemas)
    assert [name for name in schemas if not name.isidentifier() or "__" in name] == []
