"""`opgov serve` as a real process on 127.0.0.1 (a free port), used with a real HTTP client, on
SQLite and on PostgreSQL: every endpoint, every error status, tokens and roles."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import quote
from xml.etree import ElementTree as ET

import httpx
import pytest

from opgov.db.engine import HEAD_REVISION
from tests.conftest import SAMPLE, _postgres_admin_url, _throwaway_postgres, opgov_in_process

V1, V2, TAGS = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml", SAMPLE / "tags.yaml"
OPGOV = [sys.executable, "-m", "opgov"]
MAX_UPLOAD = 200_000
PROBLEM = "application/problem+json"


def opgov(db: str, *args: str, actor: str = "setup", now: str | None = None) -> str:
    """Run `opgov` (in this process: a set-up step is not about the process); return its stdout
    (it must succeed)."""
    argv = ["--db", db, "--actor", actor, *(["--now", now] if now else []), *args]
    env = {k: v for k, v in os.environ.items() if k != "OPGOV_NOW"}
    done = opgov_in_process(argv, env=env)
    assert done.returncode == 0, f"{' '.join(args)}: {done.stderr}"
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    db: str
    url: str
    process: subprocess.Popen
    tokens: dict[str, str] = field(default_factory=dict)
    log: Path | None = None  # what the process printed (a file, never a pipe nobody reads: a full pipe stops it)

    def printed(self) -> str:
        return self.log.read_text(errors="replace") if self.log else ""

    def client(self, who: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=60)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        warned = [line for line in self.printed().splitlines() if "Warning:" in line]
        assert not warned, f"the server warned: {warned[:3]}"  # an operator would read these in its log
        if self.log is not None:
            import shutil

            shutil.rmtree(self.log.parent, ignore_errors=True)


def start(db: str, *, workers: int = 1, env: dict[str, str] | None = None) -> Server:
    import tempfile

    port = free_port()
    log = Path(tempfile.mkdtemp(prefix="opgov-serve-")) / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", "127.0.0.1", "--port", str(port),
                                    "--workers", str(workers)],
                                   env={**os.environ, "OPGOV_MAX_UPLOAD_BYTES": str(MAX_UPLOAD), **(env or {})},
                                   stdout=out, stderr=subprocess.STDOUT, text=True)
    server = Server(db=db, url=f"http://127.0.0.1:{port}", process=process, log=log)
    deadline = time.monotonic() + 60  # start-up, not a timing assertion
    while True:
        if process.poll() is not None:
            raise AssertionError(f"opgov serve exited: {server.printed()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise AssertionError("opgov serve did not answer /healthz")
        time.sleep(0.2)


def _database(kind: str, tmp_path_factory):
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('serve') / 'opgov.db'}"
        return
    admin = _postgres_admin_url()
    if admin is None:
        if os.environ.get("OPGOV_REQUIRE_POSTGRES") == "1":
            pytest.fail("PostgreSQL is required (OPGOV_REQUIRE_POSTGRES=1) but missing", pytrace=False)
        pytest.skip("PostgreSQL (OPGOV_TEST_POSTGRES_URL) not available")
    yield from _throwaway_postgres(admin)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def server(request, tmp_path_factory):
    """A served database holding snapshot v1, with a token for each member: chair and m2
    (maintainers), dev (developer), bot (bot)."""
    for db in _database(request.param, tmp_path_factory):
        opgov(db, "db", "upgrade", "--simulation")
        opgov(db, "import", str(V1), "--label", "v1")
        tokens = {"chair": opgov(db, "tokens", "create", "chair", actor="chair").strip()}  # bootstraps
        for name, role in (("m2", "maintainer"), ("dev", "developer"), ("bot", "bot")):
            opgov(db, "members", "add", name, "--role", role, actor="chair")
            tokens[name] = opgov(db, "tokens", "create", name, actor="chair").strip()
        served = start(db)
        served.tokens = tokens
        try:
            yield served
        finally:
            served.stop()


def problem(response: httpx.Response, status: int) -> str:
    """The one-line detail of an RFC 9457 problem with this status."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body = response.json()
    assert body["status"] == status and body["title"] and "\n" not in body["detail"]
    return body["detail"]


