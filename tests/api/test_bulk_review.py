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


def _served(db: str, log) -> tuple:
    """`opgov serve` on ``db`` at a free port of 127.0.0.1, answering /healthz: (process, url)."""
    import subprocess
    import time

    import httpx

    from tests.api.test_api_serve import OPGOV, free_port

    port = free_port()
    process = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", "127.0.0.1", "--port", str(port)],
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90  # start-up on a loaded machine, not a timing assertion
    while time.monotonic() < deadline:
        assert process.poll() is None, "opgov serve ended"
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    process.kill()
    raise AssertionError("opgov serve did not answer /healthz")


def _kill_all(main: int) -> None:
    """SIGKILL a server's workers (on PostgreSQL it starts several) and then the process that started
    them: the whole server dies at once, as in a crash, with no clean-up and no grace for a request."""
    import os
    import signal
    from pathlib import Path

    workers = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == main:  # its parent
            workers.append(int(stat.parent.name))
    for pid in (*workers, main):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.ci  # a server started and killed up to ten times over: CI's run (tests/conftest.CI_ONLY)
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_server_killed_during_a_bulk_triage_leaves_all_or_nothing(backend, tmp_path, pytorch_release):
    """Issue 42: `triage --suggested --apply` (a proposal and an event for each of ~175 suggestions, one
    transaction) sent to a real `opgov serve`, whose process is killed outright (SIGKILL: no clean-up
    runs) at moments from just after the request left to after it could have been answered. After
    each kill the database holds none of the proposals or all of them, each with its event, and the
    log's chain is intact; the next server applies them."""
    from tests.conftest import _missing, _postgres_admin_url, _throwaway_postgres

    if backend == "sqlite":
        urls = (url for url in [f"sqlite:///{tmp_path / 'opgov.db'}"])
    else:
        admin = _postgres_admin_url()
        if admin is None:
            _missing("PostgreSQL (OPGOV_TEST_POSTGRES_URL)", "OPGOV_REQUIRE_POSTGRES")
        urls = _throwaway_postgres(admin)
    db = next(urls)
    try:
        _kill_during_triage(db, tmp_path, pytorch_release)
    finally:
        urls.close()  # a PostgreSQL database of this test is dropped


def _kill_during_triage(db: str, tmp_path, pytorch_release) -> None:
    import threading
    import time

    import httpx

    opgov(db, "db", "upgrade")
    for version in ("2.0.0", "2.13.0"):  # 2.13.0's operators new since 2.0.0 wait in the queue
        opgov(db, "import", str(pytorch_release(version) / "native_functions.yaml"), "--label", version, actor="bot")
    opgov(db, "members", "add", "chair", "--role", "maintainer", actor="chair")
    token = opgov(db, "tokens", "create", "chair", actor="chair").split()[0]
    planned = json.loads(locally(db, "chair", "triage", "--suggested", "--json").stdout)["proposals"]
    assert len(planned) > 100

    def state() -> tuple[int, int]:
        proposals = json.loads(locally(db, None, "proposals", "--json").stdout)
        verified = locally(db, None, "log", "verify")
        assert verified.returncode == 0 and "chain intact" in verified.stdout, verified.stdout + verified.stderr
        return len(proposals), len(events(db, "proposal.open"))

    cut, seen = 0, []
    with (tmp_path / "server.log").open("w") as log:
        for delay in (0.05, 0.2, 0.4, 0.7, 1.0, 1.5, 2.5, 4.0, 8.0):
            process, url = _served(db, log)
            answers: list = []

            def send(url=url, answers=answers) -> None:
                try:
                    answers.append(httpx.post(f"{url}/api/v1/queue/triage", json={"apply": True}, timeout=120,
                                              headers={"Authorization": f"Bearer {token}"}))
                except httpx.TransportError as err:  # the server died with the request in hand
                    answers.append(err)

            client = threading.Thread(target=send)
            client.start()
            time.sleep(delay)
            _kill_all(process.pid)
            process.wait(timeout=30)
            client.join(timeout=150)
            if answers and isinstance(answers[0], httpx.TransportError):
                cut += 1
            proposals, opened = state()
            seen.append((delay, repr(answers)[:80], proposals))
            assert (proposals, opened) in ((0, 0), (len(planned), len(planned))), (delay, proposals, opened)
            if proposals:
                assert answers and not isinstance(answers[0], Exception) and answers[0].status_code == 200
                break
    assert cut >= 1, seen  # at least one kill took the server down with the request in hand
    if not proposals:  # every attempt was cut short: the next server applies them, whole
        with (tmp_path / "server.log").open("a") as log:
            process, url = _served(db, log)
            try:
                answer = httpx.post(f"{url}/api/v1/queue/triage", json={"apply": True}, timeout=120,
                                    headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code == 200, answer.text
            finally:
                process.terminate()
                process.wait(timeout=30)
    assert state() == (len(planned), len(planned))
