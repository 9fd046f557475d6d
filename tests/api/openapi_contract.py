"""What the OpenAPI contract's test files share (tests/api/test_openapi_contract*.py): the served
world, schemathesis's command line, and what a clean run is.

schemathesis, the usual OpenAPI fuzzer, runs against a real `opgov serve` process (127.0.0.1, a
free port) on real data with a maintainer's token, and must find nothing — every answer has a
status and a body the document declares, and every request the document calls valid is accepted.
Bounded: a fixed seed and a few examples per operation.

The operations are fuzzed in four files, so `--dist loadfile` runs them on different workers:
test_openapi_contract.py (reading and checking: files, operators, decompositions, runtimes, pages),
test_openapi_contract_workbench.py (the committee's workbench: proposals, votes, triage and the
queue), test_openapi_contract_governance.py (exceptions, members and tokens, settings, events, the
clock, the report; last the routes that remove the maintainer and their token) and
test_openapi_contract_torch.py (the route that traces torch). Together they are every operation
of the document (test_openapi_contract.py checks that the groups cover it).

What no schema can say (an uploaded file's content, a date in the server's future, ...) is listed
with its reason in tests/api/schemathesis.toml, the only place a schema-valid request may get 400.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.api.test_api_serve import opgov, start

CONFIG = Path(__file__).with_name("schemathesis.toml")
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
# routes that remove what the run authenticates with (the maintainer, their token): run last, alone
SELF_DESTRUCTIVE = r"^/api/v1/(members/\{name\}|tokens/\{token_id\})$"
TRACES_TORCH = "/api/v1/decomps/import-torch"  # each call may trace torch's table for up to 2 minutes
# the committee's workbench (test_openapi_contract_workbench.py) and the other governance routes
# (test_openapi_contract_governance.py); every other one but the two above is test_openapi_contract.py's
WORKBENCH = r"^/api/v1/(proposals|queue)(/.*)?$"
GOVERNANCE = r"^/api/v1/(exceptions|events|members|tokens|tick|report|config)(/.*)?$"


def _build(db: str, pytorch_release, shared_dir: Path) -> str:
    """2.12.0 then 2.13.0 imported, the 2023 review's decisions, the shipped rules, ExecuTorch 1.3.0
    registered; alice (maintainer, with the token) and bob (maintainer). Returns alice's token."""
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
    return json.loads(opgov(db, "tokens", "create", "alice", "--json", actor="alice"))["token"]


def _copy(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite database (SQLite's backup: whatever its journal holds)."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    dst.close()
    src.close()


def world(tmp_path_factory, pytorch_release, shared_dir) -> tuple[str, str]:
    """(database URL, alice's token): a fresh copy, for this module alone, of the served world
    built once per test run (the first worker to need it builds it beside the workers'
    temporary folders, under an advisory lock; the others copy it)."""
    mine = tmp_path_factory.mktemp("contract") / "opgov.db"
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return f"sqlite:///{mine}", _build(f"sqlite:///{mine}", pytorch_release, shared_dir)
    try:
        import fcntl
    except ImportError:  # no advisory locks (Windows): a world per module
        return f"sqlite:///{mine}", _build(f"sqlite:///{mine}", pytorch_release, shared_dir)
    shared = tmp_path_factory.getbasetemp().parent  # the test run's folder, shared by its workers
    built, token_file = shared / "contract-world.db", shared / "contract-world.token"
    with open(shared / "contract-world.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not token_file.is_file():
                building = shared / "contract-world.building.db"
                building.unlink(missing_ok=True)
                token = _build(f"sqlite:///{building}", pytorch_release, shared_dir)
                _copy(building, built)
                token_file.write_text(token)
            _copy(built, mine)
            return f"sqlite:///{mine}", token_file.read_text()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def serve(tmp_path_factory, pytorch_release, shared_dir):
    """A module fixture's body: the world served, with alice's token; stopped after the module."""
    db, token = world(tmp_path_factory, pytorch_release, shared_dir)
    server = start(db)
    server.tokens = {"alice": token}
    try:
        yield server
    finally:
        server.stop()


def fuzz(server, tmp_path: Path, *args: str) -> tuple[int, str]:
    """Run schemathesis on the server's document; (exit code, its report)."""
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


def group(path: str) -> str:
    """Which file fuzzes a path's operations: torch, last (self-destructive), workbench, governance
    or reading."""
    if path == TRACES_TORCH:
        return "torch"
    if re.search(SELF_DESTRUCTIVE, path):
        return "last"
    if re.search(WORKBENCH, path):
        return "workbench"
    return "governance" if re.search(GOVERNANCE, path) else "reading"


def operations(server, which: str) -> int:
    """How many operations (path and method) of the served document are the group ``which``'s."""
    import httpx

    document = httpx.get(f"{server.url}/openapi.json").json()
    return sum(len(item) for path, item in document["paths"].items() if group(path) == which)


def selected(report: str) -> int:
    """How many operations a run tested, by its summary ("Selected: 12/50")."""
    found = re.search(r"Selected: (\d+)/\d+", report)
    return int(found.group(1)) if found else -1


def fuzz_clean(server, tmp_path: Path, which: str, *args: str) -> None:
    """schemathesis on the group ``which`` finds nothing, and tested every operation of the group."""
    code, report = fuzz(server, tmp_path, *args)
    assert clean(code, report), report[-6000:]
    assert selected(report) == operations(server, which) > 0, report[-3000:]