def event_count(server: Server) -> int:
    with server.client() as c:
        return len(c.get("/api/v1/events", params={"limit": 1000}).json()["events"])


# --- reads -------------------------------------------------------------------------------------------


def test_health_openapi_and_docs(server):
    with server.client() as c:
        assert c.get("/healthz").json() == {"status": "ok", "revision": HEAD_REVISION}
        spec = c.get("/openapi.json").json()
        assert c.get("/docs").status_code == 200
    import importlib
    import pkgutil

    import opgov.api.routers

    # every route of every router module is served and documented
    routes = set()
    for module in pkgutil.iter_modules(opgov.api.routers.__path__):
        router = importlib.import_module(f"opgov.api.routers.{module.name}").router
        # a path's convertor ({proposal_id:int}) is routing, not part of the documented path
        routes |= {(m, re.sub(r"\{(\w+):\w+\}", r"{\1}", r.path)) for r in router.routes for m in r.methods}
    from opgov.usecases import USE_CASES

    routes |= {(u.method, u.path) for u in USE_CASES}  # and every declared use case's (opgov.api.usecases)
    documented = {(m.upper(), path) for path, item in spec["paths"].items() for m in item}
    assert routes == documented
    for method, path in [("GET", "/healthz"), ("GET", "/api/v1/operators"), ("GET", "/api/v1/operators/{name}"),
                         ("GET", "/api/v1/snapshots"), ("POST", "/api/v1/snapshots"), ("GET", "/api/v1/proposals"),
                         ("GET", "/api/v1/proposals/{proposal_id}"), ("POST", "/api/v1/proposals"),
                         ("POST", "/api/v1/proposals/{proposal_id}/votes"), ("GET", "/api/v1/events"),
                         ("GET", "/feeds/events.atom"), ("POST", "/api/v1/operators/{name}/deprecate"),
                         ("POST", "/api/v1/operators/{name}/mark-deprecated"),
                         ("POST", "/api/v1/operators/{name}/delete"), ("POST", "/api/v1/operators/{name}/undeprecate"),
                         ("POST", "/api/v1/tick"), ("POST", "/api/v1/exceptions"), ("GET", "/api/v1/report/weekly"),
                         ("POST", "/api/v1/check-bc"), ("POST", "/api/v1/check-model"), ("GET", "/api/v1/opset"),
                         ("GET", "/api/v1/events/verify"), ("GET", "/api/v1/members"), ("POST", "/api/v1/members"),
                         ("DELETE", "/api/v1/members/{name}"), ("GET", "/api/v1/config"), ("PUT", "/api/v1/config/{key}"),
                         ("GET", "/api/v1/decomps"), ("POST", "/api/v1/decomps"), ("GET", "/api/v1/decomps/check"),
                         ("POST", "/api/v1/decomps/import-torch"), ("DELETE", "/api/v1/exceptions/{exception_id}"),
                         ("GET", "/api/v1/tokens"), ("POST", "/api/v1/tokens"), ("DELETE", "/api/v1/tokens/{token_id}"),
                         ("POST", "/api/v1/decisions"), ("POST", "/api/v1/sync-yaml"), ("POST", "/api/v1/sync-yaml/write")]:
        assert (method, path) in documented
    from openapi_spec_validator import validate

    validate(spec)  # a valid OpenAPI 3.1 document
    # the response models are the services' typed results, documented field by field
    schemas = spec["components"]["schemas"]
    assert "description" in schemas["OperatorDetail"]["properties"]["sunset"]
    assert {"type", "title", "status", "detail"} <= set(schemas["Problem"]["properties"])


def test_operator_reads(server):
    with server.client() as c:
        core = c.get("/api/v1/operators", params={"category": "core"}).json()
        assert core and {o["category"] for o in core} == {"core"}
        found = c.get("/api/v1/operators", params={"q": "hardswish"}).json()
        assert [o["name"] for o in found] == ["aten::hardswish"]
        glu = c.get(f"/api/v1/operators/{quote('aten::glu', safe='')}")
        assert glu.status_code == 200 and "Deprecation" not in glu.headers
        body = glu.json()
        assert body["name"] == "aten::glu" and body["schema"].startswith("glu(Tensor self")
        assert [h["snapshot"] for h in body["history"]] == ["v1"]
        detail = problem(c.get("/api/v1/operators/aten::glo"), 404)
        assert detail.startswith("unknown operator aten::glo; did you mean") and "aten::glu" in detail
        assert "category" in problem(c.get("/api/v1/operators", params={"category": "nope"}), 422)


