"""Snapshots stored without repeating what did not change (revision 0009): every snapshot still
reads back exactly as its file, in any import order, an unchanged import costs almost nothing,
and the data survives the migration both ways."""

from __future__ import annotations

import os
import random
from datetime import datetime, timedelta, timezone

from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from opgov.db.engine import downgrade, resolve_url, upgrade
from opgov.db.entries import pack_lines, unpack_lines
from opgov.formats.registry import read_registry
from opgov.services.compat import snapshot_side
from tests.conftest import SAMPLE

MAX_UNCHANGED_IMPORT = 20 * 1024  # bytes an unchanged re-import may add (issue 16)


def _sides(url: str) -> dict[str, tuple]:
    """label → (schemas, lines, core, autogen) as the database gives the snapshot back."""
    engine = create_engine(resolve_url(url))
    try:
        with Session(engine) as session:
            ids = session.execute(text("SELECT label, id FROM snapshots ORDER BY position")).all()
            return {label: _facts(snapshot_side(session, snapshot_id)) for label, snapshot_id in ids}
    finally:
        engine.dispose()


def _facts(side) -> tuple:
    return side.schemas, side.lines, side.core, side.autogen


def _file_facts(path) -> tuple:
    registry = read_registry(str(path))
    ops = registry.ops.values()
    return ({n: op.schema for n, op in registry.ops.items() if op.schema},
            {n: op.line for n, op in registry.ops.items()},
            {n for n, op in registry.ops.items() if "core" in op.tags},
            {n: op.autogen_of for n, op in registry.ops.items() if op.schema is None and op.autogen_of},
            len(list(ops)))


def test_every_snapshot_reads_back_as_its_file_whatever_the_import_order(make_cli, any_db_url, pytorch_release):
    cli = make_cli(any_db_url)
    nf = {v: pytorch_release(v) / "native_functions.yaml" for v in ("2.0.0", "2.6.0", "2.12.0", "2.13.0")}
    cli.ok("import", nf["2.12.0"], "--label", "2.12.0")
    cli.ok("import", nf["2.13.0"], "--label", "2.13.0")
    cli.ok("import", nf["2.0.0"], "--label", "2.0.0", "--historical")   # before everything
    cli.ok("import", nf["2.6.0"], "--label", "2.6.0", "--historical")   # between 2.0.0 and 2.12.0
    cli.ok("import", nf["2.13.0"], "--label", "2.13.0-again")           # unchanged, the latest
    sides = _sides(any_db_url)
    assert list(sides) == ["2.0.0", "2.6.0", "2.12.0", "2.13.0", "2.13.0-again"]
    listed = cli.ok("snapshots", "--json").json()
    assert [(s["label"], s["position"], s["historical"]) for s in listed] == [
        ("2.0.0", 1, True), ("2.6.0", 2, True), ("2.12.0", 3, False), ("2.13.0", 4, False),
        ("2.13.0-again", 5, False)]
    assert "2.6.0 (historical)" in cli.ok("snapshots").out
    for label, facts in sides.items():
        expected = _file_facts(nf[label.removesuffix("-again")])
        assert facts == expected[:4], label
        assert len(facts[1]) == expected[4]
    # an operator's history is its runs: one row per change, covering every snapshot once
    shown = cli.ok("ops", "show", "aten::add.Tensor", "--json").json()
    assert shown["first_seen"] == "2.0.0" and shown["last_seen"] == "2.13.0-again"
    assert sum(h["snapshots"] for h in shown["history"]) == 5
    assert shown["history"][-1]["line"] == _file_facts(nf["2.13.0"])[1]["aten::add.Tensor"]
    # an operator 2.0.0 held and 2.6.0 no longer did: present once, absent after
    gone = sorted(set(_file_facts(nf["2.0.0"])[1]) - set(_file_facts(nf["2.6.0"])[1])
                  - set(_file_facts(nf["2.13.0"])[1]))[0]
    history = cli.ok("ops", "show", gone, "--json").json()["history"]
    assert [(h["snapshot"], h["last_snapshot"], h["present"]) for h in history] == [
        ("2.0.0", "2.0.0", True), ("2.6.0", "2.13.0-again", False)]


def _size(url: str) -> int:
    if url.startswith("sqlite"):
        return os.path.getsize(resolve_url(url).split("///", 1)[1])
    # VACUUM first: autovacuum gives a table its free-space and visibility maps (three pages or
    # more) when it gets to it, which would count as the import's bytes in one run and not in another
    engine = create_engine(resolve_url(url), isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text("VACUUM"))
            conn.execute(text("CHECKPOINT"))
            return conn.execute(text("SELECT pg_database_size(current_database())")).scalar()
    finally:
        engine.dispose()


