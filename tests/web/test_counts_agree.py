"""Every page and the report count the same operators, or say what they count (issue 43: home 251
operators / 105 core, /ops 254 with the removed ones unmarked, /opset "102 to implement" beside
"Core (105)"). The sample registry v1 → v2 removes three operators."""

from __future__ import annotations

import html
import json
import re

import pytest

from conftest import opgov_in_process
from tests.web.test_machine_paths import SAMPLE


def opgov(db: str, *args: str) -> str:
    """`opgov` in this process (set-up and the pages' inputs, not the process), as test_machine_paths
    runs it: no OPGOV_ variable of the test run."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")}
    done = opgov_in_process(["--db", db, "--actor", "setup", *args], env=env)
    assert done.returncode == 0, f"opgov {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    where = tmp_path_factory.mktemp("counts")
    db = f"sqlite:///{where / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    for label in ("v1", "v2"):
        opgov(db, "import", str(SAMPLE / f"native_functions.{label}.yaml"), "--tags-yaml", str(SAMPLE / "tags.yaml"),
              "--label", label)
    opgov(db, "site", "build", str(where / "site"), "--ops", "aten::add.Tensor")
    present = json.loads(opgov(db, "ops", "list", "--format", "json"))
    every = json.loads(opgov(db, "ops", "list", "--all", "--format", "json"))
    report = json.loads(opgov(db, "report", "weekly", "--format", "json"))
    return where / "site", present, every, report


def text(path) -> str:
    page = re.sub(r"<script.*?</script>", "", path.read_text(encoding="utf-8"), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_every_page_counts_the_latest_snapshot_or_says_what_else(site):
    folder, present, every, report = site
    core = sum(o["category"] == "core" for o in present)
    removed = len(every) - len(present)
    assert removed == 3 and core
    now = report["opset_now"]["categories"]
    assert (sum(now.values()), now["core"]) == (len(present), core)  # the report: the same operators
    assert f"{len(present)} operators in the latest snapshot, {core} of them core" in text(folder / "index.html")
    assert (f"{len(every)} of {len(every)} operators shown: {len(present)} in the latest snapshot and {removed} no "
            "longer in it") in text(folder / "ops.html")
    opset = text(folder / "opset.html")
    assert "Each group counts the operators of its category a choice can change" in opset
    assert "“operators to implement” counts what the choice keeps, functional operators only" in opset
