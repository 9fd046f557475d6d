"""The shell itself: help, version, exit codes for usage errors and unusable databases, and the
lazy imports that keep `opgov --help` fast."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import REPO


def opgov(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "opgov", *args], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=120)


def test_help_lists_every_command_and_loads_no_database_layer():
    probe = ("import sys\nfrom opgov.cli.main import run\n"
             "try:\n    run(['--help'])\nexcept SystemExit:\n    pass\n"
             "import json; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in "
             "('sqlalchemy', 'alembic', 'rich', 'yaml', 'psycopg', 'torch'))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    out, _, modules = done.stdout.rpartition("\n[")
    for command in ("import", "ops", "check-bc", "propose-core", "review", "deprecate", "tick", "sync-yaml",
                    "report", "opset", "check-model", "decomps", "members", "log"):
        assert command in out
    assert json.loads("[" + modules) == []


def test_version():
    done = opgov("--version")
    assert done.returncode == 0 and done.stdout.startswith("opgov ")


def test_usage_errors_exit_2():
    assert opgov("no-such-command").returncode == 2
    assert opgov("import").returncode == 2  # missing argument
    done = opgov("review", "1", "--comment", "x")  # neither --approve nor --reject
    assert done.returncode == 2


def test_unusable_database_is_one_line(tmp_path):
    done = opgov("--db", "postgresql://nobody@127.0.0.1:1/none", "ops", "list")
    assert done.returncode == 2
    assert done.stderr.startswith("opgov: error: cannot open database") and len(done.stderr.splitlines()) == 1
    done = opgov("--db", "nosuchdialect://x", "ops", "list")
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1


def test_bad_claimed_time_is_bad_input(cli):
    result = cli("ops", "list", now="yesterday-ish")
    assert result.code == 2 and "ISO 8601" in result.err
