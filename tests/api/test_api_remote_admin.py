"""The last commands that gained a remote mode (issue 13) — `exceptions remove`, `tokens
create|list|revoke`, `decisions load` and `sync-yaml` — against a real `opgov serve` on 127.0.0.1,
on SQLite and on PostgreSQL, compared as tests/api/test_api_remote.py compares: a write runs
through the server on one database and with `--db` on its twin, a read with `--server` and with
`--db` on the served database; output, the one line on stderr and the exit code are the same."""

from __future__ import annotations

import json
import re

import pytest

from tests.api.test_api_remote import locally, remotely, same, serve_twins
from tests.api.test_api_serve import opgov, problem


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def twins(request, tmp_path_factory):
    """(the served database, its server, a twin database set up alike that is used locally), each
    with two BC exceptions."""
    def exceptions(db: str) -> None:
        for pattern in ("aten::_foreach_*", "aten::_fft_*"):
            opgov(db, "exceptions", "add", pattern, "--reason", "moving", "--expires", "2099-12-31", actor="chair")

    yield from serve_twins(request.param, tmp_path_factory, exceptions)


def _log(db: str) -> str:
    return locally(db, None, "log", "--json", "--limit", "0").stdout


# --- exceptions remove ----------------------------------------------------------------------------


EXCEPTION_REMOVALS = [
    ("dev", "1"),             # a developer may not: 1
    ("chair", "1"),
    ("chair", "1"),           # already removed: 1 (refused by its state)
    ("chair", "99"),          # unknown: 2
    ("chair", "99999999999"),  # unknown: 2
    ("bot", "2"),             # a bot may not: 1
]


def test_exceptions_remove_gives_the_local_output(twins):
    server, local_db = twins
    for who, exception in EXCEPTION_REMOVALS:
        remote = remotely(server, who, "exceptions", "remove", exception)
        same(remote, locally(local_db, who, "exceptions", "remove", exception))
        assert "does not work with --server" not in remote.stderr
    listed = ("exceptions", "list", "--all")
    assert locally(server.db, None, *listed).stdout == locally(local_db, None, *listed).stdout
    removed = json.loads(locally(server.db, None, *listed, "--json").stdout)
    assert [e["removed"] for e in removed] == [True, False]


def test_exceptions_remove_over_http(twins):
    server, _ = twins
    before = _log(server.db)
    with server.client("dev") as dev:
        assert "dev (developer) may not remove BC exceptions" in problem(dev.delete("/api/v1/exceptions/2"), 403)
    with server.client("chair") as chair:
        assert problem(chair.delete("/api/v1/exceptions/1234"), 404) == \
            "unknown exception 1234 (see `opgov exceptions list`)"
        assert problem(chair.delete("/api/v1/exceptions/x"), 404)  # an id is digits: no such route
    with server.client() as anyone:
        assert problem(anyone.delete("/api/v1/exceptions/2"), 401)
    assert _log(server.db) == before  # nothing written


# --- tokens ---------------------------------------------------------------------------------------


def _masked(text: str) -> str:
    """A token's secret and expiry time differ between two runs: the rest must not."""
    text = re.sub(r"opgov_[A-Za-z0-9_-]+", "opgov_<secret>", text)
    return re.sub(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?Z)?", "<time>", text)


TOKEN_WRITES = [
    ("dev", "tokens", "create", "dev"),                        # a developer may not: 1
    ("bot", "tokens", "create", "bot", "--expires", "3"),      # nor a bot: 1
    ("chair", "tokens", "create", "nobody"),                   # unknown member: 2
    ("chair", "tokens", "create", "dev", "--expires", "0"),    # 2
    ("chair", "tokens", "create", "dev", "--expires", "99999999999"),  # 2
    ("chair", "tokens", "create", "dev", "--expires", "30"),   # token 5
    ("chair", "tokens", "create", "m2", "--json"),             # token 6
    ("dev", "tokens", "revoke", "1"),                          # another member's: 1
    ("dev", "tokens", "revoke", "5"),                          # their own
    ("dev", "tokens", "revoke", "5"),                          # again: 1
    ("chair", "tokens", "revoke", "6", "--json"),              # a maintainer, anyone's
    ("chair", "tokens", "revoke", "99"),                       # unknown: 2
    ("chair", "tokens", "revoke", "99999999999"),              # unknown: 2
]


