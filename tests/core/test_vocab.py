"""The vocabulary: the words the database, the yaml and every JSON output store."""

from __future__ import annotations

import json

from opgov.core.vocab import Category, FindingKind, Lifecycle, Preset, ProposalKind, Severity


def test_the_stored_words_are_unchanged():
    # rows of existing databases and published JSON carry exactly these strings
    assert [str(c) for c in Category] == ["core", "decomposable", "custom"]
    assert [str(s) for s in Lifecycle] == ["active", "deprecating", "deprecated", "deleted"]
    assert [str(s) for s in Severity] == ["error", "warning", "waived", "info"]
    assert [str(k) for k in FindingKind] == ["bc", "fc", "new", "policy"]  # policy: a governance tag edited (issue 24)
    assert [str(p) for p in Preset] == ["core-aten", "no-decomp", "full-decomp"]
    assert json.dumps({"kind": FindingKind.bc, "category": Category.core}) == '{"kind": "bc", "category": "core"}'


def test_a_proposal_kind_names_the_category_it_moves_an_operator_into():
    assert {k.value: k.category.value for k in ProposalKind} == {
        "core": "core", "decompose": "decomposable", "custom": "custom"}


def test_findings_sort_most_serious_first():
    mixed = ["info", "error", "waived", "warning"]
    assert sorted(mixed, key=lambda s: Severity(s).rank) == ["error", "warning", "waived", "info"]
    assert sorted(["new", "fc", "bc"], key=lambda k: FindingKind(k).rank) == ["bc", "fc", "new"]
