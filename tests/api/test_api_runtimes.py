"""Runtimes, check-model and upgraders through `opgov serve` (a real process on 127.0.0.1, a real
HTTP client), on SQLite and PostgreSQL, and the CLI in remote mode giving the same output and exit
code as locally: twin databases set up alike, one served, one used with --db; every command runs
on both and the answers are compared."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.api.test_api_serve import OPGOV, Server, _database, opgov, problem, start
from tests.conftest import REPO, SHARED, opgov_in_process

EXECUTORCH = SHARED / "executorch"
RULES = REPO / "data" / "decomps" / "export-composites.yaml"
LINSPACE_OLD = ("aten::linspace(Scalar start, Scalar end, int? steps=None, *, ScalarType? dtype=None, "
                "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor")


@dataclass
class Twins:
    server: Server
    local_db: str
    work: Path  # the folder commands run in: files are named relative to it, as a user would


def _setup(db: str, release: Path) -> None:
    opgov(db, "db", "upgrade", "--simulation")
    opgov(db, "import", str(release / "native_functions.yaml"), "--tags-yaml", str(release / "tags.yaml"),
          "--label", "2.13.0")
    opgov(db, "decomps", "load", str(RULES))
    opgov(db, "members", "add", "chair", "--role", "maintainer", actor="chair")
    opgov(db, "members", "add", "dev", "--role", "developer", actor="chair")


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def twins(request, tmp_path_factory, pytorch_release, torch_mod):
    if not (EXECUTORCH / "1.3.0" / "portable-functions.yaml").is_file():
        pytest.skip("ExecuTorch registries not available")
    release = pytorch_release("2.13.0")
    work = tmp_path_factory.mktemp("work")
    for version in ("0.2.0", "1.3.0"):
        for name in ("portable-functions.yaml", "optimized.yaml"):
            shutil.copyfile(EXECUTORCH / version / name, work / f"{version}-{name}")
    for args, name in (([], "net.pt2"), (["--core-aten"], "net-core.pt2")):
        subprocess.run([sys.executable, str(REPO / "scripts" / "export_example.py"), *args, str(work / name)],
                       check=True, capture_output=True, timeout=600)
    for served_db in _database(request.param, tmp_path_factory):
        for local_db in _database(request.param, tmp_path_factory):
            for db in (served_db, local_db):
                _setup(db, release)
            tokens = {who: opgov(served_db, "tokens", "create", who, actor="chair").strip() for who in ("chair", "dev")}
            served = start(served_db)
            served.tokens = tokens
            try:
                yield Twins(served, local_db, work)
            finally:
                served.stop()


def _run(twins: Twins, argv: list[str], *, remote: bool, who: str = "chair") -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")} | {"COLUMNS": "200", "OPGOV_FORCE_TTY": "1"}
    if remote:
        env |= {"OPGOV_SERVER": twins.server.url, "OPGOV_TOKEN": twins.server.tokens[who]}
        full = [*argv]
    else:
        full = ["--db", twins.local_db, "--actor", who, *argv]
    done = opgov_in_process(full, env=env, cwd=twins.work)
    return done.returncode, done.stdout, done.stderr


def same(twins: Twins, *argv: str, code: int = 0, who: str = "chair", timed: bool = False) -> str:
    """Run a command locally and remotely: the same exit code (``code``), stdout and error line.
    ``timed``: the output names a minute computed from each side's now (they run seconds apart,
    maybe across a minute): those minutes may differ."""
    import re

    def scrub(run):
        if not timed:
            return run
        return tuple(re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "<minute> UTC", v) if isinstance(v, str) else v
                     for v in run)

    local = scrub(_run(twins, list(argv), remote=False, who=who))
    remote = scrub(_run(twins, list(argv), remote=True, who=who))
    assert local[0] == code, f"local {argv}: {local[2]}"
    assert remote == local, f"{argv}: remote {remote!r} != local {local!r}"
    assert "Traceback" not in remote[2]
    return remote[1] or remote[2]


def same_json(twins: Twins, *argv: str, moments: tuple[str, ...] = ("added_at", "created_at")) -> object:
    """As :func:`same` for ``--json`` output holding the moments each side wrote it: those may differ."""
    import json

    def scrub(value):
        if isinstance(value, dict):
            return {k: "<moment>" if k in moments else scrub(v) for k, v in value.items()}
        return [scrub(v) for v in value] if isinstance(value, list) else value

    local = _run(twins, [*argv, "--json"], remote=False)
    remote = _run(twins, [*argv, "--json"], remote=True)
    assert local[0] == remote[0] == 0, (local[2], remote[2])
    assert scrub(json.loads(remote[1])) == scrub(json.loads(local[1]))
    return json.loads(remote[1])


def test_runtimes_remote_like_local(twins):
    for version, released in (("0.2.0", "2024-04-26"), ("1.3.0", "2026-05-26")):
        out = same(twins, "runtimes", "add", f"executorch@{version}", "--ops", f"{version}-portable-functions.yaml",
                   "--ops", f"{version}-optimized.yaml", "--released", released)
        assert out.startswith(f"added executorch@{version}, released {released}: ")
    assert same(twins, "runtimes", "add", "executorch@1.3.0", "--ops", "1.3.0-portable-functions.yaml",
                "--ops", "1.3.0-optimized.yaml", "--released", "2026-05-26").startswith("unchanged executorch@1.3.0")
    refused = same(twins, "runtimes", "add", "executorch@1.3.0", "--ops", "0.2.0-portable-functions.yaml", code=1)
    assert "registered already" in refused and "--replace" in refused
    # a developer may not register runtimes
    assert same(twins, "runtimes", "add", "x@1", "--ops", "0.2.0-optimized.yaml", code=1, who="dev")
    assert "no such file" in same(twins, "runtimes", "add", "x@1", "--ops", "missing.yaml", code=2)
    assert "core operators of snapshot 2.13.0" in same(twins, "runtimes", "list")
    assert same(twins, "runtimes", "list", "--json").count('"runtime": "executorch@') == 2
    assert same(twins, "runtimes", "list", "--format", "json").count('"runtime": "executorch@') == 2
    header, *rows = same(twins, "runtimes", "list", "--format", "tsv").splitlines()
    assert header.startswith("runtime\t") and sorted(r.split("\t")[0] for r in rows) == ["executorch@0.2.0",
                                                                                       "executorch@1.3.0"]
    shown = same(twins, "runtimes", "show", "executorch@1.3.0", timed=True)  # "added <minute>" each side wrote
    # the sources are named as the user named them, not by the server's temporary paths
    assert "1.3.0-portable-functions.yaml (kernel-yaml" in shown and "opgov-upload" not in shown
    assert "unknown runtime executorch@9" in same(twins, "runtimes", "show", "executorch@9", code=2)
    same(twins, "runtimes", "coverage")
    assert '"runtimes"' in same(twins, "runtimes", "coverage", "--format", "json")


def test_check_model_remote_like_local(twins):
    same(twins, "runtimes", "add", "executorch@1.3.0", "--ops", "1.3.0-portable-functions.yaml",
         "--ops", "1.3.0-optimized.yaml", "--released", "2026-05-26")
    # as exported, a network needs composite operators that no out= kernel gives: exit 1
    out = same(twins, "check-model", "net.pt2", "--runtime", "executorch@1.3.0", code=1)
    assert out.startswith("executorch@1.3.0 does not run net.pt2")
    ran = same(twins, "check-model", "net-core.pt2", "--runtime", "executorch@1.3.0", "--format", "json")
    assert '"runs": true' in ran and '"path": "net-core.pt2"' in ran
    same(twins, "check-model", "net-core.pt2", "net.pt2", "--runtime", "executorch@1.3.0", code=1)  # their union
    same(twins, "check-model", "net-core.pt2")  # against the registry
    same(twins, "check-model", "net-core.pt2", "--runtime", "2.13.0", "--format", "json")  # against a snapshot
    assert "kernel-yaml file is not accepted here" in same(twins, "check-model", "1.3.0-optimized.yaml", code=2)
    assert "neither a file nor" in same(twins, "check-model", "nope.pt2", code=2)
    (twins.work / "garbage.pt2").write_bytes(b"PK\x03\x04 not really a zip")
    err = same(twins, "check-model", "garbage.pt2", "--runtime", "executorch@1.3.0", code=2)
    assert err.startswith("opgov: error: garbage.pt2") and "opgov-upload" not in err


def test_upgraders_remote_like_local(twins):
    add = ["upgraders", "add", "aten::linspace", "--versions", "0-7", "--old-schema", LINSPACE_OLD,
           "--bumped-on", "2022-07-01", "--reason", "steps became required"]
    assert same(twins, *add).startswith("added linspace_0_7: aten::linspace versions 0-7")
    assert same(twins, *add).startswith("unchanged linspace_0_7")
    assert same(twins, *add, who="dev", code=1)
    assert "linspace_0_7" in same(twins, "upgraders", "list")
    assert same(twins, "upgraders", "list", "--format", "tsv").splitlines()[1].startswith("linspace_0_7\taten::linspace\t")
    assert same_json(twins, "upgraders", "list")["upgraders"][0]["name"] == "linspace_0_7"
    assert "version map:" in same(twins, "upgraders", "show", "linspace_0_7")
    assert "unknown upgrader nope" in same(twins, "upgraders", "show", "nope", code=2)
    assert "unknown operator aten::linspaec" in same(twins, "upgraders", "add", "aten::linspaec", "--versions",
                                                     "0-7", "--old-schema", LINSPACE_OLD, code=2)


def test_actor_is_refused_with_a_server(twins):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")},
           "OPGOV_TOKEN": twins.server.tokens["chair"]}
    done = subprocess.run([*OPGOV, "--server", twins.server.url, "--actor", "chair", "runtimes", "list"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and done.stderr.strip().endswith("the server acts as the member whose token "
                                                                 "OPGOV_TOKEN is")


def test_runtime_endpoints(twins):
    s = twins.server
    ops = (twins.work / "0.2.0-optimized.yaml").read_bytes()
    with s.client() as anon, s.client("dev") as dev, s.client("chair") as chair:
        form = {"runtime": "opt@0.2"}
        assert problem(anon.post("/api/v1/runtimes", data=form, files={"ops": ("o.yaml", ops)}), 401)
        assert "register runtimes" in problem(dev.post("/api/v1/runtimes", data=form, files={"ops": ("o.yaml", ops)}),
                                              403)
        big = b"- op: add.out\n" * 20_000
        assert problem(chair.post("/api/v1/runtimes", data=form, files={"ops": ("big.yaml", big)}), 413)
        added = chair.post("/api/v1/runtimes", data=form, files={"ops": ("kernels/o.yaml", ops)})
        assert added.status_code == 201, added.text
        assert added.json()["sources"][0]["path"] == "kernels/o.yaml"
        assert problem(chair.post("/api/v1/runtimes", data={"runtime": "opt@0.2"},
                                  files={"ops": ("o.yaml", b"- op: mul.out\n")}), 409)
        assert "opt@0.2" in [r["runtime"] for r in anon.get("/api/v1/runtimes").json()["runtimes"]]
        assert anon.get("/api/v1/runtimes/opt@0.2").json()["runtime"]["kernels"] > 0
        assert "unknown runtime nope@1" in problem(anon.get("/api/v1/runtimes/nope@1"), 404)
        assert "NAME@VERSION" in problem(anon.get("/api/v1/runtimes/nope"), 422)
        md = anon.get("/api/v1/runtimes/coverage", params={"format": "md"})
        assert md.headers["content-type"].startswith("text/markdown") and "opt@0.2" in md.text
        assert anon.get("/api/v1/runtimes/coverage").json()["stage"] == "core-aten"
        # check-model: the JSON list still works, against a snapshot and against a runtime
        listed = anon.post("/api/v1/check-model", json={"operators": ["aten::add.Tensor"]}).json()
        assert listed["ok"] is True and listed["operators"] == ["aten::add.Tensor"]
        on = anon.post("/api/v1/check-model", json={"operators": ["aten::add.Tensor", "aten::linear"],
                                                     "runtime": "opt@0.2"}).json()
        assert on["runtime"] == "opt@0.2" and "aten::linear" in [m["op"] for m in on["missing"]]
        archive = (twins.work / "net-core.pt2").read_bytes()
        uploaded = anon.post("/api/v1/check-model", files=[("models", ("net-core.pt2", archive))],
                             data={"runtime": "opt@0.2"}).json()
        assert uploaded["models"][0] == {"path": "net-core.pt2", "format": "pt2",
                                        "entries": len(uploaded["operators"]), "sha256": None}
        assert "upload at least one" in problem(anon.post("/api/v1/check-model", data={"runtime": "2.13.0"},
                                                          files={"other": ("x", b"y")}), 400)
        assert problem(anon.post("/api/v1/check-model", json={"operators": []}), 422)
        assert problem(anon.post("/api/v1/check-model", files=[("models", ("x.txt", b"not an op\n"))]), 400)


def test_upgrader_endpoints(twins):
    body = {"operator": "aten::linspace", "versions": "0-7", "old_schema": LINSPACE_OLD,
            "bumped_on": "2022-07-01", "reason": "steps became required"}
    with twins.server.client() as anon, twins.server.client("dev") as dev, twins.server.client("chair") as chair:
        assert problem(anon.post("/api/v1/upgraders", json=body), 401)
        assert problem(dev.post("/api/v1/upgraders", json=body), 403)
        made = chair.post("/api/v1/upgraders", json=body)
        assert made.status_code == 201 and made.json()["upgrader"]["name"] == "linspace_0_7"
        # another upgrader over the same versions is refused by policy
        assert "--replaces" in problem(chair.post("/api/v1/upgraders", json={**body, "name": "other_0_7"}), 409)
        assert "bumped_on" in problem(chair.post("/api/v1/upgraders", json={**body, "bumped_on": "soon"}), 422)
        assert anon.get("/api/v1/upgraders").json()["current_version"] >= 8
        assert anon.get("/api/v1/upgraders/linspace_0_7").json()["version_map_entry"]
        assert problem(anon.get("/api/v1/upgraders/nope"), 404)
        # its version bump is more than 180 days old: it may be replaced now, as `opgov tick` says
        assert [t["name"] for t in anon.get("/api/v1/upgraders/timers").json()["due"]] == ["linspace_0_7"]
        assert httpx.get(f"{twins.server.url}/openapi.json").json()["paths"]["/api/v1/check-model"]["post"][
            "requestBody"]["content"].keys() == {"application/json", "multipart/form-data"}


def test_governance_remote_like_local(twins):
    """The committee's writes: the same answers and exit codes through the server as locally."""
    out = same(twins, "propose-core", "aten::hardswish", "--rationale", "used by mobile models", who="dev")
    assert out.startswith("proposal 1: aten::hardswish → core")
    same(twins, "propose-decompose", "aten::hardsigmoid", "--into", "aten::clamp,aten::add.Tensor",
         "--rationale", "a composite", who="dev")
    same(twins, "propose-custom", "aten::hardswish", "--rationale", "again", who="dev", code=1)  # one open at a time
    same(twins, "review", "1", "--approve", "--comment", "mine", who="dev", code=1)  # developers do not vote
    same(twins, "review", "1", "--reject", "--comment", "not yet")
    same(twins, "review", "99", "--approve", "--comment", "x", code=2)
    assert same(twins, "withdraw", "2", who="dev") == "proposal 2 withdrawn\n"
    same(twins, "withdraw", "2", who="dev", code=1)
    same(twins, "propose-core", "aten::hardswsh", "--rationale", "typo", who="dev", code=2)
    # triage: the first snapshot's undecided operators are queued, so a dry run lists what it would
    # propose (0); a named operator that is not queued is refused (1)
    assert "aten::_foreach_" in same(twins, "triage", "custom", "--rationale", "fused kernels", "--match",
                                     "aten::_foreach_*", who="dev")
    (twins.work / "queued.txt").write_text("aten::add.Tensor  # tagged core: not queued\n")
    same(twins, "triage", "core", "--rationale", "r", "--file", "queued.txt", "--apply", who="dev", code=1)
    same(twins, "triage", "decompose", "--rationale", "r", "--match", "aten::*", who="dev", code=2)
    assert "deprecating" in same(twins, "deprecate", "aten::_foobar", "--reason", "unused", timed=True)
    same(twins, "mark-deprecated", "aten::_foobar", code=1, timed=True)  # too early: names the minute it may
    same(twins, "delete", "aten::_foobar", code=1)  # not deprecated
    assert same_json(twins, "undeprecate", "aten::_foobar", "--reason", "still used", moments=("at",))["to"] == "active"
    same(twins, "deprecate", "aten::nope_op", "--reason", "x", code=2)
    same(twins, "tick", "--within", "30")
    ticked = same_json(twins, "tick", "--apply", "--within", "400", moments=("now",))
    assert ticked["applied"] == [] and [t["name"] for t in ticked["upgraders"]["due"]] == ["linspace_0_7"]
    same(twins, "tick", "--apply", who="dev", code=1)  # developers do not apply lifecycle steps


