"""The weekly report lists snapshots in the order of history, never by their label as text
("2.12.0" sorts before "2.6.0" as text): PyTorch's real releases 2.0.0, 2.6.0, 2.12.0 and 2.13.0
imported in one week. Within the folded table of tag changes, the release that dropped a `core`
tag comes first, so the drop is among the rows shown, not hidden under "more rows"."""

from __future__ import annotations

import json

from tests.report_pages import md_section, md_tables

RELEASES = ("2.0.0", "2.6.0", "2.12.0", "2.13.0")


def test_the_weekly_report_lists_snapshots_in_history_order(make_cli, sqlite_url, pytorch_release):
    cli = make_cli(sqlite_url, simulation=True)
    for day, label in enumerate(RELEASES, start=2):
        folder = pytorch_release(label)
        cli.ok("import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"), "--label", label,
               now=f"2026-03-0{day}T09:00:00+00:00")
    history = [s["label"] for s in cli.ok("snapshots", "--json").json()]
    assert history == list(RELEASES) and sorted(RELEASES) != list(RELEASES)  # as text, 2.12.0 < 2.6.0
    week = json.loads(cli.ok("report", "weekly", "--as-of", "2026-03-07", "--format", "json").out)

    changes = week["tag_changes"]
    assert {c["snapshot"] for c in changes} >= {"2.6.0", "2.12.0"}
    for severity in {c["severity"] for c in changes}:  # within a severity, in history order
        seen = [history.index(c["snapshot"]) for c in changes if c["severity"] == severity]
        assert seen == sorted(seen)
        assert [c["position"] for c in changes if c["severity"] == severity] == [i + 1 for i in seen]
    # the other sections that name snapshots follow history too
    for key in ("compat_findings", "removed_without_deprecation"):
        seen = [history.index(row["snapshot"]) for row in week[key]]
        if key == "compat_findings":  # errors first, then history within each severity and kind
            seen = [history.index(r["snapshot"]) for r in week[key] if r["severity"] == "error" and r["kind"] == "bc"]
        assert seen == sorted(seen), key
    assert [p["label"] for p in week["opset_trend"]] == list(RELEASES)

    # the markdown: the first rows shown are 2.6.0's, its dropped core tag first
    md = cli.ok("report", "weekly", "--as-of", "2026-03-07", "--format", "md").out
    shown = md_tables(md_section(md, "Core and lifecycle tags changed"))[0][1:]
    assert shown[0][0] == "2.6.0" and shown[0][2].startswith("**-core")
    dropped = [c for c in changes if c["edit"] == "-core"]
    assert dropped and all(c["snapshot"] == "2.6.0" for c in dropped[:1])
    assert [row[0] for row in shown] == [c["snapshot"] for c in changes[:len(shown)]]
