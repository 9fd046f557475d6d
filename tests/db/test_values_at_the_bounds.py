"""Inputs at the edges of what a database or the calendar can hold: ids beyond the integer range,
text longer than its column, times at the ends of the calendar, settings too large to compute
with. Each is bad input (exit 2) on one line naming the thing, with nothing written; never a
traceback. On SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest

from conftest import SAMPLE, bad

HUGE = "99999999999999999999"


@pytest.fixture
def gov(make_cli, any_db_url):
    cli = make_cli(any_db_url, simulation=True)
    now = "2026-01-05T09:00:00Z"
    cli.ok("import", SAMPLE / "native_functions.v1.yaml", "--label", "v1", now=now)
    cli.ok("members", "add", "alice@example.com", "--role", "maintainer", now=now)
    cli.ok("members", "add", "bob", "--role", "maintainer", now=now)
    cli.ok("propose-core", "aten::glu", "--rationale", "r", now=now)
    return cli


@pytest.mark.parametrize("args, words", [
    (("review", HUGE, "--approve", "--comment", "x"), [f"unknown proposal {HUGE}"]),
    (("review", "--approve", "--comment", "x", "--", "-" + HUGE), [f"unknown proposal -{HUGE}"]),
    (("review", "2147483648", "--approve", "--comment", "x"), ["unknown proposal 2147483648"]),
    (("withdraw", HUGE), [f"unknown proposal {HUGE}"]),
    (("proposals", "show", HUGE), [f"unknown proposal {HUGE}"]),
    (("exceptions", "remove", HUGE), [f"unknown exception {HUGE}"]),
    (("log", "--limit", HUGE), ["--limit must be between 0 and 2147483647"]),
    (("tick", "--within", HUGE), ["--within must be between 0 and 36500 days"]),
])
def test_numbers_beyond_the_integer_range(gov, args, words):
    result = bad(gov, *args, now="2026-01-06T09:00:00Z", words=words)
    assert result.err.count("\n") == 1 and "Traceback" not in result.err


@pytest.mark.parametrize("args, field", [
    (("members", "add", "m" * 201, "--role", "developer"), "name is 201 characters long; at most 200 fit "
                                                           "(members.name)"),
    (("import", str(SAMPLE / "native_functions.v2.yaml"), "--label", "l" * 201),
     "label is 201 characters long; at most 200 fit (snapshots.label)"),
    (("exceptions", "add", "aten::" + "x" * 300, "--reason", "r", "--expires", "2026-03-01"),
     "pattern is 306 characters long; at most 300 fit (bc_exceptions.pattern)"),
])
def test_text_longer_than_its_column(gov, args, field):
    result = bad(gov, *args, now="2026-01-06T09:00:00Z", words=[field])
    assert result.err.count("\n") == 1


def test_an_actor_longer_than_its_column(gov):
    actor = "a" * 201
    bad(gov, "propose-core", "aten::mish", "--rationale", "r", actor=actor, now="2026-01-06T09:00:00Z",
        words=["--actor is 201 characters long; at most 200 fit"])


@pytest.mark.parametrize("now", ["9999-12-31T23:59:59Z", "0001-01-01", "0001-01-01T00:00:00+01:00",
                                 "9999-12-31T23:59:59-01:00"])
def test_claimed_times_at_the_ends_of_the_calendar(gov, now):
    for args in (("tick", "--within", "30"), ("deprecate", "aten::roll", "--reason", "r"),
                 ("report", "weekly", "--format", "json"), ("ops", "list")):
        result = bad(gov, *args, now=now, words=["--now"])
        assert "outside the years" in result.err or "is not an ISO 8601" in result.err
        assert "Traceback" not in result.err


def test_settings_are_bounded(gov):
    for key, value, words in (("deprecating_days", "99999999", ["deprecating_days must be between 1 and 36500"]),
                              ("deprecated_days", "0", ["deprecated_days must be between 1 and 36500"]),
                              ("quorum", "1000", ["quorum must be between 1 and 100"]),
                              ("quorum", "9" * 5000, ["quorum must be a whole number"])):
        bad(gov, "config", "set", key, value, now="2026-01-06T09:00:00Z", words=words)
    gov.ok("config", "set", "deprecating_days", "36500", now="2026-01-06T09:00:00Z")
    gov.ok("deprecate", "aten::roll", "--reason", "r", now="2026-01-06T09:00:00Z")
    coming = gov.ok("tick", "--within", "36500", "--json", now="2026-01-07").json()
    # roll.out, which only roll's autogen: declares, moves with it (one family, one timer)
    family = [("aten::roll", "2125-12-13"), ("aten::roll.out", "2125-12-13")]
    assert [(d["operator"], d["due_at"][:10]) for d in coming["within"]] == family
    due = gov.ok("tick", "--within", "36500", "--json", now="2999-12-31T23:59:59Z").json()
    assert [(d["operator"], d["due_at"][:10]) for d in due["due"]] == family
    gov.ok("report", "weekly", "--format", "json", now="2999-12-31T23:59:59Z")
    gov.ok("report", "weekly", "--format", "json", now="1900-01-01")


def test_a_setting_stored_out_of_range_is_reported_not_a_crash(gov):
    """A database where an older opgov let `deprecating_days 99999999` in."""
    from sqlalchemy import create_engine, text

    from opgov.db.engine import resolve_url

    engine = create_engine(resolve_url(gov.url))
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO settings (key, value) VALUES ('deprecating_days', '99999999')"))
    finally:
        engine.dispose()
    for args in (("tick",), ("report", "weekly", "--format", "json"), ("config", "list")):
        result = bad(gov, *args, now="2026-01-06T09:00:00Z",
                     words=["setting deprecating_days is '99999999', outside 1 to 36500"])
        assert "Traceback" not in result.err
    gov.ok("config", "set", "deprecating_days", "14", now="2026-01-06T09:00:00Z")
    gov.ok("tick", now="2026-01-06T09:00:00Z")
