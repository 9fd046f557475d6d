"""Importing an older release after a newer one (issue 10): refused unless asked for with
--historical; then stored in its place in history, without moving "latest" and without findings.
Labels are compared as versions (a release's yaml carries neither a date nor a version)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from conftest import bad, refused
from opgov.formats.registry import read_registry

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def test_an_older_release_is_history_not_the_latest(make_cli, tmp_path, pytorch_release):
    cli = make_cli(f"sqlite:///{tmp_path / 'opgov.db'}", simulation=True)
    nf = {v: pytorch_release(v) / "native_functions.yaml" for v in ("2.0.0", "2.12.0", "2.13.0")}
    for day, version in ((0, "2.12.0"), (1, "2.13.0")):
        cli.ok("import", nf[version], "--label", version, now=at(day))
    present = {o["name"] for o in cli.ok("ops", "list", "--json").json()}
    week = cli.ok("report", "weekly", "--format", "json", "--as-of", at(2)[:10], now=at(2)).json()

    refused(cli, "import", nf["2.0.0"], "--label", "2.0.0", now=at(2),
            words=["snapshot 2.0.0 is older than the latest snapshot 2.13.0", "--historical"])
    # --historical is for older releases only
    bad(cli, "import", nf["2.13.0"], "--label", "v2.14.0", "--historical", now=at(2), words=["not older"])

    result = cli.ok("import", nf["2.0.0"], "--label", "2.0.0", "--historical", "--json", now=at(2)).json()
    assert result["historical"] is True and result["removed"] == [] and result["findings"] == {}
    # the latest is still 2.13.0: the same operators are present, the same report
    assert {o["name"] for o in cli.ok("ops", "list", "--json").json()} == present
    again = cli.ok("report", "weekly", "--format", "json", "--as-of", at(2)[:10], now=at(2)).json()
    assert again["removed_without_deprecation"] == week["removed_without_deprecation"]
    assert again["compat_findings"] == week["compat_findings"]
    assert [p["label"] for p in again["opset_trend"]] == ["2.12.0", "2.13.0"]
    # its place in history: first, in each operator's history
    history = cli.ok("ops", "show", "aten::resize_", "--json").json()["history"]
    assert history[0]["snapshot"] == "2.0.0" and history[-1]["last_snapshot"] == "2.13.0"
    assert sum(h["snapshots"] for h in history) == 3 and all(h["present"] for h in history)
    # an operator only 2.0.0 held (gone by 2.12.0) is known, not present, and has no finding
    gone = sorted(set(read_registry(nf["2.0.0"]).ops) - set(read_registry(nf["2.12.0"]).ops))
    assert gone
    shown = cli.ok("ops", "show", gone[0], "--json").json()
    assert shown["present"] is False and shown["findings"] == []
    # check-bc reads it by label like any snapshot
    assert cli("check-bc", "2.0.0", "2.12.0", "--format", "json").json()["findings"]
    # the next import compares with 2.13.0, the latest
    later = cli.ok("import", nf["2.13.0"], "--label", "2.13.0-again", "--json", now=at(3)).json()
    assert later["added"] == [] and later["removed"] == []

