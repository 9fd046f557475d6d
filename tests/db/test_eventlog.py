"""The event log cannot be quietly rewritten: REPLACE and TRUNCATE are refused like UPDATE and
DELETE, and every event is chained to the one before it by its hash, so `opgov log verify` finds
an event changed or removed even by someone who lifts the guards with raw database access."""

from __future__ import annotations

import dataclasses

from sqlalchemy import create_engine, text

from conftest import SAMPLE
from opgov.db.engine import downgrade, make_engine, resolve_url, transaction, upgrade

V1, V2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"


def _busy_log(cli) -> int:
    """A log with imports, members, a decision and a lifecycle step; returns its length."""
    cli.ok("import", V1, "--label", "v1")
    cli.ok("import", V2, "--label", "v2")
    cli.ok("members", "add", "alice@example.com", "--role", "maintainer")
    cli.ok("members", "add", "bob", "--role", "maintainer")
    cli.ok("config", "set", "quorum", "1")
    pid = cli.ok("propose-core", "aten::glu", "--rationale", "used by every model", "--json").json()["id"]
    cli.ok("review", str(pid), "--approve", "--comment", "yes", actor="bob")
    cli.ok("deprecate", "aten::roll", "--reason", "unused")
    verified = cli.ok("log", "verify")
    count = int(verified.out.split()[0])
    assert verified.out.startswith(f"{count} events, chain intact (head ")
    return count


def _raw(url: str, *statements: str) -> None:
    """Statements as the database owner, the way someone with raw access would."""
    engine = create_engine(resolve_url(url))
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.execute(text(statement))
    finally:
        engine.dispose()


def _lift_guard(url: str, verb: str) -> str:
    if url.startswith("sqlite"):
        return f"DROP TRIGGER events_no_{verb}"
    return "ALTER TABLE events DISABLE TRIGGER events_append_only"


def _decided_event(url: str) -> int:
    engine = create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT id FROM events WHERE action = 'category.decided'")).scalar_one()
    finally:
        engine.dispose()


