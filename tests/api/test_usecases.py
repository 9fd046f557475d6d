"""The use cases declared once (opgov.usecases) against a real `opgov serve` on 127.0.0.1, on SQLite
and on PostgreSQL: every declaration is a route of the API, documented in /openapi.json with the
errors and the security of a hand-written route; `opgov status` — a use case added as one
declaration, its service, its renderer and a command of a few lines — says the same with --server
as with --db; the commands that work with --server are those that call a declaration."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from opgov.api.contract import BEARER
from opgov.api.usecases import operation_id
from opgov.formats.files import Content
from opgov.usecases import USE_CASES, UseCase, named
from opgov.usecases import pages as pages_module
from opgov.usecases.lifecycle import DEPRECATE, TICK
from opgov.usecases.pages import DECLARED as PAGES
from opgov.usecases.runtimes import EXPORT_CHECK
from opgov.usecases.status import STATUS
from opgov.usecases.fields import Flag, Upload, WithinDays
from opgov.web import data as web_data
from tests.api.test_api_remote import locally, remotely, same, serve_twins
from tests.api.test_api_serve import V2, opgov, problem, run_cli


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def twins(request, tmp_path_factory):
    """(the served database's server, a twin used locally), each with v1 and v2 imported (v1.5 as
    history) and an open proposal."""
    def more(db: str) -> None:
        opgov(db, "import", str(V2), "--label", "v2", actor="bot")
        opgov(db, "propose-core", "aten::glu", "--rationale", "every backend has it", actor="dev")

    yield from serve_twins(request.param, tmp_path_factory, more)


@pytest.mark.parametrize("args", [("status",), ("status", "--json")], ids=" ".join)
def test_status_says_the_same_with_server_as_with_db(twins, args):
    server, _ = twins
    local = locally(server.db, None, *args)
    assert local.returncode == 0 and local.stderr == ""
    same(remotely(server, "dev", *args), local)
    same(remotely(server, None, *args), local)  # a read: no token needed


def test_status_counts_what_the_database_holds(twins):
    server, _ = twins
    status = json.loads(locally(server.db, None, "status", "--json").stdout)
    ops = json.loads(locally(server.db, None, "ops", "list", "--json").stdout)
    assert status["latest_snapshot"] == "v2" and status["snapshots"] == 2
    assert status["operators"] == {c: sum(o["category"] == c for o in ops) for c in ("core", "decomposable", "custom")}
    assert status["open_proposals"] == 1 and status["members"] == 4
    with server.client() as anyone:
        assert anyone.get("/api/v1/status").json() == status
        assert anyone.get("/healthz").json()["revision"] == status["revision"]
    text = locally(server.db, None, "status").stdout
    assert "snapshots: 2 (latest v2)\n" in text and "open proposals: 1\n" in text and "members: 4\n" in text


def test_every_declaration_is_a_documented_route(twins):
    server, _ = twins
    with server.client() as anyone:
        spec = anyone.get("/openapi.json").json()
    for use_case in USE_CASES:
        op = spec["paths"][use_case.path][use_case.method.lower()]
        assert op["operationId"] == operation_id(use_case) and op["tags"] == [use_case.tag]
        assert op["summary"] == use_case.summary
        ok = op["responses"][str(use_case.status)]["content"]["application/json"]["schema"]
        result = use_case.result
        results = typing.get_args(result) or (result,)  # list[A] → A, A | B → A, B
        assert all(one.__name__ in json.dumps(ok) for one in results)
        # the contract hook saw the Reader/Writer dependency, as for a hand-written route: a write needs the
        # token, a read takes one if given (this server's reads are public); every error status is
        # application/problem+json
        assert op["security"] == ([{BEARER: []}] if use_case.writes else [{}, {BEARER: []}])
        errors = {s for s in op["responses"] if int(s) >= 400}
        assert {"401", "400"} <= errors and ({"403", "409", "503"} <= errors) == use_case.writes
        assert all(list(op["responses"][s]["content"]) == ["application/problem+json"] for s in errors)
        for parameter in op.get("parameters", []):
            assert parameter["in"] == ("path" if parameter["name"] in use_case.path_fields else "query")
    status = spec["components"]["schemas"]["StatusReport"]
    assert set(status["properties"]) == {"revision", "snapshots", "latest_snapshot", "operators", "open_proposals",
                                         "members"}


def test_a_derived_write_refuses_as_a_hand_written_one(twins):
    server, _ = twins
    with server.client() as anyone:
        assert "needs `Authorization: Bearer <token>`" in problem(anyone.put("/api/v1/config/quorum",
                                                                             json={"value": 3}), 401)
    with server.client("dev") as dev:
        assert "dev (developer) may not change settings" in problem(dev.put("/api/v1/config/quorum",
                                                                             json={"value": 3}), 403)
        assert problem(dev.put("/api/v1/config/sunrise", json={"value": 3}), 422) == \
            "unknown setting 'sunrise' (one of quorum, deprecating_days, deprecated_days)"


def test_a_request_is_refused_the_same_before_it_is_sent(twins):
    """The CLI checks a request against its model both ways, so a value the server's schema refuses
    is one line and exit 2 with --db as with --server (and nothing is sent)."""
    server, local_db = twins
    for args in (("tokens", "create", "dev", "--expires", "0"), ("members", "add", "x" * 201, "--role", "bot")):
        remote, local = remotely(server, "chair", *args), locally(local_db, "chair", *args)
        same(remote, local)
        assert remote.returncode == 2 and remote.stdout == ""
        if args[0] == "tokens":  # the CLI's option, not the request's field
            assert remote.stderr == "opgov: error: --expires: Input should be greater than or equal to 1\n"


def _declaration(path: str) -> UseCase:
    """``opgov.usecases.governance.REVIEW`` → that declaration."""
    import importlib

    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def test_the_commands_that_work_with_a_server_are_those_that_call_a_declaration(tmp_path):
    from opgov.cli.client import callers

    refused = run_cli("--server", "http://127.0.0.1:9", "decisions", "export", str(tmp_path / "d.yaml"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    listed = refused.stderr.split("(only ", 1)[1].split(" do);", 1)[0]
    names = [name for part in listed.split(", ") for name in part.split(" and ")]
    calls = callers()
    assert names == list(calls)  # every command's, though the run holds only `decisions`
    assert {"review", "proposals list", "propose-core", "triage", "tick", "sync-yaml", "log"} <= set(names)
    # every declaration is called by a command but export-check, which the Python entry point
    # opgov.export_check asks, and the pages' own (opgov.usecases.pages), which the pages ask
    # through opgov.web.data
    called = {_declaration(path) for paths in calls.values() for path in paths}
    assert called == set(USE_CASES) - {EXPORT_CHECK} - set(PAGES)
    pages_data = Path(web_data.__file__).read_text(encoding="utf-8")
    assert [name for name, use_case in vars(pages_module).items() if use_case in PAGES
            and not re.search(rf"\b{name}\b", pages_data)] == []
    assert "export-check" not in names


def test_a_use_case_named_in_data_is_found():
    assert named("status") is STATUS and STATUS.path == "/api/v1/status" and not STATUS.writes
    with pytest.raises(KeyError):
        named("no such use case")


# the modules whose tests run a command with --server and with --db and compare what a user sees
TWIN_MODULES = ("test_api_remote", "test_api_remote_admin", "test_api_runtimes", "test_api_serve", "test_usecases",
                "test_api_log_pages")


def test_every_declared_command_has_a_twin_case():
    """A command that calls a declaration works with --server (opgov.cli.client.callers); each of
    them is run both ways by a twin test, so a new command without one fails here."""
    import re
    from pathlib import Path

    from opgov.cli.client import callers

    sources = "\n".join((Path(__file__).parent / f"{name}.py").read_text() for name in TWIN_MODULES)
    missing = []
    for command in callers():
        words = command.split()
        as_args = r",\s*".join(f'"{re.escape(word)}"' for word in words)
        if not re.search(rf"(?<![\w-]){as_args}", sources):
            missing.append(command)
    assert missing == [], f"declared commands no twin test runs: {missing}"


# --- the mechanism itself, on made-up declarations (no database) -----------------------------------


class _Flags(BaseModel):  # a query or a form: every value arrives as text
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    flag: Flag = False
    days: WithinDays = 0


class _Form(_Flags):
    file: Upload | None = None


def _echo(ctx, **fields):
    return {name: (value.name if isinstance(value, Content) else value) for name, value in fields.items()}


def _routes(monkeypatch, *use_cases: UseCase):
    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from opgov.api import deps
    from opgov.api.usecases import router

    app = FastAPI()
    app.state.config = type("Config", (), {"max_upload_bytes": 1000})()
    app.include_router(router(use_cases))
    app.dependency_overrides[deps.reader] = app.dependency_overrides[deps.writer] = lambda: None
    return TestClient(app)


def test_a_flag_and_a_number_are_read_from_a_query_and_a_form(monkeypatch):
    """A query's and a form's values are text: "true" is a flag there and "3" a number, where a JSON
    body must say true and 3 (fields.textual)."""
    common = dict(result=dict, service=_echo, summary="echo")
    client = _routes(monkeypatch, UseCase("read", method="GET", path="/api/v1/read", request=_Flags, **common),
                     UseCase("send", method="POST", path="/api/v1/send", writes=True, request=_Form, **common))
    assert client.get("/api/v1/read", params={"flag": "true", "days": "3"}).json() == {"flag": True, "days": 3}
    sent = client.post("/api/v1/send", data={"flag": "true", "days": "3"}, files={"file": ("mine.yaml", b"x")})
    assert sent.json() == {"flag": True, "days": 3, "file": "mine.yaml"}


def test_a_file_is_named_on_the_server_as_the_client_named_it():
    """The CLI's multipart body (opgov.usecases.client) names a file so that the server reads back the
    name it was given, quotes and backslashes included."""
    import asyncio

    from starlette.requests import Request as Incoming

    from opgov.api.uploads import shown_name
    from opgov.usecases.client import _multipart

    for name in ('a "quoted" name.yaml', "dir\\file.yaml", "héllo wörld.yaml", "plain/path.yaml", 'end\\"\\'):
        body, content_type = _multipart([("file", Content(b"x", name))], {"flag": True, "none": None})

        async def form(body=body, content_type=content_type):
            async def receive():
                return {"type": "http.request", "body": body, "more_body": False}

            scope = {"type": "http", "method": "POST", "path": "/", "query_string": b"",
                     "headers": [(b"content-type", content_type.encode())]}
            parsed = await Incoming(scope, receive).form()
            return shown_name(parsed["file"]), {k: v for k, v in parsed.multi_items() if k != "file"}

        assert asyncio.run(form()) == (name, {"flag": "true"})


def test_a_body_of_defaults_may_be_left_out(monkeypatch):
    """A JSON body whose fields all have defaults is optional (`delete` without a reason): left out,
    the service gets the request's defaults, as for ``{}``."""
    client = _routes(monkeypatch, UseCase("send", method="POST", path="/api/v1/send", writes=True,
                                          request=_Flags, result=dict, service=_echo, summary="echo"))
    assert client.post("/api/v1/send").json() == client.post("/api/v1/send", json={}).json() == \
        {"flag": False, "days": 0}
    assert client.post("/api/v1/send", json={"flag": True, "days": 2}).json() == {"flag": True, "days": 2}


