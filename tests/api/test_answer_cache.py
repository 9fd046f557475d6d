"""The operator read's HTTP caching: a strong ETag and 304, and the server-side cache of its
bytes keyed on the database's version stamp (the newest event's id) and the date.

What must hold: no write is ever followed by a stale answer, through any worker or through another
process on the same database (a replica, the CLI); 304 when the ETag still names the answer;
the same bytes with and without the cache. The stamp is only right if every write logs an event
in its transaction: the first test checks that for every command that writes."""

from __future__ import annotations

import json
from datetime import date
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy import Engine, event

from tests.api.test_api_serve import TAGS, V1, V2, _database, opgov, start
from tests.conftest import Cli

ROLL = "/api/v1/operators/" + quote("aten::roll", safe="")
GLU = "/api/v1/operators/" + quote("aten::glu", safe="")


# --- every write logs an event ------------------------------------------------------------------------------


class WriteAudit:
    """Per transaction of every engine (from one BEGIN to the next): the tables written and whether
    the transaction committed. Events are appended while the transaction commits, so a segment
    runs to the next BEGIN on that connection."""

    def __init__(self) -> None:
        self.segments: list[dict] = []
        self._open: dict[int, dict] = {}

    def begin(self, connection) -> None:
        self._open[id(connection.connection.dbapi_connection)] = segment = {"tables": set(), "committed": False}
        self.segments.append(segment)

    def execute(self, connection, _cursor, statement, *_args) -> None:
        words = statement.split()
        verb = words[0].upper() if words else ""
        if verb in ("INSERT", "UPDATE", "DELETE", "REPLACE"):
            target = words[2] if verb != "UPDATE" else words[1]
            segment = self._open.get(id(connection.connection.dbapi_connection))
            if segment is not None:
                segment["tables"].add(target.strip('"').lower())

    def commit(self, connection) -> None:
        segment = self._open.get(id(connection.connection.dbapi_connection))
        if segment is not None:
            segment["committed"] = True

    def silent_writes(self) -> list[set[str]]:
        """Tables written by committed transactions that logged no event."""
        return [s["tables"] for s in self.segments
                if s["committed"] and s["tables"] - {"events", "alembic_version"} and "events" not in s["tables"]]


@pytest.fixture
def audit():
    found = WriteAudit()
    hooks = [("begin", found.begin), ("before_cursor_execute", found.execute), ("commit", found.commit)]
    for name, hook in hooks:
        event.listen(Engine, name, hook)
    yield found
    for name, hook in hooks:
        event.remove(Engine, name, hook)


def test_every_committed_write_logs_an_event(make_cli, sqlite_url, audit, tmp_path):
    """Every command that writes, run for real: a transaction that changed anything logged an
    event in it (else the service's cache could keep an answer the write changed)."""
    cli: Cli = make_cli(sqlite_url, simulation=True)
    day = lambda d: f"2026-01-{d:02d}T09:00:00+00:00"  # noqa: E731
    ops_list = tmp_path / "ops.txt"
    ops_list.write_text("aten::add.Tensor\naten::glu\n")
    rules = tmp_path / "rules.yaml"
    rules.write_text("format: 1\nsource: test\nrules:\n"
                     "  - {op: aten::hardswish, into: [aten::mul.Tensor, aten::add.Tensor, aten::clamp]}\n")
    steps = [
        (day(1), "chair", ["import", V1, "--tags-yaml", TAGS, "--label", "v1"]),
        (day(1), "chair", ["members", "add", "chair", "--role", "maintainer"]),
        (day(1), "chair", ["members", "add", "m2", "--role", "maintainer"]),
        (day(1), "chair", ["members", "add", "m3", "--role", "maintainer"]),
        (day(1), "chair", ["members", "add", "dev", "--role", "developer"]),
        (day(1), "chair", ["members", "add", "gone", "--role", "developer"]),
        (day(1), "chair", ["members", "remove", "gone"]),
        (day(1), "chair", ["config", "set", "deprecated_days", "90"]),
        (day(1), "chair", ["tokens", "create", "dev"]),
        (day(1), "chair", ["tokens", "revoke", "1"]),
        (day(1), "chair", ["decisions", "load", "core-aten-review-2023"]),
        (day(1), "chair", ["decomps", "load", rules]),
        (day(2), "chair", ["import", V2, "--tags-yaml", TAGS, "--label", "v2"]),
        (day(2), "chair", ["exceptions", "add", "aten::roll", "--reason", "intended", "--expires", "2026-06-01"]),
        (day(2), "chair", ["exceptions", "remove", "1"]),
        (day(3), "dev", ["propose-core", "aten::hardswish", "--rationale", "in every mobile net"]),
        (day(3), "m2", ["review", "1", "--approve", "--comment", "yes"]),
        (day(3), "m3", ["review", "1", "--approve", "--comment", "yes"]),
        (day(3), "dev", ["propose-custom", "aten::roll", "--rationale", "odd"]),
        (day(3), "dev", ["withdraw", "2"]),
        (day(4), "chair", ["deprecate", "aten::glu", "--reason", "rare"]),
        (day(20), "chair", ["mark-deprecated", "aten::glu"]),
        (day(21), "chair", ["deprecate", "aten::mish", "--reason", "rare"]),
        (day(22), "chair", ["undeprecate", "aten::mish", "--reason", "used after all"]),
        (day(22), "chair", ["runtimes", "add", "tiny@1.0", "--ops", ops_list]),
        (day(22), "chair", ["upgraders", "add", "aten::glu", "--versions", "0-0", "--old-schema",
                            "glu(Tensor self, int dim=-2) -> Tensor", "--bumped-on", "2026-01-02", "--reason", "r"]),
        ("2026-05-01T09:00:00+00:00", "chair", ["tick", "--apply"]),  # glu: deprecated → deleted
    ]
    for now, actor, args in steps:
        cli.ok(*args, actor=actor, now=now)
    assert cli.ok("ops", "show", "aten::glu", "--json").json()["lifecycle"] == "deleted"
    assert len(audit.segments) > len(steps)  # the audit saw the transactions
    assert audit.silent_writes() == []