# --- identity -------------------------------------------------------------------------------------------


def test_writes_need_a_valid_token(server):
    before = event_count(server)
    body = {"operator": "aten::hardswish", "kind": "core", "rationale": "r"}
    with server.client() as c:
        assert "Bearer" in problem(c.post("/api/v1/proposals", json=body), 401)
        assert c.post("/api/v1/proposals", json=body).headers["www-authenticate"] == "Bearer"
        bad = c.post("/api/v1/proposals", json=body, headers={"Authorization": "Bearer opgov_forged"})
        assert "unknown, revoked or expired" in problem(bad, 401)
        assert problem(c.post("/api/v1/proposals", json=body, headers={"Authorization": "Basic x"}), 401)
        # a bad token is refused on reads too
        assert problem(c.get("/api/v1/operators", headers={"Authorization": "Bearer opgov_forged"}), 401)
    assert event_count(server) == before  # nothing written


def test_proposal_votes_roles_and_conflicts(server):
    with server.client("dev") as dev, server.client("chair") as chair, server.client("m2") as m2, \
            server.client() as anyone:
        created = dev.post("/api/v1/proposals", json={"operator": "aten::glu", "kind": "core",
                                                      "rationale": "everywhere"})
        assert created.status_code == 201, created.text
        pid = created.json()["id"]
        assert created.json()["proposer"] == "dev"
        before = event_count(server)
        assert "dev (developer) may not review proposals" in problem(
            dev.post(f"/api/v1/proposals/{pid}/votes", json={"approve": True, "comment": "mine"}), 403)
        assert event_count(server) == before
        assert "already open" in problem(dev.post("/api/v1/proposals", json={
            "operator": "aten::glu", "kind": "core", "rationale": "again"}), 409)
        assert problem(dev.post("/api/v1/proposals", json={"operator": "aten::glu", "kind": "sideways",
                                                           "rationale": "x"}), 422)
        assert "rationale must not be empty" in problem(dev.post("/api/v1/proposals", json={
            "operator": "aten::mish", "kind": "core", "rationale": "  "}), 422)
        first = chair.post(f"/api/v1/proposals/{pid}/votes", json={"approve": True, "comment": "yes"})
        assert first.status_code == 200 and first.json()["status"] == "open"
        decided = m2.post(f"/api/v1/proposals/{pid}/votes", json={"approve": True, "comment": "yes"})
        assert decided.json()["status"] == "approved" and decided.json()["approvals"] == ["chair", "m2"]
        assert "not open" in problem(chair.post(f"/api/v1/proposals/{pid}/votes",
                                                json={"approve": False, "comment": "late"}), 409)
        assert problem(anyone.get("/api/v1/proposals/9999"), 404) == "unknown proposal 9999"
        shown = anyone.get(f"/api/v1/proposals/{pid}").json()
        assert shown["decision"]["category"] == "core" and shown["decision"]["decided_by"] == ["chair", "m2"]
        assert decided.json() == shown  # the vote that decided answers with the decision it made
        assert pid in [p["id"] for p in anyone.get("/api/v1/proposals").json()]
        assert pid not in [p["id"] for p in anyone.get("/api/v1/proposals", params={"open": True}).json()]
        glu = anyone.get("/api/v1/operators/aten::glu").json()
        assert glu["category"] == "core" and glu["decisions"][0]["rationale"] == "everywhere"
        other = dev.post("/api/v1/proposals", json={"operator": "aten::mish", "kind": "core", "rationale": "r"})
        assert other.status_code == 201, other.text
        with server.client("bot") as bot:
            assert "may not withdraw proposals" in problem(bot.post(f"/api/v1/proposals/{other.json()['id']}/withdraw"),
                                                           403)
        withdrawn = dev.post(f"/api/v1/proposals/{other.json()['id']}/withdraw")
        assert withdrawn.status_code == 200 and withdrawn.json()["status"] == "withdrawn"
        assert "is withdrawn, not open" in problem(dev.post(f"/api/v1/proposals/{other.json()['id']}/withdraw"), 409)
        # the event log names the member and the token the vote was cast with
        votes = anyone.get("/api/v1/events", params={"action": "proposal.vote", "operator": "aten::glu"}).json()
        assert [(e["actor"], e["token"] is not None) for e in votes["events"]] == [("chair", True), ("m2", True)]


