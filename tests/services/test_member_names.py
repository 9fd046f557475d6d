"""Member names a reviewer can tell apart (opgov.core.identity), on SQLite and PostgreSQL: a name is
stored NFKC-normalised; one with an invisible character or letters of scripts that do not go
together is bad input (exit 2), one that reads as a taken or reserved name is refused — nothing
written either way."""

from __future__ import annotations

import pytest

from tests.conftest import bad, refused


@pytest.fixture
def chair(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    cli.ok("members", "add", "alice", "--role", "maintainer", actor="alice")
    cli.actor = "alice"
    return cli


@pytest.mark.parametrize("name, words", [
    ("\u0430lice", "mixes the letters of several scripts: Cyrillic ('а', U+0430), Latin"),  # Cyrillic а
    ("p\u0430ypal", "Cyrillic"),
    ("anonymous\u200b", "invisible character (U+200B, ZERO WIDTH SPACE)"),
    ("bob\u200dsmith", "invisible character (U+200D"),
    ("eve\u202e", "invisible character (U+202E"),  # right-to-left override
    ("m\u00e1llory\u00ad", "invisible character (U+00AD"),  # soft hyphen
])
def test_invisible_and_mixed_script_names_are_bad_input(chair, name, words):
    bad(chair, "members", "add", name, "--role", "developer", words=[words])


@pytest.mark.parametrize("name, words", [
    ("\uff41\uff4e\uff4f\uff4e\uff59\uff4d\uff4f\uff55\uff53", "'anonymous' is reserved"),  # full-width
    ("ANONYMOUS", "'ANONYMOUS' is reserved"),
    ("\uff2f\uff50\uff47\uff4f\uff56", "'Opgov' is reserved"),
])
def test_reserved_names_in_any_spelling_are_refused(chair, name, words):
    bad(chair, "members", "add", name, "--role", "developer", words=[words])


@pytest.mark.parametrize("name, words", [
    ("Alice", "'Alice' would read as the member 'alice'"), ("ALICE", "would read as the member 'alice'"),
    ("\uff21lice", "'Alice' would read as the member 'alice'"),  # full-width A: normalised, then folded
    ("\uff41\uff4c\uff49\uff43\uff45", "alice is already a member"),  # full-width alice is alice
])
def test_a_name_that_reads_as_a_member_s_is_refused(chair, name, words):
    refused(chair, "members", "add", name, "--role", "developer", words=[words])


def test_names_are_stored_normalised_and_scripts_written_together_are_fine(chair):
    added = chair.ok("members", "add", "\ufb01ona", "--role", "developer", "--json").json()  # the ligature ﬁ
    assert added["name"] == "fiona"
    for name in ("\u00c9lodie Dupont", "\u5c71\u7530\u305f\u308d\u3046", "\u0391\u03b8\u03b7\u03bd\u03ac", "bob@example.com"):
        assert chair.ok("members", "add", name, "--role", "developer", "--json").json()["name"] == name
    names = {m["name"] for m in chair.ok("members", "list", "--json").json()}
    assert {"alice", "fiona", "\u00c9lodie Dupont", "bob@example.com"} <= names
    log = chair.ok("log", "--json").json()
    assert "member:fiona" in {e["subject"] for e in log if e["action"] == "member.add"}


def test_a_first_token_stores_the_normalised_name(make_cli, any_db_url):
    cli = make_cli(any_db_url)
    cli.ok("tokens", "create", "\uff43\uff48\uff41\uff49\uff52", actor="chair")  # full-width chair
    assert [m["name"] for m in cli.ok("members", "list", "--json").json()] == ["chair"]
    tokens = cli.ok("tokens", "list", "--json", actor="chair").json()
    assert [t["member"] for t in tokens] == ["chair"]