def test_an_unchanged_import_adds_next_to_nothing(make_cli, any_db_url, pytorch_release):
    cli = make_cli(any_db_url)
    nf = pytorch_release("2.13.0") / "native_functions.yaml"
    cli.ok("import", pytorch_release("2.12.0") / "native_functions.yaml", "--label", "2.12.0")
    cli.ok("import", nf, "--label", "2.13.0")
    cli.ok("import", nf, "--label", "nightly-1")  # let each table find its pages
    before = _size(any_db_url)
    for night in range(2, 7):
        cli.ok("import", nf, "--label", f"nightly-{night}")
    grown = (_size(any_db_url) - before) / 5
    assert grown <= MAX_UNCHANGED_IMPORT, f"an unchanged import added {grown:.0f} bytes"
    # and the snapshots are all there
    assert list(_sides(any_db_url))[-1] == "nightly-6" and len(_sides(any_db_url)) == 8


def test_lines_pack_and_unpack():
    rng = random.Random(7)
    pairs = [(rng.randrange(1, 10**6), rng.randrange(1, 10**6)) for _ in range(500)]
    assert unpack_lines(pack_lines(pairs)) == pairs
    assert unpack_lines(pack_lines([])) == []
    # a release's layout packs small: ids mostly consecutive, lines a few apart
    layout = [(i, 3 + 7 * i) for i in range(1, 2600)]
    assert len(pack_lines(layout)) < 1024


def test_the_migration_moves_the_data_both_ways(make_cli, any_db_url, tmp_path):
    cli = make_cli(any_db_url)
    v1, v2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"
    cli.ok("import", v1, "--label", "1.0")
    cli.ok("import", v2, "--label", "2.0")
    cli.ok("import", v1, "--label", "2.1")  # back to v1's entries: runs that end and start again
    cli.ok("import", v1, "--label", "0.9", "--historical")
    before = _sides(any_db_url)
    engine = create_engine(resolve_url(any_db_url))
    try:
        downgrade(engine, "0008")
        with engine.connect() as conn:
            copied = conn.execute(text("SELECT snapshot_id, operator_id, schema, line FROM snapshot_entries "
                                       "ORDER BY snapshot_id, operator_id")).all()
            counts = dict(conn.execute(text("SELECT id, operator_count FROM snapshots")).all())
        per_snapshot = {}
        for row in copied:
            per_snapshot[row.snapshot_id] = per_snapshot.get(row.snapshot_id, 0) + 1
        assert per_snapshot == counts  # every entry of every snapshot, once
        upgrade(engine)
    finally:
        engine.dispose()
    assert _sides(any_db_url) == before
    # and opgov goes on from there
    cli.ok("import", v2, "--label", "3.0")
    assert list(_sides(any_db_url)) == ["0.9", "1.0", "2.0", "2.1", "3.0"]


def test_a_nightly_bots_long_history_gives_a_short_trend(make_cli, sqlite_url):
    """A year of nightlies between releases: the report's trend shows the releases, the imports
    of its week and the latest, not every snapshot."""
    cli = make_cli(sqlite_url, simulation=True)
    v1, v2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"

    def at(n: int) -> str:  # one import a day
        return (datetime(2025, 1, 1, 2, tzinfo=timezone.utc) + timedelta(days=n)).isoformat()

    cli.ok("import", v1, "--label", "1.0.0", now=at(0))
    for n in range(1, 40):
        cli.ok("import", v2 if n % 2 else v1, "--label", f"1.1.0.dev{n}", now=at(n))
    cli.ok("import", v2, "--label", "1.1.0", now=at(40))
    for n in range(41, 60):
        cli.ok("import", v1 if n % 2 else v2, "--label", f"1.2.0.dev{n}", now=at(n))
    week = cli.ok("report", "weekly", "--format", "json", now=at(59)).json()
    labels = [p["label"] for p in week["opset_trend"]]
    assert labels == ["1.0.0", "1.1.0", *[f"1.2.0.dev{n}" for n in range(53, 60)]]


def test_a_read_sees_one_moment_on_postgresql(make_cli, postgres_url):
    """Every statement of a read transaction sees the same committed state (REPEATABLE READ): an
    import committed in the middle of a read is not half seen."""
    from opgov.core.clock import SystemClock
    from opgov.core.errors import NotFound
    from opgov.db.engine import make_engine, transaction
    from opgov.reads.common import Ctx
    from opgov.services.imports import list_snapshots
    from opgov.services.ops import show_op

    cli = make_cli(postgres_url)
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "1.0")
    engine = make_engine(resolve_url(postgres_url))
    try:
        with transaction(engine, write=False) as session:
            ctx = Ctx(session=session, actor="reader", clock=SystemClock())
            assert [s.label for s in list_snapshots(ctx)] == ["1.0"]
            cli.ok("import", SAMPLE / "native_functions.v2.yaml", "--label", "2.0")  # commits meanwhile
            assert [s.label for s in list_snapshots(ctx)] == ["1.0"]
            try:
                show_op(ctx, "aten::fused_rms_norm")  # v2 adds it
            except NotFound:
                pass
            else:
                raise AssertionError("the read saw an operator committed after it began")
        assert [s["label"] for s in cli.ok("snapshots", "--json").json()] == ["1.0", "2.0"]
    finally:
        engine.dispose()