def test_tokens_give_the_local_output(twins):
    server, local_db = twins
    for who, *args in TOKEN_WRITES:
        remote, local = remotely(server, who, *args), locally(local_db, who, *args)
        assert (remote.returncode, _masked(remote.stdout), _masked(remote.stderr)) == \
               (local.returncode, _masked(local.stdout), _masked(local.stderr)), args
        assert "Traceback" not in remote.stderr and remote.stderr.count("\n") <= 1
        if args[1] == "create" and remote.returncode == 0:  # a new secret, printed once
            assert remote.stdout != local.stdout and re.search(r"opgov_[A-Za-z0-9_-]{40,}", remote.stdout)
    # the token made through the server works there, as its member
    created = json.loads(remotely(server, "chair", "tokens", "create", "m2", "--json").stdout)
    assert created["member"] == "m2" and created["state"] == "active"
    mine = run_with_token(server, created["token"], "tokens", "list", "--member", "m2", "--json")
    assert [t["id"] for t in json.loads(mine.stdout)] == [2, 6, created["id"]]
    # both databases hold the same tokens (their states, members and makers)
    def states(db):
        return [(t["id"], t["member"], t["state"], t["created_by"])
                for t in json.loads(locally(db, "chair", "tokens", "list", "--json").stdout)]
    assert states(server.db)[:-1] == states(local_db)


def run_with_token(server, token: str, *args: str):
    from tests.api.test_api_serve import run_cli

    return run_cli("--server", server.url, *args, env={"OPGOV_TOKEN": token})


TOKEN_READS = [
    ("chair", "tokens", "list"), ("chair", "tokens", "list", "--json"), ("chair", "tokens", "list", "--format", "tsv"), ("chair", "tokens", "list", "--member", "dev"),
    ("dev", "tokens", "list", "--member", "dev"), ("dev", "tokens", "list", "--member", "dev", "--json"),
    ("dev", "tokens", "list"),                                 # others' tokens: 1
    ("bot", "tokens", "list", "--member", "chair"),            # 1
]


@pytest.mark.parametrize("read", TOKEN_READS, ids=lambda a: " ".join(a))
def test_token_reads_give_the_local_output(twins, read):
    server, _ = twins
    who, *args = read
    same(remotely(server, who, *args), locally(server.db, who, *args))


def test_tokens_over_http_never_show_a_secret(twins):
    server, _ = twins
    before = _log(server.db)
    with server.client("chair") as chair:
        listed = chair.get("/api/v1/tokens")
        assert listed.status_code == 200 and listed.json()
        text = listed.text
        for secret in server.tokens.values():
            assert secret not in text and secret.removeprefix("opgov_") not in text
        assert all(set(t) == {"id", "member", "created_at", "created_by", "expires_at", "revoked_at", "state"}
                   for t in listed.json())
        assert problem(chair.post("/api/v1/tokens", json={}), 422)
        assert "unknown member 'x'" in problem(chair.post("/api/v1/tokens", json={"member": "x"}), 404)
        assert problem(chair.delete("/api/v1/tokens/4321"), 404)
    with server.client("dev") as dev:
        assert "dev (developer) may not create API tokens" in problem(
            dev.post("/api/v1/tokens", json={"member": "dev"}), 403)
        assert problem(dev.get("/api/v1/tokens"), 403)
        assert problem(dev.delete("/api/v1/tokens/1"), 403)
    with server.client() as anyone:
        assert problem(anyone.post("/api/v1/tokens", json={"member": "dev"}), 401)
        assert problem(anyone.get("/api/v1/tokens"), 401)  # no token: never a member
    assert _log(server.db) == before


# --- decisions load -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def decision_files(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("decisions")

    def decisions(name: str, body: list[str], source: bool = True) -> str:
        path = folder / name
        path.write_text("\n".join([*(["source: our review"] if source else []), "decided_at: 2024-01-02",
                                   "decided_by: [chair]", "decisions:", *body]) + "\n")
        return str(path)

    (folder / "binary.yaml").write_bytes(b"decisions:\n\xff\xfe\x00")
    (folder / "nul.yaml").write_bytes(b"decisions: []\x00\n")
    (folder / "empty.yaml").write_text("  \n")
    return {
        "folder": str(folder), "binary": str(folder / "binary.yaml"), "nul": str(folder / "nul.yaml"),
        "empty": str(folder / "empty.yaml"), "missing": str(folder / "no-such.yaml"),
        # no source: the file's name (as the client gave it) is the source
        "ours": decisions("ours.yaml", ["  - {op: aten::roll, category: custom, rationale: odd one out}"], source=False),
        "unknown": decisions("unknown.yaml", ["  - {op: aten::roll, category: custom, rationale: fine}",
                                              "  - {op: aten::nope, category: core, rationale: no such}"]),
        "category": decisions("category.yaml", ["  - {op: aten::roll, category: maybe, rationale: unsure}"]),
        "target": decisions("target.yaml", ["  - {op: aten::roll, category: decomposable, into: [aten::nope],"
                                            " rationale: into nothing}"]),
        "not-decisions": decisions("no-list.yaml", []),
    }


