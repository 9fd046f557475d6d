"""A server on a network with nothing but itself: `/docs` renders Swagger UI from files that
travel with opgov, every page names its Atom feeds, and a fresh server's /opset says what to import.

Chromium runs with every host name but 127.0.0.1 resolving to nothing, so a script or stylesheet
from a CDN would fail to load and the page would stay blank.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.api.test_api_serve import V1, opgov, start
from tests.web.test_pages import chromium, load, wait


def _served(tmp_path_factory, *imports: tuple[Path, str]):
    db = f"sqlite:///{tmp_path_factory.mktemp('offline') / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    for registry, label in imports:
        opgov(db, "import", str(registry), "--label", label)
    server = start(db)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def empty_server(tmp_path_factory):
    yield from _served(tmp_path_factory)


@pytest.fixture(scope="module")
def sample_server(tmp_path_factory):
    yield from _served(tmp_path_factory, (V1, "v1"))


@pytest.fixture(scope="module")
def offline_browser():
    """Headless Chromium that can reach 127.0.0.1 and nothing else."""
    driver = chromium("--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
    try:
        yield driver
    finally:
        driver.quit()


def test_docs_render_every_operation_from_the_server_alone(offline_browser, empty_server):
    driver = offline_browser
    load(driver, f"{empty_server.url}/docs")
    # Swagger UI draws one block per operation once its script has loaded the document
    wait(driver, lambda d: len(d.find_elements("css selector", ".opblock")) > 20)
    paths = {e.text for e in driver.find_elements("css selector", ".opblock-summary-path")}
    assert {"/api/v1/operators", "/api/v1/proposals", "/healthz"} <= {p.replace("\u200b", "") for p in paths}
    assert driver.find_element("css selector", ".info .title").text.startswith("opgov")
    # every script and stylesheet the page names, and every resource it loaded, is the server's
    urls = driver.execute_script("""
        return [...document.querySelectorAll('script[src]')].map(e => e.src)
            .concat([...document.querySelectorAll('link[href]')].map(e => e.href))
            .concat(performance.getEntriesByType('resource').map(e => e.name));""")
    origin = urlsplit(empty_server.url)
    assert urls and [u for u in urls if urlsplit(u)[:2] != origin[:2]] == []


def test_docs_assets_are_served_and_nothing_else_is(empty_server):
    with empty_server.client() as c:
        assert c.get("/docs/assets/swagger-ui-bundle.js").headers["content-type"].startswith("text/javascript")
        assert c.get("/docs/assets/swagger-ui.css").headers["content-type"].startswith("text/css")
        assert c.get("/docs/assets/index.html").status_code == 404
        assert c.get("/docs/assets/..%2F..%2F__init__.py").status_code == 404
        assert c.get("/redoc").status_code == 404  # not offered: it would need a CDN


def _feeds(html: str) -> list[str]:
    import re

    return re.findall(r'<link rel="alternate" type="application/atom\+xml" title="[^"]*" href="([^"]*)">', html)


def test_every_page_links_the_feed(sample_server):
    with sample_server.client() as c:
        for page in ("/", "/opset", "/ops", "/proposals", "/queue", "/report", "/ops/nothing::here"):
            assert _feeds(c.get(page).text) == ["/feeds/events.atom"], page
        feeds = _feeds(c.get("/ops/aten::add.Tensor").text)
        assert feeds == ["/feeds/events.atom", "/feeds/events.atom?operator=aten%3A%3Aadd.Tensor"]
        feed = c.get(feeds[1])
        assert feed.headers["content-type"] == "application/atom+xml"
        assert "<title>opgov: aten::add.Tensor</title>" in feed.text


def test_opset_on_an_empty_database_says_what_to_import(offline_browser, empty_server):
    answer = httpx.get(f"{empty_server.url}/opset", headers={"Accept": "text/html"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    driver = offline_browser
    load(driver, f"{empty_server.url}/opset")
    said = driver.find_element("tag name", "main").text
    assert "Nothing has been imported" in said
    assert "opgov import" in said and "--tags-yaml" in said and "opgov decisions load core-aten-review-2023" in said
