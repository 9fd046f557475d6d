"""The torch world of tests/web/test_opset_cases.py (PyTorch 2.13.0's registry with the 2023
review, opgov's rules file and the facts `opgov decomps import-torch` traced from the installed
torch, the session's trace): the same tests, in a file of its own so that `--dist loadfile` runs it
beside the rules world."""

from __future__ import annotations

import pytest

from tests.web.test_opset_cases import (  # noqa: F401 - the tests of each world, collected here for this one
    build_world, served, test_python_gives_what_each_case_records,
    test_the_selective_build_yaml_is_what_pyyaml_writes, test_the_served_page_shows_what_opset_build_gives_for_each_case,
    test_the_served_page_shows_what_opset_build_gives_for_random_choices,
    test_the_static_page_shows_each_preset_and_names_the_command_of_another_choice)
from tests.web.test_pages import browser  # noqa: F401 (a fixture)


@pytest.fixture(scope="module", params=["torch"])
def world(request, tmp_path_factory, shared_dir, pytorch_release, models_dir):
    return build_world(request, tmp_path_factory, shared_dir, models_dir)


def test_the_served_page_says_which_torch_release_it_is_exact_for(world, served, browser):
    from tests.web.opset_parity import shown

    shown(browser, served, {"preset": "core-aten", "decompose": [], "keep": []})
    assert "torch 2.13" in browser.find_element("id", "torch-note").text
