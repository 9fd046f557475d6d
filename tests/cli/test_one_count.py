"""One count (issue 24): on PyTorch's real releases, `import`, `check-bc`, `check-pr` and the weekly
report name the same operators added and removed between two releases, or each says, in its JSON,
what it leaves out: check-bc and check-pr compare schemas, so an operator only an autogen: line
declares is in their `not_compared`, and the import lists it in `added_autogen`; an operator that
an autogen: line declared and that gained an entry of its own is `own_entry` to the import and
`operator-own-entry` to both checks; the report's review queue holds the functional operators
(its JSON description says the variants are left out) and its findings are the checks' BC and FC
ones and the tag changes check-pr flags."""

from __future__ import annotations

import json
import os

import pytest

from tests.conftest import opgov_in_process

PAIRS = [("2.6.0", "2.12.0"), ("2.12.0", "2.13.0")]


def run(cwd, *args: str, code: int = 0) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPGOV_NOW", "OPGOV_SERVER")}
    done = opgov_in_process(args, env=env, cwd=cwd)  # in this process: the counts are the point
    assert done.returncode == code, f"{' '.join(args)}: exit {done.returncode}: {done.stderr}"
    return done.stdout


def by_rule(findings: list[dict], *rules: str) -> set[str]:
    return {f["operator"] for f in findings if f["rule"] in rules}


@pytest.mark.parametrize("old,new", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_import_checks_and_report_count_the_same_operators(tmp_path, pytorch_release, old, new):
    db = f"sqlite:///{tmp_path / 'opgov.db'}"
    files = {v: pytorch_release(v) for v in (old, new)}
    run(tmp_path, "--db", db, "db", "upgrade", "--simulation")
    for version, day in ((old, "2026-03-02"), (new, "2026-03-03")):
        imported = json.loads(run(tmp_path, "--db", db, "--actor", "bot", "--now", f"{day}T09:00Z", "import",
                                  str(files[version] / "native_functions.yaml"), "--tags-yaml",
                                  str(files[version] / "tags.yaml"), "--label", version, "--json"))
    added, autogen = set(imported["added"]), set(imported["added_autogen"])
    removed, own = set(imported["removed"]), set(imported["own_entry"])
    assert added or removed
    pair = [str(files[old] / "native_functions.yaml"), str(files[new] / "native_functions.yaml")]
    bc = json.loads(run(tmp_path, "check-bc", *pair, "--format", "json", code=1))
    pr = json.loads(run(tmp_path, "check-pr", "--base", pair[0], "--head", pair[1], "--format", "json", code=1))
    report = json.loads(run(tmp_path, "--db", db, "--now", "2026-03-04T09:00Z", "report", "weekly", "--format",
                            "json"))

    for name, checked in (("check-bc", bc), ("check-pr", pr)):
        # the same operators added, the same left out (and said), the same removed
        assert by_rule(checked["findings"], "operator-added") == added - autogen, name
        assert set(checked["not_compared"]) == autogen, name
        assert by_rule(checked["findings"], "operator-own-entry") == own, name
        assert by_rule(checked["findings"], "operator-removed") == removed, name
        assert [f for f in checked["findings"] if f["kind"] == "new"] == [
            f for f in checked["findings"] if f["rule"] in ("operator-added", "operator-own-entry")], name
    # and their text says so, where the import's says how many of its added only autogen: declares
    if autogen:
        said = f"Not counted as new: {len(autogen)} operators only an autogen: line declares"
        assert said in run(tmp_path, "check-bc", *pair, code=1)
        assert said in run(tmp_path, "check-pr", "--base", pair[0], "--head", pair[1], code=1)
    # check-pr's policy rule for new native functions names the new entries, no more, no less
    assert by_rule(pr["findings"], "native-function-added") == added - autogen

    # the report: the new functional operators wait in the review queue, the removed are listed
    listed = {o["name"]: o for o in json.loads(run(tmp_path, "--db", db, "ops", "list", "--all", "--json"))}
    queued = {i["operator"] for i in report["review_queue"] if i["first_seen"]["label"] == new}
    assert queued == {n for n in added if listed[n]["kind"] == "functional"}
    assert {r["operator"] for r in report["removed_without_deprecation"] if r["snapshot"] == new} == removed
    # its findings are check-bc's BC and FC ones; the tag edits are check-pr's
    shown = {(f["operator"], f["rule"]) for f in report["compat_findings"] if f["snapshot"] == new}
    assert shown == {(f["operator"], f["rule"]) for f in bc["findings"] if f["kind"] in ("bc", "fc")}
    tags = [t for t in report["tag_changes"] if t["snapshot"] == new]
    assert {(t["operator"], t["rule"]) for t in tags} == {
        (f["operator"], f["rule"]) for f in pr["findings"] if f["rule"].startswith(("core-tag-", "lifecycle-tag-"))}
    # and the import's count of findings is check-bc's and those tag edits
    counted: dict[str, int] = {}
    for severity in [f["severity"] for f in bc["findings"]] + [t["severity"] for t in tags]:
        counted[severity] = counted.get(severity, 0) + 1
    assert {k: v for k, v in imported["findings"].items() if v} == counted