def test_lifecycle_steps_and_deprecation_headers(server):
    name = quote("aten::mish", safe="")
    with server.client("chair") as chair, server.client("dev") as dev, server.client("bot") as bot, \
            server.client() as anyone:
        assert "may not change operator lifecycles" in problem(
            dev.post(f"/api/v1/operators/{name}/deprecate", json={"reason": "r"}), 403)
        step = chair.post(f"/api/v1/operators/{name}/deprecate", json={"reason": "unused"})
        assert step.status_code == 200, step.text
        assert (step.json()["from"], step.json()["to"]) == ("active", "deprecating")
        shown = anyone.get(f"/api/v1/operators/{name}")
        assert shown.headers["Deprecation"].startswith("@")
        assert shown.headers["Sunset"].endswith("GMT")
        assert int(shown.headers["Deprecation"][1:]) < time.time() + 1
        refused = chair.post(f"/api/v1/operators/{name}/mark-deprecated", json={"reason": "now"})
        assert "can become deprecated from" in problem(refused, 409)
        assert "it is active" in problem(chair.post("/api/v1/operators/aten::glu/delete"), 409)
        assert problem(chair.post("/api/v1/operators/aten::nope/undeprecate", json={"reason": "r"}), 404)
        back = chair.post(f"/api/v1/operators/{name}/undeprecate", json={"reason": "still used"})
        assert back.json()["to"] == "active"
        assert "Deprecation" not in anyone.get(f"/api/v1/operators/{name}").headers
        ticked = bot.post("/api/v1/tick", json={"apply": True, "within_days": 30})
        assert ticked.status_code == 200 and ticked.json()["applied"] == []
        assert problem(dev.post("/api/v1/tick", json={"apply": True}), 403)
        assert problem(bot.post("/api/v1/tick", json={"within_days": -1}), 422)


def test_exceptions(server):
    with server.client("chair") as chair, server.client("dev") as dev, server.client() as anyone:
        added = chair.post("/api/v1/exceptions", json={"pattern": "aten::_foreach_*", "reason": "rewrite",
                                                       "expires": "2999-01-01"})
        assert added.status_code == 201 and added.json()["expires_on"] == "2999-01-01"
        assert "not in the future" in problem(chair.post("/api/v1/exceptions", json={
            "pattern": "aten::x", "reason": "r", "expires": "2001-01-01"}), 400)
        assert problem(dev.post("/api/v1/exceptions", json={"pattern": "aten::x", "reason": "r",
                                                            "expires": "2999-01-01"}), 403)
        assert problem(chair.post("/api/v1/exceptions", json={"pattern": "aten::x"}), 422)
        assert [e["pattern"] for e in anyone.get("/api/v1/exceptions").json()] == ["aten::_foreach_*"]


# --- uploads ---------------------------------------------------------------------------------------


