"""The torch world of tests/web/test_opset_cases.py (PyTorch 2.13.0's registry with the 2023
review, opgov's rules file and the facts `opgov decomps import-torch` traced from the installed
torch, the session's trace): the same tests, in a file of its own so that `--dist loadfile` runs it
beside the rules world, and the world's static page in Chromium."""

from __future__ import annotations

import pytest

from tests.web.test_opset_cases import (  # noqa: F401 - the tests of each world, collected here for this one
    build_world, test_node_and_python_agree_on_random_choices, test_python_gives_what_each_case_records,
    test_the_page_evaluator_gives_the_same_with_node, test_the_selective_build_yaml_is_what_pyyaml_writes)
from tests.web.test_pages import browser, load, ready, requests_off_origin, text  # noqa: F401 (browser: a fixture)


@pytest.fixture(scope="module", params=["torch"])
def world(request, tmp_path_factory, shared_dir, pytorch_release, models_dir):
    return build_world(request, tmp_path_factory, shared_dir, models_dir)


def test_the_static_page_of_the_torch_world_shows_each_case_from_file(world, browser, models_dir, tmp_path):
    """`site build` of the torch world, opened from file:// in Chromium with each case's choice in
    the address: the count, the notes, the code and the yaml are the case's (a refused choice
    shows the refusal). Nothing is fetched."""
    name, db, _, results = world
    assert name == "torch"  # the rules world's page is tested by tests/web/test_pages.py
    import hashlib
    from urllib.parse import urlencode

    from tests.conftest import opgov_in_process

    site = tmp_path / "site"
    done = opgov_in_process(["--db", db, "site", "build", str(site), "--models", str(models_dir), "--ops", "aten::roll"])
    assert done.returncode == 0, done.stderr
    driver = browser
    page = (site / "opset.html").as_uri()
    for file, (case, _) in results.items():
        choice, expected = case["choice"], case["expected"]
        query = [("preset", choice["preset"])] + [("decompose", op) for op in choice["decompose"]] + [
            ("keep", op) for op in choice["keep"]]
        load(driver, "about:blank")
        load(driver, page + "#" + urlencode(query))
        ready(driver)
        if "error" in expected:
            assert text(driver, "choice-error") == expected["error"], file
            continue
        assert int(text(driver, "op-count")) == expected["count"], file
        shown = driver.execute_script("""return [document.getElementById('python-code').textContent,
            document.getElementById('selective-build').textContent,
            Array.from(document.querySelectorAll('#notes li')).map(li => li.textContent)]""")
        assert shown[0] == expected["python"], file
        assert hashlib.sha256(shown[1].encode()).hexdigest() == expected["yaml"]["sha256"], file
        assert shown[2] == expected["notes"], file
        assert case["torch"] in text(driver, "torch-note")
    assert requests_off_origin(driver) == []
