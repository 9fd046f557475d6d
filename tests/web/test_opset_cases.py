"""The build-your-own-opset page computes what `opgov opset build` prints: one folder of cases
(tests/web/opset_cases/, written by scripts/build_opset_cases.py from Python on real data), each a
choice and what opset build gives for it, checked (a) against Python now and (b) against the
page's evaluator (web/static/pages.js) run by node on the page's own data. The Chromium tests of
tests/web/test_pages.py run the same evaluator in the page.

Two worlds: PyTorch 2.13.0's registry with the 2023 review and opgov's rules file (``rules``), and
the same with the facts `opgov decomps import-torch` traced from the installed torch (``torch``).
"""

from __future__ import annotations

import difflib
import json
import random
import shutil

import pytest

from tests.web.opset_parity import WORLDS, cases, make_world, page_data, python_result, run_node, summary, torch_version


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


def test_the_page_evaluator_gives_the_same_with_node(world):
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node not installed (tests/web/test_pages.py runs the evaluator in Chromium)")
    name, _, data, results = world
    from tests.web.opset_parity import CASES

    page = run_node(data, [CASES / file for file in results], node=node)
    for file, (case, result) in results.items():
        got = page[file]
        for text in ("python", "yaml"):  # the exact text first: a diff says where
            if text in result and got.get(text) != result[text]:
                diff = "".join(difflib.unified_diff(result[text].splitlines(True), got.get(text, "").splitlines(True),
                                                    "opset build", "page", n=1))
                pytest.fail(f"{file}: the page's {text} differs from opset build's:\n{diff[:3000]}")
        assert got == result, f"{file}: the page differs from opset build"
        assert summary(got) == case["expected"], file


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


def test_node_and_python_agree_on_random_choices(world, models_dir, tmp_path):
    """Beyond the recorded cases: hundreds of seeded random choices on the real registry, each
    through `opset build` (Python) and the page's evaluator (node): the same operators, notes,
    coverage and suggestions, code and yaml, or the same refusal."""
    from tests.web.opset_parity import _in_ctx, _python_result

    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("node not installed")
    name, db, data_file, _ = world
    choices = random_choices(json.loads(data_file.read_text()), RANDOM_CHOICES, seed=36 + WORLDS.index(name))
    files = []
    for i, choice in enumerate(choices):
        files.append(tmp_path / f"choice-{i:03d}.json")
        files[-1].write_text(json.dumps({"choice": choice}))
    page = run_node(data_file, files, node=node)
    python = _in_ctx(db, lambda ctx: [_python_result(ctx, choice, models_dir) for choice in choices])
    refused = 0
    for file, choice, expected in zip(files, choices, python):
        refused += "error" in expected
        assert page[file.name] == expected, f"{name} world, choice {choice}: the page differs from opset build"
    assert 0 < refused < len(choices) / 2, f"{refused} of {len(choices)} refused: the draw tests too little"
