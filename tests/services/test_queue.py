"""The committee's workbench on PyTorch's real releases: 2.0.0, 2.6.0, 2.12.0 and 2.13.0 replayed,
the 2023 review, ExecuTorch's four kernel registries, the two model corpora and the facts `opgov
decomps import-torch` records from torch 2.13.0. Every queued operator arrives with its evidence;
each suggestion follows from that evidence; `triage --suggested` opens one proposal and one event
each in one transaction, and what the policy refuses is skipped with its words."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import RELEASES, db_fingerprint, reusing, run_opgov

NOW = "2026-01-05T09:00:00+00:00"


@pytest.fixture(scope="module")
def replay(tmp_path_factory, pytorch_release, models_dir, shared_dir, torch_table):
    path = tmp_path_factory.mktemp("queue") / "replay.db"
    url = f"sqlite:///{path}"
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    for version in RELEASES:
        folder = pytorch_release(version)
        run_opgov("--db", url, "--now", NOW, "import", folder / "native_functions.yaml", "--tags-yaml",
                  folder / "tags.yaml", "--label", version)
    run_opgov("--db", url, "--now", NOW, "decisions", "load", "core-aten-review-2023")
    for version in ("0.2.0", "0.5.0", "1.0.0", "1.3.0"):
        run_opgov("--db", url, "--now", NOW, "runtimes", "add", f"executorch@{version}", "--ops",
                  shared_dir / "executorch" / version / "portable-functions.yaml")
    with reusing(torch_table):  # the session's trace of torch's table
        run_opgov("--db", url, "--now", NOW, "decomps", "import-torch", "--budget", "300")
    return path


@pytest.fixture
def db(replay, tmp_path, make_cli, models_dir, monkeypatch):
    """A copy of the replay, and the CLI on it (the models of OPGOV_MODELS_DIR)."""
    copy = tmp_path / "replay.db"
    shutil.copyfile(replay, copy)
    monkeypatch.setenv("OPGOV_MODELS_DIR", str(models_dir))
    return make_cli(f"sqlite:///{copy}", upgrade=False)


def _queue(cli, *args) -> dict:
    return cli.ok("queue", *args, "--format", "json").json()


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
        assert ev["torch"]["release"] == torch_mod.__version__ and "decomps import-torch" in ev["torch"]["source"]
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
    items = _queue(db)["items"]
    for item in items:
        ev, suggestion, torch = item["evidence"], item["suggestion"], item["evidence"]["torch"]
        decomposes_into_core = bool(torch["traced"]) and torch["reaches_core"] is True
        if decomposes_into_core:
            assert suggestion != "core", item["operator"]
        if ev["composite"]["composite_implicit"]:
            assert suggestion == "decompose" and item["because"].startswith(
                "CompositeImplicitAutograd: export never holds it"), item["operator"]
        elif suggestion == "decompose":
            assert decomposes_into_core and list(item["targets"]) == torch["traced"]
            assert item["because"].startswith(f"torch {torch['release']} decomposes it into core ops: ")
        if suggestion == "core":
            assert not torch["in_default_table"] or not torch["traced"]
            assert ev["runtimes"]["implemented_by"] or ev["models"]["used_by"] or "tags it core" in item["because"]
        if suggestion == "custom":
            assert not ev["runtimes"]["implemented_by"] and not ev["models"]["used_by"]
            assert not torch["has_decomposition"] or (torch["traced"] and not torch["in_default_table"])
    assert {i["suggestion"] for i in items} == {"decompose", "custom", "core", "human"}


def test_filters_sort_and_pages(db):
    whole = _queue(db)
    names = [i["operator"] for i in whole["items"]]
    pages = [_queue(db, "--limit", "40", "--offset", str(n)) for n in range(0, whole["total"], 40)]
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
    assert all(queue[op]["suggestion"] == "human" or queue[op]["proposal"] or not queue[op]["targets"]
               or why.startswith("the policy refuses it: ") for op, why in dry["skipped"].items())
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


def test_a_suggestion_the_policy_refuses_is_skipped_with_why(db):
    """A target of a suggested decomposition that became deprecated since torch's facts were
    recorded: that proposal is skipped with the policy's words, in the dry run as when applied,
    and every other suggestion is proposed."""
    target = "aten::reciprocal"
    chosen = [i["operator"] for i in _queue(db, "--match", "aten::_*")["items"]
              if i["suggestion"] == "decompose" and target in i["targets"] and not i["proposal"]]
    assert chosen
    before = db.ok("triage", "--suggested", "--match", "aten::_*", "--json").json()
    assert set(chosen) <= {p["operator"] for p in before["proposals"]}
    db.ok("deprecate", target, "--reason", "replaced by div", "--replacement", "aten::div.Tensor",
          now="2026-01-06T00:00:00+00:00")
    db.ok("mark-deprecated", target, "--reason", "no caller left", now="2026-01-25T00:00:00+00:00")
    dry = db.ok("triage", "--suggested", "--match", "aten::_*", "--json", now="2026-01-26T00:00:00+00:00").json()
    for op in chosen:
        assert dry["skipped"][op].startswith("the policy refuses it: ") and f"{target}, which is deprecated" in \
            dry["skipped"][op], dry["skipped"][op]
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
