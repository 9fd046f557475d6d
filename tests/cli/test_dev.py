"""``python3 dev.py test``: the suite on a worker per core (pytest-xdist, a test file per worker, so a
module's server and databases are set up once), unless the arguments choose how pytest runs."""

from __future__ import annotations

import importlib.util
import subprocess

import pytest

from tests.conftest import REPO


def pytest_argv(monkeypatch, args: list[str]) -> list[str]:
    """What ``python3 dev.py test ARGS`` runs (its set-up of .venv left out)."""
    spec = importlib.util.spec_from_file_location("dev_under_test", REPO / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)
    calls: list[list[str]] = []
    monkeypatch.setattr(dev, "setup", lambda *a, **k: None)
    monkeypatch.setattr(dev.subprocess, "run", lambda argv, **kw: calls.append(argv) or subprocess.CompletedProcess(argv, 0))
    assert dev.test(args) == 0
    (argv,) = calls
    assert argv[0] == str(dev.PY)
    return argv[1:]


def test_the_suite_runs_on_a_worker_per_core(monkeypatch):
    assert pytest_argv(monkeypatch, ["-k", "governance"]) == [
        "-m", "pytest", "-n", "auto", "--dist", "loadfile", "--no-loadscope-reorder", "-k", "governance"]


@pytest.mark.parametrize("args", [["-n", "0"], ["-n0"], ["--numprocesses=3"], ["--dist", "load"], ["-p", "no:xdist"]])
def test_arguments_that_choose_how_pytest_runs_are_left_alone(monkeypatch, args):
    assert pytest_argv(monkeypatch, args) == ["-m", "pytest", *args]


def test_the_longest_files_are_handed_out_first():
    """xdist hands the files out in the collection's order (dev.py turns its reordering by size
    off): the files of LONGEST first, longest first, each file's tests kept together and in order."""
    from types import SimpleNamespace

    from tests.conftest import LONGEST, longest_first

    assert all((REPO / "tests" / path).is_file() for path in LONGEST), "LONGEST names a file that is gone"
    (long_a, a), (long_b, b) = sorted(LONGEST.items(), key=lambda entry: -entry[1])[:2]
    assert a > b
    items = [SimpleNamespace(nodeid=f"tests/{path}::test_{n}") for path, n in
             [("core/test_many.py", 1), (long_b, 1), ("core/test_many.py", 2), ("core/test_one.py", 1),
              (long_a, 1), ("core/test_many.py", 3), (long_b, 2)]]
    assert [item.nodeid for item in longest_first(items)] == [
        f"tests/{long_a}::test_1", f"tests/{long_b}::test_1", f"tests/{long_b}::test_2",
        "tests/core/test_many.py::test_1", "tests/core/test_many.py::test_2", "tests/core/test_many.py::test_3",
        "tests/core/test_one.py::test_1"]
