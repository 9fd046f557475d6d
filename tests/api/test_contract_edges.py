"""Three requests the OpenAPI document calls valid, answered as it promises: a runtime name the
path's pattern allows is one the server reads (the pattern is the server's grammar, ASCII only);
triage that selects nothing is a 200 with an empty selection; import-torch on a server without
torch is a missing capability of the server (503, no Retry-After), not a bad request."""

from __future__ import annotations

import importlib.util
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
    server = start(db)
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


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="the answer of a server without torch")
def test_import_torch_without_torch_is_a_missing_capability(served):
    _, client = served
    answer = client.post("/api/v1/decomps/import-torch", json={"only": ["aten::layer_norm"]})
    assert answer.status_code == 503 and answer.headers["content-type"] == "application/problem+json"
    assert "Retry-After" not in answer.headers  # retrying will not install torch
    assert answer.json()["detail"] == "torch is not importable; install torch to import its decompositions"
    document = client.get("/openapi.json").json()
    assert "503" in document["paths"]["/api/v1/decomps/import-torch"]["post"]["responses"]
