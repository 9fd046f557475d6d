"""The page /check-model of a real `opgov serve` in headless Chromium: a backend author uploads a
`.pt2` archive saved by torch 2.13.0, chooses a registered runtime, and reads the answer `opgov
check-model` prints (the same verdict line, every argument problem, the dtypes). A file the check
refuses is the form again with its one line; a static site, which cannot read an upload, does not
link the page."""

from __future__ import annotations

import html
import json
import re
import subprocess

import httpx
import pytest

from tests.api.test_api_serve import start
from tests.conftest import opgov_in_process
from tests.services.test_model_args import archives, args_db, releases  # noqa: F401 - fixtures
from tests.web.test_pages import browser, load, wait  # noqa: F401 - fixtures



def cli(db: str, *args: str) -> subprocess.CompletedProcess:
    return opgov_in_process(["--db", db, *args])


@pytest.fixture(scope="module")
def served(args_db):  # noqa: F811
    db = f"sqlite:///{args_db}"
    server = start(db)
    try:
        yield db, server.url
    finally:
        server.stop()


def _check_in_browser(browser, url: str, archive, runtime: str | None) -> str:  # noqa: F811
    from selenium.webdriver.support.ui import Select

    load(browser, f"{url}/check-model")
    browser.find_element("id", "models").send_keys(str(archive))
    Select(browser.find_element("id", "runtime")).select_by_value(runtime or "")
    browser.find_element("id", "check-model-submit").click()
    wait(browser, lambda d: d.find_elements("id", "check-model-result") or d.find_elements("id", "check-model-error"))
    return browser.find_element("id", "content").text


@pytest.mark.parametrize("model,runtime", [("gelu", "engine@1.0"), ("leaky", "engine@1.0"), ("cumsum", "engine@2.0"),
                                           ("gelu", None)])
def test_the_page_answers_what_check_model_prints(browser, served, archives, model, runtime):  # noqa: F811
    db, url = served
    shown = _check_in_browser(browser, url, archives[model], runtime)
    argv = ["check-model", str(archives[model]), *(["--runtime", runtime] if runtime else [])]
    text, data = cli(db, *argv), json.loads(cli(db, *argv, "--format", "json").stdout)
    # the verdict, word for word (the page names the upload as the browser sent it: its file name)
    assert text.stdout.splitlines()[0].replace(str(archives[model]), archives[model].name) in shown
    heading = browser.find_element("id", "verdict-h")
    ok = data["runs"] if runtime else data["ok"]
    assert heading.get_attribute("class") == ("ok" if ok else "bad") and (text.returncode == 0) == ok
    problems = [p for a in data["arguments"] for p in a["problems"]]
    rows = [r.text for r in browser.find_elements("css selector", ".argument-problems tbody tr")]
    assert len(rows) == len(problems)
    for problem, row in zip(problems, rows):
        assert problem["message"] in row and problem["rule"] in row and problem["severity"] in row
    assert (model == "leaky") == ("default-changed" in shown) and (model == "cumsum") == ("argument-refused" in shown
                                                                                          or "schema-bc-break" in shown)
    for a in data["arguments"]:
        assert f"Arguments of {a['model'].rsplit('/', 1)[-1]}" in shown
    # the same upload to the API answers the same result
    with httpx.Client(base_url=url, timeout=120) as client:
        answer = client.post("/api/v1/check-model", files={"models": (archives[model].name, archives[model].read_bytes())},
                             data={"runtime": runtime} if runtime else {})
    assert answer.status_code == 200
    assert [p["message"] for a in answer.json()["arguments"] for p in a["problems"]] == [p["message"] for p in problems]


def test_a_refused_upload_is_the_form_with_one_line(served, tmp_path):
    _, url = served
    with httpx.Client(base_url=url, timeout=60) as client:
        binary = client.post("/check-model", files={"models": ("weights.bin", b"\x00\xff\xfe garbage")})
        unknown = client.post("/check-model", files={"models": ("ops.txt", b"aten::add.Tensor\n")},
                              data={"runtime": "engine@9.9"})
        nothing = client.post("/check-model", data={"runtime": "engine@1.0"})
        form = client.get("/check-model")
    for answer, words in ((binary, "weights.bin"), (unknown, "engine@9.9"), (nothing, "at least one model file")):
        assert answer.status_code == 400 and answer.headers["content-type"].startswith("text/html")
        error = html.unescape(re.search(r'id="check-model-error"[^>]*>(.*?)</p>', answer.text, re.S).group(1))
        assert words in error and "\n" not in error.strip() and "Traceback" not in answer.text
        assert 'id="check-model-form"' in answer.text
    assert form.status_code == 200 and all(f'value="{r}"' in form.text for r in ("engine@1.0", "engine@2.0"))


def test_a_static_site_does_not_link_the_page(served, tmp_path):
    db, url = served
    site = tmp_path / "site"
    # every page but one operator's (the operator pages share one template; the site's own pages are checked)
    done = cli(db, "site", "build", str(site), "--ops", "aten::gelu")
    assert done.returncode == 0, done.stderr
    assert list(site.rglob("*gelu*.html")) and not list(site.rglob("check-model*"))
    assert all("check-model" not in page.read_text() for page in site.glob("*.html"))
    assert 'href="/check-model"' in httpx.get(f"{url}/", timeout=60).text  # served, every page links it
