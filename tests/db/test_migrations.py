"""Alembic migrations are the only way the schema is made: they agree with the models, and they
upgrade and downgrade on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect, text

from opgov.db.engine import HEAD_REVISION, alembic_config, current_revision, downgrade, make_engine, resolve_url, upgrade
from opgov.db.models import Base

# every revision, oldest first, from the migration files themselves
REVISIONS = sorted(p.name.split("_", 1)[0] for p in (Path(__file__).parents[2] / "migrations" / "versions").glob("0*.py"))


def test_head_constant_matches_migrations(sqlite_url):
    engine = make_engine(sqlite_url, create=True)
    script = ScriptDirectory.from_config(alembic_config(engine))
    assert script.get_current_head() == HEAD_REVISION
    revisions = [r.revision for r in script.walk_revisions()]
    assert len(revisions) == len(set(revisions)) == len(REVISIONS)


def test_models_and_migrations_agree_and_round_trip(any_db_url):
    engine = make_engine(resolve_url(any_db_url), create=True)
    try:
        upgrade(engine)
        assert current_revision(engine) == HEAD_REVISION
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
        assert diff == []
        downgrade(engine, "base")
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) <= {"alembic_version"}
        # step by step, up and down
        for revision in REVISIONS:
            upgrade(engine, revision)
            assert current_revision(engine) == revision
        for revision in reversed(REVISIONS[:-1]):
            downgrade(engine, revision)
            assert current_revision(engine) == revision
        upgrade(engine)
        assert current_revision(engine) == HEAD_REVISION
    finally:
        engine.dispose()


def test_event_log_is_append_only_in_the_database(any_db_url):
    engine = make_engine(resolve_url(any_db_url), create=True)
    try:
        upgrade(engine)
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO events (at, actor, action, subject) VALUES "
                              "(CURRENT_TIMESTAMP, 'a', 'x', 'y')"))
        for statement in ("UPDATE events SET actor = 'mallory'", "DELETE FROM events"):
            try:
                with engine.begin() as conn:
                    conn.execute(text(statement))
            except Exception as err:  # noqa: BLE001 - each driver raises its own class
                assert "append-only" in str(err)
            else:
                raise AssertionError(f"{statement} was allowed")
        with engine.connect() as conn:
            assert conn.execute(text("SELECT actor FROM events")).scalars().all() == ["a"]
    finally:
        engine.dispose()


def test_db_commands(make_cli, sqlite_url):
    cli = make_cli(sqlite_url, upgrade=False)
    assert cli.ok("db", "current", "--json").json()["revision"] is None
    path = Path(sqlite_url.split("///", 1)[1])
    # reading a database that does not exist says what to do, and creates nothing
    missing = cli("ops", "list")
    assert missing.code == 2 and "opgov db upgrade" in missing.err and not path.exists()
    cli.ok("db", "upgrade")
    status = cli.ok("db", "current", "--json").json()
    assert status["revision"] == HEAD_REVISION and status["up_to_date"] and status["simulation"] is False
    # an existing, real database can never become a simulation database
    refused = cli("db", "upgrade", "--simulation")
    assert refused.code == 1 and "simulation" in refused.err
    cli.ok("db", "downgrade", "base")
    assert cli.ok("db", "current", "--json").json()["revision"] is None
    assert cli("db", "upgrade", "nonsense").code == 2


def test_token_column_keeps_the_event_log_append_only(any_db_url):
    """0008 adds events.token_id in place: down and up again, the append-only triggers remain."""
    engine = make_engine(resolve_url(any_db_url), create=True)
    try:
        upgrade(engine)
        downgrade(engine, "0005")
        with engine.connect() as conn:
            assert "token_id" not in {c["name"] for c in inspect(conn).get_columns("events")}
            assert "api_tokens" not in inspect(conn).get_table_names()
        upgrade(engine)
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO events (at, actor, action, subject, token_id) VALUES "
                              "(CURRENT_TIMESTAMP, 'a', 'x', 'y', 7)"))
        try:
            with engine.begin() as conn:
                conn.execute(text("UPDATE events SET token_id = 8"))
        except Exception as err:  # noqa: BLE001
            assert "append-only" in str(err)
        else:
            raise AssertionError("UPDATE events was allowed")
    finally:
        engine.dispose()


def test_downgrade_is_for_maintainers_and_spares_governance_data(make_cli, any_db_url):
    """`db downgrade` drops tables and the log with them: maintainers only, and refused while the
    database holds governance data unless --force; a downgraded database never becomes a
    simulation database."""
    from conftest import SAMPLE, db_fingerprint

    cli = make_cli(any_db_url)
    cli.ok("members", "add", "chair", "--role", "maintainer", actor="chair")
    cli.ok("members", "add", "dev", "--role", "developer", actor="chair")
    cli.ok("members", "add", "bot", "--role", "bot", actor="chair")
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "v1", actor="bot")
    before = db_fingerprint(any_db_url)
    for actor in ("dev", "bot", "stranger"):
        result = cli("db", "downgrade", "base", "--force", actor=actor)
        assert result.code == 1 and "may not downgrade the database" in result.err, result.err
    result = cli("db", "downgrade", "0005", actor="chair")
    assert result.code == 1
    assert result.err.strip() == ("opgov: refused: the database holds governance data (2 members, 4 events); "
                                  "downgrading to 0005 may drop it: pass --force to downgrade anyway")
    assert db_fingerprint(any_db_url) == before
    # forced by a maintainer: done, and on the record for as long as the log survives
    cli.ok("db", "downgrade", "0005", "--force", actor="chair")
    assert cli.ok("db", "current", "--json").json()["revision"] == "0005"
    cli.ok("db", "upgrade")
    log = cli.ok("log", "--json", "--limit", "1").json()
    assert log[0]["action"] == "db.downgrade" and log[0]["actor"] == "chair" and log[0]["after"]["forced"] is True
    cli.ok("db", "downgrade", "base", "--force", actor="chair")
    # the kind of a database is fixed when it is created: a real one stays real after base
    result = cli("db", "upgrade", "--simulation")
    assert result.code == 1 and "created before" in result.err
    assert cli.ok("db", "current", "--json").json()["revision"] is None
    cli.ok("db", "upgrade")
    assert cli.ok("db", "current", "--json").json()["simulation"] is False


def test_event_log_guards_survive_0007_and_0008_both_ways(any_db_url):
    """0006's guards (REPLACE on SQLite, TRUNCATE on PostgreSQL, and UPDATE/DELETE) are still in
    force after 0007 and 0008, and after 0008 is undone and redone."""
    engine = make_engine(resolve_url(any_db_url), create=True)
    sqlite = any_db_url.startswith("sqlite")
    attacks = (["INSERT OR REPLACE INTO events (id, at, actor, action, subject) "
                "VALUES (1, CURRENT_TIMESTAMP, 'mallory', 'x', 'y')"] if sqlite else ["TRUNCATE events"])
    attacks += ["UPDATE events SET actor = 'mallory'", "DELETE FROM events"]

    def refused_everywhere():
        for attack in attacks:
            try:
                with engine.begin() as conn:
                    conn.execute(text(attack))
            except Exception as err:  # noqa: BLE001 - each driver raises its own class
                assert "append-only" in str(err), attack
            else:
                raise AssertionError(f"{attack} was allowed at {current_revision(engine)}")

    try:
        upgrade(engine, "0006")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO events (at, actor, action, subject) VALUES (CURRENT_TIMESTAMP, 'a', 'x', 'y')"))
        for revision in ("0006", "0007", "0008"):
            upgrade(engine, revision)
            refused_everywhere()
        downgrade(engine, "0007")
        refused_everywhere()
        downgrade(engine, "0006")
        refused_everywhere()
        upgrade(engine)
        refused_everywhere()
    finally:
        engine.dispose()


def test_revision_0010_attaches_tokens_to_member_records_and_revokes_the_orphans(any_db_url):
    """Before 0010 a token named its member; a removed member's token came back with the name."""
    from opgov.db.engine import transaction
    from opgov.services.admin import verify_log
    from opgov.reads.common import Ctx
    from opgov.core.clock import SystemClock

    engine = make_engine(resolve_url(any_db_url), create=True)
    try:
        upgrade(engine, "0009")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO events (at, actor, action, subject, prev_hash, hash) VALUES "
                              "('2026-01-01 00:00:00+00:00', 'alice', 'member.add', 'member:alice', :g, :h)"),
                         {"g": "0" * 64, "h": _first_hash()})
            for name, added in (("alice", "2026-01-01"), ("carol", "2026-03-01")):
                conn.execute(text("INSERT INTO members (name, role, added_at, added_by) VALUES "
                                  "(:n, 'maintainer', :at, 'alice')"), {"n": name, "at": f"{added} 00:00:00+00:00"})
            # alice's token is hers; bob is gone; carol's token predates the carol added again
            for i, (member, made) in enumerate((("alice", "2026-02-01"), ("bob", "2026-02-01"),
                                                ("carol", "2026-02-01")), start=1):
                conn.execute(text("INSERT INTO api_tokens (member, token_hash, created_at, created_by) VALUES "
                                  "(:m, :h, :at, 'alice')"), {"m": member, "h": f"{i:064d}", "at": f"{made} 00:00:00+00:00"})
        upgrade(engine)
        with engine.connect() as conn:
            rows = {r.member: r for r in conn.execute(text(
                "SELECT t.member, t.member_id, t.revoked_at, m.name AS owner FROM api_tokens t "
                "LEFT JOIN members m ON m.id = t.member_id"))}
            revocations = conn.execute(text("SELECT subject, actor FROM events WHERE action = 'token.revoke' "
                                            "ORDER BY id")).all()
        assert rows["alice"].owner == "alice" and rows["alice"].revoked_at is None
        assert rows["bob"].member_id is None and rows["bob"].revoked_at is not None
        assert rows["carol"].member_id is None and rows["carol"].revoked_at is not None
        assert [tuple(r) for r in revocations] == [("member:bob", "opgov"), ("member:carol", "opgov")]
        with transaction(engine, write=False) as session:
            assert verify_log(Ctx(session, "t", SystemClock())).intact
        downgrade(engine, "0009")
        upgrade(engine)
    finally:
        engine.dispose()


def _first_hash() -> str:
    from datetime import datetime, timezone

    from opgov.core.eventlog import GENESIS, event_hash

    return event_hash({"id": 1, "at": datetime(2026, 1, 1, tzinfo=timezone.utc), "actor": "alice",
                       "action": "member.add", "subject": "member:alice", "before": None, "after": None,
                       "reason": None}, GENESIS)
