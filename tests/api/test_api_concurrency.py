"""Many members voting at once through a 4-worker `opgov serve` on PostgreSQL: every vote is
counted once, each proposal is decided once, and no request fails with a 5xx. Bounded and on
loopback only; nothing here is timed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import httpx
import pytest

from tests.api.test_api_serve import V1, start

VOTERS = 20
PROPOSALS = 10


@pytest.mark.postgres
def test_concurrent_votes_through_four_workers(postgres_url):
    from opgov.core.clock import FixedClock
    from opgov.core.errors import PolicyRefusal
    from opgov.db.engine import make_engine, resolve_url, transaction
    from opgov.services.admin import upgrade_database
    from opgov.reads.common import Ctx
    from opgov.services.governance import add_member, propose, set_setting
    from opgov.services.imports import import_snapshot
    from opgov.services.ops import list_ops
    from opgov.services.tokens import create_token

    upgrade_database(postgres_url)
    engine = make_engine(resolve_url(postgres_url))
    clock = FixedClock(datetime(2026, 1, 5, tzinfo=timezone.utc))
    voters = [f"m{i:02d}" for i in range(VOTERS)]
    try:
        with transaction(engine, orm=False) as conn:
            import_snapshot(Ctx(conn, "bot", clock), str(V1), label="v1")
        with transaction(engine) as session:
            ctx = Ctx(session, "chair", clock)
            add_member(ctx, "chair", "maintainer")
            for name in voters:
                add_member(ctx, name, "maintainer")
            set_setting(ctx, "quorum", str(VOTERS))  # decided only when no vote is lost
            tokens = {name: create_token(ctx, name).token for name in voters}
        proposals = []
        with transaction(engine) as session:
            candidates = [o.name for o in list_ops(Ctx(session, "chair", clock))
                          if o.kind == "functional" and o.category != "core"]
        for name in candidates:
            try:
                with transaction(engine) as session:
                    proposals.append(propose(Ctx(session, "chair", clock), name, "core", "r").id)
            except PolicyRefusal:
                continue
            if len(proposals) == PROPOSALS:
                break
        assert len(proposals) == PROPOSALS
    finally:
        engine.dispose()

    server = start(postgres_url, workers=4)
    try:
        clients = {name: httpx.Client(base_url=server.url, timeout=120,
                                      headers={"Authorization": f"Bearer {tokens[name]}"}) for name in voters}

        def vote(name: str, pid: int) -> int:
            return clients[name].post(f"/api/v1/proposals/{pid}/votes",
                                      json={"approve": True, "comment": f"{name} agrees"}).status_code

        jobs = [(name, pid) for pid in proposals for name in voters]
        with ThreadPoolExecutor(max_workers=16) as pool:
            statuses = list(pool.map(lambda job: vote(*job), jobs))
        for client in clients.values():
            client.close()
        assert len(statuses) == VOTERS * PROPOSALS
        assert statuses == [200] * len(statuses)  # no 5xx, no conflict

        with httpx.Client(base_url=server.url, timeout=60) as c:
            for pid in proposals:
                shown = c.get(f"/api/v1/proposals/{pid}").json()
                assert shown["status"] == "approved"
                assert sorted(shown["approvals"]) == voters  # every vote counted once
                assert shown["decision"] is not None
            decided = c.get("/api/v1/events", params={"action": "category.decided", "limit": 1000}).json()["events"]
            assert sorted(e["after"]["proposal"] for e in decided) == sorted(proposals)  # decided once each
            votes = c.get("/api/v1/events", params={"action": "proposal.vote", "limit": 1000}).json()["events"]
            assert len(votes) == VOTERS * PROPOSALS and all(e["token"] is not None for e in votes)
    finally:
        server.stop()


@pytest.mark.postgres
def test_concurrent_bulk_votes_through_four_workers(postgres_url):
    """Maintainers each voting on the same proposals in one bulk request, at once, through different
    workers: every vote counted once, every proposal decided once, no 5xx (the requests wait for
    each other's transactions rather than deadlock)."""
    from opgov.core.clock import FixedClock
    from opgov.db.engine import make_engine, resolve_url, transaction
    from opgov.services.admin import upgrade_database
    from opgov.reads.common import Ctx
    from opgov.services.governance import add_member, propose, set_setting
    from opgov.services.imports import import_snapshot
    from opgov.services.ops import list_ops
    from opgov.services.tokens import create_token

    upgrade_database(postgres_url)
    engine = make_engine(resolve_url(postgres_url))
    clock = FixedClock(datetime(2026, 1, 5, tzinfo=timezone.utc))
    voters = [f"m{i}" for i in range(4)]
    try:
        with transaction(engine, orm=False) as conn:
            import_snapshot(Ctx(conn, "bot", clock), str(V1), label="v1")
        with transaction(engine) as session:
            ctx = Ctx(session, "chair", clock)
            add_member(ctx, "chair", "maintainer")
            for name in voters:
                add_member(ctx, name, "maintainer")
            set_setting(ctx, "quorum", str(len(voters)))
            tokens = {name: create_token(ctx, name).token for name in voters}
            candidates = [o.name for o in list_ops(ctx) if o.kind == "functional" and o.category != "core"]
            proposals = [propose(ctx, name, "custom", "r").id for name in candidates[:PROPOSALS * 2]]
    finally:
        engine.dispose()

    server = start(postgres_url, workers=4)
    try:
        orders = [proposals, proposals[::-1], proposals[1::2] + proposals[::2], proposals[::2] + proposals[1::2]]

        def vote(name: str, order: list[int]) -> httpx.Response:
            with httpx.Client(base_url=server.url, timeout=120,
                              headers={"Authorization": f"Bearer {tokens[name]}"}) as client:
                return client.post("/api/v1/proposals/reviews",
                                   json={"proposal_ids": order, "approve": True, "comments": [f"{name} agrees"]})

        with ThreadPoolExecutor(max_workers=len(voters)) as pool:
            answers = list(pool.map(vote, voters, orders))
        assert [a.status_code for a in answers] == [200] * len(voters)
        assert [[p["id"] for p in a.json()] for a in answers] == orders

        with httpx.Client(base_url=server.url, timeout=60) as c:
            for pid in proposals:
                shown = c.get(f"/api/v1/proposals/{pid}").json()
                assert shown["status"] == "approved" and sorted(shown["approvals"]) == voters
            decided = c.get("/api/v1/events", params={"action": "category.decided", "limit": 1000}).json()["events"]
            assert sorted(e["after"]["proposal"] for e in decided) == sorted(proposals)
            votes = c.get("/api/v1/events", params={"action": "proposal.vote", "limit": 1000}).json()["events"]
            assert sorted((e["actor"], e["after"]["proposal"]) for e in votes) == \
                sorted((name, pid) for name in voters for pid in proposals)
    finally:
        server.stop()
