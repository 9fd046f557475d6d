"""`opgov log --limit N` through `opgov serve` (a real process on 127.0.0.1) on a log longer than one
page of /api/v1/events: the CLI asks for the older pages itself, so a user gets the N newest events
(or all of them with 0), oldest first, exactly as `--db` on the served database gives them."""

from __future__ import annotations

import json

import pytest

from opgov.results.admin import EVENTS_PAGE_MAX
from tests.api.test_api_serve import _database, opgov, run_cli, start


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def served(request, tmp_path_factory, pytorch_release):
    """A database whose log holds more than a page of events (2.0.0, 2.13.0 and 2.0.0 again
    imported: an event per operator added, removed or changed), served."""
    for db in _database(request.param, tmp_path_factory):
        opgov(db, "db", "upgrade")
        for version, label in (("2.0.0", "2.0.0"), ("2.13.0", "2.13.0"), ("2.0.0", "back")):
            folder = pytorch_release(version)
            opgov(db, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
                  "--label", label)
        server = start(db)
        try:
            yield server
        finally:
            server.stop()


def both(server, *args: str):
    """The command through the server and with --db on the served database: the same answer."""
    remote = run_cli("--server", server.url, *args)
    local = run_cli("--db", server.db, *args)
    assert (remote.returncode, remote.stdout, remote.stderr) == (local.returncode, local.stdout, local.stderr)
    assert "Traceback" not in remote.stderr
    return remote


def test_the_log_is_longer_than_a_page(served):
    everything = json.loads(both(served, "log", "--limit", "0", "--json").stdout)
    assert len(everything) > EVENTS_PAGE_MAX + 100
    ids = [e["id"] for e in everything]
    assert ids == sorted(set(ids))  # oldest first, none twice


@pytest.mark.parametrize("limit", [1, EVENTS_PAGE_MAX - 1, EVENTS_PAGE_MAX, EVENTS_PAGE_MAX + 1,
                                   EVENTS_PAGE_MAX + 100])
def test_limit_gives_the_newest_events_across_pages(served, limit):
    everything = json.loads(run_cli("--db", served.db, "log", "--limit", "0", "--json").stdout)
    events = json.loads(both(served, "log", "--limit", str(limit), "--json").stdout)
    assert events == everything[-limit:]  # the newest `limit`, oldest first, none lost at a page's edge


def test_all_of_the_log_as_columns(served):
    everything = json.loads(run_cli("--db", served.db, "log", "--limit", "0", "--json").stdout)
    lines = both(served, "log", "--limit", "0", "--format", "tsv").stdout.splitlines()
    assert lines[0] == "when\tactor\taction\tsubject\treason"
    assert [line.split("\t")[3] for line in lines[1:]] == [e["subject"] for e in everything]
    limited = both(served, "log", "--limit", str(EVENTS_PAGE_MAX + 1), "--format", "tsv").stdout.splitlines()
    assert limited[1:] == lines[-(EVENTS_PAGE_MAX + 1):]


def test_filters_hold_on_every_page(served):
    added = json.loads(both(served, "log", "--limit", "0", "--since", "2000-01-01", "--json").stdout)
    assert len(added) > EVENTS_PAGE_MAX
    one = json.loads(both(served, "log", "aten::rename", "--limit", "0", "--json").stdout)
    assert one and {e["subject"] for e in one} == {"aten::rename"}


def test_a_negative_limit_is_refused_as_locally(served):
    done = both(served, "log", "--limit", "-1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "--limit" in done.stderr