def test_snapshot_upload(server):
    def files(path=V2):
        return {"native_functions": ("native_functions.yaml", path.read_bytes()),
                "tags": ("tags.yaml", TAGS.read_bytes())}

    with server.client("bot") as bot, server.client("dev") as dev, server.client() as anyone:
        before = event_count(server)
        assert problem(dev.post("/api/v1/snapshots", data={"label": "v2"}, files=files()), 403)
        binary = {"native_functions": ("nf.yaml", b"\x00\x01\x02")}
        assert "binary" in problem(bot.post("/api/v1/snapshots", data={"label": "v2"}, files=binary), 400)
        broken = {"native_functions": ("nf.yaml", b"- func: add(Tensor self -> Tensor\n")}
        assert "nf.yaml" in problem(bot.post("/api/v1/snapshots", data={"label": "v2"}, files=broken), 400)
        huge = {"native_functions": ("nf.yaml", b"#" * (MAX_UPLOAD + 1))}
        assert problem(bot.post("/api/v1/snapshots", data={"label": "v2"}, files=huge), 413)
        assert problem(bot.post("/api/v1/snapshots", files=files()), 422)  # no label
        assert event_count(server) == before
        assert [s["label"] for s in anyone.get("/api/v1/snapshots").json()] == ["v1"]
        imported = bot.post("/api/v1/snapshots", data={"label": "v2"}, files=files())
        assert imported.status_code == 201, imported.text
        result = imported.json()
        assert result["label"] == "v2" and not result["baseline"] and (result["added"] or result["changed"])
        snaps = anyone.get("/api/v1/snapshots").json()
        assert [s["label"] for s in snaps] == ["v1", "v2"]
        assert snaps[1]["source"] == "native_functions.yaml"  # as the client named it
        assert snaps[1]["content_hash"] == hashlib.sha256(V2.read_bytes()).hexdigest()


def test_check_bc_and_check_model(server):
    with server.client() as c:
        report = c.post("/api/v1/check-bc", files={"old": ("old.yaml", V1.read_bytes()),
                                                   "new": ("new.yaml", V2.read_bytes())})
        assert report.status_code == 200, report.text
        body = report.json()
        assert body["findings"] and body["summary"]["bc"] + body["summary"]["fc"] + body["summary"]["new"] > 0
        assert {f["file"] for f in body["findings"]} <= {"old.yaml", "new.yaml"}
        assert problem(c.post("/api/v1/check-bc", files={"old": ("old.yaml", V1.read_bytes())}), 422)
        checked = c.post("/api/v1/check-model", json={"operators": ["aten::add.Tensor", "aten.relu.default"]})
        assert checked.status_code == 200 and checked.json()["ok"] is True
        missing = c.post("/api/v1/check-model", json={"operators": ["aten::no_such_op"]}).json()
        assert missing["ok"] is False and missing["errors"]
        assert problem(c.post("/api/v1/check-model", json={"operators": []}), 422)
        assert "unknown snapshot" in problem(c.post("/api/v1/check-model", json={
            "operators": ["aten::add.Tensor"], "runtime": "v9"}), 404)


def test_reports_and_opset(server):
    with server.client() as c:
        weekly = c.get("/api/v1/report/weekly").json()
        assert {"as_of", "since", "review_queue", "proposals_decided"} <= set(weekly)
        md = c.get("/api/v1/report/weekly", params={"format": "md"})
        assert md.headers["content-type"].startswith("text/markdown") and md.text.startswith("#")
        html = c.get("/api/v1/report/weekly", params={"format": "html"})
        assert html.headers["content-type"].startswith("text/html") and "<html" in html.text.lower()
        assert problem(c.get("/api/v1/report/weekly", params={"format": "pdf"}), 422)
        assert "period is empty" in problem(c.get("/api/v1/report/weekly", params={
            "as_of": "2026-01-01T00:00:00Z", "since": "2026-02-01T00:00:00Z"}), 400)
        opset = c.get("/api/v1/opset", params={"preset": "core-aten"}).json()
        assert opset["count"] == len(opset["operators"]) > 0
        assert problem(c.get("/api/v1/opset", params={"preset": "mine"}), 422)


