"""Maintainers voting in bulk (`opgov review ID [ID…]`) on the same proposals at the same time, as
separate processes, on SQLite and PostgreSQL: no vote is lost, no proposal is decided twice, and
every command ends with exit 0 (each waits for the other's transaction, never deadlocks)."""

from __future__ import annotations

import json

from tests.conftest import SAMPLE
from tests.services.test_races import T0, _rows, _spawn

VOTERS = ("m1", "m2", "m3")


def test_maintainers_voting_in_bulk_at_once_lose_nothing(make_cli, any_db_url):
    cli = make_cli(any_db_url, simulation=True)
    t0 = T0.isoformat()
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "v1", actor="chair", now=t0)
    for name in ("chair", *VOTERS):
        cli.ok("members", "add", name, "--role", "maintainer", actor="chair", now=t0)
    cli.ok("config", "set", "quorum", str(len(VOTERS)), actor="chair", now=t0)  # decided only when no vote is lost
    candidates = [r[0] for r in _rows(any_db_url, "SELECT qualname FROM operators WHERE present AND kind = 'functional' "
                                                  "AND category <> 'core' ORDER BY qualname")]
    proposals = []
    for op in candidates:
        made = cli("propose-custom", op, "--rationale", "race", "--json", actor="chair", now=t0)
        if made.code == 0:
            proposals.append(made.json()["id"])
        if len(proposals) == 24:
            break
    assert len(proposals) == 24
    # each names them in its own order: forwards, backwards, odd ones first; each with its own comments
    orders = [proposals, proposals[::-1], proposals[1::2] + proposals[::2]]
    started = []
    for name, order in zip(VOTERS, orders):
        comments = [arg for pid in order for arg in ("--comment", f"{name} on {pid}")]
        started.append(_spawn(any_db_url, "review", *map(str, order), "--approve", *comments, "--json",
                              actor=name, now=t0))
    answers = []
    for proc in started:
        out, err = proc.communicate(timeout=300)
        assert "Traceback" not in err and proc.returncode == 0, err
        answers.append(json.loads(out))
    assert [[p["id"] for p in answer] for answer in answers] == orders  # in the order each asked

    # every proposal approved by all three, decided once; every vote its own row and event
    for pid in proposals:
        shown = cli.ok("proposals", "show", str(pid), "--json").json()
        assert shown["status"] == "approved" and sorted(shown["approvals"]) == list(VOTERS)
        assert {v["voter"]: v["comment"] for v in shown["votes"]} == {n: f"{n} on {pid}" for n in VOTERS}
    assert sorted(r[0] for r in _rows(any_db_url, "SELECT proposal_id FROM decisions")) == sorted(proposals)
    votes = _rows(any_db_url, "SELECT actor, reason FROM events WHERE action = 'proposal.vote'")
    assert sorted(votes) == sorted((n, f"{n} on {pid}") for n in VOTERS for pid in proposals)
    decided = _rows(any_db_url, "SELECT subject FROM events WHERE action = 'category.decided'")
    assert len(decided) == len(set(decided)) == len(proposals)
    assert cli.ok("log", "verify").out.split(", ")[1].startswith("chain intact")
