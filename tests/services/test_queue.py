"""The committee's workbench on PyTorch's real releases: 2.0.0, 2.6.0, 2.12.0 and 2.13.0 replayed,
the 2023 review, ExecuTorch's four releases registered by name, the shipped model corpora and
torch facts — what a user has out of the box. Every queued operator arrives with its evidence;
each suggestion follows from that evidence as torch.export does; `triage --suggested` opens one
proposal and one event each in one transaction, and a suggestion the policy would refuse is not
made: the queue says it is a human's call, with the refusal."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import RELEASES, db_fingerprint, replay_history

NOW = "2026-01-05T09:00:00+00:00"


@pytest.fixture(scope="module")
def replay(tmp_path_factory, pytorch_release):
    path = tmp_path_factory.mktemp("queue") / "replay.db"
    replay_history(f"sqlite:///{path}", pytorch_release, NOW)
    return path


@pytest.fixture
def db(replay, tmp_path, make_cli, monkeypatch):
    """A copy of the replay, and the CLI on it (the models opgov ships)."""
    copy = tmp_path / "replay.db"
    shutil.copyfile(replay, copy)
    monkeypatch.delenv("OPGOV_MODELS_DIR", raising=False)
    return make_cli(f"sqlite:///{copy}", upgrade=False)


def _queue(cli, *args, **kw) -> dict:
    return cli.ok("queue", *args, "--format", "json", **kw).json()


def test_every_queued_operator_arrives_with_its_evidence(db, torch_mod):
    view = _queue(db)
    history = RELEASES
    assert view["total"] == len(view["items"]) > 100 and view["torch"] == torch_mod.__version__
    assert sum(view["counts"].values()) == view["total"] and all(view["counts"].values())
    open_proposals = {p["operator"] for p in db.ok("proposals", "--open", "--json").json()}
    report = db.ok("report", "weekly", "--format", "json").json()
    waiting = {r["operator"] for r in report["review_queue"]}
    assert {i["operator"] for i in view["items"]} == waiting | open_proposals
    # the weekly report's agenda: the counts by suggestion, the oldest waiting, the most impact
    agenda = report["agenda"]
    assert agenda["total"] == view["total"] and agenda["counts"] == view["counts"]
    assert [a["operator"] for a in agenda["oldest"]] == [i["operator"] for i in view["items"][:agenda["shown"]]]
    impact = [a["runtimes"] + a["models"] for a in agenda["most_impact"]]
    assert impact == sorted(impact, reverse=True) and impact[0] == max(i["impact"] for i in view["items"])
    for item in view["items"]:
        ev = item["evidence"]
        assert item["waiting_since"] in history and item["reasons"] and item["because"], item["operator"]
        assert ev["kind"]["kind"] == "functional" and ev["kind"]["source"]
        assert ev["family"]["source"].startswith("native_functions.yaml 2.13.0")
        assert ev["composite"]["source"]
        assert ev["torch"]["release"] == torch_mod.__version__ and "opgov's shipped facts" in ev["torch"]["source"]
        assert ev["runtimes"]["registered"] == ["executorch@0.2.0", "executorch@0.5.0", "executorch@1.0.0",
                                                "executorch@1.3.0"]
        assert ev["models"]["models"] > 0 and ev["models"]["corpora"]
        assert ev["waiting"]["since"] == item["waiting_since"]
        assert item["impact"] == len(ev["runtimes"]["implemented_by"]) + len(ev["models"]["used_by"])
    # what the evidence says is what the rest of opgov says: the runtimes of the operator's page
    name = next(i["operator"] for i in view["items"] if i["evidence"]["runtimes"]["implemented_by"])
    item = next(i for i in view["items"] if i["operator"] == name)
    page = db.ok("ops", "show", name, "--json").json()
    assert page["name"] == name and item["schema"] == (page.get("schema") or item["schema"])


def test_each_suggestion_follows_from_its_evidence(db):
    """What the queue says of torch is what torch.export does (tests/services/test_queue_says_what_
    torch_export_does.py asks torch itself): an operator is suggested decompose only when export's
    default run decomposes it, into the operators that run leaves; a graph operator never; and at
    most a quarter of the queue is left to a human."""
    view = _queue(db)
    items = view["items"]
    for item in items:
        ev, suggestion, torch = item["evidence"], item["suggestion"], item["evidence"]["torch"]
        name = item["operator"]
        if ev["kind"]["graph"] is not None:
            assert suggestion in ("core", "custom", "human"), name
            assert item["because"].startswith("a graph operator (") or item["because"].startswith(
                "the policy refuses"), name
        if suggestion == "decompose":
            recorded = torch["export_decomposes"] or not torch["has_decomposition"]
            assert recorded and ev["composite"]["composite_implicit"] or torch["export_decomposes"], name
            if item["targets"]:
                assert torch["reaches_core"] and item["targets"] == torch["ends_in"], name
                assert item["because"].startswith(f"torch.export (torch {torch['release']}) decomposes it ("), name
            else:
                assert ev["composite"]["composite_implicit"] and not torch["ends_in"], name
        if not torch["export_decomposes"] and torch["has_decomposition"]:
            assert suggestion != "decompose" and "keeps it" in item["because"] or suggestion == "human", name
        if suggestion == "core":
            assert not torch["export_decomposes"] or ev["kind"]["graph"] is not None, name
            assert (ev["runtimes"]["implemented_by"] or ev["models"]["used_by"] or "tags it core" in item["because"]), name
        if suggestion == "custom":
            assert ev["kind"]["graph"] is not None or (not ev["runtimes"]["implemented_by"]
                                                       and not ev["models"]["used_by"]), name
    assert {i["suggestion"] for i in items} == {"decompose", "custom", "core", "human"}
    assert view["counts"]["human"] <= view["total"] / 4, view["counts"]
    # the operators the 2023 review's replay got wrong: export keeps them, so never decompose
    by_name = {i["operator"]: i for i in items}
    for kept in ("aten::elu", "aten::diagonal", "aten::pow.Scalar", "aten::any.dims"):
        assert by_name[kept]["suggestion"] == "core" and "keeps it" in by_name[kept]["because"], by_name[kept]
    for graph in ("aten::sym_size.int", "aten::sym_numel", "aten::sym_stride.int", "aten::sym_storage_offset",
                  "aten::sym_is_contiguous"):
        assert by_name[graph]["suggestion"] == "core" and "graph operator" in by_name[graph]["because"], graph


def test_filters_sort_and_pages(db):
    whole = _queue(db)
    names = [i["operator"] for i in whole["items"]]
    size = max(40, whole["total"] // 6 + 1)  # a few pages, the last one short (each page reads the whole queue)
    pages = [_queue(db, "--limit", str(size), "--offset", str(n)) for n in range(0, whole["total"], size)]
    assert len(pages) > 1 and len(pages[-1]["items"]) < size
    assert [i["operator"] for p in pages for i in p["items"]] == names
    assert all(p["total"] == whole["total"] for p in pages)
    order = {label: n for n, label in enumerate(RELEASES)}
    assert [order[i["waiting_since"]] for i in whole["items"]] == sorted(order[i["waiting_since"]]
                                                                           for i in whole["items"])
    custom = _queue(db, "--suggestion", "custom")
    assert custom["total"] == whole["counts"]["custom"] and {i["suggestion"] for i in custom["items"]} == {"custom"}
    foreach = _queue(db, "--match", "aten::_foreach_*", "--sort", "operator")
    assert foreach["items"] and [i["operator"] for i in foreach["items"]] == sorted(
        n for n in names if n.startswith("aten::_foreach_"))
    since = _queue(db, "--snapshot", "2.12.0", "--reason", "tag-change")
    assert all(i["waiting_since"] == "2.12.0" and "tag-change" in i["reasons"] for i in since["items"])
    impact = [i["impact"] for i in _queue(db, "--sort", "impact")["items"]]
    assert impact == sorted(impact, reverse=True) and impact[0] > 0
    table = db.ok("queue", "--limit", "3", "--format", "tsv")
    assert table.out.splitlines()[0].split("\t")[:4] == ["operator", "waiting since", "reasons", "suggestion"]
    assert len(table.out.splitlines()) == 4
    for bad in (("--suggestion", "maybe"), ("--snapshot", "9.9.9"), ("--sort", "age")):
        result = db(*("queue", *bad))
        assert result.code == 2 and result.err.count("\n") == 1 and bad[0].lstrip("-") in result.err, result.err


def test_triage_suggested_opens_one_proposal_and_one_event_each_in_one_transaction(db):
    before = db_fingerprint(db.url)
    dry = db.ok("triage", "--suggested", "--json").json()
    assert dry["applied"] is False and dry["proposals"] and db_fingerprint(db.url) == before
    queue = {i["operator"]: i for i in _queue(db)["items"]}
    for p in dry["proposals"]:
        item = queue[p["operator"]]
        assert p["kind"] == item["suggestion"] and p["rationale"].endswith(item["because"])
        assert p["targets"] == (item["targets"] if p["kind"] == "decompose" else [])
    # what the queue suggests is what triage proposes: nothing but a human's call is skipped
    assert {op for op, i in queue.items() if i["suggestion"] != "human"} == {p["operator"] for p in dry["proposals"]}
    assert {op: f"a human's call: {queue[op]['because']}" for op in dry["skipped"]} == dry["skipped"]
    events = len(db.ok("log", "--limit", "0", "--json").json())
    applied = db.ok("triage", "--suggested", "--apply", "--json").json()
    assert [(p["operator"], p["kind"], p["targets"]) for p in applied["proposals"]] == [
        (p["operator"], p["kind"], p["targets"]) for p in dry["proposals"]]
    log = db.ok("log", "--limit", "0", "--json").json()[events:]
    assert [e["action"] for e in log] == ["proposal.open"] * len(applied["proposals"])
    assert [e["subject"] for e in log] == [p["operator"] for p in applied["proposals"]]
    opened = {p["operator"]: p for p in db.ok("proposals", "--open", "--json").json()}
    for p in applied["proposals"]:
        assert opened[p["operator"]]["id"] == p["id"] and opened[p["operator"]]["targets"] == p["targets"]
        assert opened[p["operator"]]["kind"] == p["kind"] and opened[p["operator"]]["rationale"] == p["rationale"]
    # the queue now says they wait on their proposals; a second run has nothing left to propose
    after = _queue(db, "--reason", "proposal")
    assert {i["operator"] for i in after["items"]} >= set(opened)
    again = db.ok("triage", "--suggested", "--json").json()
    assert again["proposals"] == [] and set(again["skipped"]) >= set(opened)


def test_a_suggestion_the_policy_would_refuse_is_not_made(db):
    """A target of a suggested decomposition that became deprecated since: the queue no longer
    suggests that decomposition, it is a human's call with the policy's words; triage skips it, in
    the dry run as when applied, and proposes every other suggestion."""
    target = "aten::scalar_tensor"
    chosen = [i["operator"] for i in _queue(db, "--match", "aten::_*")["items"]
              if i["suggestion"] == "decompose" and target in i["targets"] and not i["proposal"]]
    assert chosen
    before = db.ok("triage", "--suggested", "--match", "aten::_*", "--json").json()
    assert set(chosen) <= {p["operator"] for p in before["proposals"]}
    db.ok("deprecate", target, "--reason", "replaced by full", "--replacement", "aten::full",
          now="2026-01-06T00:00:00+00:00")
    db.ok("mark-deprecated", target, "--reason", "no caller left", now="2026-01-25T00:00:00+00:00")
    later = {i["operator"]: i for i in _queue(db, "--match", "aten::_*", now="2026-01-26T00:00:00+00:00")["items"]}
    dry = db.ok("triage", "--suggested", "--match", "aten::_*", "--json", now="2026-01-26T00:00:00+00:00").json()
    for op in chosen:
        assert later[op]["suggestion"] == "human" and later[op]["targets"] == []
        assert later[op]["because"].startswith("the policy refuses decompose: ") and \
            f"{target}, which is deprecated" in later[op]["because"], later[op]["because"]
        assert dry["skipped"][op] == f"a human's call: {later[op]['because']}"
    assert [p for p in before["proposals"] if p["operator"] not in chosen] == dry["proposals"]
    text = db.ok("triage", "--suggested", "--match", "aten::_*", now="2026-01-26T00:00:00+00:00").out
    assert all(op in text for op in chosen) and "which is deprecated" in text  # the table says why too
    applied = db.ok("triage", "--suggested", "--match", "aten::_*", "--apply", "--json",
                    now="2026-01-26T00:00:00+00:00").json()
    assert [(p["operator"], p["kind"]) for p in applied["proposals"]] == [(p["operator"], p["kind"])
                                                                          for p in dry["proposals"]]
    assert applied["skipped"] == dry["skipped"]
    opened = {p["operator"] for p in db.ok("proposals", "--open", "--json").json()}
    assert opened == {p["operator"] for p in dry["proposals"]} and not opened & set(chosen)


def test_triage_suggested_refuses_what_it_does_not_take(db):
    for args in (("custom", "--suggested"), ("--suggested", "--rationale", "x"), ("custom", "--rationale", "x",
                                                                                     "--suggestion", "core")):
        result = db("triage", *args)
        assert result.code == 2 and result.err.count("\n") == 1, result.err
    assert db("triage", "--suggested", "--match", "nothing::*").code == 2
