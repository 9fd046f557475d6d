"""The web pages in real headless Chromium (selenium + chromedriver), against a real `opgov
serve` process on 127.0.0.1 and against a `site build` opened from file://, on a database that
imported PyTorch 2.13.0, the shipped 2023 decisions and opgov's rules file.

Screenshots at 390 px and 1280 px go to a folder the tests print (``-s`` shows it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from tests.api.test_api_serve import start
from tests.conftest import opgov_in_process

REPO = Path(__file__).resolve().parents[2]
DECISIONS = REPO / "data" / "decisions" / "core-aten-review-2023.yaml"
RULES = REPO / "data" / "decomps" / "export-composites.yaml"
OPGOV = [sys.executable, "-m", "opgov"]
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


def run(db: str, *args: str) -> str:
    done = opgov_in_process(["--db", db, "--actor", "setup", *args], env={**os.environ, "OPGOV_SERVER": ""})
    assert done.returncode == 0, f"opgov {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def world(tmp_path_factory, pytorch_release, models_dir):
    """(database URL, served base URL, site folder, models folder)."""
    folder, older = pytorch_release("2.13.0"), pytorch_release("2.6.0")
    db = f"sqlite:///{tmp_path_factory.mktemp('web') / 'opgov.db'}"
    run(db, "db", "upgrade")
    run(db, "import", str(older / "native_functions.yaml"), "--tags-yaml", str(older / "tags.yaml"), "--label", "2.6.0")
    run(db, "import", str(folder / "native_functions.yaml"), "--tags-yaml", str(folder / "tags.yaml"),
        "--label", "2.13.0")
    run(db, "members", "add", "setup", "--role", "maintainer")
    run(db, "decisions", "load", str(DECISIONS))
    run(db, "decomps", "load", str(RULES))
    run(db, "members", "add", "m2", "--role", "maintainer")
    run(db, "members", "add", "m3", "--role", "maintainer")
    run(db, "propose-core", "aten::hardswish", "--rationale", "cheap on every backend <b>we</b> know")
    run(db, "deprecate", "aten::glu", "--reason", "the decomposition covers it", "--replacement", "aten::sigmoid")
    executorch = models_dir.parent / "executorch"
    for version in ("0.2.0", "1.3.0"):
        run(db, "runtimes", "add", f"executorch@{version}", "--ops", str(executorch / version / "portable-functions.yaml"))
    site = tmp_path_factory.mktemp("site") / "site"
    run(db, "site", "build", str(site), "--models", str(models_dir), "--ops", "aten::add*", "--ops", "aten::roll",
        "--ops", "aten::kthvalue", "--ops", "aten::glu", "--ops", "aten::_assert_tensor_metadata")
    server = start(db, env={"OPGOV_MODELS_DIR": str(models_dir)})
    try:
        yield db, server.url, site, models_dir
    finally:
        server.stop()


def chromium(*flags: str, console: bool = False):
    """Headless Chromium driven by chromedriver (skipped, or failed under OPGOV_REQUIRE_CHROMIUM=1,
    when either is missing); ``console`` keeps the page's console for the tests to read."""
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        if os.environ.get("OPGOV_REQUIRE_CHROMIUM") == "1":
            pytest.fail("headless Chromium and chromedriver are required", pytrace=False)
        pytest.skip("chromium or chromedriver not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    if console:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
                 "--disable-extensions", "--disable-sync", "--disable-component-update", "--window-size=1280,900",
                 *flags):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture(scope="module")
def browser():
    driver = chromium("--hide-scrollbars", console=True)  # the console, for the tests below
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"\nscreenshots: {folder}")
    return folder


@pytest.fixture(params=["served", "file"])
def site(request, world):
    """``site(page, op=None)`` → the URL of a page, served or in the static site."""
    _, base, folder, _ = world

    def url(page: str, op: str | None = None) -> str:
        if request.param == "served":
            return f"{base}/ops/{quote(op, safe='')}" if op else f"{base}/{page}"
        return (folder / "ops" / f"{op.replace('::', '.')}.html").as_uri() if op else (folder / f"{page}.html").as_uri()

    url.mode = request.param
    return url


