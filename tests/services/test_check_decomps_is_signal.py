"""check-decomps on the real releases with the shipped data (issue 10): each finding is signal,
with its own rule id; no error comes from the shipped data itself; the output fits on a screen;
GitHub annotations stay within GitHub's limits."""

from __future__ import annotations

import pytest

from conftest import REPO

DECISIONS = REPO / "data" / "decisions" / "core-aten-review-2023.yaml"
RULES = REPO / "data" / "decomps" / "export-composites.yaml"
SCREEN = 40  # lines


def imported(make_cli, tmp_path, folder, label):
    cli = make_cli(f"sqlite:///{tmp_path / 'opgov.db'}")
    cli.ok("import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml", "--label", label)
    return cli


def findings(cli, *args) -> dict[str, set[str]]:
    report = cli("check-decomps", "--format", "json", *args).json()
    out: dict[str, set[str]] = {}
    for v in report["violations"]:
        out.setdefault(v["rule"], set()).add(v["operator"])
    return out


def test_2_13_without_data_has_no_kernel_noise(make_cli, tmp_path, pytorch_release):
    cli = imported(make_cli, tmp_path, pytorch_release("2.13.0"), "2.13.0")
    found = findings(cli)
    # 733 decomposable operators: every one has a CompositeImplicitAutograd kernel
    assert "decomposable-without-rule" not in found
    assert found["core-not-functional"] == {"aten::resize_", "aten::_native_batch_norm_legit", "aten::atan2.out"}
    assert {"aten::upsample_bilinear2d.vec", "aten::upsample_nearest2d.vec",
            "aten::var.dim"} <= found["core-composite-implicit"]
    assert not any(op.startswith("aten::sym_") for op in found["core-composite-implicit"])
    text = cli("check-decomps")
    assert text.code == 0 and len(text.out.splitlines()) <= SCREEN


@pytest.mark.parametrize("version", ["2.6.0", "2.12.0", "2.13.0"])
def test_shipped_data_causes_no_error(make_cli, tmp_path, pytorch_release, models_dir, version):
    cli = imported(make_cli, tmp_path, pytorch_release(version), version)
    cli.ok("decisions", "load", DECISIONS)
    # the review decomposes mish into softplus and hann_window.periodic into arange, neither core:
    # the shipped rules file carries torch's rules for both
    before = findings(cli)
    assert before["decomp-reaches-non-core"] == {"aten::mish", "aten::mish_", "aten::hann_window.periodic"}
    cli.ok("decomps", "load", RULES)
    result = cli("check-decomps", "--models", models_dir)
    assert result.code == 0, result.out
    lines = result.out.splitlines()
    assert lines[-1].startswith("0 error(s)") and len(lines) <= SCREEN
    found = findings(cli, "--models", models_dir)
    assert "decomposable-without-rule" not in found and "decomp-reaches-non-core" not in found
    # the rule ids a maintainer acts on
    assert found["core-not-functional"] == {"aten::resize_", "aten::_native_batch_norm_legit", "aten::atan2.out"}
    assert {"aten::upsample_bilinear2d.vec", "aten::var.dim"} <= found["core-composite-implicit"]
    # the one operator the models use that is neither core nor decomposed is an assertion: no kernel
    assert "model-op-uncovered" not in found
    github = cli("check-decomps", "--format", "github", "--models", models_dir).out.splitlines()
    assert sum(line.startswith("::warning ") for line in github) <= 10
    assert sum(line.startswith("::error ") for line in github) <= 10


def test_2_0_0_models_need_full_like(make_cli, tmp_path, pytorch_release, models_dir):
    """pytorch/pytorch#139617: before full_like was tagged core, models needed it while nothing
    decomposed it."""
    cli = imported(make_cli, tmp_path, pytorch_release("2.0.0"), "2.0.0")
    found = findings(cli, "--models", models_dir)
    assert "aten::full_like" in found["model-op-uncovered"]
    assert "aten::linear" not in found["model-op-uncovered"]  # its kernel decomposes it
    assert "aten::relu_" not in found["model-op-uncovered"]  # functionalized into core relu
    github = cli("check-decomps", "--format", "github", "--models", models_dir).out.splitlines()
    warnings = [line for line in github if line.startswith("::warning ")]
    assert len(warnings) == 10 and "summary" in warnings[-1]
    assert len(findings(cli, "--models", models_dir)["model-op-uncovered"]) > 10


def test_decisions_load_says_which_rules_end_outside_core(make_cli, tmp_path, pytorch_release):
    cli = imported(make_cli, tmp_path, pytorch_release("2.13.0"), "2.13.0")
    loaded = cli.ok("decisions", "load", DECISIONS, "--json").json()
    assert len(loaded["decomposition_errors"]) == 3
    assert any("aten::mish → aten::softplus" in e for e in loaded["decomposition_errors"])
    cli.ok("decomps", "load", RULES)
    again = cli.ok("decisions", "load", DECISIONS, "--json").json()
    assert again["decomposition_errors"] == []
