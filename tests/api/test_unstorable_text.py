"""Text no database stores (a NUL, a lone surrogate) is refused in words, the same on SQLite and on
PostgreSQL — through every text field of every declared use case over the API (422, nothing
written, the next request answered), and in the files the CLI reads (one line, exit 2).
PostgreSQL used to answer these with a 500 and a traceback, and reset the connection."""

from __future__ import annotations

import typing

import pytest
from fastapi.testclient import TestClient

from opgov.api.usecases import HAND_WRITTEN
from opgov.usecases import USE_CASES
from tests.conftest import SAMPLE, bad, db_fingerprint

V1 = SAMPLE / "native_functions.v1.yaml"
NUL = "a\x00b"
SURROGATE = "a\ud800b"


def _texty(annotation) -> bool:
    return annotation is str or any(_texty(a) for a in typing.get_args(annotation))


def _is_list(annotation) -> bool:
    return typing.get_origin(annotation) is list or any(_is_list(a) for a in typing.get_args(annotation))


# (use case, field) for every text field a route takes
TEXT_FIELDS = [(u, name) for u in USE_CASES if u.request is not None and u not in HAND_WRITTEN
               for name, field in u.request.model_fields.items()
               if _texty(field.annotation) and name not in u.local_fields]


def test_the_fields_are_found():
    names = {(u.name, f) for u, f in TEXT_FIELDS}
    assert {("log", "action"), ("propose", "rationale"), ("review", "comment"), ("members add", "name"),
            ("exceptions add", "pattern"), ("import", "label"), ("runtimes add", "runtime"),
            ("deprecate", "reason"), ("check-bc", "old_snapshot")} <= names


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory):
    """An application on a database with v1 imported and a maintainer's token."""
    from tests.api.test_api_serve import _database, opgov

    for url in _database(request.param, tmp_path_factory):
        opgov(url, "db", "upgrade")
        opgov(url, "import", str(V1), "--label", "v1")
        token = opgov(url, "tokens", "create", "chair", actor="chair").split()[0]
        mp = pytest.MonkeyPatch()
        mp.setenv("OPGOV_DATABASE_URL", url)
        from opgov.api.app import create_app

        try:
            with TestClient(create_app(), raise_server_exceptions=False,
                            headers={"Authorization": f"Bearer {token}"}) as client:
                client.url = url
                yield client
        finally:
            mp.undo()


def _send(client, use_case, field: str, bad_text: str):
    model = use_case.request
    annotation = model.model_fields[field].annotation
    value = [bad_text] if _is_list(annotation) else bad_text
    path = use_case.path
    for name in use_case.path_fields:
        given = bad_text if name == field else "1" if model.model_fields[name].annotation is int else "aten::_cdist_forward"
        path = path.replace("{" + name + "}", given.replace("\x00", "%00").replace("/", "%2F"))
    if field in use_case.path_fields:
        return client.request(use_case.method, path.encode("utf-8", "surrogatepass").decode("latin-1")
                              if bad_text == SURROGATE else path)
    if use_case.method == "GET":
        return client.get(path, params={field: value})
    if use_case.upload_fields:
        # the files it needs, but not the one this field stands for (check-bc's old_snapshot is OLD)
        files = {name: ("v1.yaml", V1.read_bytes()) for name in use_case.upload_fields
                 if (model.model_fields[name].is_required() or name in ("old", "new", "native_functions"))
                 and name != field.removesuffix("_snapshot")}
        data = {field: value}
        return client.request(use_case.method, path, data=data, files=files)
    return client.request(use_case.method, path, json={field: value})


@pytest.mark.parametrize("use_case, field", TEXT_FIELDS, ids=[f"{u.name}:{f}" for u, f in TEXT_FIELDS])
def test_a_nul_in_any_text_field_is_422_in_words(served, use_case, field):
    before = db_fingerprint(served.url)
    answer = _send(served, use_case, field, NUL)
    assert answer.status_code == 422, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    detail = answer.json()["detail"]
    # (a form field's pattern, a runtime's NAME@VERSION or a digest's, says it first, in its own words)
    assert ("NUL character (U+0000)" in detail or "is not a runtime" in detail
            or (use_case.upload_fields and "should match pattern" in detail)), answer.text
    assert db_fingerprint(served.url) == before
    assert served.get("/api/v1/operators/aten::_cdist_forward").status_code == 200  # the next request is answered


@pytest.mark.parametrize("use_case, field", [(u, f) for u, f in TEXT_FIELDS if not u.upload_fields
                                             and f not in u.path_fields],
                         ids=lambda x: getattr(x, "name", x))
def test_a_lone_surrogate_in_json_or_query_is_422(served, use_case, field):
    if use_case.method == "GET":  # %ED%A0%80 is not UTF-8: read as U+FFFD, which is stored as is
        answer = served.get(use_case.path.replace("{", "").replace("}", ""), params={field: "\ufffd"})
        assert answer.status_code != 500
        return
    answer = served.request(use_case.method, use_case.path.replace("{proposal_id}", "1").replace("{name}", "aten::_cdist_forward"),
                            content=('{"%s": "a\\ud800b"}' % field).encode(), headers={"content-type": "application/json"})
    assert answer.status_code == 422 and "lone surrogate (U+D800)" in answer.json()["detail"], answer.text


def test_the_issue_s_examples(served):
    answer = served.get("/api/v1/events?action=a%00b", headers={"Authorization": ""})
    assert answer.status_code == 422
    assert answer.json()["detail"].startswith("action holds a NUL character (U+0000) at character 2")
    twice = served.post("/api/v1/members", content=b'{"name": "eve", "role": "developer", "role": "maintainer"}',
                        headers={"content-type": "application/json"})
    assert twice.status_code == 422 and "'role' twice" in twice.json()["detail"]
    assert served.get("/api/v1/tokens", params={"member": "eve"}).json() == []
    # a boolean is not a number
    quorum = served.put("/api/v1/config/quorum", json={"value": True})
    assert quorum.status_code == 422 and "whole number" in quorum.json()["detail"]


# --- the CLI reading files ------------------------------------------------------------------------------


@pytest.fixture
def any_cli(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    cli.ok("import", V1, "--label", "v1")
    cli.ok("tokens", "create", "alice@example.com")  # alice becomes the first maintainer
    return cli


@pytest.mark.parametrize("escaped", ['"a\\0b"', '"a\\x00b"', '"a\\u0000b"'])
def test_a_decisions_file_with_a_nul_is_one_line_and_exit_2(any_cli, tmp_path, escaped):
    path = tmp_path / "nul.yaml"
    path.write_text("source: our review\ndecided_at: 2024-01-02\ndecided_by: [chair]\ndecisions:\n"
                    f"  - {{op: aten::_cdist_forward, category: custom, rationale: {escaped}}}\n")
    result = bad(any_cli, "decisions", "load", path)
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    assert f"{path}:5: a value holds a NUL character (U+0000)" in result.err


def test_a_registry_with_an_escaped_nul_is_one_line_and_exit_2(any_cli, tmp_path):
    path = tmp_path / "native_functions.yaml"
    text = V1.read_text().replace("- func: __and__.Scalar(Tensor self, Scalar other) -> Tensor\n", '- func: __and__.Scalar(Tensor self, Scalar other) -> Tensor\n  tags: "x\\0y"\n', 1)
    assert "x\\0y" in text
    path.write_text(text)
    result = bad(any_cli, "import", path, "--label", "v2")
    assert "NUL character (U+0000)" in result.err and result.err.count("\n") == 1