# --- a real server: 304, the same bytes, never a stale answer ----------------------------------------------


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory):
    """A database (not a simulation one: the server's clock is the only clock) holding v1 then v2,
    served by two workers with the cache and by one without it."""
    for db in _database(request.param, tmp_path_factory):
        opgov(db, "db", "upgrade")
        opgov(db, "import", str(V1), "--tags-yaml", str(TAGS), "--label", "v1")
        opgov(db, "import", str(V2), "--tags-yaml", str(TAGS), "--label", "v2")
        token = opgov(db, "tokens", "create", "chair", actor="chair").strip()
        cached, uncached = start(db, workers=2), start(db, env={"OPGOV_RESPONSE_CACHE": "0"})
        try:
            yield db, cached, uncached, token
        finally:
            cached.stop()
            uncached.stop()


def fresh_reads(url: str, path: str, n: int = 12) -> list[httpx.Response]:
    """``n`` reads, each on a new connection (so they spread over the workers)."""
    return [httpx.get(url + path, timeout=60) for _ in range(n)]


def test_etag_and_304(served):
    _db, cached, _uncached, _token = served
    with httpx.Client(base_url=cached.url, timeout=60) as c:
        first = c.get(ROLL)
        etag = first.headers["ETag"]
        assert first.status_code == 200 and etag.startswith('"') and not etag.startswith('W/')
        assert first.headers["Cache-Control"] == "no-cache"
        again = c.get(ROLL, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"" and again.headers["ETag"] == etag
        for header in (f'"other", {etag}', f"W/{etag}", "*"):
            assert c.get(ROLL, headers={"If-None-Match": header}).status_code == 304
        assert c.get(ROLL, headers={"If-None-Match": '"other"'}).content == first.content
        # another operator, another ETag; an unknown one is still a 404 problem
        assert c.get(GLU).headers["ETag"] != etag
        assert c.get("/api/v1/operators/aten::rol").status_code == 404


def test_same_bytes_with_and_without_the_cache(served):
    _db, cached, uncached, _token = served
    names = ["aten::roll", "aten::glu", "aten::hardswish", "aten::add.Tensor", "add.Tensor", "aten::flatten.using_names"]
    for name in names:
        path = "/api/v1/operators/" + quote(name, safe="")
        for _ in range(3):  # the second and third come from the cache
            with_cache, without = httpx.get(cached.url + path, timeout=60), httpx.get(uncached.url + path, timeout=60)
            assert with_cache.status_code == without.status_code == 200
            assert with_cache.content == without.content
            assert with_cache.headers["ETag"] == without.headers["ETag"]
            assert with_cache.headers["content-type"] == "application/json"


def test_a_write_is_seen_by_the_next_read(served):
    db, cached, uncached, token = served
    auth = {"Authorization": f"Bearer {token}"}

    def roll() -> list[dict]:
        answers = [r.json() for r in fresh_reads(cached.url, ROLL)]
        assert all(a == answers[0] for a in answers)  # every worker says the same
        assert answers[0] == httpx.get(uncached.url + ROLL, timeout=60).json()
        return answers[0]

    def severities(answer: dict) -> set[str]:
        return {f["severity"] for f in answer["findings"] if f["kind"] == "bc"}

    before = roll()
    assert before["lifecycle"] == "active" and severities(before) == {"error"}
    etag = httpx.get(cached.url + ROLL, timeout=60).headers["ETag"]
    # a write through the service (one of the workers)
    added = httpx.post(cached.url + "/api/v1/exceptions", headers=auth, timeout=60,
                       json={"pattern": "aten::roll", "reason": "intended", "expires": str(date(2999, 1, 1))})
    assert added.status_code == 201, added.text
    waived = roll()
    assert severities(waived) == {"waived"}
    assert httpx.get(cached.url + ROLL, headers={"If-None-Match": etag}, timeout=60).status_code == 200
    step = httpx.post(cached.url + ROLL + "/deprecate", headers=auth, json={"reason": "rare"}, timeout=60)
    assert step.status_code == 200, step.text
    deprecating = roll()
    assert deprecating["lifecycle"] == "deprecating"
    assert all("Deprecation" in r.headers for r in fresh_reads(cached.url, ROLL, 4))
    # a write by another process on the same database (the CLI, or another replica)
    opgov(db, "config", "set", "deprecated_days", "365", actor="chair")
    longer = roll()
    assert longer["sunset"] != deprecating["sunset"]
    opgov(db, "undeprecate", "aten::roll", "--reason", "still used", actor="chair")
    after = roll()
    assert after["lifecycle"] == "active" and after["sunset"] is None
    assert all("Deprecation" not in r.headers for r in fresh_reads(cached.url, ROLL, 4))
    assert json.loads(httpx.get(cached.url + "/api/v1/events", params={"limit": 1}, timeout=60).content)


def test_private_reads_are_not_shared(tmp_path):
    """With --private-reads the answer still needs a valid token (checked on every read, cached or
    not) and says so to caches between."""
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    opgov(db, "import", str(V1), "--label", "v1")
    token = opgov(db, "tokens", "create", "chair", actor="chair").strip()
    server = start(db, env={"OPGOV_PUBLIC_READS": "0"})
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            good = {"Authorization": f"Bearer {token}"}
            for _ in range(2):
                ok = c.get(GLU, headers=good)
                assert ok.status_code == 200 and ok.headers["Cache-Control"] == "private, no-cache"
                assert c.get(GLU).status_code == 401
                assert c.get(GLU, headers={"If-None-Match": ok.headers["ETag"]}).status_code == 401
            opgov(db, "tokens", "revoke", "1", actor="chair")
            assert c.get(GLU, headers=good).status_code == 401
    finally:
        server.stop()


# --- the cache's bounds ------------------------------------------------------------------------------------


def test_the_cache_is_bounded_and_keeps_one_generation():
    from opgov.api.cache import Answer, AnswerCache

    cache = AnswerCache(max_entries=3, max_bytes=100)
    today, tomorrow = date(2026, 1, 1), date(2026, 1, 2)
    for n in range(5):
        cache.put(("operator", n), (7, today), Answer.of(b"x" * 10))
    assert len(cache) == 3 and cache.get(("operator", 0), (7, today)) is None
    assert cache.get(("operator", 4), (7, today)).body == b"x" * 10
    cache.put(("operator", "big"), (7, today), Answer.of(b"y" * 95))
    assert len(cache) == 1  # 100 bytes at most: the big one alone
    cache.put(("operator", "huge"), (7, today), Answer.of(b"z" * 101))
    assert cache.get(("operator", "huge"), (7, today)) is None  # larger than the whole cache
    # a new stamp or a new day: the answers of before are gone
    assert cache.get(("operator", "big"), (8, today)) is None and cache.get(("operator", "big"), (7, tomorrow)) is None
    cache.put(("operator", 1), (8, today), Answer.of(b"new"))
    assert len(cache) == 1 and cache.get(("operator", "big"), (7, today)) is None
    cache.put(("operator", 2), (7, today), Answer.of(b"old"))  # a read begun before the write: not kept
    assert cache.get(("operator", 2), (7, today)) is None and cache.get(("operator", 1), (8, today)).body == b"new"
    assert not AnswerCache(max_entries=0).enabled


@pytest.mark.parametrize("variable, value", [("OPGOV_RESPONSE_CACHE", "-1"), ("OPGOV_DB_POOL", "0"),
                                             ("OPGOV_DB_POOL", "many")])
def test_bad_settings_are_one_line(tmp_path, variable, value):
    import os
    import subprocess
    import sys

    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    done = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "serve", "--port", "1"], capture_output=True,
                          text=True, timeout=60, env={**os.environ, variable: value})
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and variable in done.stderr
    assert "Traceback" not in done.stderr


def test_a_read_waits_for_a_stamp_read_begun_after_it_arrived():
    """Requests that arrive together share one read of the stamp; one arriving while a read is
    under way waits for the next read (the one under way may not count its writes)."""
    import asyncio
    import threading

    from opgov.api.cache import Stamps

    began: list[int] = []
    release = threading.Event()

    def read() -> tuple:
        number = len(began) + 1
        began.append(number)
        if number == 1:
            release.wait(10)  # the first read is slow: a request arrives while it runs
        return (number, date(2026, 1, 1))

    async def scenario():
        stamps = Stamps(read)
        first = [asyncio.ensure_future(stamps.current()) for _ in range(5)]
        while not began:  # the first read has begun (in its thread)
            await asyncio.sleep(0.01)
        late = asyncio.ensure_future(stamps.current())
        await asyncio.sleep(0.05)
        release.set()
        return [await f for f in first], await late

    together, late = asyncio.run(scenario())
    assert [g[0] for g in together] == [1] * 5  # one read for the five
    assert late[0] == 2 and began == [1, 2]  # its own, later read