def test_verify_names_a_rewritten_event(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    count = _busy_log(cli)
    target = _decided_event(any_db_url)
    _raw(any_db_url, _lift_guard(any_db_url, "update"),
         f"UPDATE events SET reason = 'nobody objected' WHERE id = {target}")
    result = cli("log", "verify")
    assert result.code == 1
    assert result.out.startswith(f"chain broken at event {target}: its content does not match its hash")
    assert "category.decided on aten::glu" in result.out
    report = cli("log", "verify", "--json").json()
    assert report["intact"] is False and report["broken"]["event"] == target and report["events"] == target
    assert count > target


def test_verify_names_the_link_after_a_removed_event(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    _busy_log(cli)
    target = _decided_event(any_db_url)
    _raw(any_db_url, _lift_guard(any_db_url, "delete"), f"DELETE FROM events WHERE id = {target}")
    result = cli("log", "verify")
    assert result.code == 1
    assert result.out.startswith(f"chain broken at event {target + 1}: its prev_hash")
    assert f"does not match the hash of event {target - 1}" in result.out


def test_verify_catches_a_rewrite_that_recomputed_the_hash(make_cli, any_db_url):
    """Even with the hash of the changed event recomputed, the next event's link gives it away."""
    from opgov.core.eventlog import event_hash
    from opgov.reads.database import read_log

    cli = make_cli(any_db_url)
    _busy_log(cli)
    target = _decided_event(any_db_url)
    engine = make_engine(resolve_url(any_db_url))
    try:
        with engine.connect() as conn:
            row = conn.execute(text(f"SELECT prev_hash FROM events WHERE id = {target}")).one()
        from opgov.core.clock import SystemClock
        from opgov.reads.common import Ctx

        with transaction(engine) as session:
            event = next(e for e in read_log(Ctx(session, "x", SystemClock()), limit=0) if e.id == target)
    finally:
        engine.dispose()
    event = {**dataclasses.asdict(event), "token_id": event.token, "reason": "nobody objected"}
    forged = event_hash(event, row.prev_hash)
    _raw(any_db_url, _lift_guard(any_db_url, "update"),
         f"UPDATE events SET reason = 'nobody objected', hash = '{forged}' WHERE id = {target}")
    result = cli("log", "verify")
    assert result.code == 1 and result.out.startswith(f"chain broken at event {target + 1}: its prev_hash")


def test_replace_and_truncate_are_refused(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    count = _busy_log(cli)
    if any_db_url.startswith("sqlite"):
        attacks = ["INSERT OR REPLACE INTO events (id, at, actor, action, subject) "
                   "VALUES (1, CURRENT_TIMESTAMP, 'mallory', 'x', 'y')",
                   "REPLACE INTO events (id, at, actor, action, subject) VALUES (2, CURRENT_TIMESTAMP, 'm', 'x', 'y')",
                   "INSERT INTO events (id, at, actor, action, subject) VALUES (3, CURRENT_TIMESTAMP, 'm', 'x', 'y') "
                   "ON CONFLICT (id) DO UPDATE SET actor = 'mallory'"]
    else:
        attacks = ["TRUNCATE events", "TRUNCATE events CASCADE",
                   "INSERT INTO events (id, at, actor, action, subject) VALUES (3, now(), 'm', 'x', 'y') "
                   "ON CONFLICT (id) DO UPDATE SET actor = 'mallory'"]
    for attack in attacks:
        try:
            _raw(any_db_url, attack)
        except Exception as err:  # noqa: BLE001 - each driver raises its own class
            assert "append-only" in str(err), attack
        else:
            raise AssertionError(f"{attack} was allowed")
    assert cli.ok("log", "verify").out.startswith(f"{count} events, chain intact")


def test_migration_chains_the_events_already_there(any_db_url, make_cli):
    """A database made before the chain existed gets its events hashed by the upgrade, and the
    events appended afterwards continue the chain."""
    engine = make_engine(resolve_url(any_db_url), create=True)
    try:
        upgrade(engine, "0005")
        with engine.begin() as conn:
            for n in range(3):
                conn.execute(text("INSERT INTO events (at, actor, action, subject, reason, after) VALUES "
                                  f"(CURRENT_TIMESTAMP, 'old', 'x', 'y{n}', 'r', '{{\"n\": {n}}}')"))
        upgrade(engine)
    finally:
        engine.dispose()
    cli = make_cli(any_db_url, upgrade=False)
    assert cli.ok("log", "verify").out.startswith("3 events, chain intact")
    cli.ok("import", V1, "--label", "v1")
    assert cli.ok("log", "verify").out.startswith("4 events, chain intact")
    # and back down and up again: the chain is rebuilt over the same events
    engine = make_engine(resolve_url(any_db_url))
    try:
        downgrade(engine, "0005")
        with engine.begin() as conn:  # the 0001 guards are still there after the downgrade
            try:
                conn.execute(text("UPDATE events SET actor = 'mallory'"))
            except Exception as err:  # noqa: BLE001
                assert "append-only" in str(err)
            else:
                raise AssertionError("UPDATE allowed after downgrade")
        upgrade(engine)
    finally:
        engine.dispose()
    assert cli.ok("log", "verify").out.startswith("4 events, chain intact")


def test_verify_names_an_event_slipped_in_with_raw_sql(make_cli, any_db_url):
    """INSERT is allowed (the log grows), but an event opgov did not append carries no valid link."""
    cli = make_cli(any_db_url)
    count = _busy_log(cli)
    _raw(any_db_url, "INSERT INTO events (id, at, actor, action, subject, reason) VALUES "
                     f"({count + 1}, CURRENT_TIMESTAMP, 'alice@example.com', 'category.decided', 'aten::roll', 'ok')")
    cli.ok("members", "add", "carol", "--role", "developer")  # later events do not hide it
    result = cli("log", "verify")
    assert result.code == 1
    assert result.out.startswith(f"chain broken at event {count + 1}: it has no hash: it was not appended by opgov")


def test_chain_rules_without_a_database():
    """Reordering two events, or changing any field, breaks the chain at the first event touched."""
    from datetime import datetime, timezone

    from opgov.core.eventlog import GENESIS, event_hash, verify_chain

    events, previous = [], GENESIS
    for n in range(1, 5):
        event = {"id": n, "at": datetime(2026, 1, n, tzinfo=timezone.utc), "actor": "a", "action": "x",
                 "subject": f"s{n}", "before": None, "after": {"n": n, "ü": [1, 2]}, "reason": None}
        event["prev_hash"], event["hash"] = previous, event_hash(event, previous)
        previous = event["hash"]
        events.append(event)
    intact = verify_chain(events)
    assert intact.broken is None and intact.events == 4 and intact.head == events[-1]["hash"]
    swapped = [events[0], events[2], events[1], events[3]]
    assert verify_chain(swapped).broken.event_id == 3
    for field, value in (("actor", "b"), ("after", {"n": 2, "ü": [2, 1]}), ("id", 7),
                         ("at", datetime(2026, 1, 2, 0, 0, 0, 1, tzinfo=timezone.utc))):
        changed = [dict(e) for e in events]
        changed[1][field] = value
        assert str(verify_chain(changed).broken).startswith(f"event {changed[1]['id']}: its content does not match")
