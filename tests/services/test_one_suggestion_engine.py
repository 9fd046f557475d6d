"""One suggestion per operator in every output. On PyTorch's real releases (2.0.0, 2.6.0, 2.12.0,
2.13.0) replayed with the 2023 review and the ExecuTorch releases opgov ships: what `opgov queue`
suggests is what `triage --suggested` proposes, what the policy accepts, what every table of the
weekly report shows and what `decomps closure` says; after the committee approves every proposal
nothing it was told is refused. The first release alone can be reviewed, and the 2023 review loads
on it."""

from __future__ import annotations

import json

from tests.conftest import replay_history
from tests.services.test_queue import NOW, db, replay  # noqa: F401 - the same replay, and a copy per test


def _queue(cli) -> dict:
    return cli.ok("queue", "--format", "json").json()


def test_queue_triage_report_and_closure_say_one_thing(db):
    view = _queue(db)
    items = {i["operator"]: i for i in view["items"]}
    assert view["total"] > 1000 and view["counts"]["human"] <= view["total"] / 4, view["counts"]
    # triage proposes exactly what the queue suggests, and skips only a human's call, in the queue's words
    dry = db.ok("triage", "--suggested", "--json").json()
    assert {p["operator"]: (p["kind"], p["targets"]) for p in dry["proposals"]} == {
        op: (i["suggestion"], i["targets"] if i["suggestion"] == "decompose" else [])
        for op, i in items.items() if i["suggestion"] != "human"}
    assert dry["skipped"] == {op: f"a human's call: {i['because']}" for op, i in items.items()
                              if i["suggestion"] == "human"}
    # the weekly report: its review queue and its agenda say what the queue says
    report = db.ok("report", "weekly", "--format", "json").json()
    assert {r["operator"] for r in report["review_queue"]} == set(items)
    for row in report["review_queue"]:
        item = items[row["operator"]]
        assert (row["suggestion"], row["suggestion_reason"]) == (item["suggestion"], item["because"]), row
    for row in report["agenda"]["oldest"] + report["agenda"]["most_impact"]:
        assert (row["suggestion"], row["because"]) == (items[row["operator"]]["suggestion"],
                                                       items[row["operator"]]["because"])
    page = db.ok("report", "weekly", "--format", "html").out
    for op in ("aten::sym_size.int", "aten::diagonal", "aten::elu"):  # the review queue's row, then the agenda's
        rows = [row for row in page.split("<tr>") if row.startswith(f"<td><code>{op}</code></td>")]
        assert rows and all(f"<strong>{items[op]['suggestion']}</strong>" in row for row in rows), rows
    markdown = db.ok("report", "weekly", "--format", "md").out
    # the closure section reads the facts the queue reads
    assert report["closure_facts"] and view["torch"] in report["closure_facts"]
    assert "holds no torch release's facts" not in markdown
    # the closure: what the queue decomposes closes, into the same operators; what does not close is not
    closure = {c["op"]: c for c in db.ok("decomps", "closure", "--json").json()["items"]}
    for op, item in items.items():
        c = closure.get(op)
        if c is None:
            continue
        if item["suggestion"] == "decompose" and item["targets"]:
            assert c["closed"] and sorted(c["ends_in"]) == sorted(item["targets"]), (op, c, item["targets"])
        if not c["closed"]:
            assert item["suggestion"] != "decompose", (op, c["why"], item["because"])
    # graph operators: one vocabulary with `opset build`, never decomposed
    opset = db.ok("opset", "build", "--preset", "core-aten", "--format", "json").json()
    graph = set(opset["graph_ops"])
    assert {"aten::sym_size.int", "aten::sym_numel", "aten::sym_is_contiguous"} <= graph
    assert not [op for op in graph if items.get(op, {}).get("suggestion") == "decompose"]
    # an operator is listed or left out of the opset, never both
    assert "aten::_native_batch_norm_legit" in opset["not_functional"]
    assert not set(opset["not_functional"]) & {e["op"] for e in opset["operators"]}


