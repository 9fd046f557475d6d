"""Graph operators: what an exported program may hold that no backend implements as a kernel.

``torch.export`` leaves a few operators in a graph that are not computations on tensors: runtime
assertions about shapes and values, and reads of symbolic sizes. Lowering strips the assertions
(ExecuTorch removes them before it emits a program) and a runtime answers symbolic sizes itself
(ExecuTorch's ``executorch_prim::sym_size.int``), so none of them needs a kernel. opgov lists them
apart from the operators to implement, and never counts one as a missing kernel.

Which operators these are is decided from the snapshot's schema (:func:`schema_reason`): an
operator whose returns are all symbolic (``SymInt``, ``SymBool``, ``SymFloat``, their lists:
``sym_size.int``, ``sym_is_contiguous``) or that returns nothing and writes to no argument (an
assertion: ``_assert_scalar``, ``sym_constrain_range``). The hand lists keep only what a schema
cannot say: the functional assertions, which return a token tensor (:data:`GRAPH_OPS`, also the
symbolic sizes that older registries do not declare), and the operators that return nothing but
act outside the tensors (:data:`NOT_GRAPH_OPS`: printing, a cache, autograd).

:func:`graph_ops_of` gives a snapshot's graph operators, each with the reason; the functions that
take a name alone answer from the hand list.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from opgov.core.errors import BadInput
from opgov.core.names import canonical

_SYMBOLIC = "a symbolic size: the runtime answers it without a kernel"
_TOKEN_ASSERTION = ("a functional assertion (it returns only an ordering token): lowering removes it, "
                    "no kernel runs it")
_TOKEN_CONSTRAINT = ("a functional constraint on a data-dependent size (it returns only an ordering token): "
                     "lowering removes it, no kernel runs it")
SYMBOLIC_RETURNS = ("its schema returns only symbolic values ({types}): the runtime answers it without a "
                    "kernel")
ONLY_ASSERTS = "its schema returns nothing and writes to no argument: an assertion, lowering removes it"
_SYMBOLIC_TYPES = frozenset({"SymInt", "SymBool", "SymFloat"})

#: What a schema cannot say: operators that need no kernel although their schema returns a tensor
#: (the token of a functional assertion), and symbolic sizes that registries before 2.1 do not declare.
GRAPH_OPS: dict[str, str] = {
    "aten::_functional_assert_scalar": _TOKEN_ASSERTION,
    "aten::_functional_assert_async.msg": _TOKEN_ASSERTION,
    "aten::_functional_sym_constrain_range": _TOKEN_CONSTRAINT,
    "aten::_functional_sym_constrain_range_for_size": _TOKEN_CONSTRAINT,
    "aten::sym_size.int": _SYMBOLIC,
    "aten::sym_stride.int": _SYMBOLIC,
    "aten::sym_numel": _SYMBOLIC,
    "aten::sym_storage_offset": _SYMBOLIC,
}

#: What a schema cannot say either: operators that return nothing and write to no argument, yet
#: act outside the tensors, so they are not assertions.
NOT_GRAPH_OPS: dict[str, str] = {
    "aten::_print": "prints",
    "aten::_backward": "runs autograd, accumulating gradients",
    "aten::_cufft_set_plan_cache_max_size": "sets a cache of the CUDA runtime",
    "aten::_cufft_clear_plan_cache": "clears a cache of the CUDA runtime",
}


def schema_reason(schema) -> str | None:
    """Why the operator of ``schema`` (a :class:`~opgov.core.schema.FunctionSchema` or its text)
    needs no kernel, from its returns and arguments alone; ``None`` when the schema does not say so."""
    from opgov.core.schema import FunctionSchema

    if isinstance(schema, str):
        try:
            schema = FunctionSchema.parse(schema)
        except BadInput:
            return None
    returns = schema.returns
    if returns:
        types = [r.type.base.name for r in returns]
        if all(t in _SYMBOLIC_TYPES for t in types):
            return SYMBOLIC_RETURNS.format(types=", ".join(str(r.type) for r in returns))
        return None
    if schema.is_mutable:
        return None
    return ONLY_ASSERTS


def graph_ops_of(schemas: Iterable[tuple[str, str | None]]) -> dict[str, str]:
    """The graph operators of a snapshot (``(qualname, schema text)`` pairs, the schema ``None`` for
    an operator only an ``autogen:`` line declares) → why each needs no kernel: the operators whose
    schema says so, except :data:`NOT_GRAPH_OPS`, and the hand list :data:`GRAPH_OPS` (which also
    answers for operators the snapshot does not declare)."""
    found = dict(GRAPH_OPS)
    for qualname, schema in schemas:
        if schema is None or qualname in NOT_GRAPH_OPS or qualname in GRAPH_OPS:
            continue
        returns = schema.rpartition("->")[2]
        if "Sym" not in returns and returns.strip() != "()":
            continue  # most schemas: a tensor comes back, no need to parse
        reason = schema_reason(schema)
        if reason is not None:
            found[qualname] = reason
    return found


def graph_op_reason(name: str, graph: Mapping[str, str] | None = None) -> str | None:
    """Why ``name`` (any accepted spelling) needs no kernel, or ``None`` for an ordinary operator.
    ``graph``: the snapshot's graph operators (:func:`graph_ops_of`); without it, the hand list."""
    try:
        return (GRAPH_OPS if graph is None else graph).get(canonical(name))
    except BadInput:  # a name opgov cannot read is not a graph operator
        return None


def is_graph_op(name: str, graph: Mapping[str, str] | None = None) -> bool:
    return graph_op_reason(name, graph) is not None


def split_graph_ops(names: Iterable[str], graph: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """``(kernel_ops, graph_ops)``: the names that need a kernel and the graph operators, in order."""
    kernels: list[str] = []
    graph_names: list[str] = []
    for name in names:
        (graph_names if is_graph_op(name, graph) else kernels).append(name)
    return kernels, graph_names
