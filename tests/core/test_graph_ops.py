"""Graph operators are real torch operators that torch.export leaves in programs."""

from __future__ import annotations

from opgov.core.graph_ops import GRAPH_OPS, graph_op_reason, split_graph_ops


def test_every_graph_operator_is_an_operator_of_torch(torch_mod):
    for name in GRAPH_OPS:
        base, _, overload = name.removeprefix("aten::").partition(".")
        packet = getattr(torch_mod.ops.aten, base, None)
        assert packet is not None, f"torch has no aten::{base}"
        assert (overload or "default") in packet.overloads(), f"torch has no {name}"


def test_an_exported_data_dependent_program_holds_only_known_graph_operators(torch_mod):
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
    kernels, graph = split_graph_ops(sorted(seen))
    assert graph, f"expected assertions or symbolic sizes in {sorted(seen)}"
    assert all(graph_op_reason(op) for op in graph)
    assert not any(op.startswith(("aten::sym_", "aten::_assert")) for op in kernels), kernels


def test_spellings_and_ordinary_operators():
    assert graph_op_reason("aten.sym_size.int") == graph_op_reason("aten::sym_size.int")
    assert graph_op_reason("aten::_assert_tensor_metadata.default")
    assert graph_op_reason("aten::add.Tensor") is None
    assert graph_op_reason("not an op!") is None
