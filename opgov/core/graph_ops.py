"""Graph operators: what an exported program may hold that no backend implements as a kernel.

``torch.export`` leaves a few operators in a graph that are not computations on tensors: runtime
assertions about shapes and values, and reads of symbolic sizes. Lowering strips the assertions
(ExecuTorch removes them before it emits a program) and a runtime answers symbolic sizes itself
(ExecuTorch's ``executorch_prim::sym_size.int``), so none of them needs a kernel. opgov lists them
apart from the operators to implement, and never counts one as a missing kernel.

Each entry is the canonical operator name and why a backend does not implement it.
"""

from __future__ import annotations

from collections.abc import Iterable

from opgov.core.errors import BadInput
from opgov.core.names import canonical

_ASSERTION = "a runtime assertion: lowering removes it, no kernel runs it"
_SYMBOLIC = "a symbolic size: the runtime answers it without a kernel"
_CONSTRAINT = "a constraint on a data-dependent size: lowering removes it, no kernel runs it"

GRAPH_OPS: dict[str, str] = {
    "aten::_assert_tensor_metadata": _ASSERTION,
    "aten::_assert_scalar": _ASSERTION,
    "aten::_assert_async": _ASSERTION,
    "aten::_assert_async.msg": _ASSERTION,
    "aten::_functional_assert_scalar": _ASSERTION,
    "aten::_functional_assert_async.msg": _ASSERTION,
    "aten::sym_constrain_range": _CONSTRAINT,
    "aten::sym_constrain_range_for_size": _CONSTRAINT,
    "aten::_functional_sym_constrain_range": _CONSTRAINT,
    "aten::_functional_sym_constrain_range_for_size": _CONSTRAINT,
    "aten::sym_size.int": _SYMBOLIC,
    "aten::sym_stride.int": _SYMBOLIC,
    "aten::sym_numel": _SYMBOLIC,
    "aten::sym_storage_offset": _SYMBOLIC,
}


def graph_op_reason(name: str) -> str | None:
    """Why ``name`` (any accepted spelling) needs no kernel, or ``None`` for an ordinary operator."""
    try:
        return GRAPH_OPS.get(canonical(name))
    except BadInput:  # a name opgov cannot read is not a graph operator
        return None


def is_graph_op(name: str) -> bool:
    return graph_op_reason(name) is not None


def split_graph_ops(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """``(kernel_ops, graph_ops)``: the names that need a kernel and the graph operators, in order."""
    kernels: list[str] = []
    graph: list[str] = []
    for name in names:
        (graph if is_graph_op(name) else kernels).append(name)
    return kernels, graph
