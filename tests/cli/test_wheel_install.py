"""Install like a user: a wheel built from this checkout, installed into a fresh venv outside it,
runs the everyday commands on a real release — the migrations and the shipped data come from the
installed package, not from the checkout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.wheel, pytest.mark.ci]  # a wheel build: CI's run (tests/conftest.CI_ONLY)


# the fresh venv must see only what is installed in it, never a checkout on PYTHONPATH
CLEAN_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _run(cmd, *, cwd, env=None, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env or CLEAN_ENV, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with opgov installed from a wheel; returns its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"  # a copy, so the build leaves nothing in the checkout
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache", ".demo", "benchmarks", "tests"))
    built = _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", work / "dist", source], cwd=work)
    assert built.returncode == 0, built.stderr
    wheel = next((work / "dist").glob("opgov-*.whl"))
    venv.EnvBuilder(with_pip=True, clear=True).create(work / "venv")
    bin_dir = work / "venv" / ("Scripts" if os.name == "nt" else "bin")
    shutil.rmtree(source)  # nothing left to find migrations or data in but the installed package
    installed = _run([bin_dir / "python", "-m", "pip", "install", "-q", wheel], cwd=work)
    assert installed.returncode == 0, installed.stderr
    return bin_dir


@pytest.mark.realdata
def test_wheel_install_runs_the_everyday_commands(installed, pytorch_release, tmp_path):
    where = _run([installed / "python", "-c", "import opgov; print(opgov.__file__)"], cwd=tmp_path)
    assert Path(where.stdout.strip()).is_relative_to(installed.parent), where.stdout

    env = {**CLEAN_ENV, "OPGOV_DATABASE_URL": f"sqlite:///{tmp_path / 'opgov.db'}", "COLUMNS": "200"}

    def opgov(*args, expect=0) -> str:
        result = _run([installed / "opgov", *args], cwd=tmp_path, env=env)
        assert result.returncode == expect, f"opgov {' '.join(map(str, args))}: {result.stderr}{result.stdout}"
        assert "Traceback" not in result.stderr
        return result.stdout

    assert "database at revision" in opgov("db", "upgrade")
    for version in ("2.12.0", "2.13.0"):
        release = pytorch_release(version)
        out = opgov("import", release / "native_functions.yaml", "--tags-yaml", release / "tags.yaml",
                    "--label", version)
        assert f"snapshot {version}:" in out
    assert "93 decisions recorded" in opgov("decisions", "load", "core-aten-review-2023")
    assert "57 rules from opgov-export-composites" in opgov("decomps", "load", "export-composites")
    # an ExecuTorch release by name: its registries and kernel facts come from the package's data
    assert "added executorch@1.3.0, released 2026-05-26: 210 kernels" in opgov("runtimes", "add", "executorch@1.3.0")
    model = tmp_path / "gather.txt"
    model.write_text("aten::gather\n")
    assert "runs" in opgov("check-model", model, "--runtime", "executorch@1.3.0").splitlines()[0]
    bc = opgov("check-bc", "2.12.0", "2.13.0", expect=1)  # 2.13.0 breaks BC (removed operators)
    assert "errors" in bc.splitlines()[-1] and "BC" in bc.splitlines()[-1]
    report = opgov("report", "weekly")
    assert report.startswith("# Core ATen opset: weekly report")
    assert "2.13.0" in report
    # the HTML page comes from the packaged Jinja2 templates, its stylesheet from opgov/render/static
    page = opgov("report", "weekly", "--format", "html")
    assert page.lstrip().lower().startswith("<!doctype html>") and "2.13.0" in page and "<style>" in page
    # the model corpora ship in the package: by name, and as the default evidence
    opset = opgov("opset", "build", "--preset", "core-aten", "--models", "shipped")
    assert "models (core-aten operators): " in opset and "/43 covered" in opset
    resnet = json.loads(opgov("check-model", "torchvision#resnet18", "--format", "json"))
    assert resnet["ok"] and "aten::conv2d" in resnet["operators"]
    assert "opgov's shipped corpora (torchvision, transformers)" in opgov("queue", "--format", "json")
    from opgov.db.engine import HEAD_REVISION

    assert HEAD_REVISION in opgov("db", "current")  # every migration shipped
