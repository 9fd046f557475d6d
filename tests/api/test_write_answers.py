"""A write answers with what it did (issue 24): every write route of the API, performed on a real
`opgov serve` (127.0.0.1, a free port) over a SQLite (and a PostgreSQL) database holding PyTorch 2.12.0 and then
2.13.0, answers with the state a following GET of the same resource shows.

The routes are read from the application itself: a write route (any method but GET under
/api/v1) added without a case here fails :func:`test_every_write_route_has_a_case`. Routes that
change nothing (checks) are listed in ANSWERS with the reason.

The lifecycle needs time to pass (deprecating_days, deprecated_days are at least a day), and the
server's clock is the system clock: the set-up runs with claimed times weeks ago (a simulation
database), so the steps the API takes now are due."""

from __future__ import annotations

import fnmatch
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.api.test_api_serve import _database, opgov, start
from tests.conftest import SHARED

EXECUTORCH = SHARED / "executorch" / "1.3.0" / "portable-functions.yaml"
RULES = Path(__file__).resolve().parents[2] / "data" / "decomps" / "export-composites.yaml"
LINSPACE_OLD = ("aten::linspace(Scalar start, Scalar end, int? steps=None, *, ScalarType? dtype=None, "
                "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")

# routes that change nothing: they answer a question about what they are sent
ANSWERS = {
    ("POST", "/api/v1/check-bc"): "compares two registries (uploads or snapshot labels); writes nothing",
    ("POST", "/api/v1/check-model"): "whether a runtime or the registry runs a model's operators; writes nothing",
    ("POST", "/api/v1/export-check"): "the export-time verdict on a program's operators; writes nothing",
    ("POST", "/api/v1/sync-yaml"): "what the sync bot would change in the uploaded files (check, diff); "
                                   "writes nothing (sync-yaml/write is the write)",
}


def write_routes() -> set[tuple[str, str]]:
    """Every (method, path) of the application that is not a GET, under /api/v1, as the OpenAPI
    document names it."""
    from opgov.api.app import create_app
    from opgov.api.config import Config

    def walk(routes):
        for route in routes:
            inner = getattr(route, "original_router", None)  # an included router (FastAPI ≥ 0.16x)
            if inner is not None:
                yield from walk(inner.routes)
            elif getattr(route, "methods", None):  # the path as the document names it (no {id:int} convertor)
                yield from ((m, getattr(route, "path_format", route.path)) for m in route.methods)

    app = create_app(Config.from_env())
    return {(m, p) for m, p in walk(app.routes) if m not in ("GET", "HEAD") and p.startswith("/api/v1")}


def op_url(name: str) -> str:
    return f"/api/v1/operators/{quote(name, safe='')}"


def without(answer: dict, *keys: str) -> dict:
    return {k: v for k, v in answer.items() if k not in keys}


class World:
    """The served database, clients by member, and what the cases leave for the next ones."""

    def __init__(self, server, release):
        self.server, self.release = server, release
        self.clients = {who: server.client(who) for who in server.tokens}
        self.anon = server.client()
        self.done: set[tuple[str, str]] = set()
        self.state: dict = {}

    def write(self, method: str, route: str, url: str, who: str = "chair", status: int = 200, **kw) -> dict:
        response = self.clients[who].request(method, url, **kw)
        assert response.status_code == status, f"{method} {url}: {response.status_code} {response.text}"
        self.done.add((method, route))
        return response.json()

    def get(self, url: str, **params) -> dict | list:
        response = self.anon.get(url, params=params)
        assert response.status_code == 200, f"GET {url}: {response.text}"
        return response.json()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def world(request, tmp_path_factory, pytorch_release, shared_dir):
    if not EXECUTORCH.is_file():
        pytest.skip(f"{EXECUTORCH} not available")
    for db in _database(request.param, tmp_path_factory):
        yield from _world(db, pytorch_release)


