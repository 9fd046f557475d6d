"""Writers racing each other as separate processes, on SQLite and PostgreSQL.

An import derives every operator's category from the file unless the committee has decided it;
votes, deprecations and ticks change the same rows. Whatever the timing, a decision that was
made stays made, a lifecycle step that was taken stays taken, and every command ends with exit
0 or a clean refusal (exit 1), never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

from sqlalchemy import create_engine, text

from opgov.db.engine import resolve_url

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
LATER = (T0 + timedelta(days=20)).isoformat()


def _spawn(url: str, *args: str, actor: str, now: str) -> subprocess.Popen:
    env = {**os.environ, "OPGOV_DATABASE_URL": url, "OPGOV_ACTOR": actor, "OPGOV_NOW": now}
    return subprocess.Popen([sys.executable, "-m", "opgov", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _rows(url: str, sql: str, **params) -> list:
    engine = create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql), params)]
    finally:
        engine.dispose()


def _pick(url: str, n: int) -> list[str]:
    """Functional operators whose category the file decides (no committee decision yet), present in
    both releases, not core: a lost update would put them back to what the file says."""
    return [r[0] for r in _rows(url, "SELECT qualname FROM operators WHERE present AND kind = 'functional' "
                                     "AND category_source = 'heuristic' AND category <> 'core' "
                                     "AND namespace = 'aten' AND name LIKE 'a%' ORDER BY qualname LIMIT :n", n=n)]


def test_import_races_votes_deprecations_and_ticks(make_cli, any_db_url, pytorch_release):
    cli = make_cli(any_db_url, simulation=True)
    t0 = T0.isoformat()
    cli.ok("import", pytorch_release("2.12.0") / "native_functions.yaml", "--label", "2.12.0", actor="bot", now=t0)
    for name, role in (("chair", "maintainer"), ("m1", "maintainer"), ("bot", "bot")):
        cli.ok("members", "add", name, "--role", role, actor="chair", now=t0)
    cli.ok("config", "set", "quorum", "1", actor="chair", now=t0)  # one approval decides
    ops = _pick(any_db_url, 12 + 4 + 3)
    assert len(ops) == 19
    voted, deprecated, ticked = ops[:12], ops[12:16], ops[16:]
    proposals = {cli.ok("propose-core", op, "--rationale", "race", "--json", actor="chair", now=t0).json()["id"]: op
                 for op in voted}
    for op in ticked:  # due for the next step by LATER
        cli.ok("deprecate", op, "--reason", "race", actor="chair", now=t0)

    # The import starts; the other writers start one after another while it runs.
    importer = _spawn(any_db_url, "import", str(pytorch_release("2.13.0") / "native_functions.yaml"),
                      "--label", "2.13.0", actor="bot", now=LATER)
    writers = [["review", str(pid), "--approve", "--comment", "yes"] for pid in proposals]
    writers[3:3] = [["tick", "--apply"]]
    writers[8:8] = [["tick", "--apply"]]
    for i, op in enumerate(deprecated):
        writers.insert(2 + 4 * i, ["deprecate", op, "--reason", "race"])
    started = []
    for args in writers:
        time.sleep(0.15)
        started.append((args, _spawn(any_db_url, *args, actor="bot" if args[0] == "tick" else "m1", now=LATER)))
    outcomes = []
    for args, proc in [(["import"], importer)] + started:
        out, err = proc.communicate(timeout=300)
        outcomes.append((args, proc.returncode, out, err))
    for args, code, out, err in outcomes:
        assert "Traceback" not in err, f"{args}: {err}"
        assert code == 0, f"opgov {' '.join(args)} exited {code}: {err}{out}"

    # Every decision survived the import, and so did every lifecycle step.
    decided = dict(_rows(any_db_url, "SELECT qualname, category || '/' || category_source FROM operators"))
    assert {op: decided[op] for op in voted} == {op: "core/decision" for op in voted}
    lifecycle = dict(_rows(any_db_url, "SELECT qualname, lifecycle FROM operators"))
    assert {op: lifecycle[op] for op in deprecated + ticked} == (
        {op: "deprecating" for op in deprecated} | {op: "deprecated" for op in ticked})
    steps = _rows(any_db_url, "SELECT o.qualname FROM lifecycle_steps s JOIN operators o ON o.id = s.operator_id "
                              "WHERE s.to_state = 'deprecated'")
    stepped = [r[0] for r in steps]
    # applied once each, by one of the two ticks; their torchgen families (in-place, out=) move with them
    assert len(stepped) == len(set(stepped)) and set(ticked) <= set(stepped)
    assert all(lifecycle[op] == "deprecated" for op in stepped)
    assert _rows(any_db_url, "SELECT label FROM snapshots ORDER BY id") == [("2.12.0",), ("2.13.0",)]
    assert len(_rows(any_db_url, "SELECT id FROM decisions")) == len(voted)
    # the writers appended to the log one after another: one chain, no fork
    assert cli.ok("log", "verify").out.split(", ")[1].startswith("chain intact")


def test_racing_checks_that_read_before_they_write(make_cli, any_db_url):
    """Two maintainers removing each other at once leave one maintainer; the same proposal made
    twice at once is opened once."""
    import threading

    from opgov.core.clock import FixedClock
    from opgov.db.engine import make_engine, transaction
    from opgov.reads.common import Ctx
    from opgov.services.governance import propose, remove_member

    from conftest import SAMPLE

    cli = make_cli(any_db_url)
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "v1", actor="a")
    for name in ("a", "b"):
        cli.ok("members", "add", name, "--role", "maintainer", actor="a")
    engine = make_engine(resolve_url(any_db_url))
    outcomes: list = []

    def run(fn):
        barrier.wait()
        try:
            with transaction(engine) as session:
                fn(session)
            outcomes.append("ok")
        except Exception as err:  # noqa: BLE001
            outcomes.append(type(err).__name__)

    try:
        from datetime import datetime, timedelta, timezone

        clock = FixedClock(datetime.now(timezone.utc) + timedelta(minutes=1))  # after the set-up's events
        for round_ in range(2):
            barrier = threading.Barrier(2)
            if round_ == 0:
                jobs = [lambda s: remove_member(Ctx(s, "a", clock), "b"),
                        lambda s: remove_member(Ctx(s, "b", clock), "a")]
            else:
                jobs = [lambda s: propose(Ctx(s, left, clock), "aten::glu", "core", "r")] * 2
            threads = [threading.Thread(target=run, args=(job,)) for job in jobs]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=120)
            # the removed one is no longer a member (main: Forbidden); the second proposal is refused
            assert sorted(outcomes) == (["Forbidden", "ok"] if round_ == 0 else ["PolicyRefusal", "ok"]), outcomes
            outcomes.clear()
            if round_ == 0:
                [(left,)] = _rows(any_db_url, "SELECT name FROM members WHERE role = 'maintainer'")
        assert len(_rows(any_db_url, "SELECT id FROM proposals WHERE status = 'open'")) == 1
    finally:
        engine.dispose()
