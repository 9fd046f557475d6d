"""The closure proof of torch 2.13.0's default decomposition table (`opgov decomps closure`),
checked against torch itself: the database holds PyTorch 2.0.0 and 2.13.0's registries and the
facts `opgov decomps import-torch` recorded from the installed torch. For a sample of the table,
torch's own decompositions are run transitively (as run_decompositions does) on the same example
inputs the import traced with, and the operators reached must be among those `ends_in` names —
and, for an operator opgov says closes, every one of them core by torch's own `core` tag."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_opgov


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, torch_mod) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('closure') / 'opgov.db'}"
    now = "2026-01-05T09:00:00+00:00"
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    for label in ("2.0.0", "2.13.0"):
        folder = pytorch_release(label)
        run_opgov("--db", url, "--now", now, "import", folder / "native_functions.yaml", "--tags-yaml",
                  folder / "tags.yaml", "--label", label)
    run_opgov("--db", url, "--now", now, "decomps", "import-torch", "--budget", "300")
    return url


def _closure(make_cli, db, *args, code=0):
    result = make_cli(db, upgrade=False)("decomps", "closure", *args, "--json")
    assert result.code == code, result.err
    return json.loads(result.out)


def _torch_core(torch):
    """Every ATen overload torch itself tags core, as opgov spells it."""
    from opgov.formats.torch_decomps import overload_name

    core = set()
    for name in dir(torch.ops.aten):
        packet = getattr(torch.ops.aten, name, None)
        for overload in getattr(packet, "overloads", lambda: [])():
            op = getattr(packet, overload)
            if torch.Tag.core in op.tags:
                core.add(overload_name(op))
    return core


def _reached(torch, name: str):
    """What torch's default table turns ``name`` into, applied transitively on the first example
    input the import's tracer uses: (every operator that reaches the dispatcher and that the table
    does not decompose further — CompositeImplicitAutograd ones run their kernel, as in export —,
    and each decomposition applied on the way with the operators it called one step deep), or None
    when no example input works."""
    from torch._decomp import core_aten_decompositions
    from torch.utils._python_dispatch import TorchDispatchMode

    from opgov.formats.torch_decomps import _examples, overload_name

    table = {op: fn for op, fn in core_aten_decompositions().items() if isinstance(op, torch._ops.OpOverload)}
    op = next(o for o in table if overload_name(o) == name)
    for args, kwargs in _examples(op._schema):
        seen: set[str] = set()
        frames: list[set[str]] = [set()]
        applied: list[tuple[str, set[str]]] = []

        class Deep(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs, called = kwargs or {}, overload_name(func)
                if func in table:
                    frames.append(set())
                    with self:
                        out = table[func](*args, **kwargs)
                    calls = frames.pop()
                    if out is not NotImplemented:
                        frames[-1].add(called)
                        applied.append((called, calls))
                        return out
                if torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CompositeImplicitAutograd"):
                    with self:  # what its kernel calls, as the tracer sees through it
                        out = func.decompose(*args, **kwargs)
                    if out is not NotImplemented:
                        return out
                frames[-1].add(called)
                seen.add(called)
                return func(*args, **kwargs)

        try:
            with Deep():
                out = table[op](*args, **kwargs)
        except Exception:  # noqa: BLE001 - that input is not one the operator takes: the next
            continue
        if out is NotImplemented:
            continue
        return seen, [(name, frames[0]), *applied]
    return None


def _functional(torch, names, key: str) -> set[str]:
    """As the import records a trace: in-place targets by their functional name, an in-place or
    out= key's write-back dropped, the key itself left out."""
    from opgov.formats.torch_decomps import _WRITE_BACK, _functional_name, _kind_from_name

    out = {_functional_name(t) for t in names}
    if _kind_from_name(key) != "functional":
        out -= _WRITE_BACK
    return out - {key, _functional_name(key)}