def wait(driver, condition, timeout: float = 20):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def load(driver, url: str) -> None:
    driver.get(url)
    wait(driver, lambda d: d.execute_script("return document.readyState") == "complete")


def ready(driver) -> None:
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready") == "1")


def text(driver, element_id: str) -> str:
    return driver.find_element("id", element_id).text


def requests_off_origin(driver) -> list[str]:
    """Every resource the page loaded from another origin (performance entries)."""
    return driver.execute_script("""
        const origin = location.protocol === 'file:' ? 'file://' : location.origin;
        return performance.getEntriesByType('resource').map(e => e.name)
            .filter(n => !n.startsWith(origin + (origin === 'file://' ? '' : '/')));""")


def visible_rows(driver, table: str) -> list[list[str]]:
    """The cells of the rows of a table that are shown (one script call, not one per row)."""
    return driver.execute_script(f"""
        return Array.from(document.querySelectorAll('{table} tbody tr')).filter(r => !r.hidden)
            .map(r => Array.from(r.cells).map(c => c.textContent.trim()));""")


def cli_opset(db: str, models: Path, preset: str, *extra: str, fmt: str = "json") -> str:
    return run(db, "opset", "build", "--preset", preset, *extra, "--models", str(models), "--format", fmt)


# --- the tests ----------------------------------------------------------------------------------------


def test_search_finds_add_tensor_and_opens_its_page(browser, site):
    load(browser, site("ops"))
    ready(browser)
    total = int(text(browser, "ops-shown"))
    assert total > 3000
    box = browser.find_element("id", "q")
    box.send_keys("add.Tensor")
    wait(browser, lambda d: int(text(d, "ops-shown")) < total)
    visible = [cells[0].split()[0] for cells in visible_rows(browser, "#ops")]
    assert "aten::add.Tensor" in visible
    assert all("add.tensor" in name.lower() for name in visible)
    assert "q=add.Tensor" in browser.current_url  # the search is kept in the address
    browser.find_element("link text", "aten::add.Tensor").click()
    wait(browser, lambda d: d.find_element("tag name", "h1").text == "aten::add.Tensor")
    assert "core" in browser.find_element("css selector", ".badges").text
    assert requests_off_origin(browser) == []


def test_filters_by_category_lifecycle_tag_and_kind(browser, site):
    from selenium.webdriver.support.ui import Select

    load(browser, site("ops"))
    ready(browser)
    Select(browser.find_element("id", "category")).select_by_visible_text("core")
    Select(browser.find_element("id", "kind")).select_by_visible_text("functional")
    rows = visible_rows(browser, "#ops")
    assert rows and int(text(browser, "ops-shown")) == len(rows)
    assert all(cells[1] == "core" and cells[3] == "functional" for cells in rows)
    assert "aten::add.Tensor" in [cells[0] for cells in rows]
    Select(browser.find_element("id", "tag")).select_by_visible_text("pointwise")
    tagged = visible_rows(browser, "#ops")
    assert 0 < len(tagged) < len(rows)
    assert all("pointwise" in cells[4] for cells in tagged)


def test_operator_page_shows_its_decision_rationale(browser, site, world):
    db = world[0]
    detail = json.loads(run(db, "ops", "show", "aten::roll", "--json"))
    rationale = detail["decisions"][0]["rationale"]
    load(browser, site("ops", "aten::roll"))
    decisions = browser.find_element("id", "decisions").text
    assert rationale in decisions
    assert detail["decisions"][0]["category"] in decisions
    assert text(browser, "schema") == detail["schema"]
    assert "2.13.0" in browser.find_element("id", "history").text
    assert requests_off_origin(browser) == []


