"""Reading torch.export's default decompositions from the installed PyTorch."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from opgov.core.names import canonical

WELL_KNOWN = ("aten::hardswish", "aten::hardsigmoid", "aten::addcmul", "aten::addcdiv", "aten::silu")


def tagged_core(folder: Path) -> set[str]:
    entries = yaml.load((folder / "native_functions.yaml").read_text(), Loader=yaml.CSafeLoader)
    core = set()
    for entry in entries:
        tags = entry.get("tags") or []
        if "core" in ([t.strip() for t in tags.split(",")] if isinstance(tags, str) else tags):
            core.add("aten::" + entry["func"].split("(", 1)[0])
    return core


#: what the tests below ask torch about (tracing exports each: the whole table takes most of an hour)
ASKED = (*WELL_KNOWN, "aten::mish", "aten::softplus", "aten::addcmul_", "aten::addcmul.out", "aten::elu",
         "aten::ctc_loss.IntList", "aten::not_in_the_table")


@pytest.fixture(scope="module")
def torch_rules(torch_mod):
    from opgov.formats.torch_decomps import read_torch_table

    table = read_torch_table(only=ASKED, workers=1, time_budget_s=600)
    assert table.absent == ("aten::not_in_the_table",)
    return {r.op: r for r in table.rules}


def test_every_asked_operator_is_listed_and_says_how_it_was_traced(torch_rules, torch_mod):
    from torch._decomp import core_aten_decompositions

    from opgov.formats.torch_decomps import overload_name

    table = {overload_name(op) for op in core_aten_decompositions() if isinstance(op, torch_mod._ops.OpOverload)
             and op.namespace == "aten"}
    assert set(torch_rules) == set(ASKED) - {"aten::not_in_the_table"}
    assert all(canonical(op) == op for op in torch_rules)
    assert all(r.in_default == (op in table) for op, r in torch_rules.items())
    assert all(r.traced and r.reason is None and "OpInfo" in r.inputs for r in torch_rules.values())


def test_an_operator_export_cannot_trace_is_learned_from_torch_on_real_tensors(torch_rules):
    """ctc_loss's output shape depends on the data: torch.export refuses its samples, torch's make_fx
    traces them on real tensors; the rule says so, with export's error."""
    rule = torch_rules["aten::ctc_loss.IntList"]
    assert rule.traced and rule.inputs.startswith("make_fx on real tensors: "), rule
    assert "torch.export of them: DynamicOutputShapeException" in rule.inputs
    assert "aten::_ctc_loss" in rule.into and "aten::ctc_loss.IntList" not in rule.into


def test_well_known_ops_decompose_into_core_ops(torch_rules, pytorch_release):
    core = tagged_core(pytorch_release("2.13.0"))
    for op in WELL_KNOWN:
        rule = torch_rules[op]
        assert rule.traced and rule.kind == "functional", rule
        assert rule.into and set(rule.into) <= core, rule
        assert op not in rule.into


def test_targets_are_what_export_leaves_after_the_whole_table(torch_rules, pytorch_release):
    """mish calls softplus, which the table decomposes in turn: export leaves neither."""
    core = tagged_core(pytorch_release("2.13.0"))
    assert "aten::softplus" not in core
    assert "aten::softplus" not in torch_rules["aten::mish"].into and set(torch_rules["aten::mish"].into) <= core


def test_a_rule_export_does_not_apply_by_default_is_told_apart(torch_rules):
    """torch._decomp decomposes elu; export's default table does not: export keeps elu."""
    elu = torch_rules["aten::elu"]
    assert not elu.in_default and elu.exported == ("aten::elu",)
    assert elu.into and "aten::elu" not in elu.into  # what the rule makes of it, when a table adds it
    assert all(r.exported is None for r in torch_rules.values() if r.in_default)


def test_in_place_and_out_variants_are_functionalized(torch_rules):
    functional = torch_rules["aten::addcmul"].into
    for variant in ("aten::addcmul_", "aten::addcmul.out"):
        rule = torch_rules[variant]
        assert rule.kind in ("inplace", "out")
        assert rule.into == functional  # no write-back copy_, no in-place targets


def test_silu_becomes_sigmoid_and_mul(torch_rules):
    assert set(torch_rules["aten::silu"].into) == {"aten::sigmoid", "aten::mul.Tensor"}


def test_time_budget_is_respected(torch_mod):
    from opgov.formats.torch_decomps import torch_decomposition_rules

    rules = torch_decomposition_rules(only=["aten::silu", "aten::hardswish"], time_budget_s=0)
    assert {r.op for r in rules} == {"aten::silu", "aten::hardswish"}
    assert all(not r.traced and "time budget" in r.reason for r in rules)
