"""`opgov decomps closure` on a fresh database holding PyTorch 2.13.0's registry and nothing else:
no `decomps import-torch` (no torch needed), so the proof follows the facts opgov ships for the
snapshot's release, and every output says those are the facts it used."""

from __future__ import annotations

import json


def test_the_closure_answers_from_the_shipped_facts_and_names_them(make_cli, sqlite_url, pytorch_release):
    folder = pytorch_release("2.13.0")
    cli = make_cli(sqlite_url)
    cli.ok("import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml", "--label", "2.13.0")
    report = json.loads(cli.ok("decomps", "closure", "--json").out)
    assert report["torch"].partition("+")[0] == "2.13.0" and report["snapshot"] == "2.13.0"
    assert report["releases"] == []  # nothing recorded: `decomps import-torch` never ran
    assert report["facts"] == f"torch {report['torch']}: opgov's shipped facts"
    assert report["operators"] == len(report["items"]) > 100 and report["core"] > 100
    assert 0 < report["closed"] < report["operators"] and report["not_closed"] == report["operators"] - report["closed"]
    text = cli.ok("decomps", "closure").out
    assert f"torch {report['torch']}: opgov's shipped facts; its default table against the core tags of 2.13.0" in text
    # a release opgov neither holds nor ships facts for: one line naming what it has
    refused = cli("decomps", "closure", "--release", "1.0.0")
    assert refused.code == 2 and "ships: " in refused.err and "2.13.0" in refused.err