def _world(db: str, pytorch_release):
    ago = lambda days: (datetime.now(timezone.utc) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%MZ")  # noqa: E731
    opgov(db, "db", "upgrade", "--simulation")
    for version, days in (("2.6.0", 41), ("2.12.0", 40)):  # 2.12.0's new operators wait in the review queue
        old = pytorch_release(version)
        opgov(db, "import", str(old / "native_functions.yaml"), "--tags-yaml", str(old / "tags.yaml"), "--label",
              version, now=ago(days))
    tokens = {"chair": opgov(db, "tokens", "create", "chair", actor="chair", now=ago(40)).strip()}
    for name, role in (("m2", "maintainer"), ("m3", "maintainer"), ("dev", "developer"), ("bot", "bot")):
        opgov(db, "members", "add", name, "--role", role, actor="chair", now=ago(40))
        tokens[name] = opgov(db, "tokens", "create", name, actor="chair", now=ago(40)).strip()
    opgov(db, "config", "set", "deprecated_days", "7", actor="chair", now=ago(40))
    # due now: rshift.Scalar and lshift.Tensor may be marked deprecated, rshift.Tensor deleted
    for op in ("aten::__rshift__.Scalar", "aten::__rshift__.Tensor", "aten::__lshift__.Tensor"):
        opgov(db, "deprecate", op, "--reason", "shift by a tensor of counts instead", actor="chair", now=ago(39))
    opgov(db, "mark-deprecated", "aten::__rshift__.Tensor", actor="chair", now=ago(20))
    server = start(db, env={"OPGOV_MAX_UPLOAD_BYTES": str(4_000_000)})
    server.tokens = tokens
    w = World(server, pytorch_release("2.13.0"))
    try:
        yield w
    finally:
        for c in (*w.clients.values(), w.anon):
            c.close()
        server.stop()


# --- the cases, in the order they run (later ones use what earlier ones left) -----------------------


def case_import(w: World):
    new = w.release
    with open(new / "native_functions.yaml", "rb") as nf, open(new / "tags.yaml", "rb") as tags:
        done = w.write("POST", "/api/v1/snapshots", "/api/v1/snapshots", who="bot", status=201,
                       data={"label": "2.13.0"},
                       files={"native_functions": ("native_functions.yaml", nf), "tags": ("tags.yaml", tags)})
    [snapshot] = [s for s in w.get("/api/v1/snapshots") if s["label"] == "2.13.0"]
    assert (done["label"], done["operators"], done["historical"]) == (snapshot["label"], snapshot["operators"],
                                                                      snapshot["historical"])
    assert done["added"] and done["removed"]
    pages: dict[str, dict] = {}  # each operator's page, read once (nothing is written meanwhile)

    def page(name: str) -> dict:
        if name not in pages:
            pages[name] = w.get(op_url(name))
        return pages[name]

    for name in done["added"]:
        shown = page(name)
        assert (shown["present"], shown["first_seen"]) == (True, "2.13.0"), name
    for name in done["removed"]:
        shown = page(name)
        assert (shown["present"], shown["last_seen"]) == (False, "2.12.0"), name
    for name in done["changed"]:
        assert page(name)["history"][-1]["changed"] is True, name
    for line in done["tags_changed"]:
        name, _, change = line.rpartition(": ")
        assert set(change.split(", ")) <= set(page(name)["history"][-1]["tags_changed"]), line
    # the findings the answer counts are those the operators' pages show for this snapshot
    counted: dict[str, int] = {}
    tagged = [line.rpartition(": ")[0] for line in done["tags_changed"]]
    for name in {*done["added"], *done["removed"], *done["changed"], *tagged}:
        for f in page(name)["findings"]:
            if f["snapshot"] == "2.13.0":
                counted[f["severity"]] = counted.get(f["severity"], 0) + 1
    assert {k: v for k, v in done["findings"].items() if v} == counted
    w.state["added"] = done["added"]


def case_config(w: World):
    before = w.get("/api/v1/config")
    done = w.write("PUT", "/api/v1/config/{key}", "/api/v1/config/quorum", json={"value": 3})
    assert done == {"key": "quorum", "before": str(before["quorum"]), "value": str(w.get("/api/v1/config")["quorum"])}
    done = w.write("PUT", "/api/v1/config/{key}", "/api/v1/config/quorum", json={"value": 2})
    assert done["value"] == str(w.get("/api/v1/config")["quorum"]) == "2" and done["before"] == "3"


def case_members(w: World):
    done = w.write("POST", "/api/v1/members", "/api/v1/members", status=201, json={"name": "eve", "role": "developer"})
    [listed] = [m for m in w.get("/api/v1/members") if m["name"] == "eve"]
    assert done == listed
    done = w.write("DELETE", "/api/v1/members/{name}", "/api/v1/members/eve")
    assert done == listed and "eve" not in [m["name"] for m in w.get("/api/v1/members")]


def _token(w: World, token_id: int) -> dict:
    [listed] = [t for t in w.clients["chair"].get("/api/v1/tokens").json() if t["id"] == token_id]
    return listed


def case_tokens(w: World):
    done = w.write("POST", "/api/v1/tokens", "/api/v1/tokens", status=201, json={"member": "dev", "expires_days": 30})
    assert without(done, "token") == _token(w, done["id"])
    with httpx.Client(base_url=w.server.url, headers={"Authorization": f"Bearer {done['token']}"}) as c:
        assert c.get("/api/v1/tokens", params={"member": "dev"}).status_code == 200  # the secret answered works
    revoked = w.write("DELETE", "/api/v1/tokens/{token_id}", f"/api/v1/tokens/{done['id']}")
    assert revoked == _token(w, done["id"]) and revoked["state"] == "revoked"


def case_exceptions(w: World):
    expires = (datetime.now(timezone.utc) + timedelta(days=60)).date().isoformat()
    done = w.write("POST", "/api/v1/exceptions", "/api/v1/exceptions", status=201,
                   json={"pattern": "aten::_foreach_*", "reason": "the foreach family is being reworked",
                         "expires": expires})
    [listed] = [e for e in w.get("/api/v1/exceptions") if e["id"] == done["id"]]
    assert without(done, "matches", "core_matches") == listed
    present = [o for o in w.get("/api/v1/operators") if fnmatch.fnmatchcase(o["name"], "aten::_foreach_*")]
    assert done["matches"] == len(present) > 0
    assert done["core_matches"] == len([o for o in present if o["category"] == "core"])
    removed = w.write("DELETE", "/api/v1/exceptions/{exception_id}", f"/api/v1/exceptions/{done['id']}")
    [listed] = [e for e in w.get("/api/v1/exceptions", all="true") if e["id"] == done["id"]]
    assert removed == listed and removed["removed"] is True


def _proposal(w: World, pid: int) -> dict:
    return w.get(f"/api/v1/proposals/{pid}")


def case_proposals(w: World):
    queue = [o for o in w.get("/api/v1/operators") if o["needs_review"] and o["kind"] == "functional"
             and o["category"] == "custom" and not o["name"].startswith("aten::_foreach_")]  # those: triage's
    # confirming the category an import placed: the answer says so, and so does the GET
    placed = queue[0]
    done = w.write("POST", "/api/v1/proposals", "/api/v1/proposals", who="dev", status=201,
                   json={"operator": placed["name"], "kind": "custom", "rationale": "a fused kernel, no opset member"})
    assert done["confirms"] == f"custom ({placed['category_source']})"
    assert done == _proposal(w, done["id"])
    voted = w.write("POST", "/api/v1/proposals/{proposal_id}/votes", f"/api/v1/proposals/{done['id']}/votes",
                    json={"approve": True, "comment": "agreed"})
    assert voted["status"] == "open" and voted["decision"] is None
    assert voted == _proposal(w, done["id"])
    decided = w.write("POST", "/api/v1/proposals/{proposal_id}/votes", f"/api/v1/proposals/{done['id']}/votes",
                      who="m2", json={"approve": True, "comment": "me too"})
    assert decided["status"] == "approved" and decided["decision"]["category"] == "custom"
    assert decided["decision"]["decided_by"] == ["chair", "m2"]
    assert decided == _proposal(w, done["id"])
    shown = w.get(op_url(placed["name"]))
    assert (shown["category"], shown["category_source"], shown["needs_review"]) == ("custom", "decision", False)
    assert shown["decisions"][-1]["proposal"] == done["id"]
    assert shown["decisions"][-1]["decided_at"] == decided["decision"]["decided_at"]
    # a proposal that changes the category (no confirmation), then withdrawn
    other = queue[1]
    opened = w.write("POST", "/api/v1/proposals", "/api/v1/proposals", who="dev", status=201,
                     json={"operator": other["name"], "kind": "core", "rationale": "every backend needs it"})
    assert opened["confirms"] is None and opened == _proposal(w, opened["id"])
    gone = w.write("POST", "/api/v1/proposals/{proposal_id}/withdraw", f"/api/v1/proposals/{opened['id']}/withdraw",
                   who="dev")
    assert gone["status"] == "withdrawn" and gone == _proposal(w, opened["id"])
    assert [p for p in w.get("/api/v1/proposals") if p["id"] in (done["id"], opened["id"])] == [decided, gone]


def case_triage(w: World):
    queue = sorted(o["name"] for o in w.get("/api/v1/operators") if o["needs_review"] and o["kind"] == "functional")
    opened = {p["operator"] for p in w.get("/api/v1/proposals", open="true")}
    body = {"kind": "custom", "rationale": "foreach kernels are a backend's own", "match": ["aten::_foreach_*"]}
    before = w.get("/api/v1/proposals")
    dry = w.write("POST", "/api/v1/proposals/triage", "/api/v1/proposals/triage", who="dev", json=body)
    selected = [n for n in queue if fnmatch.fnmatchcase(n, "aten::_foreach_*") and n not in opened]
    assert dry["selected"] == selected and dry["proposals"] == [] and selected
    assert w.get("/api/v1/proposals") == before  # a dry run wrote nothing
    done = w.write("POST", "/api/v1/proposals/triage", "/api/v1/proposals/triage", who="dev",
                   json={**body, "apply": True})
    assert [p["operator"] for p in done["proposals"]] == selected
    for p in done["proposals"]:
        assert p == _proposal(w, p["id"])


def case_bulk_review(w: World):
    queue = [o for o in w.get("/api/v1/operators") if o["needs_review"] and o["kind"] == "functional"
             and o["category"] == "custom" and not o["name"].startswith("aten::_foreach_")]
    opened = {p["operator"] for p in w.get("/api/v1/proposals", open="true")}
    names = [o["name"] for o in queue if o["name"] not in opened][:2]
    ids = [w.write("POST", "/api/v1/proposals", "/api/v1/proposals", who="dev", status=201,
                   json={"operator": name, "kind": "custom", "rationale": "a backend's own kernel"})["id"]
           for name in names]
    voted = w.write("POST", "/api/v1/proposals/reviews", "/api/v1/proposals/reviews",
                    json={"proposal_ids": ids, "approve": True, "comments": ["agreed"]})
    assert [v["id"] for v in voted] == ids and all(v["status"] == "open" for v in voted)
    assert voted == [_proposal(w, pid) for pid in ids]
    decided = w.write("POST", "/api/v1/proposals/reviews", "/api/v1/proposals/reviews", who="m2",
                      json={"proposal_ids": ids[::-1], "approve": True, "comments": ["yes", "also yes"]})
    assert [d["id"] for d in decided] == ids[::-1] and all(d["status"] == "approved" for d in decided)
    assert decided == [_proposal(w, pid) for pid in ids[::-1]]
    assert [v["comment"] for v in decided[0]["votes"] if v["voter"] == "m2"] == ["yes"]


def case_queue_triage(w: World):
    waiting = w.get("/api/v1/queue")["items"]
    opened = {p["operator"] for p in w.get("/api/v1/proposals", open="true")}
    chosen = [i for i in waiting if i["suggestion"] in ("decompose", "custom", "core")
              and i["operator"] not in opened and (i["suggestion"] != "decompose" or i["targets"])][:2]
    assert chosen, "the queue suggests nothing to triage"
    body = {"match": [i["operator"] for i in chosen]}
    before = w.get("/api/v1/proposals")
    dry = w.write("POST", "/api/v1/queue/triage", "/api/v1/queue/triage", who="dev", json=body)
    assert dry["applied"] is False and [p["id"] for p in dry["proposals"]] == [None] * len(dry["proposals"])
    assert w.get("/api/v1/proposals") == before  # a dry run wrote nothing
    done = w.write("POST", "/api/v1/queue/triage", "/api/v1/queue/triage", who="dev", json={**body, "apply": True})
    assert done["applied"] is True
    assert [(p["operator"], p["kind"]) for p in done["proposals"]] == [(p["operator"], p["kind"]) for p in dry["proposals"]]
    assert {p["operator"] for p in done["proposals"]} == {i["operator"] for i in chosen}
    for p in done["proposals"]:
        shown = _proposal(w, p["id"])
        assert (shown["operator"], shown["kind"], shown["rationale"], shown["targets"]) == \
            (p["operator"], p["kind"], p["rationale"], list(p["targets"]))


def _lifecycle_matches(w: World, done: dict, reason: str | None) -> None:
    shown = w.get(op_url(done["operator"]))
    step = shown["lifecycle_steps"][-1]
    assert (shown["lifecycle"], shown["replacement"]) == (done["to"], done["replacement"])
    assert (step["from"], step["to"], step["at"], step["reason"]) == (done["from"], done["to"], done["at"], reason)
    if done["to"] != "active":
        assert shown["lifecycle_since"] == done["at"]
    for member in done["family"]:
        assert w.get(op_url(member))["lifecycle"] == done["to"], member
    for ref in done["left_behind"]:
        assert w.get(op_url(ref["operator"]))["lifecycle"] == ref["lifecycle"], ref


def case_lifecycle(w: World):
    name = "aten::__lshift__.Scalar"
    done = w.write("POST", "/api/v1/operators/{name}/deprecate", f"{op_url(name)}/deprecate",
                   json={"reason": "shift by a tensor of counts instead"})
    _lifecycle_matches(w, done, "shift by a tensor of counts instead")
    done = w.write("POST", "/api/v1/operators/{name}/undeprecate", f"{op_url(name)}/undeprecate",
                   json={"reason": "still used by quantized models"})
    _lifecycle_matches(w, done, "still used by quantized models")
    done = w.write("POST", "/api/v1/operators/{name}/mark-deprecated",
                   f"{op_url('aten::__rshift__.Scalar')}/mark-deprecated", json={"reason": "the period passed"})
    _lifecycle_matches(w, done, "the period passed")
    assert w.get(op_url("aten::__rshift__.Scalar"))["sunset"] == done["next"]["possible_from"]
    done = w.write("POST", "/api/v1/operators/{name}/delete", f"{op_url('aten::__rshift__.Tensor')}/delete",
                   json={"reason": "gone from the registry"})
    _lifecycle_matches(w, done, "gone from the registry")
    assert done["to"] == "deleted" and done["next"] is None


def case_tick(w: World):
    done = w.write("POST", "/api/v1/tick", "/api/v1/tick", who="bot", json={"apply": True})
    assert done["applied"] and done["applied"] == done["due"]
    for item in done["applied"]:
        shown = w.get(op_url(item["operator"]))
        assert shown["lifecycle"] == item["to"], item
        step = shown["lifecycle_steps"][-1]
        assert (step["from"], step["to"], step["at"]) == (item["from"], item["to"], done["now"]), item
    again = w.write("POST", "/api/v1/tick", "/api/v1/tick", who="bot", json={"apply": False})
    assert again["due"] == [] and again["applied"] == []  # what it applied is no longer due


def case_decisions(w: World):
    last = w.get("/api/v1/events", limit=1)["events"][-1]["id"]
    done = w.write("POST", "/api/v1/decisions", "/api/v1/decisions", status=201,
                   data={"shipped": "core-aten-review-2023"})
    assert done["recorded"] > 0 and done["decisions"] == done["recorded"] + done["already_recorded"]
    # one event per decision recorded: those that set the category, and those on record only
    events = [e for e in w.get("/api/v1/events", limit=1000)["events"] if e["id"] > last]
    decided = {e["subject"] for e in events if e["action"] == "category.decided"}
    recorded_only = {e["subject"] for e in events if e["action"] == "category.decision_recorded"}
    assert len(decided) + len(recorded_only) == done["recorded"]
    assert recorded_only == set(done["superseded"])
    for name in decided:  # each page shows the decision, and the category it set
        shown = w.get(op_url(name))
        assert shown["category_source"] == "decision" and not shown["needs_review"], name
        assert shown["decisions"][-1]["imported"] and shown["decisions"][-1]["category"] == shown["category"], name
    # each superseded operator's page shows the decision on record with the note saying why
    for name in done["superseded"]:
        assert any(d["imported"] and d["note"] for d in w.get(op_url(name))["decisions"]), name
    again = w.write("POST", "/api/v1/decisions", "/api/v1/decisions", status=201,
                    data={"shipped": "core-aten-review-2023"})
    assert (again["recorded"], again["already_recorded"]) == (0, done["decisions"])


def case_decomps(w: World):
    with open(RULES, "rb") as f:
        done = w.write("POST", "/api/v1/decomps", "/api/v1/decomps", status=201, files={"rules": (RULES.name, f)})
    listed = [r for r in w.get("/api/v1/decomps")
              if (r["source"], r["detail"]) == ("file", f"{done['source']} ({done['file']})")]
    assert done["rules"] == done["added"] + done["updated"] + done["unchanged"] + done["kept"]
    assert len(listed) == done["added"] + done["updated"] + done["unchanged"]
    pytest.importorskip("torch")  # traced on the server
    only = ["aten::hardswish", "aten::mish", "aten::logsumexp", "aten::elu"]  # hardswish: the file's rule is kept
    done = w.write("POST", "/api/v1/decomps/import-torch", "/api/v1/decomps/import-torch",
                   json={"only": only, "budget": 120})
    traced = {r["operator"] for r in w.get("/api/v1/decomps") if r["source"] == "torch"}
    kept = {c["operator"] for c in done["changes"] if c["outcome"] == "kept"}
    left = kept | {u["operator"] for u in done["untraced"]} | set(done["not_in_table"]) | set(done["not_in_registry"])
    assert "aten::hardswish" in kept
    assert traced == set(only) - left and len(traced) == done["added"] + done["updated"] + done["unchanged"] > 0


def case_runtimes(w: World):
    with open(EXECUTORCH, "rb") as f:
        done = w.write("POST", "/api/v1/runtimes", "/api/v1/runtimes", status=201,
                       data={"runtime": "executorch@1.3.0", "released": "2025-10-01"},
                       files=[("ops", ("portable-functions.yaml", f))])
    shown = w.get("/api/v1/runtimes/executorch@1.3.0")
    assert (done["runtime"], done["sources"], done["not_in_registry"]) == (shown["runtime"], shown["sources"],
                                                                           shown["not_in_registry"])
    [listed] = [r for r in w.get("/api/v1/runtimes")["runtimes"] if r == done["runtime"]]
    assert listed


def case_upgraders(w: World):
    done = w.write("POST", "/api/v1/upgraders", "/api/v1/upgraders", status=201,
                   json={"operator": "aten::linspace", "versions": "0-7", "old_schema": LINSPACE_OLD,
                         "bumped_on": "2022-07-01", "reason": "steps became required"})
    assert done["upgrader"] == w.get(f"/api/v1/upgraders/{done['upgrader']['name']}")


def case_sync_write(w: World):
    nf = (w.release / "native_functions.yaml").read_bytes()
    tags = (w.release / "tags.yaml").read_bytes()
    before = w.get("/api/v1/events", limit=1)["events"][-1]["id"]
    done = w.write("POST", "/api/v1/sync-yaml/write", "/api/v1/sync-yaml/write", who="bot",
                   files={"native_functions": ("native_functions.yaml", nf), "tags": ("tags.yaml", tags)})
    assert done["report"]["changes"] and done["native_functions"] is not None
    # what the answer says to write is what the server then finds in sync
    checked = w.anon.post("/api/v1/sync-yaml", files={
        "native_functions": ("native_functions.yaml", done["native_functions"].encode()),
        "tags": ("tags.yaml", (done["tags"] or tags.decode()).encode())}).json()
    assert checked["report"]["in_sync"] is True and checked["report"]["changes"] == []
    logged = [e for e in w.get("/api/v1/events", limit=1000)["events"] if e["id"] > before]
    assert logged and all(e["actor"] == "bot" for e in logged)


CASES = [
    (case_import, {("POST", "/api/v1/snapshots")}),
    (case_config, {("PUT", "/api/v1/config/{key}")}),
    (case_members, {("POST", "/api/v1/members"), ("DELETE", "/api/v1/members/{name}")}),
    (case_tokens, {("POST", "/api/v1/tokens"), ("DELETE", "/api/v1/tokens/{token_id}")}),
    (case_exceptions, {("POST", "/api/v1/exceptions"), ("DELETE", "/api/v1/exceptions/{exception_id}")}),
    (case_proposals, {("POST", "/api/v1/proposals"), ("POST", "/api/v1/proposals/{proposal_id}/votes"),
                      ("POST", "/api/v1/proposals/{proposal_id}/withdraw")}),
    (case_bulk_review, {("POST", "/api/v1/proposals/reviews")}),
    (case_triage, {("POST", "/api/v1/proposals/triage")}),
    (case_queue_triage, {("POST", "/api/v1/queue/triage")}),
    (case_lifecycle, {("POST", f"/api/v1/operators/{{name}}/{step}")
                      for step in ("deprecate", "undeprecate", "mark-deprecated", "delete")}),
    (case_tick, {("POST", "/api/v1/tick")}),
    (case_decisions, {("POST", "/api/v1/decisions")}),
    (case_decomps, {("POST", "/api/v1/decomps"), ("POST", "/api/v1/decomps/import-torch")}),
    (case_runtimes, {("POST", "/api/v1/runtimes")}),
    (case_upgraders, {("POST", "/api/v1/upgraders")}),
    (case_sync_write, {("POST", "/api/v1/sync-yaml/write")}),
]


def test_every_write_route_has_a_case():
    covered = set().union(*(routes for _, routes in CASES))
    routes = write_routes()
    assert not covered & set(ANSWERS)
    assert routes - covered - set(ANSWERS) == set(), "a write route without a case here"
    assert covered | set(ANSWERS) == routes, "a case for a route the application no longer has"


@pytest.mark.parametrize("case", [c for c, _ in CASES], ids=[c.__name__[5:] for c, _ in CASES])
def test_a_write_answers_what_a_get_then_shows(world, case):
    routes = dict((c, r) for c, r in CASES)[case]
    case(world)
    assert routes <= world.done, f"the case did not perform {routes - world.done}"
