"""Graph operators are real torch operators that torch.export leaves in programs, decided from
the snapshot's schemas; the hand lists hold only what a schema cannot say."""

from __future__ import annotations

import re

import pytest

from opgov.core.graph_ops import (GRAPH_OPS, NOT_GRAPH_OPS, graph_op_reason, graph_ops_of, schema_reason,
                                  split_graph_ops)


def release_schemas(folder) -> list[tuple[str, str]]:
    text = (folder / "native_functions.yaml").read_text()
    return [("aten::" + m.group(1).split("(", 1)[0], m.group(1).strip())
            for m in re.finditer(r"^- func: (.*)$", text, re.M)]


@pytest.fixture(scope="module")
def graph_2_13(pytorch_release):
    return graph_ops_of(release_schemas(pytorch_release("2.13.0")))


def test_every_graph_operator_is_an_operator_of_torch(torch_mod, graph_2_13):
    for name in set(GRAPH_OPS) | set(graph_2_13):
        base, _, overload = name.removeprefix("aten::").partition(".")
        packet = getattr(torch_mod.ops.aten, base, None)
        assert packet is not None, f"torch has no aten::{base}"
        assert (overload or "default") in packet.overloads(), f"torch has no {name}"


def test_the_schema_decides_as_torch_declares_it(torch_mod, graph_2_13):
    """torch's own schema of each operator the snapshot's schemas call graph operators returns only
    symbolic values, or nothing with no argument written to."""
    for name, why in graph_2_13.items():
        if name in GRAPH_OPS:
            continue
        base, _, overload = name.removeprefix("aten::").partition(".")
        schema = getattr(getattr(torch_mod.ops.aten, base), overload or "default")._schema
        returns = str(schema).rpartition(" -> ")[2]  # as torch prints it: SymBool, SymInt[], ()
        assert returns == "()" or set(re.findall(r"\w+", returns)) <= {"SymInt", "SymBool", "SymFloat"}, (name, returns)
        assert not any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments), name
        assert ("symbolic" in why) == (returns != "()"), (name, why)


def test_sym_is_contiguous_is_a_graph_operator_by_its_schema(graph_2_13):
    assert "aten::sym_is_contiguous" not in GRAPH_OPS  # no hand entry: the schema says it
    why = graph_2_13["aten::sym_is_contiguous"]
    assert "SymBool" in why and "symbolic" in why
    assert "assertion" in graph_2_13["aten::_assert_scalar"]
    assert "assertion" in graph_2_13["aten::sym_constrain_range_for_size"]
    # what a schema cannot say: a token-returning assertion, operators that act outside the tensors
    assert "aten::_functional_assert_async.msg" in graph_2_13
    assert not set(NOT_GRAPH_OPS) & set(graph_2_13)
    assert "aten::_local_scalar_dense" not in graph_2_13  # a Scalar, read from a tensor: it runs
    assert "aten::add.Tensor" not in graph_2_13


def test_schema_reason():
    assert "SymInt[]" in schema_reason("sym_sizes(Tensor self) -> SymInt[]")
    assert schema_reason("sym_thing(Tensor self) -> (SymInt, SymFloat)")
    assert schema_reason("_check(Tensor self, str msg) -> ()")
    assert schema_reason("resize_(Tensor(a!) self, SymInt[] size) -> ()") is None  # writes to self
    assert schema_reason("add.Tensor(Tensor self, Tensor other) -> Tensor") is None
    assert schema_reason("_local_scalar_dense(Tensor self) -> Scalar") is None
    assert schema_reason("not a schema") is None


def test_an_exported_data_dependent_program_holds_only_known_graph_operators(torch_mod, graph_2_13):
    class NonZeroCount(torch_mod.nn.Module):
        def forward(self, x):
            n = (x > 0).sum().item()
            torch_mod._check(n >= 0)
            return x.new_zeros(n) + x.shape[0]

    x = torch_mod.randn(4)
    program = torch_mod.export.export(NonZeroCount(), (x,), dynamic_shapes=({0: torch_mod.export.Dim("n")},))
    program = program.run_decompositions()
    seen = {f"aten::{node.target._schema.name.removeprefix('aten::')}"
            + (f".{node.target._overloadname}" if node.target._overloadname != "default" else "")
            for node in program.graph.nodes
            if node.op == "call_function" and hasattr(node.target, "_schema")}
    kernels, graph = split_graph_ops(sorted(seen), graph_2_13)
    assert graph, f"expected assertions or symbolic sizes in {sorted(seen)}"
    assert all(graph_op_reason(op, graph_2_13) for op in graph)
    assert not any(op.startswith(("aten::sym_", "aten::_assert")) for op in kernels), kernels


def test_spellings_and_ordinary_operators(graph_2_13):
    assert graph_op_reason("aten.sym_size.int") == graph_op_reason("aten::sym_size.int")
    assert graph_op_reason("aten::_assert_tensor_metadata.default", graph_2_13)
    assert graph_op_reason("aten::add.Tensor", graph_2_13) is None
    assert graph_op_reason("not an op!") is None