def test_checks_and_reports_remote_like_local(twins):
    from tests.conftest import SAMPLE

    for name in ("native_functions.v1.yaml", "native_functions.v2.yaml"):
        shutil.copyfile(SAMPLE / name, twins.work / name)
    out = same(twins, "check-bc", "native_functions.v1.yaml", "native_functions.v2.yaml", code=1)
    assert "native_functions.v2.yaml" in out and "opgov-upload" not in out
    same(twins, "check-bc", "native_functions.v1.yaml", "native_functions.v2.yaml", "--format", "json", code=1)
    # a side that is no file names a snapshot, here as locally: the server holds 2.13.0
    same(twins, "check-bc", "native_functions.v1.yaml", "2.13.0", code=1)
    assert same(twins, "exceptions", "add", "aten::_foreach_*", "--reason", "rework", "--expires",
                "2099-01-01").startswith("exception 1: aten::_foreach_* through 2099-01-01")
    same(twins, "exceptions", "add", "aten::x", "--reason", "r", "--expires", "2000-01-01", code=2)
    same(twins, "exceptions", "add", "aten::x", "--reason", "r", "--expires", "2099-01-01", who="dev", code=1)
    assert same_json(twins, "exceptions", "list")[0]["pattern"] == "aten::_foreach_*"
    assert "\taten::_foreach_*\t" in same(twins, "exceptions", "list", "--format", "tsv").splitlines()[1]
    same(twins, "report", "weekly", "--as-of", "2026-06-01", "--format", "md")
    same(twins, "report", "weekly", "--as-of", "2026-06-01", "--format", "json")
    # a command without an endpoint says so in one line
    code, _, err = _run(twins, ["decisions", "export", "decisions.yaml"], remote=True)
    assert code == 2 and err.count("\n") == 1 and "does not work with --server" in err
