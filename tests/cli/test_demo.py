"""``python3 dev.py demo`` as a newcomer runs it on a bare clone (nothing beside the checkout): it
ends with exit 0 and its report page written, every refusal in it says it is expected, and its
real-data half runs on the copies that ship in ``tests/data``. The demo runs the opgov this Python
has (``OPGOV_DEV_NO_INSTALL=1``): nothing is installed. It runs in a folder of the test's own
(``demo --work DIR``): the suite never touches the checkout's ``.demo`` a newcomer is reading."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

REFUSAL = re.compile(r"^(opgov: (refused|error)\b|[1-9]\d* errors?\b)")


def bare_clone(tmp_path: Path, *, data: bool = True) -> Path:
    """A checkout with nothing beside it: dev.py and the folders the demo reads (links to this
    checkout's), in a folder whose parent holds no ``shared``."""
    clone = tmp_path / "clone"
    (clone / "tests").mkdir(parents=True)
    shutil.copy(REPO / "dev.py", clone / "dev.py")
    (clone / "data").symlink_to(REPO / "data")
    if data:
        (clone / "tests" / "data").symlink_to(REPO / "tests" / "data")
    assert not (clone.parent / "shared").exists()
    return clone


def demo(clone: Path, *args: str) -> tuple[int, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")}
    env |= {"OPGOV_DEV_NO_INSTALL": "1", "COLUMNS": "120"}
    result = subprocess.run([sys.executable, "dev.py", "demo", *args], cwd=clone, env=env, text=True, timeout=600,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return result.returncode, result.stdout.splitlines()


def steps(lines: list[str]) -> list[list[str]]:
    """The output cut at each ``$ opgov …`` line: one list of lines per step, its command first."""
    found: list[list[str]] = []
    for line in lines:
        if line.startswith("$ opgov "):
            found.append([])
        if found:
            found[-1].append(line)
    return found


def tree(folder: Path) -> dict[str, tuple[int, int]] | None:
    """Every file under ``folder`` with its size and modification time (None: no such folder)."""
    if not folder.is_dir():
        return None
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def test_the_demo_runs_both_halves_on_a_bare_clone_in_the_folder_it_is_given(tmp_path):
    clone = bare_clone(tmp_path)
    work = tmp_path / "work"
    checkout_demo = tree(REPO / ".demo")
    code, lines = demo(clone, "--work", str(work))
    output = "\n".join(lines)
    assert code == 0, output
    assert "Traceback" not in output
    report = work / "report.html"
    assert report.is_file() and "<html" in report.read_text().lower()
    assert not (clone / ".demo").exists() and tree(REPO / ".demo") == checkout_demo
    refusals = [step for step in steps(lines) if any(REFUSAL.match(line) for line in step[1:])]
    assert refusals, "the demo shows no refusal"  # it shows one on purpose (the deprecation timer)
    for step in refusals:
        assert any(line.startswith("# (expected: exit ") for line in step), \
            f"{step[0]} is refused with no word that it is expected:\n" + "\n".join(step)
    assert any("mark-deprecated aten::glu" in step[0] for step in refusals)
    # the real half: PyTorch 2.13.0's registry and the real models, from the copies in tests/data
    assert not [line for line in lines if line.startswith("# Skipped:")], output
    assert "the data from tests/data" in output
    opset = [step for step in steps(lines) if step[0].startswith("$ opgov opset build")]
    assert len(opset) == 1 and str(clone / "tests" / "data" / "models") in opset[0][0]
    assert "mobilenet_v3_small" in output
    assert (work / "pytorch-2.13.0.db").is_file()


def test_without_any_real_data_the_demo_says_what_it_skips(tmp_path, monkeypatch):
    """Where neither OPGOV_SHARED_DIR, ../shared nor tests/data holds the real data (a copy of the
    checkout without the tests), the demo names the three places it looked."""
    clone = bare_clone(tmp_path, data=False)
    monkeypatch.setenv("OPGOV_SHARED_DIR", str(tmp_path / "missing"))
    spec = importlib.util.spec_from_file_location("dev_of_the_clone", clone / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    assert dev.real_data() is None
    (tmp_path / "missing" / "models").mkdir(parents=True)
    shutil.copy(REPO / "tests" / "data" / "models" / "torchvision_ops.json", tmp_path / "missing" / "models")
    assert dev.real_data() is None  # the models alone are not enough: the registry is missing too
    (clone / "tests" / "data").symlink_to(REPO / "tests" / "data")
    assert dev.real_data() == clone / "tests" / "data"
    monkeypatch.setenv("OPGOV_SHARED_DIR", str(REPO / "tests" / "data"))
    assert dev.real_data() == REPO / "tests" / "data"  # the folder given first


def test_the_demo_refuses_a_folder_it_did_not_write(tmp_path):
    """The demo empties its folder first: a folder holding anything but an earlier demo is refused,
    untouched, before anything is installed or run."""
    work = tmp_path / "notes"
    work.mkdir()
    (work / "mine.txt").write_text("keep me")
    code, lines = demo(bare_clone(tmp_path), "--work", str(work))
    assert code == 1 and len(lines) == 1 and "not empty" in lines[0] and str(work) in lines[0]
    assert (work / "mine.txt").read_text() == "keep me"
