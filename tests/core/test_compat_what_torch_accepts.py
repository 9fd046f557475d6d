"""check-bc on what PyTorch accepts: a positional argument with a default before one without
(only a list may follow a default), judged like torch; and the rules listed as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Result, by_key, check_json, registry
from opgov.core.errors import SchemaParseError
from opgov.core.schema import FunctionSchema

PERMUTE = "permute(Tensor(a) self, int[] dims) -> Tensor(a)"
PERMUTE_X = "permute(Tensor(a) self, int x=1, int[] dims) -> Tensor(a)"


def test_a_default_before_a_list_parses_and_round_trips(torch_mod):
    schema = FunctionSchema.parse(PERMUTE_X)
    assert str(schema) == PERMUTE_X
    assert [a.name for a in schema.arguments] == ["self", "x", "dims"]
    assert str(torch_mod._C.parse_schema("aten::" + PERMUTE_X)) == "aten::" + PERMUTE_X


@pytest.mark.parametrize("text", ["f(Tensor self, int x=1, Tensor t) -> Tensor",
                                  "f(Tensor self, int x=1, int[]? t) -> Tensor",
                                  "f(int x=1, Tensor t, *, Tensor(a!) out) -> Tensor(a!)"])
def test_what_torch_refuses_opgov_refuses(torch_mod, text):
    with pytest.raises(RuntimeError, match="follows default argument"):
        torch_mod._C.parse_schema("aten::" + text)
    with pytest.raises(SchemaParseError, match="has no default but follows"):
        FunctionSchema.parse(text)


def test_inserting_an_argument_with_a_default_before_a_list_is_a_bc_break(nodb, tmp_path, torch_mod):
    old, new = registry(tmp_path / "old.yaml", PERMUTE), registry(tmp_path / "new.yaml", PERMUTE_X)
    report = check_json(nodb, old, new, code=1)
    bc = by_key(report)[("aten::permute", "bc")]
    assert bc["severity"] == "error" and bc["new_schema"] == PERMUTE_X and bc["line"] == 1
    assert not torch_mod._C.parse_schema("aten::" + PERMUTE_X).is_backward_compatible_with(
        torch_mod._C.parse_schema("aten::" + PERMUTE))
    # and the other way round (removing it) too
    assert by_key(check_json(nodb, new, old, code=1))[("aten::permute", "bc")]["severity"] == "error"


def test_a_schema_torch_refuses_is_bad_input_naming_file_and_line(nodb, tmp_path):
    good = registry(tmp_path / "good.yaml", "f(Tensor self, int x=1) -> Tensor")
    refused = registry(tmp_path / "refused.yaml", "g(Tensor self) -> Tensor", "f(Tensor self, int x=1, Tensor t) -> Tensor")
    result = nodb("check-bc", good, refused)
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1
    assert result.err.startswith(f"opgov: error: {refused}:3: ") and "has no default but follows" in result.err


def test_list_rules_as_json(nodb):
    from opgov.core.compat import RULES

    result = nodb("check-bc", "--list-rules", "--format", "json")
    assert result.code == 0, result.err
    listed = json.loads(result.out)
    assert [(r["id"], r["kind"], r["purpose"]) for r in listed] == [(r.id, r.kind, r.purpose) for r in RULES]
