"""ExecuTorch releases registered by name from the package's data, each kernel's dtypes and argument
checks (read from ExecuTorch's sources at each release tag), check-model down to each call's
tensors, and the earliest release whose whole verdict is "runs". The programs are exported with
torch; tests/services/test_executorch_runtime.py asks ExecuTorch's own runtime the same questions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO, run_opgov
from opgov.core.model_args import Call, CallArg, check_calls
from opgov.formats.oplists import read_op_file

DATA = REPO / "tests" / "data"
NOW = "2026-09-01T09:00Z"
SHIPPED = json.loads((REPO / "data" / "runtimes" / "executorch.json").read_text())["releases"]
ORDER = ["0.5.0", "0.6.0", "1.3.0", "1.4.1"]


@pytest.fixture(scope="module")
def kernels_db(tmp_path_factory, pytorch_release) -> Path:
    """PyTorch 2.13.0 and four ExecuTorch releases, each registered by name alone."""
    path = tmp_path_factory.mktemp("kernels") / "opgov.db"
    url = f"sqlite:///{path}"
    folder = pytorch_release("2.13.0")
    run_opgov("--db", url, "db", "upgrade", "--simulation")
    run_opgov("--db", url, "--now", NOW, "import", folder / "native_functions.yaml", "--tags-yaml",
              folder / "tags.yaml", "--label", "2.13.0")
    for version in ORDER:
        run_opgov("--db", url, "--now", NOW, "runtimes", "add", f"executorch@{version}")
    return path


@pytest.fixture
def kt(make_cli, kernels_db, tmp_path):
    path = tmp_path / "copy.db"
    shutil.copyfile(kernels_db, path)
    return make_cli(f"sqlite:///{path}", upgrade=False)


@pytest.fixture(scope="module")
def programs(tmp_path_factory, torch_mod) -> Path:
    """Small modules exported with torch and decomposed to core ATen (what an edge runtime receives)."""
    from fn_module import fn_module

    torch = torch_mod
    folder = tmp_path_factory.mktemp("programs")

    def Fn(fn):  # noqa: N802
        return fn_module(torch, fn)

    def save(name, module, *args):
        torch.export.save(torch.export.export(module, args).run_decompositions(), folder / f"{name}.pt2")

    gelu = Fn(torch.nn.functional.gelu)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        save(f"gelu_{str(dtype)[6:]}", gelu, torch.randn(2, 3).to(dtype))
    gather = Fn(lambda x, i: torch.gather(x, 1, i))
    save("gather_int64", gather, torch.randn(2, 3), torch.zeros(2, 3, dtype=torch.int64))
    save("gather_int32", gather, torch.randn(2, 3), torch.zeros(2, 3, dtype=torch.int32))
    save("conv3d", torch.nn.Conv3d(2, 2, 1), torch.randn(1, 2, 3, 3, 3))
    save("conv2d", torch.nn.Conv2d(2, 2, 1), torch.randn(1, 2, 3, 3))
    save("cat_mixed", Fn(lambda x, y: torch.cat([x, y])), torch.randn(2, 3).half(), torch.randn(2, 3))
    save("not_bool", Fn(lambda x: ~x), torch.rand(2, 3) > 0.5)
    return folder


def test_a_release_registers_by_name_from_the_package_data(kt):
    """`runtimes add executorch@1.3.0` alone: the portable and optimized registries of the release
    (the same as ExecuTorch's own files at its tag, copied in tests/data), its prim ops, its PyTorch
    pin and its date."""
    shown = kt.ok("runtimes", "show", "executorch@1.3.0", "--json").json()
    real = list(dict.fromkeys(read_op_file(DATA / "executorch" / "1.3.0" / "portable-functions.yaml").ops
                              + read_op_file(DATA / "executorch" / "1.3.0" / "optimized.yaml").ops))
    assert shown["kernels"] == real
    assert shown["runtime"]["torch"] == "2.12" and shown["runtime"]["released"] == "2026-05-26"
    assert "aten::_local_scalar_dense" in shown["served"]
    assert all("shipped with opgov" in s["path"] for s in shown["sources"])
    # every release opgov knows, from the first to the last tag
    assert {"0.1.0", "0.5.0", "1.0.0", "1.4.1"} <= set(SHIPPED)
    again = kt("runtimes", "add", "executorch@1.3.0")
    assert again.code == 0 and again.out.startswith("unchanged")


def test_an_unknown_release_by_name_is_one_line_naming_the_known_ones(kt):
    for release in ("9.9.9", "1.6.0"):
        result = kt("runtimes", "add", f"executorch@{release}")
        assert result.code == 2
        assert f"opgov ships no data about executorch@{release}" in result.err and "executorch@1.4.1" in result.err
        assert "executorch@1.5.0 (pre-release tree)" in result.err and "--source DIR" in result.err
        assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    assert kt("runtimes", "add", "myengine@1.0").code == 2


def test_a_release_read_from_a_pre_release_tree_says_so(kt):
    """1.5.0 has no tag in the ExecuTorch sources opgov read: its data comes from the tree of main
    whose version.txt names it, and runtimes add, show and the data say which commit of which day."""
    tree = SHIPPED["1.5.0"]["pre_release"]
    assert tree["ref"] == "main" and len(tree["commit"]) == 40 and tree["date"] == "2026-08-22"
    assert SHIPPED["1.5.0"]["released"] is None and SHIPPED["1.5.0"]["torch"] == "2.13"
    added = kt.ok("runtimes", "add", "executorch@1.5.0")
    assert f"from the pre-release tree main at {tree['commit'][:12]} of 2026-08-22" in added.out
    assert "there was no tag for it" in added.out and "released" not in added.out.splitlines()[0]
    shown = kt.ok("runtimes", "show", "executorch@1.5.0", "--json").json()
    assert all("pre-release tree main" in s["path"] for s in shown["sources"])
    assert shown["runtime"]["released"] is None and shown["runtime"]["torch"] == "2.13"
    release = json.loads((REPO / "data" / "runtimes" / "executorch" / "1.5.0.json").read_text())
    assert release["tag"] is None and release["pre_release"]["commit"] == tree["commit"]


def test_1_5_1_by_name_says_what_it_was_read_from_and_what_was_checked(kt):
    """No v1.5.1 tag either: opgov's 1.5.1 is the tree it read for 1.5.0, and says that the 1.5.1
    wheel's kernel registry and edge dtype table are byte for byte that tree's."""
    assert SHIPPED["1.5.1"]["pre_release"]["commit"] == SHIPPED["1.5.0"]["pre_release"]["commit"]
    assert SHIPPED["1.5.1"]["portable"] == SHIPPED["1.5.0"]["portable"]
    added = kt.ok("runtimes", "add", "executorch@1.5.1")
    said = " ".join(added.out.split())
    assert "version.txt names 1.5.0" in said and "1.5.1 wheel" in said and "byte-identical" in said, added.out
    assert "the release as tagged may differ" in said
    listed = kt.ok("runtimes", "list", "--json").json()
    assert "executorch@1.5.1" in {f"{r['name']}@{r['version']}" for r in listed["runtimes"]}


def test_each_refusal_names_the_operator_the_argument_and_the_dtype(kt, programs):
    gather = kt("check-model", programs / "gather_int32.pt2", "--runtime", "executorch@1.4.1", "--format", "json")
    assert gather.code == 1
    [problem] = gather.json()["kernel_problems"]
    assert (problem["status"], problem["op"], problem["kernel"], problem["argument"], problem["dtype"]) == \
        ("dtype", "aten::gather", "aten::gather.out", "index", "int32")
    assert gather.json()["verdict"] == "does not run" and not gather.json()["runs"]
    text = kt("check-model", programs / "gather_int32.pt2", "--runtime", "executorch@1.4.1").out
    assert "dtype not supported: aten::gather (call gather): aten::gather.out has no int32 kernel for index" in text

    conv = kt("check-model", programs / "conv3d.pt2", "--runtime", "executorch@1.4.1", "--format", "json").json()
    [problem] = conv["kernel_problems"]
    assert (problem["status"], problem["op"], problem["argument"]) == ("argument", "aten::convolution", "input")
    assert "rank 5" in problem["message"] and "3-D or 4-D" in problem["message"]
    for fine in ("gather_int64", "conv2d", "gelu_bfloat16", "not_bool"):
        check = kt("check-model", programs / f"{fine}.pt2", "--runtime", "executorch@1.4.1", "--format", "json")
        assert check.code == 0 and check.json()["verdict"] == "runs", check.out

    # to_edge's verifier (the edge dialect's dtype table): cat's tensors must be one dtype with its result
    cat = kt("check-model", programs / "cat_mixed.pt2", "--runtime", "executorch@1.4.1", "--format", "json").json()
    [problem] = cat["kernel_problems"]
    assert (problem["op"], problem["dtype"]) == ("aten::cat", "float32") and "to_edge refuses" in problem["message"]


def test_the_earliest_release_counts_the_dtypes(kt, programs):
    """gelu in bfloat16: ExecuTorch's gelu kernel takes it from 0.6.0, but 0.6.0's edge dialect (the
    dtypes to_edge lets through) still does not; of the registered releases 1.3.0 is the first."""
    check = kt("check-model", programs / "gelu_bfloat16.pt2", "--runtime", "executorch@0.5.0", "--format", "json")
    assert check.code == 1
    result = check.json()
    [problem] = result["kernel_problems"]
    assert (problem["op"], problem["argument"], problem["dtype"]) == ("aten::gelu", "self", "bfloat16")
    assert result["earliest_version"] == "executorch@1.3.0"
    assert result["before_earliest"].startswith("0.6.0: to_edge refuses aten::gelu with self bfloat16")
    text = kt("check-model", programs / "gelu_bfloat16.pt2", "--runtime", "executorch@0.5.0").out
    assert "earliest executorch version that runs it: executorch@1.3.0 (runs on executorch ≥ 1.3.0; 0.6.0: " \
           "to_edge refuses aten::gelu with self bfloat16" in text
    assert kt("check-model", programs / "gelu_float32.pt2", "--runtime", "executorch@0.5.0",
              "--format", "json").json()["earliest_version"] == "executorch@0.5.0"


def test_the_earliest_release_never_names_one_that_does_not_run(kt, programs):
    for program in sorted(programs.glob("*.pt2")):
        first = kt("check-model", program, "--runtime", "executorch@1.4.1", "--format", "json").json()
        for runtime in first["runtimes_running"] + ([first["earliest_version"]] if first["earliest_version"] else []):
            again = kt("check-model", program, "--runtime", runtime, "--format", "json")
            assert again.code == 0 and again.json()["verdict"] == "runs", (program.name, runtime)
        if first["earliest_version"] is None:
            assert not first["runtimes_running"], program.name


def test_the_unplaced_kernels_caveat_is_repeated(kt, tmp_path):
    """A runtime whose kernels the latest snapshot does not hold: check-model says so beside what is missing."""
    kernels = tmp_path / "kernels.txt"
    kernels.write_text("aten::add.out\naten::made_up_kernel.out\n")
    added = kt.ok("runtimes", "add", "engine@1.0", "--ops", kernels)
    assert "1 kernel(s) the latest snapshot does not hold: aten::made_up_kernel.out" in added.out
    model = tmp_path / "model.txt"
    model.write_text("aten::relu\naten::add.Tensor\n")
    check = kt("check-model", model, "--runtime", "engine@1.0")
    assert check.code == 1 and "missing aten::relu" in check.out
    assert "1 of engine@1.0's kernels are not in the latest snapshot" in check.out
    assert kt("check-model", model, "--runtime", "engine@1.0", "--format", "json").json()["unplaced_kernels"] == \
        ["aten::made_up_kernel.out"]


# --- issue 40's two answers in one check ------------------------------------------------------------


def _call(node, op, **args):
    tensor = CallArg("self", False, ("tensor", "as_tensor"), "a tensor")
    return Call(node, op, (tensor, *(CallArg(name, False, ("int", value), str(value)) for name, value in args.items())))


def test_one_rename_is_one_finding():
    """An argument renamed between the model's torch and the runtime's: torch.export.load refuses the
    archive; that is the one finding (not also "dropped, runs as if left to its default")."""
    old = {"aten::frob": "frob(Tensor self, int axis) -> Tensor"}
    new = {"aten::frob": "frob(Tensor self, int dim) -> Tensor"}
    problems = check_calls([_call("frob_1", "aten::frob", axis=1)], model_release="2.14.1", runtime_release="2.13.0",
                           model_schemas=old, runtime_schemas=new)
    assert [(p.rule, p.argument) for p in problems] == [("argument-refused", "dim")]
    assert "the call names axis instead" in problems[0].message


def test_calls_lowering_removes_have_no_argument_findings(kt, programs, torch_mod, tmp_path):
    """_assert_tensor_metadata (a graph operator) is never loaded by the runtime: no argument finding
    names it, and a release that lacks nothing else runs the program."""
    torch = torch_mod

    class ToHalf(torch.nn.Module):
        def forward(self, x):
            return x.to(torch.float16) * 2

    archive = tmp_path / "to_half.pt2"
    torch.export.save(torch.export.export(ToHalf(), (torch.randn(2, 3),)).run_decompositions(), archive)
    check = kt("check-model", archive, "--runtime", "executorch@0.5.0", "--format", "json").json()
    assert "aten::_assert_tensor_metadata" in check["graph_ops"]
    named = {p["op"] for a in check["arguments"] for p in a["problems"]} | {p["op"] for p in check["kernel_problems"]}
    assert not named & set(check["graph_ops"])
    if check["earliest_version"] is not None:
        assert kt("check-model", archive, "--runtime", check["earliest_version"], "--format", "json").json()["runs"]


def test_coverage_by_dtype_and_how_it_changed(kt, programs):
    """The coverage matrix says, per core operator and runtime release, the dtypes it runs in, and
    what each release gained over the previous one; check-model agrees with it on gelu."""
    matrix = kt.ok("runtimes", "coverage", "--format", "json").json()
    gelu = next(row for row in matrix["operators"] if row["op"] == "aten::gelu")
    assert "bfloat16" not in gelu["dtypes"]["executorch@0.6.0"] and "float32" in gelu["dtypes"]["executorch@0.6.0"]
    assert "bfloat16" in gelu["dtypes"]["executorch@1.3.0"]
    column = next(r for r in matrix["runtimes"] if r["runtime"] == "executorch@1.3.0")
    assert "bfloat16" in column["dtypes_gained"]["aten::gelu"]
    for runtime, types in gelu["dtypes"].items():
        said = kt("check-model", programs / "gelu_bfloat16.pt2", "--runtime", runtime, "--format", "json").json()
        assert (said["verdict"] == "runs") == ("bfloat16" in types), runtime
    md = kt.ok("runtimes", "coverage", "--format", "md").out
    assert "## Core operators by dtype" in md and "aten::gelu +bfloat16" in md


def test_opset_build_shows_each_release_by_dtype(kt):
    """`opset build` says, per registered runtime release, how many of the opset's operators it has
    and the dtypes it runs each in (the coverage matrix's own figures), and what changed since the
    release before."""
    report = kt.ok("opset", "build", "--format", "json").json()
    rows = {r["runtime"]: r for r in report["runtimes"]}
    assert list(rows) == [f"executorch@{v}" for v in ORDER]
    matrix = kt.ok("runtimes", "coverage", "--format", "json").json()
    gelu = next(row for row in matrix["operators"] if row["op"] == "aten::gelu")
    for runtime, row in rows.items():
        assert row["total"] == report["count"] and row["have"] == row["total"] - len(row["missing"])
        assert row["dtypes"]["aten::gelu"] == gelu["dtypes"][runtime]
    assert "bfloat16" in rows["executorch@1.3.0"]["dtypes_gained"]["aten::gelu"]
    assert rows["executorch@1.3.0"]["previous"] == "executorch@0.6.0"
    text = kt.ok("opset", "build").out
    assert "runtimes by dtype" in text and "aten::gelu +bfloat16" in text
    by_op = text.split("dtypes by operator, executorch@1.4.1")[1]
    line = next(x for x in by_op.splitlines() if x.strip().startswith("aten::gelu "))
    assert line.split()[1:] == ["f16", "bf16", "f32", "f64"]
