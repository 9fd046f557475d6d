"""The commands that gained a remote mode — `import`, `members`, `config`, `decomps list|load|import-torch`,
`check-decomps`, `opset build` and `log verify` — against a real `opgov serve` process on 127.0.0.1
(a free port), on SQLite and on PostgreSQL.

A write runs twice on two databases set up alike: through the server (as the member whose token
it carries) on one, with `--db` and `--actor` on the other; a user sees the same output, the same
one line on stderr and the same exit code. A read runs with `--server` and with `--db` on the
served database itself. Roles are the server's: a developer's token cannot do a maintainer's
write, no token cannot write at all, and neither writes anything."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import httpx
import pytest

from tests.api.test_api_serve import TAGS, V1, V2, _database, opgov, problem, run_cli, start

MEMBERS = (("m2", "maintainer"), ("dev", "developer"), ("bot", "bot"))


def _setup(db: str) -> dict[str, str]:
    """v1 imported; chair (the first maintainer), m2, dev and bot, each with a token."""
    opgov(db, "db", "upgrade", "--simulation")
    opgov(db, "import", str(V1), "--label", "v1")
    tokens = {"chair": opgov(db, "tokens", "create", "chair", actor="chair").strip()}
    for name, role in MEMBERS:
        opgov(db, "members", "add", name, "--role", role, actor="chair")
        tokens[name] = opgov(db, "tokens", "create", name, actor="chair").strip()
    return tokens


def serve_twins(kind: str, tmp_path_factory, prepare=lambda db: None):
    """Yield (the served database's server, a twin database set up alike that is used locally),
    each set up by :func:`_setup` and then ``prepare(db)``."""
    for served_db in _database(kind, tmp_path_factory):
        for local_db in _database(kind, tmp_path_factory):
            tokens = _setup(served_db)
            _setup(local_db)
            for db in (served_db, local_db):
                prepare(db)
            served = start(served_db)
            served.tokens = tokens
            try:
                yield served, local_db
            finally:
                served.stop()


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def twins(request, tmp_path_factory):
    """(the served database, its server, a twin database set up alike that is used locally)."""
    yield from serve_twins(request.param, tmp_path_factory)


def remotely(server, who: str | None, *args: str):
    return run_cli("--server", server.url, *args, env={"OPGOV_TOKEN": server.tokens[who]} if who else None)


def locally(db: str, who: str | None, *args: str):
    return run_cli("--db", db, *(["--actor", who] if who else []), *args)


def same(remote, local) -> None:
    assert (remote.returncode, remote.stdout, remote.stderr) == (local.returncode, local.stdout, local.stderr)
    assert "Traceback" not in remote.stderr
    assert remote.stderr.count("\n") <= 1, remote.stderr  # an error is one line


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("files")

    def rules(name: str, source: str, body: list[str]) -> Path:
        path = folder / name
        path.write_text("\n".join(["format: 1", f"source: {source}", "rules:", *body]) + "\n")
        return path

    broken = folder / "broken_native_functions.yaml"
    broken.write_text(V2.read_text().replace("- func: glu(", "- func: glu(Tensor self -> ", 1))
    (folder / "binary.yaml").write_bytes(b"- func: a\n\xff\xfe\x00")
    (folder / "nul.yaml").write_bytes(b"- func: a\x00\n")
    (folder / "empty.yaml").write_text("  \n")
    return {
        "folder": folder, "binary": folder / "binary.yaml", "nul": folder / "nul.yaml", "empty": folder / "empty.yaml",
        "rules": rules("rules.yaml", "our-backend", ["  - {op: aten::layer_norm, into: [aten::mul.Tensor, aten::add.Tensor]}",
                                                    "  - {op: aten::var, into: [aten::mul.Tensor]}"]),
        # glu is custom, not core: a decomposition would end in a non-core operator
        "breaking": rules("breaking.yaml", "breaking", ["  - {op: aten::chunk, into: [aten::glu]}"]),
        "unknown": rules("unknown.yaml", "unknown", ["  - {op: aten::chunk, into: [aten::nope]}"]),
        "missing": folder / "no-such-rules.yaml",
        "broken": broken,
    }


# --- writes: the same through the server as locally -------------------------------------------------


WRITES = [
    ("chair", "members", "add", "eve", "--role", "developer"),
    ("chair", "members", "add", "eve", "--role", "developer"),        # already a member: refused, 1
    ("dev", "members", "add", "mallory", "--role", "maintainer"),     # a developer may not: 1
    ("chair", "members", "add", "zed", "--role", "wizard"),           # bad input: 2
    ("chair", "members", "add", "  ", "--role", "developer"),         # bad input: 2
    ("dev", "members", "remove", "eve"),                              # 1
    ("chair", "members", "remove", "eve"),
    ("chair", "members", "remove", "eve"),                            # unknown member: 2
    ("chair", "config", "set", "quorum", "3"),
    ("dev", "config", "set", "quorum", "1"),                          # 1
    ("bot", "config", "set", "deprecating_days", "1"),                # 1
    ("chair", "config", "set", "quorum", "many"),                     # 2
    ("chair", "config", "set", "quorum", "0"),                        # 2
    ("chair", "config", "set", "sunrise", "3"),                       # 2
    ("chair", "config", "set", "quorum", "2"),
    ("dev", "decomps", "load", "{rules}"),                            # 1
    ("chair", "decomps", "load", "{rules}"),
    ("chair", "decomps", "load", "{rules}", "--json"),                # unchanged
    ("chair", "decomps", "load", "{breaking}"),                       # refused with the path: 1
    ("chair", "decomps", "load", "{unknown}"),                        # file:line: 2
    ("chair", "decomps", "load", "{missing}"),                        # 2
    ("chair", "decomps", "load", "{broken}"),                         # not a rules file: 2
    *[("chair", "decomps", "load", "{%s}" % bad) for bad in ("folder", "binary", "nul", "empty")],  # 2
    *[("bot", "import", "{%s}" % bad, "--label", "v2") for bad in ("folder", "binary", "nul", "empty")],  # 2
    ("bot", "import", str(V2), "--tags-yaml", "{nul}", "--label", "v2"),                                # 2
    ("dev", "import", str(V2), "--tags-yaml", str(TAGS), "--label", "v2"),   # a developer may not: 1
    ("bot", "import", "{broken}", "--label", "v2"),                   # file:line: 2
    ("bot", "import", str(V2), "--tags-yaml", "{missing}", "--label", "v2"),  # 2
    ("bot", "import", str(V2), "--tags-yaml", str(TAGS), "--label", "v2"),
    ("bot", "import", str(V2), "--tags-yaml", str(TAGS), "--label", "v2"),   # identical content again
    ("bot", "import", str(V1), "--label", "v1.5"),                    # older than v2: refused, 1
    ("bot", "import", str(V1), "--label", "v1.5", "--historical"),
    ("bot", "import", str(V2), "--tags-yaml", str(TAGS), "--label", "v1.7", "--historical", "--json"),
    ("dev", "decomps", "import-torch", "--only", "aten::layer_norm"),  # 1
    ("chair", "decomps", "import-torch", "--only", "aten::nope"),     # 2
]


def test_writes_give_the_local_output(twins, files):
    server, local_db = twins
    for who, *args in WRITES:
        args = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
        remote, local = remotely(server, who, *args), locally(local_db, who, *args)
        same(remote, local)
        assert "does not work with --server" not in remote.stderr
    # both databases hold the same governance now
    for args in (("members", "list"), ("config", "list", "--json"), ("decomps", "list"), ("ops", "list", "--json")):
        assert locally(server.db, None, *args).stdout == locally(local_db, None, *args).stdout


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None, reason="the refusal without torch")
def test_import_torch_without_torch_on_either_side(twins):
    server, local_db = twins
    args = ("decomps", "import-torch", "--only", "aten::layer_norm")
    remote, local = remotely(server, "chair", *args), locally(local_db, "chair", *args)
    same(remote, local)
    assert remote.returncode == 2 and "torch is not installed" in remote.stderr


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch not available")
def test_import_torch_traces_on_the_server(twins):
    server, local_db = twins
    # one trace each side (seconds of torch's start-up apiece); a write's --json, remote like
    # local, is test_writes_give_the_local_output's
    args = ("decomps", "import-torch", "--only", "aten::layer_norm", "--only", "aten::var", "--only", "aten::chunk")
    remote, local = remotely(server, "chair", *args), locally(local_db, "chair", *args)
    same(remote, local)
    assert remote.returncode == 0 and "aten::chunk" in remote.stdout + remote.stderr
    assert locally(server.db, None, "decomps", "list").stdout == locally(local_db, None, "decomps", "list").stdout
    # the closure proof of what was traced: a read, the same with --server as with --db
    for args in (("decomps", "closure"), ("decomps", "closure", "--json"), ("decomps", "closure", "--not-closed",
                 "--format", "tsv"), ("decomps", "closure", "--against", "v1"), ("decomps", "closure", "--release", "0.1")):
        remote, local = remotely(server, None, *args), locally(server.db, None, *args)
        same(remote, local)
        assert remote.returncode == (2 if "0.1" in args else 0), remote.stderr
    closure = json.loads(remotely(server, None, "decomps", "closure", "--json").stdout)
    latest = json.loads(locally(server.db, None, "snapshots", "--json").stdout)[-1]["label"]  # v2 after the writes
    assert closure["complete"] is False and closure["snapshot"] == latest and len(closure["items"]) > 800


def test_the_trace_budget_is_bounded_over_http_only(twins):
    """A request is not the place for a long trace (120 s at most); a local run may take longer."""
    server, local_db = twins
    with server.client("chair") as chair:
        assert "less than or equal to 120" in problem(
            chair.post("/api/v1/decomps/import-torch", json={"budget": 121, "only": ["aten::nope"]}), 422)
    refused = remotely(server, "chair", "decomps", "import-torch", "--budget", "300", "--only", "aten::var")
    assert refused.returncode == 2 and "budget" in refused.stderr and "120" in refused.stderr
    # in-process the request goes on: to the operator it names, which the registry does not know
    local = locally(local_db, "chair", "decomps", "import-torch", "--budget", "300", "--only", "aten::nope")
    assert local.returncode == 2 and "aten::nope" in local.stderr and "budget" not in local.stderr


def test_no_token_cannot_write(twins, files):
    server, _ = twins
    before = locally(server.db, None, "log", "--json", "--limit", "0").stdout
    for args in (("members", "add", "eve", "--role", "developer"), ("config", "set", "quorum", "1"),
                 ("decomps", "load", str(files["rules"])), ("import", str(V2), "--label", "v9")):
        refused = remotely(server, None, *args)
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr == ("opgov: error: this request changes governance: it needs `Authorization: Bearer "
                                  "<token>` (see `opgov tokens create`)\n")
    assert locally(server.db, None, "log", "--json", "--limit", "0").stdout == before  # nothing written


def test_a_developer_token_cannot_do_a_maintainers_write_over_http(twins, files):
    server, _ = twins
    with server.client("dev") as dev:
        assert "dev (developer) may not add members" in problem(
            dev.post("/api/v1/members", json={"name": "x", "role": "maintainer"}), 403)
        assert "may not remove members" in problem(dev.delete("/api/v1/members/m2"), 403)
        assert "may not change settings" in problem(dev.put("/api/v1/config/quorum", json={"value": 1}), 403)
        assert "may not change decomposition rules" in problem(
            dev.post("/api/v1/decomps", files={"rules": ("rules.yaml", files["rules"].read_bytes())}), 403)
        assert problem(dev.post("/api/v1/decomps/import-torch", json={"only": ["aten::var"]}), 403)
        assert problem(dev.post("/api/v1/snapshots", data={"label": "v9"},
                                files={"native_functions": ("nf.yaml", V2.read_bytes())}), 403)
    with server.client("chair") as chair:
        assert problem(chair.put("/api/v1/config/quorum", json={}), 422)
        assert "greater than or equal to 1" in problem(chair.put("/api/v1/config/quorum", json={"value": 0}), 422)
        assert "quorum must be between 1 and 100" in problem(chair.put("/api/v1/config/quorum", json={"value": 101}), 400)
        assert problem(chair.post("/api/v1/members", json={"name": "x"}), 422)
        assert problem(chair.post("/api/v1/decomps/import-torch", json={"budget": -1}), 422)
        assert problem(chair.post("/api/v1/decomps", files={"rules": ("r.yaml", b"\x00\x01")}), 400)
        huge = {"rules": ("r.yaml", b"#" * 300_000)}
        assert problem(chair.post("/api/v1/decomps", files=huge), 413)
    with httpx.Client(base_url=server.url) as anyone:
        settings = anyone.get("/api/v1/config").json()
        assert settings == {"quorum": 2, "deprecating_days": 14, "deprecated_days": 180, "simulation": True}
        assert [m["name"] for m in anyone.get("/api/v1/members").json()] == ["bot", "chair", "dev", "m2"]


# --- reads: the same through the server as with --db on the served database -------------------------------


READS = [
    ("members", "list"), ("members", "list", "--json"), ("config", "list"), ("config", "list", "--json"),
    ("decomps", "list"), ("decomps", "list", "--json"),
    ("members", "list", "--format", "tsv"), ("members", "list", "--format", "json"),
    ("decomps", "list", "--format", "tsv"), ("decomps", "list", "--format", "table"),
    ("check-decomps",), ("check-decomps", "--format", "json"), ("check-decomps", "--format", "github"),
    ("opset", "build"), ("opset", "build", "--format", "json"), ("opset", "build", "--format", "selective-build"),
    ("opset", "build", "--format", "python"), ("opset", "build", "--preset", "no-decomp", "--keep", "aten::var"),
    ("opset", "build", "--preset", "full-decomp", "--format", "json"),
    ("opset", "build", "--decompose", "aten::layer_norm", "--decompose", "aten::var", "--format", "selective-build"),
    ("opset", "build", "--decompose", "aten::nope"),                                    # bad input: 2
    ("log", "verify"), ("log", "verify", "--json"),
]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a))
def test_reads_give_the_local_output(twins, args):
    server, _ = twins
    local = locally(server.db, None, *args)
    same(remotely(server, "dev", *args), local)
    via_env = run_cli(*args, env={"OPGOV_SERVER": server.url})  # reads are public: no token needed
    assert (via_env.returncode, via_env.stdout) == (local.returncode, local.stdout)


def test_the_new_reads_over_http(twins):
    server, _ = twins
    with server.client() as anyone:
        verified = anyone.get("/api/v1/events/verify").json()
        assert verified["intact"] is True and verified["broken"] is None and len(verified["head"]) == 64
        checked = anyone.get("/api/v1/decomps/check").json()
        assert checked["errors"] == 0 and checked["warnings"] == len(checked["violations"]) > 0
        assert {r["operator"] for r in anyone.get("/api/v1/decomps").json()} >= {"aten::layer_norm", "aten::var"}
        yaml_text = anyone.get("/api/v1/opset", params={"format": "selective-build", "decompose": "aten::var"})
        assert yaml_text.headers["content-type"].startswith("application/yaml")
        assert yaml_text.text.startswith("# selected operators: opgov opset core-aten; decompose aten::var")
        python = anyone.get("/api/v1/opset", params={"format": "python"})
        assert python.headers["content-type"].startswith("text/x-python") and "decomp_table" in python.text
        assert problem(anyone.get("/api/v1/opset", params={"format": "pdf"}), 422)
        assert "aten::nope" in problem(anyone.get("/api/v1/opset", params={"decompose": "aten::nope"}), 404)


def test_a_corpus_is_refused_with_server(twins, tmp_path):
    server, _ = twins
    for args in (("opset", "build", "--models", str(tmp_path)), ("check-decomps", "--models", str(tmp_path))):
        refused = remotely(server, "dev", *args)
        assert refused.returncode == 2
        assert refused.stderr == ("opgov: error: --models with --server: a corpus on this machine cannot be read by "
                                  "the server; run it with --db\n")


def test_the_rules_and_the_log_name_the_file_as_the_client_did(twins, files):
    server, _ = twins
    rules = json.loads(remotely(server, "dev", "decomps", "list", "--json").stdout)
    assert {r["detail"] for r in rules if r["operator"] == "aten::layer_norm"} == {f"our-backend ({files['rules']})"}
    events = json.loads(locally(server.db, None, "log", "--json", "--limit", "0").stdout)
    loads = [e for e in events if e["action"] == "decomps.load"]
    assert [e["subject"] for e in loads] == [f"file:{files['rules']}"] * 2
    assert all(e["actor"] == "chair" and e["token"] is not None for e in loads)


def test_log_verify_finds_a_broken_chain_through_the_server(twins):
    """Last: it rewrites an event of the served database behind opgov's back."""
    server, _ = twins
    from sqlalchemy import create_engine, text

    from opgov.db.engine import resolve_url

    lift = ("DROP TRIGGER events_no_update" if server.db.startswith("sqlite")
            else "ALTER TABLE events DISABLE TRIGGER events_append_only")
    engine = create_engine(resolve_url(server.db))
    try:
        with engine.begin() as conn:
            conn.execute(text(lift))
            conn.execute(text("UPDATE events SET reason = 'nobody objected' WHERE action = 'config.set'"))
    finally:
        engine.dispose()
    for args in (("log", "verify"), ("log", "verify", "--json")):
        local, remote = locally(server.db, None, *args), remotely(server, "dev", *args)
        same(remote, local)
        assert remote.returncode == 1
    assert "chain broken at event" in remote.stdout or '"intact": false' in remote.stdout


def test_check_bc_by_snapshot_label_with_a_server(twins, tmp_path):
    """The server holds the snapshots: `check-bc v1 v2 --server` answers as `--db` does, and a
    file on one side is uploaded while the other names a snapshot."""
    server, local_db = twins
    for db in (server.db, local_db):  # imported alike on both sides (not uploaded): the same source
        opgov(db, "import", str(V2), "--label", "v2-by-path", actor="chair")
    for args in (("v1", "v2-by-path"), ("v1", "v2-by-path", "--format", "json")):
        same(remotely(server, None, "check-bc", *args), locally(local_db, None, "check-bc", *args))
    for args in (("v1", str(V2)), (str(V1), "v2-by-path")):  # a file is uploaded, and named as the upload it is
        remote, local = remotely(server, None, "check-bc", *args), locally(local_db, None, "check-bc", *args)
        assert remote.returncode == local.returncode == 1
        assert remote.stdout.splitlines()[-1] == local.stdout.splitlines()[-1]  # the same verdicts
    unknown = remotely(server, None, "check-bc", "v1", "v9")
    assert unknown.returncode == 2 and "v9: no snapshot of that label (known: v1, " in unknown.stderr
    git = remotely(server, None, "check-bc", "git:HEAD", "v2-by-path")
    assert git.returncode == 2 and "git: refs work only" in git.stderr
