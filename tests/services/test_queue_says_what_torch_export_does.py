"""Every word the workbench says about torch is what torch.export does: the real releases replayed
with the 2023 review and the runtimes opgov ships, then torch 2.13.0 asked. For each queued operator
below, a module calling it is exported (`strict=False`) and run through
`run_decompositions(torch.export.default_decompositions())`; the queue's sentence and targets are
checked against the operators of that graph:

- "torch.export … keeps it" → the graph holds the operator;
- "torch.export … decomposes it … into core ops: T" → the graph does not hold it, and holds exactly T.

The operators are those a committee following the queue approved wrongly before (export keeps
them: `elu`, `diagonal`, `pow.Scalar`, `any.dims`, `_batch_norm_no_update`), and decompositions
of the default table and of CompositeImplicitAutograd kernels."""

from __future__ import annotations

import pytest

from tests.conftest import opgov_in_process, replay_history

NOW = "2026-01-05T09:00:00+00:00"


def _t(*shape):
    import torch

    return torch.randn(*shape)


def _mask(*shape):
    return _t(*shape) > 0


#: operator → example arguments (tensors, lists of tensors, plain values), as the op takes them
CASES = {
    "aten::elu": lambda: (_t(4, 4),),
    "aten::diagonal": lambda: (_t(4, 4),),
    "aten::pow.Scalar": lambda: (2.0, _t(4)),
    "aten::any.dims": lambda: (_mask(3, 4), [0, 1]),
    "aten::_batch_norm_no_update": lambda: (_t(2, 3, 4), _t(3), _t(3), _t(3), _t(3).abs(), 0.1, 1e-5),
    "aten::all.dims": lambda: (_mask(3, 4), [0, 1]),
    "aten::_chunk_cat": lambda: ([_t(4, 4), _t(4, 4)], 0, 2),
    "aten::_safe_softmax": lambda: (_t(2, 4), -1),
    "aten::rms_norm": lambda: (_t(2, 4), [4]),
    "aten::matmul": lambda: (_t(2, 3), _t(3, 4)),
    "aten::flatten.using_ints": lambda: (_t(2, 3, 4), 1),
    "aten::selu": lambda: (_t(4),),
    "aten::hardswish": lambda: (_t(4),),
    "aten::softplus": lambda: (_t(4),),
    "aten::masked_fill.Scalar": lambda: (_t(4), _mask(4), 1.0),
    "aten::nan_to_num": lambda: (_t(4),),
    "aten::count_nonzero": lambda: (_t(4),),
    "aten::addcmul": lambda: (_t(4), _t(4), _t(4)),
    "aten::square": lambda: (_t(4),),
    "aten::linear": lambda: (_t(2, 3), _t(4, 3)),
}


@pytest.fixture(scope="module")
def queue(tmp_path_factory, pytorch_release):
    path = tmp_path_factory.mktemp("export") / "replay.db"
    url = f"sqlite:///{path}"
    replay_history(url, pytorch_release, NOW, runtimes=("0.2.0", "1.3.0"))
    import json

    done = opgov_in_process(["--db", url, "queue", "--format", "json", *(a for op in CASES for a in ("--match", op))])
    assert done.returncode == 0, done.stderr
    return {i["operator"]: i for i in json.loads(done.stdout)["items"]}


def _exported(torch, op: str, args: tuple) -> set[str]:
    """The ATen operators of the graph of a module calling ``op``, after export's default decompositions."""
    name, _, overload = op.partition("::")[2].partition(".")
    fn = getattr(getattr(torch.ops.aten, name), overload or "default")
    tensors = [a for arg in args for a in (arg if isinstance(arg, list) else [arg]) if isinstance(a, torch.Tensor)]

    class Call(torch.nn.Module):
        def forward(self, *inputs):
            given = iter(inputs)
            real = [[next(given) for _ in a] if isinstance(a, list) and a and isinstance(a[0], torch.Tensor)
                    else next(given) if isinstance(a, torch.Tensor) else a for a in args]
            return fn(*real)

    program = torch.export.export(Call(), tuple(tensors), strict=False)
    program = program.run_decompositions(torch.export.default_decompositions())
    ops = set()
    for node in program.graph.nodes:
        schema = getattr(node.target, "_schema", None) if node.op == "call_function" else None
        if schema is not None:
            ops.add(schema.name + (f".{schema.overload_name}" if schema.overload_name else ""))
    return ops


@pytest.mark.parametrize("op", list(CASES))
def test_what_the_queue_says_of_torch_is_what_export_does(op, queue, torch_mod):
    args = CASES[op]()
    item = queue.get(op)
    assert item is not None, f"{op} is not queued"
    graph = _exported(torch_mod, op, args)
    because = item["because"]
    if "keeps it" in because:
        assert op in graph, (because, graph)
        assert item["suggestion"] != "decompose"
    else:
        assert "decomposes it" in because and item["suggestion"] == "decompose", because
        # the targets are the union of what export leaves of it over torch's sample inputs
        # (tests/formats/test_shipped_torch_facts.py): this input's graph is among them
        assert op not in graph and graph <= set(item["targets"]), (item["targets"], graph)
        assert because.endswith(", ".join(item["targets"])), because  # every target is named


def test_nothing_export_keeps_is_suggested_decompose(queue):
    """The operators a committee following the old queue decomposed wrongly: export keeps them."""
    for op in ("aten::elu", "aten::diagonal", "aten::pow.Scalar", "aten::any.dims", "aten::_batch_norm_no_update"):
        assert queue[op]["suggestion"] != "decompose" and "keeps it: its default table does not apply " \
            "torch._decomp's decomposition" in queue[op]["because"], queue[op]

