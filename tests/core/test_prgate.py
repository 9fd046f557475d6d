"""The PR gate's pure core (opgov.core.prgate) on small hand-made sides: what a PR author would
see for the cases the end-to-end tests (tests/cli/test_check_pr.py) do not reach cheaply."""

from __future__ import annotations

from datetime import date

from opgov.core import compat
from opgov.core.prgate import AllowEntry, OpState, Policy, PrInput, check_pr
from opgov.core.schema import FunctionSchema

TODAY = date(2026, 3, 1)


def state(schema: str, line: int, *tags: str, composite: bool = False) -> OpState:
    return OpState(schema, tags, line, composite)


def gate(base: dict, head: dict, policy: Policy = Policy(), **extra):
    raw = [f for f in compat.compare({n: FunctionSchema.parse(s.schema) for n, s in base.items()},
                                     {n: FunctionSchema.parse(s.schema) for n, s in head.items()})]
    pr = PrInput(base=base, head=head, head_file="nf.yaml", base_file="nf.yaml", **extra)
    return check_pr(pr, raw, policy, today=TODAY)


def test_a_removed_last_operator_is_annotated_on_the_previous_surviving_line():
    base = {"aten::a": state("a(Tensor self) -> Tensor", 1), "aten::b": state("b(Tensor self) -> Tensor", 4)}
    head = {"aten::a": state("a(Tensor self) -> Tensor", 1)}
    (finding,) = gate(base, head).findings
    assert (finding.rule, finding.severity, finding.line) == ("operator-removed", "error", 1)
    assert "the base had it at line 4" in finding.message


def test_everything_removed_still_has_a_line():
    base = {"aten::b": state("b(Tensor self) -> Tensor", 4)}
    (finding,) = gate(base, {}).findings
    assert finding.line == 1 and finding.file == "nf.yaml"


def test_configuration_cannot_lower_or_ignore_a_core_bc_break():
    base = {"aten::c": state("c(Tensor self, int dim) -> Tensor", 7, "core")}
    head = {"aten::c": state("c(Tensor self, int axis) -> Tensor", 7, "core")}
    policy = Policy(severity={"argument-renamed": "info", "core-schema-changed": "off"},
                    excepted=frozenset({"argument-renamed"}), ignore_only={"argument-renamed": ("aten::*",)},
                    allow=(AllowEntry("x", "aten::c", None, None, "r", "o", None, date(2099, 1, 1)),))
    report = gate(base, head, policy)
    assert [(f.rule, f.severity) for f in report.findings] == [("argument-renamed", "error")]


def test_a_rule_reaching_core_through_another_rule_passes_and_a_cycle_does_not_hang():
    core = {f"aten::{n}": state(f"{n}(Tensor self) -> Tensor", i + 1, "core") for i, n in enumerate(("k1", "k2"))}
    ops = {**core, "aten::m": state("m(Tensor self) -> Tensor", 9), "aten::n": state("n(Tensor self) -> Tensor", 10)}
    rules_head = {"aten::x": ("aten::m",), "aten::m": ("aten::k1", "aten::k2"),
                  "aten::p": ("aten::n",), "aten::n": ("aten::p",)}
    report = gate(ops, ops, rules_base={}, rules_head=rules_head, rules_lines={"aten::x": 3, "aten::p": 5},
                  rules_file="rules.yaml")
    assert [(f.rule, f.operator) for f in report.findings] == []  # n ↔ p: a cycle, no non-core leaf


def test_allow_entry_regex_is_searched_in_the_schema_text_like_pytorch():
    entry = AllowEntry("e", None, r"aten::_foreach.*\(Tensor\[\] self", r"Scalar scalar", "r", "o", None,
                       date(2099, 1, 1))
    assert entry.covers("aten::_foreach_add.Scalar", "_foreach_add.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]",
                        None)
    assert not entry.covers("aten::_foreach_add.List", "_foreach_add.List(Tensor[] self, Tensor[] other) -> Tensor[]",
                            None)
    assert not entry.covers("aten::add.Scalar", "add.Scalar(Tensor self, Scalar scalar) -> Tensor", None)


def test_the_json_is_the_documented_model_written_without_pydantic():
    # `check-pr --format json` writes its JSON with the standard library; it must be pydantic's
    # text of its result (opgov.results.prgate), whatever the findings hold
    from pydantic import TypeAdapter

    from opgov.core.prgate import PrFinding, PrReport
    from opgov.render.prgate import render_json, report_model
    from opgov.results.prgate import PrReportOut

    base = {"aten::a": state("a(Tensor self, int dim) -> Tensor", 1, "core"),
            "aten::b": state("b(Tensor self) -> Tensor", 4)}
    head = {"aten::a": state("a(Tensor self, int axis) -> Tensor", 1, "core"),
            "aten::n": state("n(Tensor self) -> Tensor", 9)}
    report = gate(base, head)
    odd = PrFinding("core-tag-added", "warning", None, 'quote " back\\slash é ∞ \x01\x1f\x7f\t\n', None, None,
                    reviewers=("@org/team", "alice"), labels=("module: core aten",))
    for one in (report, PrReport(report.findings + (odd,), ("@org/team",), ("bc-breaking",)), PrReport((), (), ())):
        assert render_json(one, base="main", head="HEAD") == \
            TypeAdapter(PrReportOut).dump_json(report_model(one, base="main", head="HEAD"), indent=2).decode()
    assert report.findings  # the comparison saw real findings
