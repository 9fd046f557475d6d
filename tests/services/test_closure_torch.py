"""The closure proof of torch 2.13.0's default decomposition table (`opgov decomps closure`),
checked against torch.export itself: the database holds PyTorch 2.0.0 and 2.13.0's registries and
follows the facts opgov ships for 2.13.0 (made from torch.export by scripts/build_torch_facts.py).
For a sample of the table, this file exports its own programs (tests/formats/test_shipped_torch_facts.py)
and what they hold after the default decompositions must be among the operators `ends_in` names —
and, for an operator opgov says closes, every one of them core by torch's own `core` tag."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_opgov
from tests.formats.test_shipped_torch_facts import _core, _first_export


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, torch_mod) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('closure') / 'opgov.db'}"
    now = "2026-01-05T09:00:00+00:00"
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    for label in ("2.0.0", "2.13.0"):
        folder = pytorch_release(label)
        run_opgov("--db", url, "--now", now, "import", folder / "native_functions.yaml", "--tags-yaml",
                  folder / "tags.yaml", "--label", label)
    return url


def _closure(make_cli, db, *args, code=0):
    result = make_cli(db, upgrade=False)("decomps", "closure", *args, "--json")
    assert result.code == code, result.err
    return json.loads(result.out)


def test_the_closure_of_torch_2_13_default_table_is_what_torch_does(make_cli, db, torch_mod):
    torch = torch_mod
    from torch.export import default_decompositions

    from opgov.core.graph_ops import is_graph_op
    from opgov.formats.torch_decomps import overload_name

    report = _closure(make_cli, db)
    table = {overload_name(op) for op in default_decompositions().keys() if isinstance(op, torch._ops.OpOverload)
             and op.namespace == "aten"}
    # every operator of torch's table is listed once: closed, or not with why
    assert [i["op"] for i in report["items"]] == sorted(table)
    assert report["torch"].startswith(torch.__version__.split("+")[0]) and report["snapshot"] == "2.13.0"
    assert report["closed"] + report["not_closed"] == len(table) and 0 < report["closed"] < len(table)
    core = _core(torch)
    unknown = [i for i in report["items"] if i["why"] and "could not be traced" in i["why"]]
    assert len(unknown) <= round(0.05 * len(table)), (len(unknown), len(table))  # issue #40: 5%, to an operator
    for item in report["items"]:
        assert item["closed"] == (item["why"] is None)
        leaves = [op for op in item["ends_in"] if not is_graph_op(op)]
        if item["closed"]:  # closed: ends in torch's core operators only
            assert set(leaves) <= core, item
        else:
            assert item["why"] and (set(item["not_core"]) - core or "traced" in item["why"] or "cycle" in item["why"])
    # what export leaves of every 11th operator is among what ends_in names; closed means core
    checked = 0
    for item in report["items"][::11]:
        base, _, overload = item["op"].removeprefix("aten::").partition(".")
        found = _first_export(torch, getattr(getattr(torch.ops.aten, base), overload or "default"))
        if found is None:
            continue
        checked += 1
        assert found <= set(item["ends_in"]), (item["op"], sorted(found - set(item["ends_in"])))
        if item["closed"]:
            assert found <= core, item["op"]
    assert checked > 20
    named = {i["op"]: i for i in report["items"]}
    assert all(named[op]["closed"] for op in ("aten::col2im", "aten::linalg_cross", "aten::select_scatter"))
    kept = named["aten::upsample_nearest2d"]
    assert not kept["closed"] and kept["why"].startswith("torch.export keeps it")


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
    assert result.code == 2 and result.err.startswith("opgov: error: ") and "2.13.0" in result.err
