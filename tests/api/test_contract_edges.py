"""Requests the OpenAPI document calls valid, answered as it promises: a runtime name the path's
pattern allows is one the server reads (the pattern is the server's grammar, ASCII only); triage
that selects nothing is a 200 with an empty selection; the queue's snapshot filter is a label the
document and the server agree on; import-torch on a server without torch is refused with a 4xx that
says torch is not installed, never a 5xx (the server is served here with torch hidden from it)."""

from __future__ import annotations

import json
import os
import re

import httpx
import pytest

from opgov.core.runtimes import RUNTIME_ID_PATTERN
from tests.api.test_api_serve import V1, opgov, start


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    db = f"sqlite:///{tmp_path_factory.mktemp('edges') / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    opgov(db, "import", str(V1), "--label", "v1")
    token = opgov(db, "tokens", "create", "chair", actor="chair").strip()
    hidden = tmp_path_factory.mktemp("no-torch")  # a server on a machine without torch
    (hidden / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n", encoding="utf-8")
    server = start(db, env={"PYTHONPATH": os.pathsep.join(filter(None, [str(hidden), os.environ.get("PYTHONPATH")]))})
    try:
        yield server, httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    finally:
        server.stop()


def _pattern(document: dict, path: str, name: str) -> str:
    (parameter,) = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name]
    return parameter["schema"]["pattern"]


def test_a_runtime_name_the_document_allows_is_read_by_the_server(served):
    server, client = served
    pattern = _pattern(client.get("/openapi.json").json(), "/api/v1/runtimes/{runtime}", "runtime")
    assert pattern == RUNTIME_ID_PATTERN
    for name in ("exécutorch@1.0", "executorch@1.0\u00a0", "ex ecutorch@1"):  # not ASCII, or a space
        assert re.search(pattern, name) is None
        answer = client.get(f"/api/v1/runtimes/{name}")
        assert answer.status_code == 422 and answer.headers["content-type"] == "application/problem+json", name
    # every name the pattern allows is read: an unknown one is 404, never 400
    for name in ("executorch@1.3.0", "my_rt.x+1@2.0-rc1", "0@0"):
        assert re.search(pattern, name)
        answer = client.get(f"/api/v1/runtimes/{name}")
        assert answer.status_code == 404, answer.text  # none is registered here


def test_triage_that_selects_nothing_is_an_empty_answer(served):
    _, client = served
    answer = client.post("/api/v1/proposals/triage", json={"kind": "custom", "rationale": "helpers",
                                                           "match": ["aten::no_such_*"]})
    assert answer.status_code == 200, answer.text
    assert answer.json()["selected"] == [] and answer.json()["proposals"] == []


def test_import_torch_without_torch_is_a_4xx_that_says_so(served):
    """It was a 503 (a server error, to a fuzzer and to a client that retries): the request is fine,
    this server cannot do it until torch is installed: 409, problem+json, no Retry-After."""
    _, client = served
    answer = client.post("/api/v1/decomps/import-torch", json={"only": ["aten::layer_norm"]})
    assert answer.status_code == 409 and answer.headers["content-type"] == "application/problem+json", answer.text
    assert "Retry-After" not in answer.headers  # retrying will not install torch
    assert answer.json()["type"] == "urn:opgov:problem:unavailable"  # told apart from a policy refusal
    assert answer.json()["detail"] == ("torch is not installed where opgov runs; install torch (a test and "
                                       "import-time dependency only) to import its decompositions")
    document = client.get("/openapi.json").json()
    assert "409" in document["paths"]["/api/v1/decomps/import-torch"]["post"]["responses"]
    # the CLI with --server exits as a local run without torch does: 2, one line
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "opgov", "--server", served[0].url, "decomps", "import-torch",
                           "--only", "aten::layer_norm"], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "OPGOV_TOKEN": client.headers["Authorization"].split()[1]})
    assert done.returncode == 2 and done.stderr.startswith("opgov: error: torch is not installed"), done.stderr
    assert done.stderr.count("\n") == 1


def test_the_queue_snapshot_filter_is_a_label_the_document_and_the_server_agree_on(served):
    """`?snapshot=` (empty) was allowed by the document and refused with 400: an empty or blank
    label is now outside the schema (422), a label the schema allows and no snapshot has is 404."""
    _, client = served
    (parameter,) = [p for p in client.get("/openapi.json").json()["paths"]["/api/v1/queue"]["get"]["parameters"]
                    if p["name"] == "snapshot"]
    items = parameter["schema"]["items"]
    assert items["minLength"] == 1 and re.search(items["pattern"], " ") is None
    for value, status in (("", 422), (" ", 422), ("v9", 404), ("v1", 200)):
        answer = client.get("/api/v1/queue", params={"snapshot": value})
        assert answer.status_code == status, (value, answer.text)
        if status != 200:
            assert answer.headers["content-type"] == "application/problem+json"
    assert "unknown snapshot 'v9' (the snapshots: v1)" in client.get("/api/v1/queue?snapshot=v9").json()["detail"]
    assert json.loads(client.get("/api/v1/queue?snapshot=v1").text)["total"] >= 0