def test_events_pages_and_feed(server):
    with server.client() as c:
        everything = c.get("/api/v1/events", params={"limit": 1000}).json()["events"]
        assert len(everything) >= 4
        page = c.get("/api/v1/events", params={"limit": 2}).json()
        assert [e["id"] for e in page["events"]] == [e["id"] for e in everything[-2:]]
        older = c.get("/api/v1/events", params={"limit": 2, "before": page["next_before"]}).json()
        assert [e["id"] for e in older["events"]] == [e["id"] for e in everything[-4:-2]]
        assert problem(c.get("/api/v1/events", params={"limit": 0}), 422)
        assert problem(c.get("/api/v1/events", params={"since": "yesterday"}), 422)
        feed = c.get("/feeds/events.atom", params={"operator": "aten::mish"})
        assert feed.headers["content-type"].startswith("application/atom+xml")
        root = ET.fromstring(feed.content)
        ns = {"a": "http://www.w3.org/2005/Atom"}
        titles = [e.findtext("a:title", namespaces=ns) for e in root.findall("a:entry", ns)]
        assert titles and all(t.endswith(": aten::mish") for t in titles)
        assert titles[0] == "lifecycle.active: aten::mish"  # newest first
        assert problem(c.get("/feeds/events.atom", params={"operator": "aten::nope"}), 404)


# --- tokens -------------------------------------------------------------------------------------------


def test_an_expired_token_is_refused(tmp_path):
    """A token created (on a simulation database, whose claimed clock never goes back before its
    log's last event: so in a log that starts in 2020) long ago, valid for one day."""
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    opgov(db, "db", "upgrade", "--simulation")
    opgov(db, "import", str(V1), "--label", "v1", now="2020-01-01T00:00:00Z")
    old = opgov(db, "tokens", "create", "dev", "--expires", "1", actor="chair", now="2020-01-01T00:00:00Z").strip()
    served = start(db)
    try:
        with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {old}"}) as c:
            assert "unknown, revoked or expired" in problem(c.post("/api/v1/proposals", json={
                "operator": "aten::hardswish", "kind": "custom", "rationale": "r"}), 401)
    finally:
        served.stop()


