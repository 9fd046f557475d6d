"""Edges a newcomer meets: check-bc of two files with a database named that does not exist, a
second vote that replaces the first, a simulation's clock claimed before the log's last event."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.conftest import SAMPLE, opgov_in_process

V1, V2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``opgov ARGS`` in this process (what it prints is the point), in an environment without
    opgov's variables but ``env``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")} | {"OPGOV_FORCE_TTY": "0"}
    return opgov_in_process(args, env={**clean, **(env or {})})


def test_check_bc_of_two_files_needs_no_database(tmp_path):
    missing = tmp_path / "nowhere" / "opgov.db"
    home = {"XDG_DATA_HOME": str(tmp_path / "data")}  # no default database either (the user's own is not the test's)
    without = run("check-bc", str(V1), str(V2), "--format", "json", env=home)
    assert without.stderr == ""  # nothing configured: nothing to say
    ambient = ("opgov: note: compared the two files without a database (OLD's core tags); give --db to apply a "
               "database's decisions, exceptions and upgraders\n")
    gone_pg = "postgresql://postgres@127.0.0.1:1/no_such_database"  # nothing listens there: never dialled
    for named in ({"OPGOV_DATABASE_URL": f"sqlite:///{missing}"}, {"OPGOV_DATABASE_URL": str(missing)},
                  {"OPGOV_DATABASE_URL": gone_pg}):
        done = run("check-bc", str(V1), str(V2), "--format", "json", env=home | named)
        assert (done.returncode, done.stdout) == (without.returncode, without.stdout) == (1, without.stdout)
        assert done.stderr == ambient
    for flag in (f"sqlite:///{missing}", str(missing)):  # named on the command line: said why it is not read
        done = run("--db", flag, "check-bc", str(V1), str(V2), "--format", "json", env=home)
        assert (done.returncode, done.stdout) == (1, without.stdout)
        assert done.stderr == (f"opgov: note: database {missing} does not exist; compared the two files without one "
                               "(OLD's core tags; no decisions, exceptions or upgraders)\n")
    assert json.loads(without.stdout)["summary"]["errors"] == 5
    assert not missing.parent.exists()  # nothing created
    # a snapshot label needs the database: that is still said
    label = run("check-bc", "v1", str(V2), env=home | {"OPGOV_DATABASE_URL": str(missing)})
    assert label.returncode == 2 and label.stderr == f"opgov: error: database {missing} does not exist: run `opgov db upgrade`\n"


def _simulation(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    assert run("--db", db, "db", "upgrade", "--simulation").returncode == 0
    assert run("--db", db, "--now", "2026-07-20T09:00:00Z", "import", str(V1), "--label", "v1").returncode == 0
    return db


def test_a_replaced_vote_says_what_it_replaced(tmp_path):
    db = _simulation(tmp_path)
    assert run("--db", db, "--now", "2026-07-21T09:00:00Z", "--actor", "dave", "propose-core", "aten::hardswish",
               "--rationale", "cheap").returncode == 0
    first = run("--db", db, "--now", "2026-07-22T10:30:00Z", "--actor", "bob", "review", "1", "--reject",
                "--comment", "not yet")
    assert first.stdout == "proposal 1: 0 approve, 1 reject (quorum 2) — open\n"
    again = run("--db", db, "--now", "2026-07-23T09:00:00Z", "--actor", "bob", "review", "1", "--approve",
                "--comment", "convinced")
    assert again.stdout == ("proposal 1: 1 approve, 0 reject (quorum 2) — open\n"
                            "this vote replaces your earlier reject of 2026-07-22 10:30 ('not yet'; kept in the log)\n")
    as_json = json.loads(run("--db", db, "--now", "2026-07-23T10:00:00Z", "--actor", "bob", "review", "1",
                             "--approve", "--comment", "still", "--json").stdout)
    assert as_json["replaced"]["comment"] == "convinced" and as_json["replaced"]["approve"] is True
    # the log keeps every vote and its comment
    votes = [e for e in json.loads(run("--db", db, "log", "--format", "json").stdout)
             if e["action"] == "proposal.vote"]
    assert [e["reason"] for e in votes] == ["not yet", "convinced", "still"]
    assert votes[1]["before"] == {"approve": False, "comment": "not yet", "at": "2026-07-22T10:30:00+00:00"}
    shown = run("--db", db, "proposals", "show", "1").stdout
    assert "still" in shown and "not yet" not in shown  # the proposal counts the latest vote


def test_a_simulation_clock_never_goes_back(tmp_path):
    db = _simulation(tmp_path)
    assert run("--db", db, "--now", "2026-07-28T09:00:00Z", "deprecate", "aten::glu", "--reason", "x").returncode == 0
    back = run("--db", db, "--now", "2026-01-02T09:00:00Z", "undeprecate", "aten::glu", "--reason", "y")
    assert (back.returncode, back.stdout) == (1, "")
    assert back.stderr == ("opgov: refused: the claimed time 2026-01-02T09:00:00Z is before the log's last event "
                           "(2026-07-28T09:00:00Z): a simulation's clock never goes back; claim that time or a later "
                           "one\n")
    assert "deprecating" in run("--db", db, "ops", "show", "aten::glu").stdout  # nothing written
    # reading at an earlier time is allowed (it writes nothing), and the same time or later writes
    assert run("--db", db, "--now", "2026-01-02T09:00:00Z", "ops", "show", "aten::glu").returncode == 0
    same = run("--db", db, "--now", "2026-07-28T09:00:00Z", "undeprecate", "aten::glu", "--reason", "y")
    assert same.returncode == 0, same.stderr


def test_models_folder_says_which_files_it_skipped(tmp_path):
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    run("--db", db, "db", "upgrade")
    run("--db", db, "import", str(V1), "--label", "v1")
    models = tmp_path / "models"
    models.mkdir()
    corpus = {"source": "made up", "models": {"tiny": {"exported_ops": ["aten::add.Tensor"]}}}
    (models / "tiny_ops.json").write_text(json.dumps(corpus), encoding="utf-8")
    (models / "tiny.json").write_text(json.dumps(corpus), encoding="utf-8")  # not named *_ops.json
    (models / "README.md").write_text("the corpora\n", encoding="utf-8")
    done = run("--db", db, "opset", "build", "--preset", "core-aten", "--models", str(models), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"opgov: note: --models {models}: skipped tiny.json (not a corpus *_ops.json nor a .pt2 "
                           "archive)\n")
