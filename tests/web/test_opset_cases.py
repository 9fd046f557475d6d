"""The build-your-own-opset page shows what `opgov opset build` computes: one folder of cases
(tests/web/opset_cases/, written by scripts/build_opset_cases.py from Python on real data), each a
choice and what opset build gives for it, checked (a) against Python now and (b) against what the
page shows for it in Chromium, served (any choice: the page asks the server) and from a static
site opened from file:// (each preset's answer, embedded; another choice names its command). On
top, seeded random choices through the served page.

Two worlds: PyTorch 2.13.0's registry with the 2023 review and opgov's rules file (``rules``), and
the same with the facts `opgov decomps import-torch` traced from the installed torch (``torch``).
"""

from __future__ import annotations

import json
import random

import pytest

from tests.web.opset_parity import (WORLDS, cases, expected_shown, make_world, page_data, python_result, shown, summary,
                                    torch_version)
from tests.web.test_pages import browser  # noqa: F401 (a fixture)


def build_world(request, tmp_path_factory, shared_dir, models_dir):
    """(name, database URL, the page's data file, {case file: (case, Python's result now)}) of the
    world ``request.param``."""
    name = request.param
    folder = tmp_path_factory.mktemp(f"opset-{name}")
    db = make_world(name, folder, shared_dir)
    chosen = cases(name)
    assert chosen, f"no case of the {name} world in tests/web/opset_cases"
    loaded = {p.name: json.loads(p.read_text()) for p in chosen}
    recorded = {c["torch"] for c in loaded.values()}
    if recorded != {torch_version(db)}:
        pytest.fail(f"the {name} cases were computed with torch {recorded}, this database holds "
                    f"{torch_version(db)}: run scripts/build_opset_cases.py", pytrace=False)
    data = folder / "opset-data.json"
    data.write_text(page_data(db, models_dir))
    return name, db, data, {p: (c, python_result(db, c["choice"], models_dir)) for p, c in loaded.items()}


@pytest.fixture(scope="module", params=[w for w in WORLDS if w != "torch"])
def world(request, tmp_path_factory, shared_dir, pytorch_release, models_dir):
    """The rules world. The torch world's tests are test_opset_cases_torch.py's (these tests, and
    its page in Chromium): a file per world, so the test workers take one each."""
    return build_world(request, tmp_path_factory, shared_dir, models_dir)


def test_the_cases_cover_each_preset_refusals_and_torch_notes():
    """The folder holds what it must prove: every preset in both worlds, keeps, decompositions,
    refusals, and the torch world's notes on disagreements."""
    loaded = [json.loads(p.read_text()) for p in cases()]
    for name in WORLDS:
        mine = [c for c in loaded if c["world"] == name]
        assert {c["choice"]["preset"] for c in mine} == {"core-aten", "no-decomp", "full-decomp"}, name
        assert any(c["choice"]["keep"] for c in mine) and any(c["choice"]["decompose"] for c in mine), name
        assert any("error" in c["expected"] for c in mine), name
    notes = " ".join(n for c in loaded if c["world"] == "torch" for n in c["expected"].get("notes", []))
    assert "leaves ATen" in notes and "has no decomposition for them" in notes and "kept by the generated code" in notes


def test_python_gives_what_each_case_records(world):
    name, _, _, results = world
    for file, (case, result) in results.items():
        assert summary(result) == case["expected"], (
            f"{file}: opset build's answer changed; if on purpose, run scripts/build_opset_cases.py")


def test_the_selective_build_yaml_is_what_pyyaml_writes(world):
    """The yaml is written from templates (by Python and the page alike): it must be what PyYAML's
    safe dumper writes for the same operators, and load back to them."""
    import yaml

    for file, (_, result) in world[3].items():
        if "yaml" not in result:
            continue
        header, _, body = result["yaml"].partition("\noperators:")
        loaded = yaml.safe_load("operators:" + body)
        assert len(loaded["operators"]) == int(header.split("# ")[-1].split()[0]), file
        assert all(v["debug_info"][0].startswith("opgov opset ") for v in loaded["operators"].values()), file
        dumped = yaml.dump(loaded, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False,
                           width=float("inf"))
        assert "operators:" + body == dumped, file


