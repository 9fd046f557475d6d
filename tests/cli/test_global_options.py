"""The global options (--db, --actor, --now, --server) go before or after the command, as gh and
kubectl take them; an option's value that looks like one stays a value, and `--` ends the options."""

from __future__ import annotations

import os
import subprocess

from tests.conftest import SAMPLE, opgov_in_process


def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    """``opgov ARGS`` in this process, as the program parses its command line (``run(argv)``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")} | {"OPGOV_FORCE_TTY": "0"}
    return opgov_in_process(args, env=env, cwd=cwd)


def test_global_options_after_the_command(tmp_path):
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    assert run("db", "upgrade", "--db", db).returncode == 0
    imported = run("import", str(SAMPLE / "native_functions.v1.yaml"), "--label", "v1", "--actor", "importer",
                   f"--db={db}")
    assert imported.returncode == 0, imported.stderr
    proposed = run("propose-core", "aten::hardswish", "--rationale", "--db", "--db", db, "--actor", "dave")
    assert proposed.returncode == 0, proposed.stderr
    listed = run("proposals", "list", "--db", db, "--format", "tsv").stdout.splitlines()
    assert listed[1].split("\t")[:5] == ["1", "aten::hardswish", "core", "open", "dave"]
    shown = run("--db", db, "proposals", "show", "1").stdout
    assert "by dave" in shown and ": --db" in shown  # the rationale is the value "--db", not an option
    log = run("log", "--format", "tsv", "--db", db).stdout.splitlines()
    assert [line.split("\t")[1] for line in log[1:]] == ["importer", "dave"]
    # after `--` nothing is an option: the argument is refused as the extra argument it is
    extra = run("--db", db, "ops", "show", "aten::relu", "--", "--actor")
    assert extra.returncode == 2 and "unexpected extra argument (--actor)" in extra.stderr
    missing = run("ops", "list", "--db")
    assert missing.returncode == 2 and "'--db' requires an argument" in missing.stderr


def test_proposals_list_is_the_proposals_command(tmp_path):
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    run("--db", db, "db", "upgrade")
    empty = run("--db", db, "proposals", "list")
    assert empty.returncode == 0 and empty.stdout == run("--db", db, "proposals").stdout
    assert run("--db", db, "proposals", "list", "--json").stdout.strip() == "[]"