def test_operator_page_shows_each_schema_change_as_a_diff(browser, site, world):
    detail = json.loads(run(world[0], "ops", "show", "aten::kthvalue", "--json"))
    old, new = (h["schema"] for h in detail["history"])
    assert old != new
    load(browser, site("ops", "aten::kthvalue"))
    diffs = browser.find_elements("css selector", "#history pre.diff")
    assert len(diffs) == 1
    pieces = browser.execute_script("""return Array.from(arguments[0].querySelector('code').childNodes)
        .map(n => [n.nodeName, n.textContent]);""", diffs[0])
    assert any(kind == "DEL" for kind, _ in pieces) or any(kind == "INS" for kind, _ in pieces)
    assert "".join(t for kind, t in pieces if kind != "DEL") == new  # reading past the deletions: the new schema
    assert "".join(t for kind, t in pieces if kind != "INS") == old


def test_opset_choice_matches_opset_build(browser, site, world):
    db, _, _, models = world
    load(browser, site("opset"))
    ready(browser)
    core = json.loads(cli_opset(db, models, "core-aten"))
    assert int(text(browser, "op-count")) == core["count"]  # opens on core-aten
    assert int(text(browser, "model-count")) == core["coverage"]["covered"]
    # opset build's sentences are written once (core/opset.py's TEXTS): the page shows its line as a sentence
    said = next(line for line in cli_opset(db, models, "core-aten", fmt="text").splitlines()
                if "would be decomposed but have no rule" in line).removesuffix(" (--format json lists them)")
    assert said[0].upper() + said[1:] + "." in text(browser, "lines").splitlines()

    browser.find_element("css selector", "input[name=preset][value=no-decomp]").click()
    wait(browser, lambda d: "no-decomp" in d.find_element("id", "choice-text").text)
    before = json.loads(cli_opset(db, models, "no-decomp"))
    assert int(text(browser, "op-count")) == before["count"]
    # toggle one decomposition: find the operator, decompose it
    browser.find_element("id", "op-search").send_keys("aten::linear")
    box = browser.find_element("css selector", "input[data-op='aten::linear']")
    wait(browser, lambda d: box.is_displayed())
    assert not box.is_selected()
    browser.find_element("css selector", "label[for='%s']" % box.get_attribute("id")).click()
    assert box.is_selected() and "✱" in box.find_element("xpath", "..").text  # marked as changed
    if site.mode == "file":  # no server to ask: the page names the command that answers
        wait(browser, lambda d: d.find_element("id", "offline").is_displayed())
        assert text(browser, "offline-command") == "opgov opset build --preset no-decomp --decompose aten::linear"
        assert requests_off_origin(browser) == []
        return
    wait(browser, lambda d: "decompose aten::linear" in d.find_element("id", "choice-text").text)

    after = json.loads(cli_opset(db, models, "no-decomp", "--decompose", "aten::linear"))
    assert after["count"] != before["count"] or after["coverage"]["covered"] != before["coverage"]["covered"]
    assert int(text(browser, "op-count")) == after["count"]
    assert int(text(browser, "model-count")) == after["coverage"]["covered"]
    shown = [cells[0] for cells in visible_rows(browser, "#implement")]
    assert shown == [e["op"] for e in after["operators"]]

    code = browser.execute_script("return document.getElementById('python-code').textContent")
    assert code == cli_opset(db, models, "no-decomp", "--decompose", "aten::linear", fmt="python")
    yaml_text = browser.execute_script("return document.getElementById('selective-build').textContent")
    assert yaml_text == cli_opset(db, models, "no-decomp", "--decompose", "aten::linear", fmt="selective-build")
    download = browser.find_element("id", "download-yaml")
    assert download.get_attribute("download") == "selected_operators.yaml"
    assert download.get_attribute("href").startswith("blob:")

    # the choice is in the address: opening it again shows the same opset
    shared = browser.current_url
    assert "preset=no-decomp" in shared and "decompose=aten%3A%3Alinear" in shared
    load(browser, "about:blank")
    load(browser, shared)
    ready(browser)
    assert int(text(browser, "op-count")) == after["count"]
    box = browser.find_element("css selector", "input[data-op='aten::linear']")
    assert box.is_selected()
    browser.find_element("id", "op-search").send_keys("aten::linear")
    wait(browser, lambda d: box.is_displayed())
    # unchecking it again is the preset unchanged: its answer, the box no longer marked
    browser.find_element("css selector", "label[for='%s']" % box.get_attribute("id")).click()
    wait(browser, lambda d: d.find_element("id", "choice-text").text == "no-decomp")
    assert int(text(browser, "op-count")) == before["count"]
    assert requests_off_origin(browser) == []