def test_after_the_committee_approves_every_proposal_nothing_was_refused(db):
    applied = db.ok("triage", "--suggested", "--apply", "--json", actor="chair").json()
    ids = [str(p["id"]) for p in applied["proposals"]]
    assert ids and not [why for why in applied["skipped"].values() if not why.startswith("a human's call: ")]
    for voter in ("alice", "bob"):
        db.ok("review", *ids, "--approve", "--comment", "as the evidence says", actor=voter)
    decided = {p["operator"] for p in db.ok("proposals", "--json").json() if p["status"] == "approved"}
    assert decided == {p["operator"] for p in applied["proposals"]}  # the policy refused none when deciding
    # what waits now is a human's call, or a decomposition whose targets the committee just made core
    again = db.ok("triage", "--suggested", "--json").json()
    assert not [why for why in again["skipped"].values() if not why.startswith("a human's call: ")]
    view = _queue(db)
    assert not decided & {i["operator"] for i in view["items"]}


def test_the_first_release_alone_is_reviewable(tmp_path, pytorch_release, make_cli, monkeypatch):
    monkeypatch.delenv("OPGOV_MODELS_DIR", raising=False)
    url = f"sqlite:///{tmp_path / 'first.db'}"
    replay_history(url, pytorch_release, NOW, releases=["2.0.0"], review=False, runtimes=())
    cli = make_cli(url, upgrade=False)
    view = _queue(cli)
    assert view["total"] > 1000 and all(i["waiting_since"] == "2.0.0" for i in view["items"])
    # the 2023 review loads on it: what 2.0.0 lacks is skipped and named, the rest recorded
    loaded = cli.ok("decisions", "load", "core-aten-review-2023", "--json").json()
    assert "aten::_native_batch_norm_legit_no_training" in loaded["skipped"]
    assert loaded["skipped"]["aten::_native_batch_norm_legit_no_training"].startswith(
        "core-aten-review-2023:25: unknown operator aten::_native_batch_norm_legit_no_training")
    assert loaded["recorded"] == loaded["decisions"] - len(loaded["skipped"]) > 80
    said = cli.ok("decisions", "load", "core-aten-review-2023").out
    assert "skipped" in said and "aten::_native_batch_norm_legit_no_training" in said
    after = _queue(cli)
    assert after["total"] < view["total"] and after["counts"]["human"] <= after["total"] / 4
    # once a release holds them, loading the file again records what was skipped
    folder = pytorch_release("2.6.0")
    cli.ok("import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
           "--label", "2.6.0")
    again = cli.ok("decisions", "load", "core-aten-review-2023", "--json").json()
    assert "aten::_native_batch_norm_legit_no_training" not in again["skipped"] and again["recorded"] >= 1


def test_replayed_from_2_0_0_nothing_export_keeps_and_pytorch_tags_core_later_is_decomposed(
        tmp_path, pytorch_release, make_cli, monkeypatch):
    """The queue of a database holding 2.0.0 (and the 2023 review) suggests no decomposition of an
    operator PyTorch tags core by 2.13.0 and torch 2.13.0's export keeps."""
    from opgov.formats.registry import read_registry
    from opgov.resources import shipped_torch_facts

    monkeypatch.delenv("OPGOV_MODELS_DIR", raising=False)
    url = f"sqlite:///{tmp_path / 'first.db'}"
    replay_history(url, pytorch_release, NOW, releases=["2.0.0"], review=False, runtimes=())
    cli = make_cli(url, upgrade=False)
    cli.ok("decisions", "load", "core-aten-review-2023")
    folder = pytorch_release("2.13.0")
    later = read_registry(folder / "native_functions.yaml", tags_yaml=folder / "tags.yaml")
    tagged = {name for name, op in later.ops.items() if "core" in op.tags}
    facts = json.loads(shipped_torch_facts()["2.13.0"].read_text())
    decomposed = set(facts["default"]) | set(facts["forced"])
    wrong = [i["operator"] for i in _queue(cli)["items"] if i["suggestion"] == "decompose"
             and i["operator"] in tagged and i["operator"] not in decomposed]
    assert wrong == []
