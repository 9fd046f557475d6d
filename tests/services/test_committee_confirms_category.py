"""The review queue on real releases (issue 10): a committee confirms the category an import
placed (custom by the heuristic, core by the yaml tag); the decision is recorded with its
rationale and the operator leaves the queue, in `ops list`, `ops show` and the weekly report."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from conftest import refused

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def queue(cli) -> dict[str, tuple[str, str]]:
    return {o["name"]: (o["category"], o["category_source"]) for o in cli.ok("ops", "list", "--json").json()
            if o["needs_review"]}


def report_queue(cli, day: float) -> set[str]:
    report = cli.ok("report", "weekly", "--format", "json", "--as-of", at(day)[:10], now=at(day)).json()
    return {item["operator"] for item in report["review_queue"]}


def confirm(cli, kind: str, op: str, day: float) -> dict:
    proposal = cli.ok(f"propose-{kind}", op, "--rationale", "the committee agrees with the import",
                      "--json", actor="dave", now=at(day)).json()
    for voter in ("bob", "carol"):
        cli.ok("review", str(proposal["id"]), "--approve", "--comment", "agreed", actor=voter, now=at(day))
    return proposal


def test_the_committee_confirms_the_category_an_import_placed(make_cli, tmp_path, pytorch_release):
    cli = make_cli(f"sqlite:///{tmp_path / 'opgov.db'}", simulation=True)
    for name, role in (("alice", "maintainer"), ("bob", "maintainer"), ("carol", "maintainer"),
                       ("dave", "developer")):
        cli.ok("members", "add", name, "--role", role, actor="alice", now=at(0))
    for day, version in ((0, "2.6.0"), (1, "2.12.0"), (2, "2.13.0")):
        folder = pytorch_release(version)
        cli.ok("import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml", "--label", version,
               actor="alice", now=at(day))
    waiting = queue(cli)
    assert waiting["aten::_foreach_mm"] == ("custom", "heuristic")  # new in 2.13.0
    assert waiting["aten::sym_is_contiguous"] == ("core", "yaml-tag")  # new in 2.12.0, tagged core
    assert {"aten::_foreach_mm", "aten::sym_is_contiguous"} <= report_queue(cli, 3)

    proposal = confirm(cli, "custom", "aten::_foreach_mm", 3)
    assert proposal["confirms"] == "custom (heuristic)"
    text = cli.ok("propose-core", "aten::sym_is_contiguous", "--rationale", "a symbolic query every runtime needs",
                  actor="dave", now=at(3)).out
    assert "confirms its category core (yaml-tag)" in text
    for voter in ("bob", "carol"):
        cli.ok("review", "2", "--approve", "--comment", "agreed", actor=voter, now=at(3))

    for op, category in (("aten::_foreach_mm", "custom"), ("aten::sym_is_contiguous", "core")):
        shown = cli.ok("ops", "show", op, "--json").json()
        assert (shown["category"], shown["category_source"], shown["needs_review"]) == (category, "decision", False)
        [decision] = [d for d in shown["decisions"] if not d.get("imported")]
        assert decision["category"] == category and decision["rationale"]
    after = queue(cli)
    assert "aten::_foreach_mm" not in after and "aten::sym_is_contiguous" not in after
    assert len(after) == len(waiting) - 2
    assert not {"aten::_foreach_mm", "aten::sym_is_contiguous"} & report_queue(cli, 4)
    # a decided category is not proposed again
    refused(cli, "propose-custom", "aten::_foreach_mm", "--rationale", "again", actor="dave", now=at(5),
            words=["already custom (decided)"])