def test_full_decomp_with_a_kept_operator_matches_opset_build(browser, world):
    """A second choice, by the address alone: full-decomp keeping aten::linear (served: the page
    asks the server for any choice)."""
    db, base, _, models = world
    load(browser, f"{base}/opset#preset=full-decomp&keep=aten%3A%3Alinear")
    ready(browser)
    expected = json.loads(cli_opset(db, models, "full-decomp", "--keep", "aten::linear"))
    assert int(text(browser, "op-count")) == expected["count"]
    assert int(text(browser, "model-count")) == expected["coverage"]["covered"]
    suggestions = browser.execute_script(
        "return Array.from(document.querySelectorAll('#suggestions li code')).map(c => c.textContent)")
    assert suggestions == [s["op"] for s in expected["coverage"]["suggestions"]]
    code = browser.execute_script("return document.getElementById('python-code').textContent")
    assert code == cli_opset(db, models, "full-decomp", "--keep", "aten::linear", fmt="python")
    yaml_text = browser.execute_script("return document.getElementById('selective-build').textContent")
    assert yaml_text == cli_opset(db, models, "full-decomp", "--keep", "aten::linear", fmt="selective-build")


def test_committee_pages_and_keyboard(browser, site):
    from selenium.webdriver.common.keys import Keys

    for page, heading in (("proposals", "Proposals"), ("queue", "Review queue")):
        load(browser, site(page))
        assert browser.find_element("tag name", "h1").text == heading
        assert requests_off_origin(browser) == []
    load(browser, site("proposals"))
    proposal = browser.find_element("css selector", "article.proposal").text
    assert "aten::hardswish" in proposal and "open" in proposal
    assert "cheap on every backend <b>we</b> know" in proposal  # user text shown as text, not markup
    assert "quorum" in proposal
    load(browser, site("report"))
    assert browser.find_element("tag name", "h1").text.startswith("Core ATen opset: weekly report")
    # keyboard: the first Tab reaches the skip link, Enter moves focus to the content
    browser.find_element("tag name", "body").send_keys(Keys.TAB)
    assert browser.switch_to.active_element.text == "Skip to the content"
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    assert browser.switch_to.active_element.get_attribute("id") == "content"


def test_screenshots_at_phone_and_desktop_widths(browser, site, shots):
    for width in (390, 1280):
        browser.set_window_size(width, 900)
        for page, op in (("opset", None), ("ops", None), ("ops", "aten::roll"), ("proposals", None), ("report", None)):
            load(browser, site(page, op))
            if op is None and page in ("opset", "ops"):
                ready(browser)
            # nothing wider than the window: the page never scrolls sideways as a whole
            overflow = browser.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{page} {op or ''} is {overflow}px too wide at {width}px"
            name = f"{site.mode}-{page}{'-' + op.replace('::', '.') if op else ''}-{width}.png"
            browser.save_screenshot(str(shots / name))
            assert (shots / name).stat().st_size > 5000
    browser.set_window_size(1280, 900)