def test_token_lifecycle(server):
    db = server.db
    fresh = opgov(db, "tokens", "create", "dev", actor="chair").strip()
    listed = json.loads(opgov(db, "tokens", "list", "--json", actor="chair"))
    mine = listed[-1]
    assert mine["member"] == "dev" and mine["state"] == "active" and "token" not in mine
    # never stored in plain text: only the sha256 is
    from sqlalchemy import create_engine, text

    from opgov.db.engine import resolve_url

    engine = create_engine(resolve_url(db))
    try:
        with engine.connect() as conn:
            rows = [tuple(map(str, r)) for r in conn.execute(text("SELECT * FROM api_tokens"))]
    finally:
        engine.dispose()
    assert not any(fresh in cell for row in rows for cell in row)
    assert any(hashlib.sha256(fresh.encode()).hexdigest() in row for row in rows)

    body = {"operator": "aten::hardswish", "kind": "custom", "rationale": "r"}
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {fresh}"}) as c:
        assert c.get("/api/v1/operators/aten::glu").status_code == 200
        opgov(db, "tokens", "revoke", str(mine["id"]), actor="chair")
        assert problem(c.post("/api/v1/proposals", json=body), 401)
    revoked = json.loads(opgov(db, "tokens", "list", "--member", "dev", "--json", actor="dev"))
    assert [t["state"] for t in revoked if t["id"] == mine["id"]] == ["revoked"]

    # only maintainers create tokens
    refused = subprocess.run([*OPGOV, "--db", db, "--actor", "dev", "tokens", "create", "dev"],
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "may not create API tokens" in refused.stderr


def test_private_reads(server):
    private = start(server.db, env={"OPGOV_PUBLIC_READS": "0"})
    try:
        with private.client() as c:
            assert problem(c.get("/api/v1/operators"), 401)
            assert c.get("/healthz").status_code == 200
            ok = c.get("/api/v1/operators", headers={"Authorization": f"Bearer {server.tokens['dev']}"})
            assert ok.status_code == 200
    finally:
        private.stop()


# --- the CLI in remote mode --------------------------------------------------------------------------


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI as a user runs it (in this process: the tests compare what it says, not how it starts)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_") or k in ("OPGOV_SHARED_DIR", "OPGOV_FORCE_TTY")}
    return opgov_in_process(args, env={**clean, "COLUMNS": "160", **(env or {})})


@pytest.mark.parametrize("args", [
    ("ops", "show", "aten::glu"), ("ops", "show", "aten::mish", "--json"), ("ops", "list", "--category", "core"),
    ("ops", "list", "--tag", "pointwise", "--json"), ("ops", "show", "aten::glo"), ("proposals",),
    ("proposals", "--json"), ("proposals", "list", "--open", "--format", "tsv"), ("proposals", "list", "--json"),
    ("proposals", "show", "1"), ("proposals", "show", "99"),
    ("log", "aten::mish", "--json"), ("log", "--since", "yesterday"), ("ops", "list", "--category", "x"),
    ("ops", "list", "--format", "tsv"), ("ops", "list", "--category", "core", "--format", "json"),
    ("ops", "show", "aten::glu", "--format", "tsv"), ("proposals", "--format", "tsv"), ("log", "--format", "tsv"),
    ("log", "--limit", "0", "--format", "json"), ("snapshots",), ("snapshots", "--format", "tsv"),
    ("ops", "list", "--format", "xml"),
], ids=lambda a: " ".join(a))
def test_remote_cli_gives_the_local_output(server, args):
    local = run_cli("--db", server.db, *args)
    remote = run_cli("--server", server.url, *args, env={"OPGOV_TOKEN": server.tokens["dev"]})
    assert (remote.returncode, remote.stdout, remote.stderr) == (local.returncode, local.stdout, local.stderr)
    via_env = run_cli(*args, env={"OPGOV_SERVER": server.url})
    assert (via_env.returncode, via_env.stdout) == (local.returncode, local.stdout)


def test_remote_cli_refusals(server):
    actor = run_cli("--server", server.url, "--actor", "chair", "ops", "show", "aten::glu")
    assert actor.returncode == 2 and "--actor cannot be used with --server" in actor.stderr
    write = run_cli("--server", server.url, "decisions", "export", "decisions.yaml",
                    env={"OPGOV_TOKEN": server.tokens["chair"]})  # no endpoint: said in one line
    assert write.returncode == 2 and "does not work with --server yet" in write.stderr
    bad = run_cli("--server", server.url, "ops", "show", "aten::glu", env={"OPGOV_TOKEN": "opgov_forged"})
    assert bad.returncode == 2 and bad.stderr == "opgov: error: the token is unknown, revoked or expired\n"
    gone = run_cli("--server", "http://127.0.0.1:9", "ops", "show", "aten::glu")
    assert gone.returncode == 2 and "cannot reach the opgov server" in gone.stderr
    assert "Traceback" not in gone.stderr + bad.stderr + actor.stderr + write.stderr


def test_log_verify_after_api_writes(server):
    """Events the service appends (with the token they were made with) continue the hash chain:
    `opgov log verify` finds it intact, and the token is part of what each hash covers."""
    with server.client("dev") as dev:
        created = dev.post("/api/v1/proposals", json={"operator": "aten::hardswish", "kind": "custom",
                                                      "rationale": "chain"})
        assert created.status_code == 201, created.text
    events = json.loads(opgov(server.db, "log", "--json", "--limit", "1"))
    assert events[-1]["action"] == "proposal.open" and events[-1]["token"] is not None
    verified = json.loads(opgov(server.db, "log", "verify", "--json"))
    assert verified["intact"] is True and verified["events"] >= event_count(server)

    from opgov.core.eventlog import event_hash

    last = events[-1]
    row = {"id": last["id"], "at": datetime.fromisoformat(last["at"]), "actor": last["actor"],
           "action": last["action"], "subject": last["subject"], "before": last["before"], "after": last["after"],
           "reason": last["reason"]}
    previous = json.loads(opgov(server.db, "log", "--json", "--limit", "2"))[0]
    assert previous["id"] == last["id"] - 1
    # the stored hash is the one over the content with the token; without it, it would differ
    assert verified["head"] == event_hash({**row, "token_id": last["token"]}, _hash_of(server, previous["id"]))
    assert verified["head"] != event_hash(row, _hash_of(server, previous["id"]))


def _hash_of(server: Server, event_id: int) -> str:
    from sqlalchemy import text

    from opgov.db.engine import make_engine, resolve_url

    engine = make_engine(resolve_url(server.db))
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT hash FROM events WHERE id = :id"), {"id": event_id}).scalar_one()
    finally:
        engine.dispose()
