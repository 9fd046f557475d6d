"""``python3 dev.py demo`` as a newcomer runs it: it ends with exit 0 and its report page written,
every refusal in it says it is expected, and without the real data (``../shared``) it says what it
skipped. The demo runs the opgov this Python has (``OPGOV_DEV_NO_INSTALL=1``): nothing is installed."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO, SHARED

REFUSAL = re.compile(r"^(opgov: (refused|error)\b|[1-9]\d* errors?\b)")


def demo(shared: str) -> tuple[int, list[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")}
    env |= {"OPGOV_DEV_NO_INSTALL": "1", "OPGOV_SHARED_DIR": shared, "COLUMNS": "120"}
    result = subprocess.run([sys.executable, "dev.py", "demo"], cwd=REPO, env=env, text=True, timeout=600,
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


@pytest.mark.parametrize("data", ["real data", "no ../shared"])
def test_the_demo_runs_and_says_what_each_refusal_means(data, tmp_path):
    real = (SHARED / "pytorch" / "2.13.0" / "native_functions.yaml").is_file() and (
        SHARED / "models" / "torchvision_ops.json").is_file()
    if data == "real data" and not real:
        pytest.skip(f"PyTorch 2.13.0's registry and the models are not in {SHARED}")
    report = REPO / ".demo" / "report.html"
    code, lines = demo(str(SHARED) if data == "real data" else str(tmp_path / "missing"))
    output = "\n".join(lines)
    assert code == 0, output
    assert "Traceback" not in output
    assert report.is_file() and "<html" in report.read_text().lower()
    refusals = [step for step in steps(lines) if any(REFUSAL.match(line) for line in step[1:])]
    assert refusals, "the demo shows no refusal"  # it shows one on purpose (the deprecation timer)
    for step in refusals:
        assert any(line.startswith("# (expected: exit ") for line in step), \
            f"{step[0]} is refused with no word that it is expected:\n" + "\n".join(step)
    assert any("mark-deprecated aten::glu" in step[0] for step in refusals)
    skipped = [line for line in lines if line.startswith("# Skipped:")]
    ran_real = any(step[0].startswith("$ opgov opset build") for step in steps(lines))
    if data == "real data":
        assert ran_real and not skipped
    else:
        assert not ran_real and len(skipped) == 1 and "tmp" in skipped[0] and "missing" in skipped[0]
