"""The OpenAPI document is the contract: schemathesis, the usual OpenAPI fuzzer, runs against a real
`opgov serve` process (127.0.0.1, a free port) on real data with a maintainer's token, and must find
nothing — every answer has a status and a body the document declares, and every request the
document calls valid is accepted. Bounded: a fixed seed and a few examples per operation.

What no schema can say (an uploaded file's content, a date in the server's future, ...) is listed
with its reason in tests/api/schemathesis.toml, the only place a schema-valid request may get 400.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import httpx
import pytest

from tests.api.test_api_serve import opgov, start

pytestmark = [pytest.mark.realdata]

CONFIG = Path(__file__).with_name("schemathesis.toml")
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
# routes that remove what the run authenticates with (the maintainer, their token): run last, alone
SELF_DESTRUCTIVE = r"^/api/v1/(members/\{name\}|tokens/\{token_id\})$"
TRACES_TORCH = "/api/v1/decomps/import-torch"  # each call may trace torch's table for up to 2 minutes


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release, shared_dir, torch_mod):
    """2.12.0 then 2.13.0 imported, the 2023 review's decisions, the shipped rules, ExecuTorch 1.3.0
    registered; alice (maintainer, with the token) and bob (maintainer)."""
    db = f"sqlite:///{tmp_path_factory.mktemp('contract') / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    opgov(db, "members", "add", "alice", "--role", "maintainer", actor="alice")
    for label in ("2.12.0", "2.13.0"):
        release = pytorch_release(label)
        opgov(db, "import", str(release / "native_functions.yaml"), "--tags-yaml", str(release / "tags.yaml"),
              "--label", label, actor="alice")
    opgov(db, "decisions", "load", "core-aten-review-2023", actor="alice")
    opgov(db, "decomps", "load", "export-composites", actor="alice")
    kernels = shared_dir / "executorch" / "1.3.0"
    opgov(db, "runtimes", "add", "executorch@1.3.0", "--ops", str(kernels / "portable-functions.yaml"),
          "--ops", str(kernels / "optimized.yaml"), actor="alice")
    opgov(db, "members", "add", "bob", "--role", "maintainer", actor="alice")
    token = json.loads(opgov(db, "tokens", "create", "alice", "--json", actor="alice"))["token"]
    server = start(db)
    server.tokens = {"alice": token}
    try:
        yield server
    finally:
        server.stop()


def fuzz(server, tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run schemathesis on the server's document; (exit code, its report)."""
    import subprocess

    assert SCHEMATHESIS.is_file(), f"schemathesis is a test dependency: {SCHEMATHESIS} is missing"
    argv = [str(SCHEMATHESIS), "--config-file", str(CONFIG), "run", f"{server.url}/openapi.json",
            "--seed", "1", "--generation-database", "none", "--workers", "1", "--request-timeout", "150",
            "--no-color", "-H", f"Authorization: Bearer {server.tokens['alice']}", *args]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.api.schemathesis_hooks",  # 415.0 sent as 415
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=1500, env=env)
    return done.returncode, done.stdout + done.stderr


def clean(code: int, report: str) -> bool:
    """No failure and no error: warnings (operations fed mostly 404s, ...) are advice, not findings."""
    summary = report[report.rfind("SUMMARY"):]
    return code == 0 and "Failures:" not in summary and "Errors:" not in summary and re.search(
        r"=+ (No issues found|\d+ warnings?) in ", summary) is not None


def test_a_request_the_document_refuses_is_refused_with_a_problem(served):
    """The constraints the document states are the server's: one of each, sent against them."""
    with httpx.Client(base_url=served.url, headers={"Authorization": f"Bearer {served.tokens['alice']}"},
                      timeout=60) as client:
        answers = {
            "operator name": client.get("/api/v1/events", params={"operator": "not a name"}),
            "runtime": client.get("/api/v1/runtimes/executorch"),
            "blank rationale": client.post("/api/v1/proposals", json={
                "operator": "aten::glu", "kind": "core", "rationale": "  "}),
            "targets of a core proposal": client.post("/api/v1/proposals", json={
                "operator": "aten::glu", "kind": "core", "rationale": "r", "targets": ["aten::add.Tensor"]}),
            "true as a number": client.post("/api/v1/tick", json={"within_days": True}),
            "unknown setting": client.put("/api/v1/config/speed", json={"value": 3}),
            "both sides as file and label": client.post("/api/v1/check-bc", data={
                "old_snapshot": "2.12.0", "new_snapshot": "2.13.0"}, files={"old": ("a.yaml", b"- func: a() -> ()\n")}),
        }
    for what, response in answers.items():
        assert response.status_code == 422, (what, response.status_code, response.text)
        assert response.headers["content-type"] == "application/problem+json", what
    # a method the path does not have: 405 naming every method it has
    wrong = httpx.put(f"{served.url}/api/v1/proposals")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, POST"


def test_schemathesis_finds_nothing(served, tmp_path):  # last: its final run revokes the token
    document = httpx.get(f"{served.url}/openapi.json").json()
    operations = [(path, method) for path, item in document["paths"].items() for method in item]
    assert len(operations) >= 50
    # every operation that takes input or a token declares its errors, as problem+json
    for path, method in operations:
        operation = document["paths"][path][method]
        errors = {s: r for s, r in operation["responses"].items() if s >= "400"}
        takes = operation.get("parameters") or "requestBody" in operation or operation.get("security")
        assert errors or not takes, f"{method.upper()} {path} declares no error"
        for status, response in errors.items():
            assert list(response["content"]) == ["application/problem+json"], (path, method, status)

    code, report = fuzz(served, tmp_path, "--max-examples", "15", "--exclude-path-regex", SELF_DESTRUCTIVE,
                        "--exclude-path", TRACES_TORCH)
    assert clean(code, report), report[-6000:]
    code, report = fuzz(served, tmp_path, "--max-examples", "2", "--phases", "fuzzing", "--include-path", TRACES_TORCH)
    assert clean(code, report), report[-6000:]
    code, report = fuzz(served, tmp_path, "--max-examples", "10", "--include-path-regex", SELF_DESTRUCTIVE)
    assert clean(code, report), report[-6000:]