DECISION_LOADS = [
    ("dev", "core-aten-review-2023"),       # a developer may not: 1
    ("bot", "core-aten-review-2023"),       # nor a bot: 1
    ("chair", "core-aten-review-2023"),
    ("chair", "core-aten-review-2023"),     # already recorded
    ("chair", "{ours}"),
    ("chair", "{ours}", "--json"),          # already recorded
    ("chair", "{unknown}"),                 # an operator the database lacks: skipped and named, the rest recorded
    ("chair", "{target}", "--json"),        # a target the database lacks: that decision skipped and named
    *[("chair", "{%s}" % bad) for bad in ("category", "not-decisions", "missing", "folder",
                                           "binary", "nul", "empty")],  # file:line or the file: 2
    ("chair", "no-such-review-2023"),       # neither a file nor a shipped name: 2
]


def test_decisions_load_gives_the_local_output(twins, decision_files):
    server, local_db = twins
    for who, *args in DECISION_LOADS:
        args = ["decisions", "load", *[a.format(**decision_files) for a in args]]
        before = _log(server.db)
        remote = remotely(server, who, *args)
        same(remote, locally(local_db, who, *args))
        assert "does not work with --server" not in remote.stderr
        if remote.returncode:
            assert _log(server.db) == before  # nothing written
            if args[2] in decision_files.values():  # the file as the client named it
                assert args[2] in remote.stderr and "opgov-upload-" not in remote.stderr
    for shown in (("ops", "show", "aten::roll"), ("ops", "list", "--category", "core")):
        assert locally(server.db, None, *shown).stdout == locally(local_db, None, *shown).stdout
    roll = json.loads(locally(server.db, None, "ops", "show", "aten::roll", "--json").stdout)
    assert decision_files["ours"] in json.dumps(roll)  # the source recorded is the client's file name


def test_decisions_over_http(twins, decision_files):
    server, _ = twins
    before = _log(server.db)
    with server.client("dev") as dev:
        assert "dev (developer) may not load decisions" in problem(
            dev.post("/api/v1/decisions", data={"shipped": "core-aten-review-2023"}), 403)
    with server.client("chair") as chair:
        assert problem(chair.post("/api/v1/decisions", data={}), 400)
        assert "Input should be 'core-aten-review-2023'" in problem(chair.post("/api/v1/decisions", data={"shipped": "x"}),
                                                                   422)
        bad = chair.post("/api/v1/decisions", files={"decisions": ("mine/category.yaml",
                                                                   open(decision_files["category"], "rb").read())})
        assert problem(bad, 400).startswith("mine/category.yaml:5: category of aten::roll must be one of")
        again = chair.post("/api/v1/decisions", data={"shipped": "core-aten-review-2023"})
        assert again.status_code == 201 and again.json()["recorded"] == 0
        assert _log(server.db) == before
        # a decision on an operator the database does not know is skipped and named, never the whole file
        lacking = chair.post("/api/v1/decisions", files={"decisions": ("mine/unknown.yaml",
                                                                       open(decision_files["unknown"], "rb").read())})
        assert lacking.status_code == 201, lacking.text
        skipped = lacking.json()["skipped"]
        assert list(skipped) == ["aten::nope"] and skipped["aten::nope"].startswith(
            "mine/unknown.yaml:6: unknown operator aten::nope; did you mean ")


# --- sync-yaml ------------------------------------------------------------------------------------


