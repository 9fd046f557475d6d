"""check-model against ExecuTorch's own runtime: small programs in float32, float16, bfloat16, integer
and bool dtypes, lowered to .pte with the `executorch` package and run in its runtime
(tests/services/executorch_oracle.py), and checked by opgov against the same release registered by
name. A refusal the runtime does not make, or a run it refuses, fails the test; every refusal names
the operator the runtime failed on, the argument and the dtype.

Needs the executorch package (1.4.1, which pairs with torch 2.13): skipped without it, unless
OPGOV_REQUIRE_EXECUTORCH=1 (CI) makes it mandatory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_opgov

ORACLE = Path(__file__).with_name("executorch_oracle.py")
NOW = "2026-09-01T09:00Z"


@pytest.fixture(scope="module")
def executorch_release(torch_mod) -> str:
    try:
        from importlib.metadata import version

        import executorch  # noqa: F401
    except ImportError:
        if os.environ.get("OPGOV_REQUIRE_EXECUTORCH") == "1":
            pytest.fail("the executorch package is required (OPGOV_REQUIRE_EXECUTORCH=1) but missing", pytrace=False)
        pytest.skip("the executorch package is not installed")
    return version("executorch")


@pytest.fixture(scope="module")
def asked(executorch_release, tmp_path_factory) -> tuple[Path, dict]:
    """Every program of the oracle, run once in ExecuTorch's runtime."""
    folder = tmp_path_factory.mktemp("pte")
    done = subprocess.run([sys.executable, str(ORACLE), str(folder)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return folder, json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def registered(tmp_path_factory, pytorch_release, executorch_release) -> str:
    """The snapshot of the torch that runs here and the ExecuTorch release installed, by name."""
    path = tmp_path_factory.mktemp("et-db") / "opgov.db"
    url = f"sqlite:///{path}"
    folder = pytorch_release("2.13.0")
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    run_opgov("--db", url, "--now", NOW, "import", folder / "native_functions.yaml", "--tags-yaml",
              folder / "tags.yaml", "--label", "2.13.0")
    release = executorch_release.split("+")[0]
    run_opgov("--db", url, "--now", NOW, "runtimes", "add", f"executorch@{release}")
    return url


def test_check_model_says_what_the_runtime_does(asked, registered, make_cli, executorch_release):
    folder, results = asked
    cli = make_cli(registered, upgrade=False)
    runtime = f"executorch@{executorch_release.split('+')[0]}"
    disagree = []
    for name, ran in results.items():
        check = cli("check-model", folder / f"{name}.pt2", "--runtime", runtime, "--format", "json")
        assert check.code in (0, 1), check.err
        said = check.json()
        if (said["verdict"] == "runs") != ran["runs"]:
            disagree.append((name, ran, said["verdict"], said["kernel_problems"], said["missing"]))
            continue
        if ran["runs"]:
            continue
        problem = said["kernel_problems"][0]
        assert problem["argument"] and problem["dtype"], (name, problem)
        if ran["failed_op"]:  # the kernel the runtime failed in is the one opgov names
            assert problem["kernel"] == ran["failed_op"], (name, problem, ran)
        else:  # the lowering refused it: its error names the operator
            assert problem["op"].split("::")[1].split(".")[0] in ran["lowering"], (name, problem, ran["lowering"])
    assert not disagree
    # the programs span the dtypes and both verdicts
    assert {n.rsplit("_", 1)[-1] for n in results} >= {"f32", "f16", "bf16", "i32", "i64", "b"}
    assert sum(r["runs"] for r in results.values()) >= 10 and sum(not r["runs"] for r in results.values()) >= 3
