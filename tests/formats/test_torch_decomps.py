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


@pytest.fixture(scope="module")
def torch_rules(torch_table):
    """The rules of the session's trace of the whole table (:func:`tests.conftest.torch_table`)."""
    from opgov.formats.torch_decomps import torch_decomposition_rules

    from tests.conftest import reusing

    with reusing(torch_table):
        return {r.op: r for r in torch_decomposition_rules()}


def test_the_whole_table_is_listed(torch_rules, torch_mod):
    from torch._decomp import core_aten_decompositions

    table = {str(op) for op in core_aten_decompositions() if isinstance(op, torch_mod._ops.OpOverload)
             and op.namespace == "aten"}
    assert len(torch_rules) == len(table)
    assert all(canonical(op) == op for op in torch_rules)
    traced = [r for r in torch_rules.values() if r.traced]
    assert len(traced) > 100
    untraced = [r for r in torch_rules.values() if not r.traced]
    assert all(r.reason for r in untraced)  # every give-up says why
    assert all(r.reason is None for r in traced)


def test_well_known_ops_decompose_into_core_ops(torch_rules, pytorch_release):
    core = tagged_core(pytorch_release("2.13.0"))
    for op in WELL_KNOWN:
        rule = torch_rules[op]
        assert rule.traced and rule.kind == "functional", rule
        assert rule.into and set(rule.into) <= core, rule
        assert op not in rule.into


def test_targets_are_one_step_and_the_chain_ends_in_core(torch_rules, pytorch_release):
    """mish calls softplus, which the table decomposes in turn: opgov follows the chain."""
    from opgov.core.decomps import check

    core = tagged_core(pytorch_release("2.13.0"))
    assert "aten::softplus" in torch_rules["aten::mish"].into and "aten::softplus" not in core
    rules = {op: torch_rules[op].into for op in ("aten::mish", "aten::softplus")}
    categories = {op: "core" for op in core} | {op: "decomposable" for op in rules}
    assert [v for v in check(rules, categories) if v.rule == "decomp-reaches-non-core"] == []


def test_in_place_and_out_variants_are_functionalized(torch_rules):
    functional = torch_rules["aten::addcmul"].into
    for variant in ("aten::addcmul_", "aten::addcmul.out"):
        rule = torch_rules[variant]
        assert rule.kind in ("inplace", "out")
        assert rule.into == functional  # no write-back copy_, no in-place targets


def test_restricting_the_run(torch_mod):
    from opgov.formats.torch_decomps import torch_decomposition_rules

    rules = torch_decomposition_rules(only=["aten::silu", "aten::not_in_the_table"], workers=1)
    assert [r.op for r in rules] == ["aten::silu"]
    assert set(rules[0].into) == {"aten::sigmoid", "aten::mul.Tensor"}


def test_time_budget_is_respected(torch_mod):
    from opgov.formats.torch_decomps import torch_decomposition_rules

    rules = torch_decomposition_rules(only=["aten::silu", "aten::hardswish"], time_budget_s=0)
    assert {r.op for r in rules} == {"aten::silu", "aten::hardswish"}
    assert all(not r.traced and "time budget" in r.reason for r in rules)
