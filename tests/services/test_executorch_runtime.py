"""check-model against ExecuTorch's own runtime: ~160 small programs (each unary and binary operator of
the oracle in one of float32, float16, bfloat16, int32, int64 and bool, Tensor-Scalar calls whose
result's dtype differs from their tensor's, mixed dtypes, int64, int32 and bool-mask indices, layers
in float32 and bfloat16; OPGOV_EXECUTORCH_ORACLE_ALL=1: ~480, each operator in every dtype torch runs),
lowered to .pte with the `executorch` package and run in its runtime
(tests/services/executorch_oracle.py: the package's portable kernels, and its optimized ones where
it has them), and checked by opgov against the same release registered by name. A refusal the
runtime does not make, or a run it refuses, fails the test; every refusal names the operator the
runtime failed on, the argument and the dtype.

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
    return version("executorch").split("+")[0]


@pytest.fixture(scope="module")
def asked(executorch_release, tmp_path_factory) -> tuple[Path, dict]:
    """Every program of the oracle, run once in ExecuTorch's runtime."""
    folder = tmp_path_factory.mktemp("pte")
    every = ["--all"] if os.environ.get("OPGOV_EXECUTORCH_ORACLE_ALL") == "1" else []
    done = subprocess.run([sys.executable, str(ORACLE), str(folder), *every], capture_output=True, text=True,
                          timeout=7200)
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
    run_opgov("--db", url, "--now", NOW, "runtimes", "add", f"executorch@{executorch_release}")
    return url


@pytest.fixture(scope="module")
def said(asked, registered, executorch_release) -> dict:
    """check-model's JSON verdict of each program, on the release the runtime is."""
    from opgov.core.clock import SystemClock
    from opgov.db.engine import make_engine, transaction
    from opgov.results.plain import jsonable
    from opgov.reads.common import Ctx
    from opgov.services.runtimes import check_model_on_runtime

    folder, results = asked
    engine = make_engine(registered)
    try:
        with transaction(engine) as session:
            ctx = Ctx(session=session, actor="test", clock=SystemClock())
            return {name: jsonable(check_model_on_runtime(ctx, [str(folder / f"{name}.pt2")],
                                                          f"executorch@{executorch_release}"))
                    for name in results}
    finally:
        engine.dispose()


def test_check_model_says_what_the_runtime_does(asked, said):
    """Every program: runs where the runtime runs it, does not run where it refuses, naming the
    operator it failed in (or the lowering refused), the argument and the dtype."""
    _, results = asked
    disagree = []
    for name, ran in results.items():
        verdict = said[name]
        if (verdict["verdict"] == "runs") != ran["runs"]:
            disagree.append((name, ran, verdict["verdict"], verdict["kernel_problems"][:2],
                             [m["op"] for m in verdict["missing"]]))
            continue
        if ran["runs"]:
            continue
        if verdict["missing"]:  # no kernel: the runtime refuses to load the method
            assert not verdict["kernel_problems"] or verdict["kernel_problems"][0]["status"] != "unknown", name
            assert ran["lowering"] is None, (name, ran)
            continue
        problem = verdict["kernel_problems"][0]
        if not (problem["argument"] and problem["dtype"]):
            disagree.append((name, "no argument or dtype named", problem))
        elif ran["failed_op"] and problem["kernel"] != ran["failed_op"]:
            disagree.append((name, "another kernel", problem, ran))
        elif not ran["failed_op"] and ran["lowering"] and \
                problem["op"].split("::")[1].split(".")[0] not in ran["lowering"]:
            disagree.append((name, "another operator than the lowering's", problem, ran["lowering"][:300]))
    assert not disagree, "\n".join(map(str, disagree))


def test_the_programs_span_the_dtypes_and_both_verdicts(asked):
    _, results = asked
    assert len(results) >= 150
    for dtype in ("f32", "f16", "bf16", "i32", "i64", "b"):
        assert sum(n.endswith(f"_{dtype}") for n in results) >= 15, dtype
    assert sum(n.rsplit("_", 1)[-1] in ("f16f32", "i32f32", "bf16f16", "bi64", "i32i64") for n in results) >= 15
    refused = [n for n, r in results.items() if not r["runs"]]
    assert sum(r["runs"] for r in results.values()) >= 120 and len(refused) >= 8, refused


def test_the_hard_cases(asked, said):
    """The cases a reading of the registries alone gets wrong, each answered exactly (runs, or the
    refusal naming the operator, the argument and the dtype): a Tensor-Scalar call whose result's
    dtype differs from its tensor's, a mixed-dtype add or mul (to_edge casts it to one dtype first;
    it does not cast cat's or where's), a bool mask as an index, convolution on a 5-D input, gather
    with an int32 index, an operator with no kernel."""
    _, results = asked

    def first(name):
        p = said[name]["kernel_problems"][0]
        return p["status"], p["op"], p["argument"], p["dtype"]

    for name in ("addf_i32", "divi_i32", "addf_b", "add_bf16f16", "mul_i32f32", "mask_f32", "mask_bf16",
                 "maskrow_f32", "index_i32", "gather_i64"):
        assert results[name]["runs"] and said[name]["verdict"] == "runs", (name, said[name]["kernel_problems"])
    assert not results["conv3d_f32"]["runs"]
    assert first("conv3d_f32") == ("argument", "aten::convolution", "input", "float32")
    assert "rank 5" in said["conv3d_f32"]["kernel_problems"][0]["message"]
    assert not results["gather_i32"]["runs"] and first("gather_i32") == ("dtype", "aten::gather", "index", "int32")
    for name in ("cat_f16f32", "where_bf16f16"):
        assert not results[name]["runs"] and "to_edge refuses" in said[name]["kernel_problems"][0]["message"]
    for name, op in (("avgpool3d_f32", "aten::avg_pool3d"), ("sort_f32", "aten::sort")):
        assert not results[name]["runs"] and [m["op"] for m in said[name]["missing"]] == [op], said[name]["missing"]
