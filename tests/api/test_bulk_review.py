"""`opgov review ID [ID…]`: a maintainer votes on many proposals in one command and one transaction,
each vote its own record and event; a refusal on any id names it and records none. Run with --server
against a real `opgov serve` on 127.0.0.1 and with --db on a twin database, on SQLite and
PostgreSQL: a user sees the same output and exit code either way."""

from __future__ import annotations

import json
import re

import pytest

from tests.api.test_api_remote import locally, remotely, serve_twins
from tests.api.test_api_serve import opgov, problem

OPS = ("aten::glu", "aten::_trilinear", "aten::_unsafe_view", "aten::_unsafe_index.Tensor")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def twins(request, tmp_path_factory):
    """(the served database's server, its twin used locally): chair and m2 maintainers, quorum 2,
    and proposals 1–4 opened by dev."""
    def more(db: str) -> None:
        opgov(db, "config", "set", "quorum", "2", actor="chair")
        for op in OPS:
            opgov(db, "propose-custom", op, "--rationale", "no runtime implements it", actor="dev")

    yield from serve_twins(request.param, tmp_path_factory, more)


def both(twins, who: str, *args: str, code: int = 0) -> str:
    """The command with --server and with --db: the same exit code, stdout and stderr."""
    server, local_db = twins
    remote, local = remotely(server, who, *args), locally(local_db, who, *args)
    scrub = (lambda text: re.sub(r'"(at|created_at|closed_at|decided_at)": "[^"]*"', r'"\1": "-"', text))
    assert (remote.returncode, scrub(remote.stdout), remote.stderr) == (local.returncode, scrub(local.stdout),
                                                                         local.stderr)
    assert local.returncode == code, local.stderr
    assert "Traceback" not in remote.stderr and remote.stderr.count("\n") <= 1
    return remote.stdout or remote.stderr


def shown(twins, pid: int) -> dict:
    server, local_db = twins
    remote = json.loads(locally(server.db, None, "proposals", "show", str(pid), "--json").stdout)
    local = json.loads(locally(local_db, None, "proposals", "show", str(pid), "--json").stdout)
    assert (remote["status"], remote["approvals"], remote["rejections"]) == \
        (local["status"], local["approvals"], local["rejections"])
    return remote


def events(db: str, action: str) -> list[dict]:
    return [e for e in json.loads(locally(db, None, "log", "--limit", "0", "--json").stdout) if e["action"] == action]


def test_bulk_review_remote_like_local(twins):
    server, local_db = twins
    # bad input and refusals: one line, nothing written
    assert both(twins, "m2", "review", "1", "2", "99", "--approve", "--comment", "x", code=2) == \
        "opgov: error: unknown proposal 99\n"
    assert "2 ids, 3 comments" in both(twins, "m2", "review", "1", "2", "--approve", "--comment", "a",
                                       "--comment", "b", "--comment", "c", code=2)
    assert "proposal 2 is named twice" in both(twins, "m2", "review", "2", "1", "2", "--approve", "--comment", "x",
                                               code=2)
    both(twins, "dev", "review", "1", "2", "--approve", "--comment", "mine", code=1)  # developers do not vote
    assert events(server.db, "proposal.vote") == events(local_db, "proposal.vote") == []

    # one comment each, matched to the ids in their order
    out = both(twins, "m2", "review", "2", "1", "--approve", "--comment", "two", "--comment", "one")
    assert out.splitlines() == ["proposal 2: 1 approve, 0 reject (quorum 2) — open",
                                "proposal 1: 1 approve, 0 reject (quorum 2) — open"]
    assert [(e["after"]["proposal"], e["reason"]) for e in events(server.db, "proposal.vote")] == \
        [(2, "two"), (1, "one")]
    # one shared comment: the quorum decides 1 and 2 in the same command, 3 waits for a second vote
    out = both(twins, "chair", "review", "1", "2", "3", "--approve", "--comment", "agreed")
    assert out.splitlines()[1:] == ["proposal 2: 2 approve, 0 reject (quorum 2) — approved",
                                    "proposal 3: 1 approve, 0 reject (quorum 2) — open"]
    decided = events(server.db, "category.decided")
    assert sorted(e["after"]["proposal"] for e in decided) == [1, 2]
    assert [e["reason"] for e in events(server.db, "proposal.vote")[2:]] == ["agreed"] * 3

    # a refusal on any id (1 is decided) names it and records none of the votes, 3's and 4's included
    assert both(twins, "m2", "review", "3", "4", "1", "--approve", "--comment", "late", code=1) == \
        "opgov: refused: proposal 1 is approved, not open\n"
    assert shown(twins, 3)["approvals"] == ["chair"] and shown(twins, 4)["approvals"] == []
    both(twins, "chair", "review", "4", "--reject", "--comment", "no runtime needs it")
    # --json: the proposals in the order of the ids; one (not a list) for one id
    listed = json.loads(both(twins, "m2", "review", "4", "3", "--reject", "--comment", "not yet", "--json"))
    assert [(p["id"], p["status"]) for p in listed] == [(4, "rejected"), (3, "open")]
    again = json.loads(both(twins, "m2", "review", "3", "--approve", "--comment", "yes after all", "--json"))
    assert (again["id"], again["status"], again["approvals"]) == (3, "approved", ["chair", "m2"])
    assert len(events(server.db, "proposal.vote")) == len(events(local_db, "proposal.vote")) == 9


def test_bulk_review_route(twins):
    server, _ = twins
    body = {"proposal_ids": [1, 2], "approve": True, "comments": ["x"]}
    with server.client() as anyone, server.client("dev") as dev, server.client("m2") as m2:
        assert "Bearer" in problem(anyone.post("/api/v1/proposals/reviews", json=body), 401)
        assert "may not review proposals" in problem(dev.post("/api/v1/proposals/reviews", json=body), 403)
        assert "(2 ids, 3 comments)" in problem(m2.post("/api/v1/proposals/reviews",
                                                        json={**body, "comments": ["a", "b", "c"]}), 400)
        assert problem(m2.post("/api/v1/proposals/reviews", json={**body, "proposal_ids": []}), 422)
        assert problem(m2.post("/api/v1/proposals/reviews", json={**body, "comments": [" "]}), 422)
        assert "proposal 1 is approved, not open" in problem(m2.post("/api/v1/proposals/reviews", json=body), 409)
