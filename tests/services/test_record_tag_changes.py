"""The record never changes silently: a release that adds or drops a governance tag (core,
deprecating, deprecated) on an operator it keeps is a finding, an event, a line of the
operator's history and a line of the weekly report; a core operator whose tag is dropped stays
core, in the review queue, until the committee decides."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import subprocess
import sys

from tests.api.test_api_serve import opgov, start

RELEASES = ("2.0.0", "2.6.0", "2.12.0", "2.13.0")


def _edited_release(source: Path, target: Path) -> Path:
    """A copy of a real release in which abs loses its core tag, glu gains one, and hardtanh is
    tagged deprecating: three edits a maintainer must be able to find afterwards."""
    text = source.read_text(encoding="utf-8")

    def entry(func: str) -> tuple[int, int]:
        start = text.index(f"- func: {func}")
        return start, text.index("- func:", start + 5)

    start, end = entry("abs(Tensor self) -> Tensor")
    assert "  tags: [core, pointwise]\n" in text[start:end]
    text = text[:start] + text[start:end].replace("  tags: [core, pointwise]\n", "  tags: pointwise\n") + text[end:]
    for func, tag in (("glu(Tensor self, int dim=-1) -> Tensor", "core"),
                      ("hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", None)):
        start, end = entry(func)
        block = text[start:end]
        if tag is None:  # hardtanh carries tags already: add deprecating to them
            lines = block.splitlines(keepends=True)
            at = next(i for i, line in enumerate(lines) if line.startswith("  tags:"))
            value = lines[at].split(":", 1)[1].strip().strip("[]")
            lines[at] = f"  tags: [{value}, deprecating]\n"
            block = "".join(lines)
        else:
            block = block.rstrip("\n") + f"\n  tags: {tag}\n\n"
        text = text[:start] + block + text[end:]
    target.write_text(text, encoding="utf-8")
    (target.parent / "tags.yaml").write_text((source.parent / "tags.yaml").read_text(encoding="utf-8"),
                                             encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def edited(tmp_path_factory, pytorch_release):
    folder = pytorch_release("2.12.0")
    db = f"sqlite:///{tmp_path_factory.mktemp('record') / 'opgov.db'}"
    copy = _edited_release(folder / "native_functions.yaml", tmp_path_factory.mktemp("edit") / "native_functions.yaml")
    opgov(db, "db", "upgrade")
    opgov(db, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
          "--label", "2.12.0")
    imported = json.loads(opgov(db, "import", str(copy), "--label", "2.12.1", "--json"))
    return db, imported


def test_the_import_reports_each_tag_edit(edited):
    _, imported = edited
    assert sorted(imported["tags_changed"]) == ["aten::abs: -core", "aten::glu: +core",
                                                "aten::hardtanh: +deprecating"]
    assert imported["changed"] == [] and imported["added"] == []  # no schema changed: tags did
    assert imported["findings"].get("warning", 0) >= 3


def test_a_dropped_core_tag_leaves_the_operator_core_and_queued(edited):
    db, _ = edited
    shown = json.loads(opgov(db, "ops", "show", "aten::abs", "--json"))
    assert shown["category"] == "core" and shown["needs_review"]
    assert [h["tags_changed"] for h in shown["history"]] == [[], ["-core"]]
    rules = {(f["snapshot"], f["rule"]) for f in shown["findings"]}
    assert ("2.12.1", "core-tag-removed") in rules
    log = json.loads(opgov(db, "log", "aten::abs", "--json"))
    [event] = [e for e in log if e["action"] == "operator.tags_changed"]
    assert event["before"]["tags"] == ["core", "pointwise"] and event["after"]["tags"] == ["pointwise"]
    assert event["after"]["category"] == "core" and event["after"]["needs_review"] and event["after"]["snapshot"] == "2.12.1"
    assert "2.12.1" in event["reason"] and "stays core" in event["reason"]
    report = opgov(db, "report", "weekly")
    assert "core-tag-removed" in report and "core-tag-added" in report and "lifecycle-tag-edited" in report
    queue = report.split("## Open proposals")[0]
    assert "`aten::abs`" in queue and "2.12.1 dropped the core tag: it stays core until the committee decides" in queue


def test_a_core_tag_added_waits_for_review(edited):
    db, _ = edited
    shown = json.loads(opgov(db, "ops", "show", "aten::glu", "--json"))
    assert shown["category"] == "core" and shown["needs_review"]
    assert ("2.12.1", "core-tag-added") in {(f["snapshot"], f["rule"]) for f in shown["findings"]}


def test_the_service_tells_the_same_story(edited):
    db, _ = edited
    server = start(db)
    try:
        with server.client() as anyone:
            answer = anyone.get("/api/v1/operators/aten::abs").json()
            events = anyone.get("/api/v1/events", params={"operator": "aten::abs"}).json()["events"]
            page = anyone.get("/ops/aten::abs").text
    finally:
        server.stop()
    assert answer["category"] == "core" and answer["history"][-1]["tags_changed"] == ["-core"]
    assert any(e["action"] == "operator.tags_changed" for e in events)
    assert "<strong>-core</strong>" in page and "core-tag-removed" in page


def _state(db: str) -> dict[str, tuple]:
    """operator → (present, category, governance tags) as ops list --all --json reads them."""
    rows = json.loads(opgov(db, "ops", "list", "--all", "--json"))
    return {r["name"]: (r["present"], r["category"], tuple(sorted({"core", "deprecating", "deprecated"} & set(r["tags"]))))
            for r in rows}


def test_no_release_changes_core_or_a_governance_tag_without_an_event(tmp_path, pytorch_release):
    """Replay the real releases: every operator kept by an import whose governance tags or whose
    membership of core changed has an event of that import saying so."""
    db = f"sqlite:///{tmp_path / 'replay.db'}"
    opgov(db, "db", "upgrade")
    before: dict[str, tuple] = {}
    edits = 0
    for version in RELEASES:
        folder = pytorch_release(version)
        first_event = len(json.loads(opgov(db, "log", "--limit", "0", "--json")))
        opgov(db, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
              "--label", version)
        after = _state(db)
        events = json.loads(opgov(db, "log", "--limit", "0", "--json"))[first_event:]
        told = {e["subject"] for e in events if e["action"] == "operator.tags_changed"}
        for name, (present, category, tags) in after.items():
            old = before.get(name)
            if old is None or not (old[0] and present):
                continue
            if old[2] != tags or (old[1] == "core") != (category == "core"):
                edits += 1
                assert name in told, f"{version}: {name} went {old} → {(present, category, tags)} without an event"
        before = after
    assert edits > 0  # the real history does edit core tags


def test_import_and_check_bc_count_the_same_new_operators(tmp_path, pytorch_release):
    """2.6.0 → 2.12.0: the import's added operators, less those only an autogen: line declares,
    plus those that gained an entry of their own, are check-bc's new ones; the import says so."""
    old, new = pytorch_release("2.6.0"), pytorch_release("2.12.0")
    counted = {}
    for form in ("json", "text"):
        db = f"sqlite:///{tmp_path / f'{form}.db'}"
        opgov(db, "db", "upgrade")
        opgov(db, "import", str(old / "native_functions.yaml"), "--label", "2.6.0")
        counted[form] = opgov(db, "import", str(new / "native_functions.yaml"), "--label", "2.12.0",
                              *(["--json"] if form == "json" else []))
    imported = json.loads(counted["json"])
    done = subprocess.run([sys.executable, "-m", "opgov", "--db", db, "check-bc", "2.6.0", "2.12.0", "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    new_entries = {f["operator"] for f in json.loads(done.stdout)["findings"] if f["kind"] == "new"}
    assert imported["added_autogen"] and set(imported["added_autogen"]) <= set(imported["added"])
    assert new_entries == (set(imported["added"]) - set(imported["added_autogen"])) | set(imported["own_entry"])
    assert f"{len(imported['added'])} added ({len(imported['added_autogen'])} declared by autogen:)" in counted["text"]
