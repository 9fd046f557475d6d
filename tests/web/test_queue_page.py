"""The /queue page, the committee's workbench, in real headless Chromium against a real `opgov
serve` on 127.0.0.1: PyTorch 2.0.0 and 2.13.0 replayed, two ExecuTorch registries and the model
corpora. It shows what `opgov queue` says (the same operators, suggestions and reasons), filters,
sorts and pages through the query string, links each row to its operator's page and opens each
row's evidence."""

from __future__ import annotations

import httpx
import pytest

from tests.api.test_api_serve import start
from tests.web.test_pages import browser, load, run, visible_rows, wait  # noqa: F401 (browser: a fixture)


@pytest.fixture(scope="module")
def served(tmp_path_factory, pytorch_release, models_dir):
    db = f"sqlite:///{tmp_path_factory.mktemp('queue-page') / 'opgov.db'}"
    run(db, "db", "upgrade")
    for version in ("2.0.0", "2.13.0"):
        folder = pytorch_release(version)
        run(db, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
            "--label", version)
    run(db, "propose-custom", "aten::_foreach_mm", "--rationale", "internal <b>helper</b>")
    executorch = models_dir.parent / "executorch"
    for version in ("0.2.0", "1.3.0"):
        run(db, "runtimes", "add", f"executorch@{version}", "--ops", str(executorch / version / "portable-functions.yaml"))
    server = start(db, env={"OPGOV_MODELS_DIR": str(models_dir)})
    try:
        yield server.url
    finally:
        server.stop()


def api(base: str, **params) -> dict:
    return httpx.get(f"{base}/api/v1/queue", params=params, timeout=60).json()


def click_and_follow(driver, element) -> None:
    """Click a link or a button that leaves the page, and wait for the page it leads to (reading
    ``current_url`` right after the click may still give the page being left)."""
    leaving = driver.current_url
    element.click()
    wait(driver, lambda d: d.current_url != leaving)
    load(driver, driver.current_url)


def rows(driver) -> list[dict]:
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('#review-queue tbody tr')).map(r => ({
            operator: r.dataset.operator, suggestion: r.dataset.suggestion,
            since: r.cells[1].textContent.trim(), because: r.cells[4].textContent.trim(),
            href: r.cells[0].querySelector('a').getAttribute('href')}));""")


def test_the_page_shows_the_queue_as_the_api_does_a_page_at_a_time(browser, served):
    whole = api(served, limit=50)
    load(browser, f"{served}/queue")
    shown = rows(browser)
    assert [r["operator"] for r in shown] == [i["operator"] for i in whole["items"]]
    assert [(r["suggestion"], r["since"], r["because"]) for r in shown] == [
        (i["suggestion"], i["waiting_since"], i["because"]) for i in whole["items"]]
    assert browser.find_element("id", "queue-summary").text.startswith(f"{whole['total']} waiting")
    assert whole["total"] > 50
    click_and_follow(browser, browser.find_element("id", "queue-next"))
    second = api(served, limit=50, offset=50)
    assert [r["operator"] for r in rows(browser)] == [i["operator"] for i in second["items"]]
    assert browser.find_elements("id", "queue-prev")


def test_filter_and_sort_through_the_form_and_the_headers(browser, served):
    from selenium.webdriver.support.ui import Select

    load(browser, f"{served}/queue")
    Select(browser.find_element("id", "suggestion")).select_by_visible_text("decompose")
    browser.find_element("id", "match").send_keys("aten::*")
    click_and_follow(browser, browser.find_element("id", "queue-apply"))
    shown = rows(browser)
    expected = api(served, suggestion="decompose", match="aten::*", limit=50)
    assert shown and {r["suggestion"] for r in shown} == {"decompose"}
    assert [r["operator"] for r in shown] == [i["operator"] for i in expected["items"]]
    click_and_follow(browser, browser.find_element("link text", "Operator"))  # sort by name, keeping the filter
    names = [r["operator"] for r in rows(browser)]
    assert names == sorted(names) and {r["suggestion"] for r in rows(browser)} == {"decompose"}
    assert Select(browser.find_element("id", "suggestion")).first_selected_option.text == "decompose"
    load(browser, f"{served}/queue?reason=proposal")
    assert [r["operator"] for r in rows(browser)] == ["aten::_foreach_mm"]


def test_each_row_links_to_its_operator_and_opens_its_evidence(browser, served):
    load(browser, f"{served}/queue?sort=impact")
    # the operator of most impact a registered runtime implements (models alone may weigh more)
    items = api(served, sort="impact", limit=50)["items"]
    at = next(n for n, i in enumerate(items) if i["evidence"]["runtimes"]["implemented_by"])
    first = rows(browser)[at]
    assert first["operator"] == items[at]["operator"]
    row = browser.find_elements("css selector", "#review-queue tbody tr")[at]
    row.find_element("tag name", "summary").click()
    evidence = row.find_element("css selector", "dl.evidence").text
    for fact in ("kind", "family", "torch", "CompositeImplicitAutograd", "runtimes", "models", "waiting"):
        assert fact in evidence
    assert "executorch since executorch@" in evidence and "registered runtimes (opgov runtimes add)" in evidence
    click_and_follow(browser, row.find_element("css selector", "td a"))
    assert browser.find_element("tag name", "h1").text == first["operator"]
    assert browser.current_url.endswith(first["href"])


def test_a_bad_filter_is_one_line_and_a_400(served):
    answer = httpx.get(f"{served}/queue", params={"suggestion": "maybe"}, timeout=60)
    assert answer.status_code == 400 and "unknown suggestion &#39;maybe&#39;" in answer.text
