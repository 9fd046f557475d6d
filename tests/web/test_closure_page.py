"""The page /closure (the closure proof of torch's default decomposition table) served by a real
`opgov serve` on 127.0.0.1 and written by `site build`: it says what `opgov decomps closure` says,
links each operator to its page, and the home page links to it. Before any `decomps import-torch`
it follows the facts opgov ships for the snapshot's release, and says so."""

from __future__ import annotations

import html
import json
import re

import httpx
import pytest

from tests.api.test_api_serve import start
from tests.web.test_pages import run

ONLY = ("aten::roll", "aten::pixel_shuffle", "aten::hardswish", "aten::native_layer_norm", "aten::_chunk_cat.out",
        "aten::addcmul")


@pytest.fixture(scope="module")
def db(tmp_path_factory, pytorch_release, torch_mod) -> str:
    folder = pytorch_release("2.13.0")
    url = f"sqlite:///{tmp_path_factory.mktemp('closure-page') / 'opgov.db'}"
    run(url, "db", "upgrade")
    run(url, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
        "--label", "2.13.0")
    return url


def _rows(page: str, table: str) -> list[list[str]]:
    body = page.split(f'<table id="{table}">', 1)[1].split("</table>", 1)[0]
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<td>(.*?)</td>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1])]


def test_the_closure_page_says_what_the_command_says(db, tmp_path):
    shipped = json.loads(run(db, "decomps", "closure", "--json"))  # no import-torch yet: opgov's shipped facts
    server = start(db)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            before = c.get("/closure")
            assert shipped["facts"].startswith("torch 2.13.0") and "shipped facts" in shipped["facts"]
            assert before.status_code == 200 and f"Facts: {shipped['facts']}." in html.unescape(before.text)
            assert c.get("/api/v1/decomps/closure").json() == shipped
            assert 'href="/closure"' in c.get("/").text  # linked from the home page (and every page's navigation)
    finally:
        server.stop()
    run(db, "decomps", "import-torch", *[arg for op in ONLY for arg in ("--only", op)])
    report = json.loads(run(db, "decomps", "closure", "--json"))
    server = start(db)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            page = c.get("/closure").text
            assert c.get("/api/v1/decomps/closure").json() == report  # the page's JSON twin
    finally:
        server.stop()
    summary = re.sub(r"<[^>]+>", "", page.split('id="closure-summary">', 1)[1].split("</p>", 1)[0])
    assert f"{report['closed']} of {report['operators']} operators end in core operators only" in summary
    assert f"{report['not_closed']} do not" in summary and "--only" in summary  # a partial import says so
    open_rows = _rows(page, "closure-open")
    assert [r[0] for r in open_rows] == [i["op"] for i in report["items"] if not i["closed"]]
    assert [r[2] for r in open_rows] == [i["why"] for i in report["items"] if not i["closed"]]
    assert [r[0] for r in _rows(page, "closure-closed")] == [i["op"] for i in report["items"] if i["closed"]]
    assert '<a href="/ops/aten%3A%3Aroll"><code>aten::roll</code></a>' in page
    site = tmp_path / "site"
    run(db, "site", "build", str(site), "--ops", "aten::roll")
    written = (site / "closure.html").read_text()
    assert _rows(written, "closure-open") == open_rows and 'href="ops/aten.roll.html"' in written
    assert json.loads((site / "data" / "closure.json").read_text()) == report