RANDOM_CHOICES = 200  # per world, from a fixed seed


def random_choices(data: dict, n: int, seed: int) -> list[dict]:
    """``n`` choices a user could make on the page: a preset, and a few operators to decompose and
    to keep, drawn from the whole registry, the operators with a rule and the core ones (so that
    most choices change the opset, and some are refused)."""
    rng = random.Random(seed)
    everything = sorted(data["operators"])
    with_rule = sorted(data["rules"])
    core = sorted(op for op, (category, _, _) in data["operators"].items() if category == "core")
    pools = [everything, with_rule, with_rule, core]

    def some() -> list[str]:
        return [rng.choice(rng.choice(pools)) for _ in range(rng.choice((0, 0, 1, 1, 2, 3, 6)))]

    choices = []
    for _ in range(n):
        decompose, keep = some(), some()
        if decompose and rng.random() < 0.1:  # refused: both decomposed and kept
            keep.append(rng.choice(decompose))
        choices.append({"preset": rng.choice(sorted(data["presets"])), "decompose": decompose, "keep": keep})
    return choices


@pytest.fixture(scope="module")
def served(world, models_dir):
    """The world's `opgov serve` (its corpus the tests' models): the address of its /opset."""
    from tests.api.test_api_serve import start

    server = start(world[1], env={"OPGOV_MODELS_DIR": str(models_dir)})
    try:
        yield f"{server.url}/opset"
    finally:
        server.stop()


def test_the_served_page_shows_what_opset_build_gives_for_each_case(world, served, browser):
    """Each case's choice in the served page's address: the operators with why, the notes, the
    models and suggestions, the code and the yaml are opset build's, or its refusal."""
    for file, (case, result) in world[3].items():
        assert shown(browser, served, case["choice"]) == expected_shown(result), file


RANDOM_CHOICES = 12  # per world, from a fixed seed: each is a request and a page in Chromium


def test_the_served_page_shows_what_opset_build_gives_for_random_choices(world, served, browser, models_dir):
    """Beyond the recorded cases: seeded random choices on the real registry, each through
    `opset build` (Python) and the served page: the same operators, notes, coverage and
    suggestions, code and yaml, or the same refusal."""
    from tests.web.opset_parity import _in_ctx, _python_result

    name, db, data_file, _ = world
    choices = random_choices(json.loads(data_file.read_text()), RANDOM_CHOICES, seed=36 + WORLDS.index(name))
    python = _in_ctx(db, lambda ctx: [_python_result(ctx, choice, models_dir) for choice in choices])
    refused = 0
    for choice, expected in zip(choices, python):
        refused += "error" in expected
        assert shown(browser, served, choice) == expected_shown(expected), f"{name} world, choice {choice}"
    assert 0 < refused < len(choices) / 2, f"{refused} of {len(choices)} refused: the draw tests too little"


def test_the_static_page_shows_each_preset_and_names_the_command_of_another_choice(world, browser, models_dir,
                                                                                    tmp_path):
    """`site build`, opened from file:// (no server): each preset shows opset build's answer; a
    choice that changes one names the `opgov opset build` command that gives it. Nothing is fetched."""
    from tests.conftest import opgov_in_process
    from tests.web.test_pages import requests_off_origin

    name, db, _, _ = world
    site = tmp_path / "site"
    done = opgov_in_process(["--db", db, "site", "build", str(site), "--models", str(models_dir), "--ops", "aten::roll"])
    assert done.returncode == 0, done.stderr
    page = (site / "opset.html").as_uri()
    for preset in ("core-aten", "no-decomp", "full-decomp"):
        choice = {"preset": preset, "decompose": [], "keep": []}
        assert shown(browser, page, choice) == expected_shown(python_result(db, choice, models_dir)), preset
    shown(browser, page, {"preset": "full-decomp", "decompose": [], "keep": ["aten::linear", "aten::addmm"]})
    assert browser.find_element("id", "offline").is_displayed()
    assert browser.find_element("id", "offline-command").text == (
        "opgov opset build --preset full-decomp --keep aten::linear --keep aten::addmm")
    assert requests_off_origin(browser) == []