def _tree(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _sync_files(folder) -> None:
    """f/: native_functions.yaml with its tags.yaml; g/: no tags.yaml beside; h/: a tags.yaml that does
    not declare `core`; crlf/: Windows line endings; locked/: a lock file left behind; bad files."""
    from tests.api.test_api_serve import TAGS, V1

    text, tags = V1.read_text(), TAGS.read_text()
    for name in ("f", "g", "h", "crlf", "locked"):
        (folder / name).mkdir()
        (folder / name / "native_functions.yaml").write_text(text)
    for name in ("f", "crlf", "locked"):
        (folder / name / "tags.yaml").write_text(tags)
    (folder / "h" / "tags.yaml").write_text(tags.replace("- tag: core\n", "- tag: kernel_core\n", 1))
    (folder / "crlf" / "native_functions.yaml").write_bytes(text.replace("\n", "\r\n").encode())
    (folder / "locked" / "native_functions.yaml.lock").write_text("")
    (folder / "stale").mkdir()  # out of sync (a core operator without its tag), and locked
    (folder / "stale" / "native_functions.yaml").write_text(text.replace("  tags: core\n", "", 1))
    (folder / "stale" / "tags.yaml").write_text(tags)
    (folder / "stale" / "native_functions.yaml.lock").write_text("")
    (folder / "broken.yaml").write_text(text.replace("- func: glu(", "- func: glu(Tensor self -> ", 1))
    (folder / "stray.yaml").write_text(text.replace("  tags: core\n", "  tags: [core, sparkly]\n", 1))
    (folder / "binary.yaml").write_bytes(b"- func: a\n\x00")


def run_in(folder, *args: str, env: dict[str, str] | None = None):
    """run_cli in ``folder``: files are named the same way (relative) in every run."""
    import os

    from tests.conftest import opgov_in_process

    clean = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_") or k in ("OPGOV_SHARED_DIR", "OPGOV_FORCE_TTY")}
    return opgov_in_process(args, cwd=folder, env={**clean, "COLUMNS": "160", **(env or {})})


def _remote_in(folder, server, who, *args):
    return run_in(folder, "--server", server.url, *args, env={"OPGOV_TOKEN": server.tokens[who]} if who else None)


def _local_in(folder, db, who, *args):
    return run_in(folder, "--db", db, *(["--actor", who] if who else []), *args)


SYNC_READS = [
    ("f/native_functions.yaml", "--check"), ("f/native_functions.yaml", "--check", "--json"),
    ("f/native_functions.yaml", "--diff"), ("f/native_functions.yaml", "--diff", "--json"),
    ("f/native_functions.yaml", "--tags-yaml", "f/tags.yaml", "--check"),
    ("g/native_functions.yaml", "--check"),                     # no tags.yaml: not checked
    ("h/native_functions.yaml", "--diff"),                      # tags.yaml gains `core`
    ("h/native_functions.yaml", "--check"),
    ("crlf/native_functions.yaml", "--diff"),
    ("f/native_functions.yaml", "--tags-yaml", "missing.yaml", "--check"),   # 2
    ("missing.yaml", "--check"), ("broken.yaml", "--check"), ("binary.yaml", "--diff"), ("f", "--check"),  # 2
    ("stray.yaml", "--tags-yaml", "f/tags.yaml", "--check"),    # an undeclared tag, file:line: 2
    ("f/native_functions.yaml",), ("f/native_functions.yaml", "--check", "--diff"),  # one mode: 2
]


@pytest.fixture(scope="module")
def sync_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sync")
    _sync_files(folder)
    return folder


@pytest.mark.parametrize("args", SYNC_READS, ids=lambda a: " ".join(a))
def test_sync_yaml_checks_give_the_local_output(twins, sync_folder, args):
    server, _ = twins
    before = _tree(sync_folder)
    for who in ("dev", None):  # a check needs no role, nor a token
        remote = _remote_in(sync_folder, server, who, "sync-yaml", *args)
        same(remote, _local_in(sync_folder, server.db, who, "sync-yaml", *args))
        assert "does not work with --server" not in remote.stderr
    assert _tree(sync_folder) == before


def _here(text: str, folder) -> str:
    return re.sub(r"\d+ s old", "N s old", text.replace(str(folder), "<here>"))


SYNC_WRITES = [
    ("dev", "f/native_functions.yaml", "--write"),              # a developer may not: 1
    (None, "f/native_functions.yaml", "--write"),               # no token (remote) / not a member: 2 / 1
    ("bot", "g/native_functions.yaml", "--write"),              # no tags.yaml to declare `core` in: 2
    ("bot", "locked/native_functions.yaml", "--write"),         # in sync: the lock left behind does not matter
    ("bot", "stale/native_functions.yaml", "--write"),          # a lock left behind: 2, nothing logged
    ("bot", "stray.yaml", "--tags-yaml", "f/tags.yaml", "--write"),  # 2
    ("bot", "f/native_functions.yaml", "--write"),
    ("bot", "f/native_functions.yaml", "--write"),              # in sync now
    ("chair", "h/native_functions.yaml", "--write", "--json"),  # both files
    ("bot", "crlf/native_functions.yaml", "--tags-yaml", "crlf/tags.yaml", "--write"),
    ("bot", "crlf/native_functions.yaml", "--check"),
]


def test_sync_yaml_write_writes_here_as_locally(twins, tmp_path):
    server, local_db = twins
    remote_dir, local_dir = tmp_path / "remote", tmp_path / "local"
    for folder in (remote_dir, local_dir):
        folder.mkdir()
        _sync_files(folder)
    for who, *args in SYNC_WRITES:
        before = _log(server.db)
        remote = _remote_in(remote_dir, server, who, "sync-yaml", *args)
        local = _local_in(local_dir, local_db, who, "sync-yaml", *args)
        if who is None:  # the server wants a token for a write; locally the OS user is no member
            assert remote.returncode == 2 and "needs `Authorization: Bearer <token>`" in remote.stderr
            assert local.returncode == 1
        else:  # a lock's message names it by its absolute path and its age
            assert (remote.returncode, remote.stdout, _here(remote.stderr, remote_dir)) == \
                   (local.returncode, local.stdout, _here(local.stderr, local_dir)), args
            assert "Traceback" not in remote.stderr and remote.stderr.count("\n") <= 1
        if remote.returncode:
            assert _log(server.db) == before
        assert _tree(remote_dir) == _tree(local_dir), args  # byte for byte, lock files and all
    assert (remote_dir / "crlf" / "native_functions.yaml").read_bytes().count(b"\r\n") > 1000
    assert b"- tag: core\n" in (remote_dir / "h" / "tags.yaml").read_bytes()
    assert sorted(remote_dir.rglob("*.lock")) == [remote_dir / d / "native_functions.yaml.lock" for d in ("locked", "stale")]
    syncs = [e for e in json.loads(_log(server.db)) if e["action"] == "yaml.sync"]
    assert [(e["subject"], e["actor"]) for e in syncs] == [
        ("file:f/native_functions.yaml", "bot"), ("file:h/native_functions.yaml", "chair"),
        ("file:crlf/native_functions.yaml", "bot")]


def test_sync_yaml_over_http(twins, sync_folder):
    server, _ = twins
    before = _log(server.db)
    native = ("native_functions.yaml", (sync_folder / "h" / "native_functions.yaml").read_bytes())
    tags = ("tags.yaml", (sync_folder / "h" / "tags.yaml").read_bytes())
    with server.client() as anyone:
        checked = anyone.post("/api/v1/sync-yaml", files={"native_functions": native, "tags": tags})
        assert checked.status_code == 200
        answer = checked.json()
        assert answer["report"]["in_sync"] is False and answer["native_functions"] is None
        assert answer["report"]["tags_declared"] == ["core"]
        assert problem(anyone.post("/api/v1/sync-yaml/write", files={"native_functions": native}), 401)
        assert problem(anyone.post("/api/v1/sync-yaml", data={"mode": "write"}, files={"native_functions": native}),
                       422)
    with server.client("dev") as dev:
        assert "dev (developer) may not write native_functions.yaml" in problem(
            dev.post("/api/v1/sync-yaml/write", files={"native_functions": native}), 403)
    assert _log(server.db) == before
    with server.client("bot") as bot:
        written = bot.post("/api/v1/sync-yaml/write", files={"native_functions": native, "tags": tags}).json()
        assert written["report"]["written"] is True and written["report"]["mode"] == "write"
        assert "  tags: core\n" in written["native_functions"] and "- tag: core\n" in written["tags"]
    assert (sync_folder / "h" / "native_functions.yaml").read_bytes() == native[1]  # the server wrote nothing here


# --- what stays local -----------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("db", "upgrade"), ("db", "current"), ("db", "downgrade", "base")],
                         ids=lambda a: " ".join(a))
def test_db_commands_refuse_a_server(tmp_path, args):
    from tests.api.test_api_serve import run_cli

    db = tmp_path / "untouched.db"
    for refused in (run_cli("--server", "http://127.0.0.1:9", "--db", f"sqlite:///{db}", *args),
                    run_cli("--db", f"sqlite:///{db}", *args, env={"OPGOV_SERVER": "http://127.0.0.1:9"})):
        assert (refused.returncode, refused.stdout) == (2, "")
        assert refused.stderr == ("opgov: error: the db commands work on a database only (--db / "
                                  "OPGOV_DATABASE_URL), not with --server or OPGOV_SERVER\n")
    assert not db.exists()


def test_the_commands_left_say_which_work_with_a_server(tmp_path):
    from tests.api.test_api_serve import run_cli

    refused = run_cli("--server", "http://127.0.0.1:9", "decisions", "export", str(tmp_path / "d.yaml"))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "decisions load" in refused.stderr and "sync-yaml" in refused.stderr and "tokens" in refused.stderr
    assert not (tmp_path / "d.yaml").exists()