def test_a_dry_run_reads():
    """`tick` writes only with `apply` (its request's `reads_only`): without it, the CLI's transaction
    is a read."""
    assert TICK.writes and TICK.writes_for(TICK.ask(apply=True)) and not TICK.writes_for(TICK.ask(apply=False))
    assert DEPRECATE.writes_for(DEPRECATE.ask(name="aten::glu", reason="r"))
    with pytest.raises(ValueError):
        UseCase("x", result=dict, service=dict, method="GET", path="/api/v1/x", summary="x", writes=True)


def test_every_field_of_a_declaration_serves_several_use_cases():
    """A reader learns a handful of fields: what one use case alone needs lives in its own code (its
    request, its service, the entrypoint that serves it), not in a field of every declaration."""
    import dataclasses

    used = {field.name: sum(getattr(u, field.name) != field.default for u in USE_CASES)
            for field in dataclasses.fields(UseCase)}
    assert {name: n for name, n in used.items() if n < 2} == {}
    assert len(used) <= 12


def test_every_result_is_declared_in_the_results_package():
    """What a use case answers is one of opgov.results' types (the CLI's --json, the API and the
    pages serialize the same), named there by its declaration, not through a re-export."""
    def leaves(kind):
        args = typing.get_args(kind)
        return [leaf for arg in args for leaf in leaves(arg)] if args else [kind]

    for use_case in USE_CASES:
        for kind in leaves(use_case.result):
            assert kind.__module__.startswith("opgov.results."), (use_case.name, kind)


