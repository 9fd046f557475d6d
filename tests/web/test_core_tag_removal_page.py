"""An operator's page after a release drops its core tag (issue 24), in real headless Chromium
against a real `opgov serve`: PyTorch 2.13.0, then a copy of it whose only edit is `core` removed
from aten::abs's tags, imported as 2.13.1. The page shows the 2.13.1 run with the tag change, the
operator still core and waiting for the committee; once the committee decides, the same page tells
who decided and why. What the page shows is what the API answers."""

from __future__ import annotations

import json
from urllib.parse import quote

import httpx
import pytest

from tests.api.test_api_serve import start
from tests.web.test_pages import browser, load, run  # noqa: F401 - browser is a fixture

OP, ENTRY = "aten::abs", "- func: abs(Tensor self) -> Tensor\n"


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release):
    """(database URL, served base URL) after 2.13.0 and the copy without abs's core tag."""
    release = pytorch_release("2.13.0")
    folder = tmp_path_factory.mktemp("tag-removed")
    text = (release / "native_functions.yaml").read_text(encoding="utf-8")
    start_at = text.index(ENTRY)
    end = text.index("\n- func:", start_at)
    entry = text[start_at:end]
    assert "  tags: [core, pointwise]\n" in entry + "\n", entry
    edited = entry.replace("  tags: [core, pointwise]", "  tags: pointwise")
    (folder / "native_functions.yaml").write_text(text[:start_at] + edited + text[end:], encoding="utf-8")
    db = f"sqlite:///{folder / 'opgov.db'}"
    run(db, "db", "upgrade")
    for nf, label in ((release / "native_functions.yaml", "2.13.0"), (folder / "native_functions.yaml", "2.13.1")):
        run(db, "import", str(nf), "--tags-yaml", str(release / "tags.yaml"), "--label", label)
    server = start(db)
    try:
        yield db, server.url
    finally:
        server.stop()


def _api(base: str) -> dict:
    return httpx.get(f"{base}/api/v1/operators/{quote(OP, safe='')}", timeout=30).json()


def _history(browser) -> list[dict]:  # noqa: F811
    """The page's history as a reader sees it: each run's text and its listed changes."""
    return browser.execute_script("""return Array.from(document.querySelectorAll('#history ol.history > li'))
        .map(li => ({text: li.innerText, changes: Array.from(li.querySelectorAll('li.change'))
            .map(c => ({what: c.dataset.what, snapshot: c.dataset.snapshot, text: c.innerText}))}));""")


def test_the_page_shows_the_run_that_dropped_core_and_the_review(browser, served):  # noqa: F811
    db, base = served
    load(browser, f"{base}/ops/{quote(OP, safe='')}")
    badges = [b.text for b in browser.find_elements("css selector", ".badges .badge")]
    assert "core" in badges and "pointwise" in badges  # still core: the category does not flip silently
    review = browser.find_element("id", "review").text
    assert "In the review queue" in review and "2.13.1 dropped the core tag" in review
    runs = _history(browser)
    assert [r["text"].split()[0] for r in runs] == ["2.13.0", "2.13.1"]
    dropped = runs[1]
    assert "-core" in dropped["text"]
    tags = [c for c in dropped["changes"] if c["what"] == "tags"]
    assert len(tags) == 1 and "core, pointwise → pointwise" in tags[0]["text"] and tags[0]["snapshot"] == "2.13.1"
    assert any(c["what"] == "review" and "waits" in c["text"] for c in dropped["changes"])
    assert "core-tag-removed" in browser.find_element("id", "findings").text
    # the page and the API tell the same story
    detail = _api(base)
    assert (detail["category"], detail["needs_review"]) == ("core", True)
    assert detail["history"][-1]["tags_changed"] == ["-core"]
    assert [(c["what"], c["snapshot"]) for c in detail["history"][-1]["changes"]] == [
        (c["what"], c["snapshot"]) for c in dropped["changes"]]


def test_once_decided_the_page_says_who_decided_and_why(browser, served):  # noqa: F811
    db, base = served
    run(db, "members", "add", "setup", "--role", "maintainer")
    for name in ("m2", "m3"):
        run(db, "members", "add", name, "--role", "maintainer")
    rationale = "abs decomposes exactly into where(x < 0, -x, x); 2.13.1 took it out of core"
    proposal = json.loads(run(db, "propose-decompose", OP, "--into", "aten::where.self,aten::neg,aten::lt.Scalar",
                              "--rationale", rationale, "--json"))
    for voter in ("m2", "m3"):
        run(db, "--actor", voter, "review", str(proposal["id"]), "--approve", "--comment", "agreed")
    load(browser, f"{base}/ops/{quote(OP, safe='')}")
    badges = [b.text for b in browser.find_elements("css selector", ".badges .badge")]
    assert "decomposable" in badges and "core" not in badges
    assert not browser.find_elements("id", "review")  # off the review queue
    assert rationale in browser.find_element("id", "decisions").text
    decided = [c for c in _history(browser)[-1]["changes"] if c["what"] == "category"]
    assert len(decided) == 1
    assert "core → decomposable" in decided[0]["text"] and "m2" in decided[0]["text"] and "m3" in decided[0]["text"]
    assert rationale in decided[0]["text"]
    detail = _api(base)
    assert (detail["category"], detail["category_source"], detail["needs_review"]) == ("decomposable", "decision",
                                                                                       False)
