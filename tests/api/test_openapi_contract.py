"""The OpenAPI document is the contract (tests/api/openapi_contract.py says how it is checked):
the document's own promises, the server's refusal of what the document refuses, and schemathesis
on the reading and checking operations (files, operators, decompositions, runtimes, pages). The
workbench's operations are test_openapi_contract_workbench.py's, the other governance operations
test_openapi_contract_governance.py's, the route that traces torch test_openapi_contract_torch.py's.
"""

from __future__ import annotations

import re

import httpx
import pytest

from tests.api.openapi_contract import GOVERNANCE, SELF_DESTRUCTIVE, TRACES_TORCH, WORKBENCH, fuzz_clean, group, serve

pytestmark = [pytest.mark.realdata, pytest.mark.ci]  # a fuzzer: CI's run (tests/conftest.CI_ONLY)


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release, shared_dir, torch_mod):
    yield from serve(tmp_path_factory, pytorch_release, shared_dir)


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


def test_every_operation_declares_its_errors_and_is_fuzzed_by_one_file(served):
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
    # the files' groups: each operation is in one, and each group holds operations
    groups = {group(path) for path, _ in operations}
    assert groups == {"reading", "workbench", "governance", "last", "torch"}
    assert [p for p, _ in operations if group(p) == "torch"] == [TRACES_TORCH]


def test_schemathesis_finds_nothing_in_reading_and_checking(served, tmp_path):
    fuzz_clean(served, tmp_path, "reading", "--max-examples", "15", "--exclude-path-regex",
               f"{WORKBENCH}|{GOVERNANCE}|{SELF_DESTRUCTIVE}|^{re.escape(TRACES_TORCH)}$")
