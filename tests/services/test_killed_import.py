"""An import killed at any moment (SIGKILL: no clean-up runs) leaves the database as it was before
the import or as it is after it, never in between, and the log's chain intact; the next import
then completes. On SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from sqlalchemy import create_engine, text

from opgov.db.engine import resolve_url

DELAYS = [0.2, 0.5, 0.8, 1.1, 1.4, 1.7, 2.0, 2.4, 2.8, 3.3]  # seconds after the import starts


def _state(url: str) -> dict:
    engine = create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            snapshots = conn.execute(text("SELECT id, label, operator_count FROM snapshots ORDER BY id")).all()
            entries = dict(conn.execute(text(
                "SELECT s.id, count(r.id) FROM snapshots s JOIN entry_runs r ON r.first_pos <= s.position "
                "AND (r.last_pos IS NULL OR r.last_pos >= s.position) GROUP BY s.id")).all())
            lines = set(conn.execute(text("SELECT snapshot_id FROM snapshot_lines")).scalars())
            imports = conn.execute(text("SELECT count(*) FROM events WHERE action = 'snapshot.import'")).scalar()
            return {"labels": [s.label for s in snapshots], "imports": imports,
                    "complete": all(entries.get(s.id) == s.operator_count and s.id in lines for s in snapshots)}
    finally:
        engine.dispose()


def test_killed_imports_leave_before_or_after(make_cli, any_db_url, pytorch_release):
    cli = make_cli(any_db_url)
    cli.ok("import", pytorch_release("2.12.0") / "native_functions.yaml", "--label", "2.12.0", actor="bot")
    env = {**os.environ, "OPGOV_DATABASE_URL": any_db_url, "OPGOV_ACTOR": "bot"}
    env.pop("OPGOV_NOW", None)
    path = str(pytorch_release("2.13.0") / "native_functions.yaml")
    killed = 0
    for delay in DELAYS:
        proc = subprocess.Popen([sys.executable, "-m", "opgov", "import", path, "--label", "2.13.0"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            killed += 1
        proc.wait(timeout=60)
        state = _state(any_db_url)
        assert state["complete"], state
        assert state["labels"] in (["2.12.0"], ["2.12.0", "2.13.0"]), state
        assert state["imports"] == len(state["labels"])  # one event per snapshot recorded, no more
        assert cli.ok("log", "verify").out.split(", ")[1].startswith("chain intact")
        if state["labels"] == ["2.12.0", "2.13.0"]:
            break
    assert killed >= 1  # the first import at least died on the way
    cli.ok("import", path, "--label", "2.13.0", actor="bot")  # completes, or is already complete
    assert _state(any_db_url)["labels"] == ["2.12.0", "2.13.0"]
