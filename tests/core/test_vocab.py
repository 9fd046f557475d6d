"""The vocabulary: the words the database, the yaml and every JSON output store."""

from __future__ import annotations

import json

from opgov.core.vocab import Category, FindingKind, Lifecycle, Preset, ProposalKind, ProposalStatus, Role, Severity


def test_the_stored_words_are_unchanged():
    # rows of existing databases and published JSON carry exactly these strings
    assert [str(c) for c in Category] == ["core", "decomposable", "custom"]
    assert [str(s) for s in Lifecycle] == ["active", "deprecating", "deprecated", "deleted"]
    assert [str(s) for s in Severity] == ["error", "warning", "waived", "info"]
    assert [str(k) for k in FindingKind] == ["bc", "fc", "new", "policy"]  # policy: a governance tag edited (issue 24)
    assert [str(p) for p in Preset] == ["core-aten", "no-decomp", "full-decomp"]
    assert [str(s) for s in ProposalStatus] == ["open", "approved", "rejected", "withdrawn"]
    assert [str(r) for r in Role] == ["maintainer", "developer", "bot"]
    assert json.dumps({"kind": FindingKind.bc, "category": Category.core}) == '{"kind": "bc", "category": "core"}'


def test_a_proposal_kind_names_the_category_it_moves_an_operator_into():
    assert {k.value: k.category.value for k in ProposalKind} == {
        "core": "core", "decompose": "decomposable", "custom": "custom"}


def test_findings_sort_most_serious_first():
    mixed = ["info", "error", "waived", "warning"]
    assert sorted(mixed, key=lambda s: Severity(s).rank) == ["error", "warning", "waived", "info"]
    assert sorted(["new", "fc", "bc"], key=lambda k: FindingKind(k).rank) == ["bc", "fc", "new"]


def test_no_closed_list_is_typed_by_hand():
    # core/vocab.py writes each closed list once: a `Literal` of its words elsewhere names the
    # members (Literal[tuple(Category)], Literal[ProposalKind.core, ...]), and no tuple, list or set
    # spells a whole list again, so a word added to (or renamed in) the vocabulary reaches every
    # request, result and check
    import ast
    from pathlib import Path

    import opgov
    from opgov.core import vocab

    lists = {name: {m.value for m in getattr(vocab, name)} for name in vocab.__all__}
    retyped = set()
    for path in sorted(Path(opgov.__file__).parent.rglob("*.py")):
        if path.name == "vocab.py" and path.parent.name == "core":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        literal_args = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
        for node in ast.walk(tree):
            if id(node) in literal_args and isinstance(node, ast.Tuple):
                continue  # Literal["a", "b"]'s arguments: the Literal is the one reported
            if isinstance(node, ast.Subscript) and "Literal" in (getattr(node.value, "id", None),
                                                                 getattr(node.value, "attr", None)):
                items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
                words = {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}
                whole = False
            elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                words = {i.value for i in node.elts if isinstance(i, ast.Constant) and isinstance(i.value, str)}
                whole = True
            else:
                continue
            for name, members in lists.items():
                if words and words <= members and (not whole or words == members):
                    retyped.add(f"{path.relative_to(Path(opgov.__file__).parent.parent)}:{node.lineno}: {name}")
    assert not retyped, "\n".join(sorted(retyped))