def test_the_closure_of_torch_2_13_default_table_is_what_torch_does(make_cli, db, torch_mod):
    torch = torch_mod
    from torch._decomp import core_aten_decompositions

    from opgov.core.graph_ops import is_graph_op
    from opgov.formats.torch_decomps import overload_name

    report = _closure(make_cli, db)
    table = {overload_name(op) for op in core_aten_decompositions() if isinstance(op, torch._ops.OpOverload)
             and op.namespace == "aten"}
    # every operator of torch's table is listed once: closed, or not with why
    assert [i["op"] for i in report["items"]] == sorted(table)
    assert report["torch"].startswith(torch.__version__.split("+")[0]) and report["snapshot"] == "2.13.0"
    assert report["closed"] + report["not_closed"] == len(table) and 0 < report["closed"] < len(table)
    core = _torch_core(torch)
    for item in report["items"]:
        assert item["closed"] == (item["why"] is None)
        leaves = [op for op in item["ends_in"] if not is_graph_op(op)]
        if item["closed"]:  # closed: ends in torch's core operators only
            assert set(leaves) <= core, item
        else:
            assert item["why"] and (set(item["not_core"]) - core or "traced" in item["why"] or "cycle" in item["why"])

    # torch's decompositions, run transitively, reach what ends_in says (a sample of the table: every
    # 9th operator whose decompositions on the way were traced) — unless a decomposition on the way,
    # called with the inputs it gets there, calls other operators than on the example input it was
    # traced with: the closure follows the trace, and that decomposition branches on its inputs
    facts = _facts(db)
    checked, exact, branching = 0, 0, []
    for item in report["items"][::9]:
        if not item["closed"] and "traced" in item["why"]:
            continue
        run = _reached(torch, item["op"])
        if run is None:
            continue
        checked += 1
        seen, applied = run
        reached = _functional(torch, seen, item["op"])
        branches = [op for op, calls in applied
                    if not _functional(torch, calls, op) <= set(facts.targets.get(op) or ()) | {_functional_of(op)}]
        if branches:
            branching.append((item["op"], branches))
            continue
        # what export decomposes whatever the table says (native_batch_norm, CompositeImplicitAutograd
        # operators it cannot preserve) is decomposed in turn: the closure follows it, as export's run does
        reached -= set(facts.forced)
        assert reached <= set(item["ends_in"]), (item["op"], sorted(reached - set(item["ends_in"])))
        if item["closed"]:
            assert {op for op in reached if not is_graph_op(op)} <= core, item["op"]
        exact += reached == set(item["ends_in"])
    assert checked - len(branching) > checked // 2 and exact > checked // 2
    print(f"{checked} operators run through torch's table: {exact} reached exactly the operators ends_in names; "
          f"{len(branching)} meet a decomposition that branches on its inputs: {branching}")


def _facts(url: str):
    from opgov.db.engine import make_engine, transaction
    from opgov.services.decomps import torch_facts

    engine = make_engine(url)
    try:
        with transaction(engine) as session:
            return torch_facts(session)
    finally:
        engine.dispose()


def _functional_of(op: str):
    from opgov.services.closure import _functional_of as functional_of

    return functional_of(op)


def test_a_change_between_closures_is_a_finding(make_cli, db):
    now = _closure(make_cli, db)
    old = _closure(make_cli, db, "--snapshot", "2.0.0")
    assert old["snapshot"] == "2.0.0" and old["core"] < now["core"]
    before = {i["op"]: i["closed"] for i in old["items"]}
    after = {i["op"]: i["closed"] for i in now["items"]}
    stopped = sorted(op for op in after if before[op] and not after[op])
    started = sorted(op for op in after if after[op] and not before[op])
    assert started  # 2.0.0 tagged fewer operators core
    diff = _closure(make_cli, db, "--against", "2.0.0", code=1 if stopped else 0)["against"]
    assert (diff["stopped_closing"], diff["started_closing"]) == (stopped, started)
    assert diff["other_snapshot"] == "2.0.0" and diff["joined"] == diff["left"] == []
    # against itself: nothing changed, exit 0
    same = _closure(make_cli, db, "--against", "2.13.0")["against"]
    assert same["stopped_closing"] == same["started_closing"] == same["ends_changed"] == []
    # an unknown release or snapshot: one line, exit 2
    result = make_cli(db, upgrade=False)("decomps", "closure", "--release", "1.0")
    assert result.code == 2 and result.err.startswith("opgov: error: no facts of torch 1.0 (opgov holds: 2.13.0")