def test_json_twins_hold_what_the_pages_show(world):
    db, base, folder, _ = world
    data = httpx.get(f"{base}/api/v1/pages/opset", timeout=60).json()
    assert len(data["models"]) == 43
    assert data == json.loads((folder / "data" / "opset.json").read_text())
    page = httpx.get(f"{base}/api/v1/pages/ops/{quote('aten::roll', safe='')}", timeout=60).json()
    assert page["operator"]["decisions"][0]["rationale"]
    assert httpx.get(f"{base}/opset", timeout=60).headers["content-type"].startswith("text/html")
    assert httpx.get(f"{base}/ops/aten::no_such_op", timeout=60).status_code == 404


def test_site_build_refuses_a_folder_that_is_not_a_site(world, tmp_path):
    db = world[0]
    (tmp_path / "notes.txt").write_text("mine")
    done = subprocess.run([*OPGOV, "--db", db, "site", "build", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 2
    assert "is not an opgov site" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


CHOICES = [("core-aten", [], []), ("no-decomp", ["aten::linear", "aten::addmm"], []),
           ("full-decomp", [], ["aten::addmm", "aten::linear"]), ("core-aten", ["aten::roll"], ["aten::hardswish"]),
           ("full-decomp", ["aten::_assert_tensor_metadata"], ["aten::roll"]), ("no-decomp", [], ["aten::add_.Tensor"])]


def test_the_page_shows_what_opset_build_does_for_many_choices(browser, world):
    """The served page, each choice in its address, against opgov's build, coverage and
    renderings, on this world's database (the recorded cases and random choices of each world:
    tests/web/test_opset_cases.py)."""
    from tests.web.opset_parity import expected_shown, python_result, shown

    db, base, _, models = world
    for choice in [{"preset": p, "decompose": d, "keep": k} for p, d, k in CHOICES]:
        assert shown(browser, f"{base}/opset", choice) == expected_shown(python_result(db, choice, models)), choice


PAGES = ["index", "opset", "ops", "proposals", "queue", "report", "closure", "check-model"]
SERVED_ONLY = {"check-model"}  # it reads an upload: no static site holds it


def test_no_page_logs_a_console_error_or_shows_a_path_of_the_machine(browser, site, world):
    """Every page, served and from file://: nothing in the console (no /favicon.ico 404), and no
    folder of the machine that built it: any absolute path (the checkout, site-packages, the
    database, the temporary folders, ../shared, HOME), not a list of a few."""
    from tests.web.test_machine_paths import machine_paths

    pages = [p for p in PAGES if site.mode == "served" or p not in SERVED_ONLY]
    for page, op in [(p, None) for p in pages] + [("ops", "aten::roll"), ("ops", "aten::add.Tensor")]:
        load(browser, site(page, op).removesuffix("/index"))  # served, the home page is /
        shown = browser.page_source
        leaked = machine_paths(shown)
        assert not leaked, f"{page} {op or ''} ({site.mode}) shows {leaked}"
        errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
        assert not errors, f"{page} {op or ''} ({site.mode}): {errors}"


def test_operator_page_names_the_runtimes_that_implement_it(browser, site):
    """The backend author's question: who implements this operator, and since when."""
    load(browser, site("ops", "aten::add.Tensor"))
    shown = text(browser, "runtimes")
    assert shown.count("executorch:") == 1
    assert "in executorch@1.3.0, since executorch@0.2.0" in shown
    load(browser, site("ops", "aten::_assert_tensor_metadata"))
    assert "No registered runtime implements it" in text(browser, "runtimes")


def test_operator_page_shows_each_badge_and_step_once(browser, site):
    load(browser, site("ops", "aten::glu"))
    badges = [b.text for b in browser.find_elements("css selector", ".badges .badge")]
    assert len(badges) == len(set(badges)) and "deprecating" in badges, badges
    steps = [li.text for li in browser.find_elements("css selector", "#lifecycle .timeline li")]
    assert sum("deprecating" in s for s in steps) == 1, steps
    assert "aten::sigmoid" in " ".join(steps)
    load(browser, site("ops", "aten::add.Tensor"))
    badges = [b.text for b in browser.find_elements("css selector", ".badges .badge")]
    assert badges.count("core") == 1, badges