# --- the committee's workbench (opgov.usecases.queue): the same with --server as with --db ----------

QUEUE_READS = [("queue",), ("queue", "--json"), ("queue", "--format", "tsv"),
               ("queue", "--suggestion", "human", "--sort", "operator", "--limit", "2", "--offset", "1", "--json"),
               ("queue", "--match", "aten::_*", "--reason", "undecided", "--format", "table"),
               ("queue", "--snapshot", "nope"),                                     # bad input: 2
               ("triage", "--suggested"), ("triage", "--suggested", "--json"),       # dry runs
               ("triage", "--suggested", "--match", "nothing::*")]                  # bad input: 2


@pytest.mark.parametrize("args", QUEUE_READS, ids=" ".join)
def test_the_queue_says_the_same_with_server_as_with_db(twins, args):
    server, _ = twins
    local = locally(server.db, "dev", *args)
    assert "Traceback" not in local.stderr
    same(remotely(server, "dev", *args), local)


def test_triage_suggested_applies_the_same_with_server_as_with_db(twins):
    server, local_db = twins
    args = ("triage", "--suggested", "--apply", "--json")
    remote, local = remotely(server, "dev", *args), locally(local_db, "dev", *args)
    same(remote, local)
    assert json.loads(remote.stdout)["applied"] is True
    def proposals(db: str) -> list[tuple]:
        return [(p["id"], p["operator"], p["kind"], p["targets"], p["rationale"], p["status"])
                for p in json.loads(locally(db, None, "proposals", "--json").stdout)]

    assert proposals(server.db) == proposals(local_db)
    assert locally(server.db, None, "queue", "--json").stdout == locally(local_db, None, "queue", "--json").stdout
    queued = json.loads(locally(server.db, None, "queue", "--json").stdout)
    with server.client() as anyone:
        assert anyone.get("/api/v1/queue").json() == queued
