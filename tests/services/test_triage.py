"""The committee triages the review queue in bulk: a dry run first, then one proposal (and one
event) each, in one transaction; the same through the service, for members with a token."""

from __future__ import annotations

import json

import pytest

from tests.api.test_api_serve import opgov, start
from tests.conftest import opgov_in_process


@pytest.fixture
def db(tmp_path, pytorch_release):
    url = f"sqlite:///{tmp_path / 'triage.db'}"
    opgov(url, "db", "upgrade")
    for version in ("2.6.0", "2.12.0"):
        folder = pytorch_release(version)
        opgov(url, "import", str(folder / "native_functions.yaml"), "--label", version)
    return url


def _events(db: str) -> list[dict]:
    return json.loads(opgov(db, "log", "--limit", "0", "--json"))


def test_a_dry_run_names_the_selection_and_writes_nothing(db, tmp_path):
    before = _events(db)
    names = tmp_path / "names.txt"
    queue = json.loads(opgov(db, "triage", "custom", "--rationale", "helpers", "--match", "aten::_foreach_*",
                             "--json"))
    names.write_text("# from the weekly report\n" + "\n".join(queue["selected"][:1]) + "\n")
    from_file = json.loads(opgov(db, "triage", "custom", "--rationale", "helpers", "--file", str(names), "--json"))
    assert queue["applied"] is False and queue["selected"] and queue["proposals"] == []
    assert all(name.startswith("aten::_foreach_") for name in queue["selected"])
    assert from_file["selected"] == queue["selected"][:1]
    assert _events(db) == before


def test_apply_opens_one_proposal_and_one_event_each(db):
    before = len(_events(db))
    applied = json.loads(opgov(db, "triage", "custom", "--rationale", "internal helpers, no backend needs them",
                               "--match", "aten::_foreach_*", "--apply", "--json"))
    opened = [p["operator"] for p in applied["proposals"]]
    assert opened == applied["selected"] and applied["applied"] is True
    events = _events(db)[before:]
    assert [e["subject"] for e in events if e["action"] == "proposal.open"] == opened
    assert all(e["reason"] == "internal helpers, no backend needs them" for e in events)
    # proposed operators leave the selection: a second run finds nothing left to propose
    again = opgov_failing(db, "triage", "custom", "--rationale", "again", "--match", "aten::_foreach_*")
    assert "no operator of the review queue matches" in again


def opgov_failing(db: str, *args: str) -> str:
    done = opgov_in_process(["--db", db, *args])
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def test_triage_through_the_service_needs_a_token(db):
    token = opgov(db, "tokens", "create", "chair", actor="chair").strip()
    server = start(db)
    try:
        with server.client() as anyone:
            body = {"kind": "custom", "rationale": "helpers", "match": ["aten::_foreach_*"], "apply": True}
            assert anyone.post("/api/v1/proposals/triage", json=body).status_code == 401
            anyone.headers["Authorization"] = f"Bearer {token}"
            answer = anyone.post("/api/v1/proposals/triage", json=body).json()
            listed = anyone.get("/api/v1/proposals", params={"open": True}).json()
    finally:
        server.stop()
    assert answer["applied"] and [p["id"] for p in answer["proposals"]] == [p["id"] for p in listed]
