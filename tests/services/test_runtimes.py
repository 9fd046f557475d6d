"""Runtimes: what an engine implements (ExecuTorch's real kernel registries at four releases), which
operators that gives it (torchgen's families, checked against torchgen itself), whether it runs a
model (real exported archives), the coverage matrix, and the bad input and refusals around them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import REPO, SHARED, bad, refused, run_opgov
from opgov.core.runtimes import RegistryOp, family_index, lower, parse_runtime_id, runtime_operators, version_key
from opgov.core.errors import BadInput
from opgov.formats.oplists import read_op_file

EXECUTORCH = SHARED / "executorch"
RELEASES = {"0.2.0": "2024-04-26", "0.5.0": "2025-01-29", "1.0.0": "2025-10-17", "1.3.0": "2026-05-26"}
RULES = REPO / "data" / "decomps" / "export-composites.yaml"
NOW = "2026-06-01T09:00Z"


_run = run_opgov  # the CLI in-process (tests/conftest.py)


@pytest.fixture(scope="module")
def executorch_dir(shared_dir) -> Path:
    if not all((EXECUTORCH / v / "portable-functions.yaml").is_file() for v in RELEASES):
        pytest.skip("ExecuTorch registries not available")
    return EXECUTORCH


@pytest.fixture(scope="module")
def registry_2_13(pytorch_release):
    from opgov.formats.registry import read_registry

    folder = pytorch_release("2.13.0")
    reg = read_registry(folder / "native_functions.yaml", tags_yaml=folder / "tags.yaml")
    return [RegistryOp(op.name, op.schema, op.kind, op.autogen_of) for op in reg.ops.values()]


def _kernels(folder: Path, version: str) -> list[str]:
    return list(dict.fromkeys(read_op_file(folder / version / "portable-functions.yaml").ops
                              + read_op_file(folder / version / "optimized.yaml").ops))


@pytest.fixture(scope="module")
def runtimes_db(tmp_path_factory, pytorch_release, executorch_dir) -> Path:
    """PyTorch 2.13.0, opgov's rules file, and the four ExecuTorch releases registered."""
    path = tmp_path_factory.mktemp("runtimes") / "opgov.db"
    url = f"sqlite:///{path}"
    folder = pytorch_release("2.13.0")
    _run("--db", url, "db", "upgrade", "--simulation")
    _run("--db", url, "--now", NOW, "import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml",
         "--label", "2.13.0")
    _run("--db", url, "--now", NOW, "decomps", "load", RULES)
    for version, released in RELEASES.items():
        _run("--db", url, "--now", NOW, "runtimes", "add", f"executorch@{version}",
             "--ops", executorch_dir / version / "portable-functions.yaml",
             "--ops", executorch_dir / version / "optimized.yaml", "--released", released)
    return path


@pytest.fixture
def rt(make_cli, runtimes_db, tmp_path):
    path = tmp_path / "copy.db"
    shutil.copyfile(runtimes_db, path)
    return make_cli(f"sqlite:///{path}", upgrade=False)


# --- pure logic ----------------------------------------------------------------------------------------


def test_runtime_ids_and_versions():
    assert str(parse_runtime_id("executorch@1.3.0")) == "executorch@1.3.0"
    for text in ("executorch", "@1.0", "executorch@", "a b@1", "x@1@2"):
        with pytest.raises(BadInput, match="NAME@VERSION"):
            parse_runtime_id(text)
    assert sorted(["1.10.0", "0.2.0", "1.3.0", "1.0.0"], key=version_key) == ["0.2.0", "1.0.0", "1.3.0", "1.10.0"]


def test_families_agree_with_torchgen(registry_2_13, executorch_dir, torch_mod):
    """An out= kernel gives exactly the functional (and mutable) operators torchgen groups with it,
    and a *_copy operator gives the view torchgen pairs it with."""
    from torchgen.gen import get_grouped_by_view_native_functions, get_grouped_native_functions, parse_native_yaml
    from torchgen.model import NativeFunctionsGroup, NativeFunctionsViewGroup

    folder = SHARED / "pytorch" / "2.13.0"
    parsed = parse_native_yaml(str(folder / "native_functions.yaml"), str(folder / "tags.yaml"))
    groups = {f"aten::{g.out.func.name}".replace(".default", ""): g
              for g in get_grouped_native_functions(parsed.native_functions) if isinstance(g, NativeFunctionsGroup)}
    views = {f"aten::{v.view_copy.func.name}": f"aten::{v.view.func.name}"
             for v in get_grouped_by_view_native_functions(parsed.native_functions)
             if isinstance(v, NativeFunctionsViewGroup) and v.view_copy is not None}
    kernels = _kernels(executorch_dir, "1.3.0")
    index = family_index(registry_2_13, kernels)
    checked = 0
    for kernel in kernels:
        group = groups.get(kernel)
        if group is None:
            continue
        base = kernel.split("::")[1].split(".")[0]
        expected = {f"aten::{nf.func.name}" for nf in (group.functional, group.mutable)
                    if nf is not None and str(nf.func.name.name.base) == base}
        gives = {op for op, k in runtime_operators([kernel], index).items() if k == kernel and op != kernel}
        gives -= set(views.values())
        assert gives == {e.removesuffix(".default") for e in expected}, kernel
        checked += 1
    assert checked > 150
    # the view groups: everything we pair, torchgen pairs the same way
    assert index.view_of and all(views.get(copy) == view for copy, view in index.view_of.items())
    has = runtime_operators(kernels, index)
    assert has["aten::add.Tensor"] == "aten::add.out" and has["aten::max.dim"] == "aten::max.dim_max"
    assert has["aten::permute"] == "aten::permute_copy.out" and "aten::add_.Tensor" not in has


def test_lowering_follows_the_rules():
    rules = {"aten::hardswish": ("aten::clamp", "aten::mul.Tensor"), "aten::clamp": ("aten::minimum", "aten::maximum"),
             "aten::loop": ("aten::loop2",), "aten::loop2": ("aten::loop",)}
    has = {"aten::mul.Tensor", "aten::minimum", "aten::maximum"}
    ok = lower("aten::hardswish", has, rules)
    assert ok.ok and ok.into == ("aten::minimum", "aten::maximum", "aten::mul.Tensor")
    assert ok.steps == (("aten::hardswish", ("aten::clamp", "aten::mul.Tensor")),
                        ("aten::clamp", ("aten::minimum", "aten::maximum")))
    blocked = lower("aten::hardswish", {"aten::mul.Tensor"}, rules)
    assert not blocked.ok and blocked.blocked == ("aten::minimum", "aten::maximum")
    assert not lower("aten::loop", has, rules).ok
    none = lower("aten::nope", has, rules)
    assert not none.ok and none.steps == () and none.blocked == ("aten::nope",)


# --- registering the four ExecuTorch releases -------------------------------------------------------


def test_coverage_grows_release_by_release(rt, executorch_dir):
    listed = rt.ok("runtimes", "list", "--json").json()
    assert listed["snapshot"] == "2.13.0"
    rows = listed["runtimes"]
    assert [r["runtime"] for r in rows] == [f"executorch@{v}" for v in RELEASES]
    assert [str(r["released"]) for r in rows] == list(RELEASES.values())
    # kernels: the union of the portable and optimized registries, as written in the files
    for r, version in zip(rows, RELEASES):
        assert r["kernels"] == len(_kernels(executorch_dir, version))
    core = [r["core_have"] for r in rows]
    assert core == sorted(core) and core[0] < core[-1]
    for before, after in zip(rows, rows[1:]):
        assert after["previous"] == before["runtime"]
        assert after["core_have"] - before["core_have"] == len(after["core_gained"]) - len(after["core_lost"])
    # 1.3.0 added the portable _adaptive_avg_pool2d kernel (ExecuTorch issue 12464)
    assert "aten::_adaptive_avg_pool2d" in rows[-1]["core_gained"]
    text = rt.ok("runtimes", "list").out
    for r in rows:
        [line] = [line for line in text.splitlines() if r["runtime"] in line]
        assert f"{r['core_have']}/{r['core_total']}" in line
        assert (f"+{len(r['core_gained'])}" in line) == (r["previous"] is not None)


def test_show(rt):
    shown = rt.ok("runtimes", "show", "executorch@1.3.0", "--json").json()
    assert shown["gives"]["aten::add.Tensor"] == "aten::add.out"
    assert "aten::_adaptive_avg_pool2d" not in shown["core_missing"]
    assert "dim_order_ops::_clone_dim_order.out" in shown["not_in_registry"]
    assert [s["format"] for s in shown["sources"]] == ["kernel-yaml", "kernel-yaml"]
    old = rt.ok("runtimes", "show", "executorch@1.0.0").out
    assert "aten::_adaptive_avg_pool2d" in old.split("core operators it lacks")[1]
    bad(rt, "runtimes", "show", "executorch@9.9.9", words=["unknown runtime executorch@9.9.9", "executorch@1.3.0"])
    bad(rt, "runtimes", "show", "executorch", words=["NAME@VERSION"])


def test_register_again_replace_and_refusals(rt, executorch_dir, tmp_path):
    portable = executorch_dir / "1.3.0" / "portable-functions.yaml"
    optimized = executorch_dir / "1.3.0" / "optimized.yaml"
    again = rt.ok("runtimes", "add", "executorch@1.3.0", "--ops", portable, "--ops", optimized, "--json").json()
    assert again["outcome"] == "unchanged"
    refused(rt, "runtimes", "add", "executorch@1.3.0", "--ops", portable,
            words=["executorch@1.3.0 is registered already", "--replace"])
    replaced = rt.ok("runtimes", "add", "executorch@1.3.0", "--ops", portable, "--replace", "--json").json()
    assert replaced["outcome"] == "replaced" and replaced["runtime"]["kernels"] == len(read_op_file(portable).ops)
    # any of the formats: a plain list, an `opset build` output, selected operators
    ops = tmp_path / "mine.txt"
    ops.write_text("aten::add.out\naten::relu.out\n")
    mine = rt.ok("runtimes", "add", "mine@1", "--ops", ops, "--json").json()["runtime"]
    assert (mine["kernels"], mine["operators"]) == (2, 4)
    built = tmp_path / "opset.json"
    built.write_text(rt.ok("opset", "build", "--format", "json").out)
    full = rt.ok("runtimes", "add", "opgov-core@2.13.0", "--ops", built, "--json").json()["runtime"]
    # the core-aten opset lists functional operators only; core-tagged in-place/out= ones are drift
    not_functional = json.loads(built.read_text())["not_functional"]
    # (a mutable one may still be had through its family's functional variant)
    assert full["core_total"] - len(not_functional) <= full["core_have"] < full["core_total"]
    # bad input: exit 2, nothing written
    broken = tmp_path / "broken.yaml"
    broken.write_text("- op: add.out\n- kernels: []\n")
    bad(rt, "runtimes", "add", "x@1", "--ops", broken, words=[f"{broken}:2:"])
    bad(rt, "runtimes", "add", "x@1", "--ops", tmp_path / "absent.yaml", words=["no such file"])
    bad(rt, "runtimes", "add", "x", "--ops", ops, words=["NAME@VERSION"])
    bad(rt, "runtimes", "add", "x@1", "--ops", ops, "--released", "someday", words=["--released"])
    archive = tmp_path / "model.pt2"
    archive.write_bytes(b"PK\x03\x04....")
    bad(rt, "runtimes", "add", "x@1", "--ops", archive, words=["pt2 file is not accepted here"])
    # roles: once there are members, only maintainers register runtimes
    rt.ok("members", "add", "alice@example.com", "--role", "maintainer")
    rt.ok("members", "add", "dev@example.com", "--role", "developer")
    refused(rt, "runtimes", "add", "y@1", "--ops", ops, actor="dev@example.com", words=["may not register runtimes"])


# --- can this runtime run this model ----------------------------------------------------------------


@pytest.fixture(scope="module")
def net_archives(torch_mod, tmp_path_factory):
    """A small network exported as torch.export gives it, and after its core ATen decompositions."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("models")
    for args, name in (([], "net.pt2"), (["--core-aten"], "net-core.pt2")):
        subprocess.run([sys.executable, REPO / "scripts" / "export_example.py", *args, folder / name], check=True,
                       capture_output=True)
    return folder


def test_check_model_on_a_runtime(rt, net_archives):
    core = net_archives / "net-core.pt2"
    # after decomposition the network needs aten::_adaptive_avg_pool2d: portable kernels from 1.3.0
    old = rt("check-model", core, "--runtime", "executorch@1.0.0")
    assert old.code == 1
    assert old.out.startswith(f"executorch@1.0.0 does not run {core}: it lacks 1 of ")
    assert "missing aten::_adaptive_avg_pool2d (core): no decomposition on record lowers it" in old.out
    assert "earliest executorch version that runs it: executorch@1.3.0" in old.out
    new = rt("check-model", core, "--runtime", "executorch@1.3.0", "--format", "json")
    assert new.code == 0
    data = new.json()
    assert data["runs"] and data["missing"] == [] and data["earliest_version"] == "executorch@1.3.0"
    assert data["provided"]["aten::convolution"] == "aten::convolution.out"
    assert data["earliest_snapshot"] == "2.13.0" and data["runtimes_running"] == ["executorch@1.3.0"]
    # as exported: composite operators the kernels lack, each with the rule that lowers it, or none
    raw = rt("check-model", net_archives / "net.pt2", "--runtime", "executorch@1.3.0", "--format", "json")
    assert raw.code == 1
    missing = {m["op"]: m for m in raw.json()["missing"]}
    assert missing["aten::conv2d"]["lowers"] and missing["aten::conv2d"]["into"] == ["aten::convolution"]
    assert missing["aten::flatten.using_ints"]["into"] == ["aten::view"]  # executorch has view_copy
    assert raw.json()["runs_after_lowering"] == all(m["lowers"] for m in missing.values())
    github = rt("check-model", net_archives / "net.pt2", "--runtime", "executorch@1.3.0", "--format", "github")
    assert "::error title=opgov runtime-missing::executorch@1.3.0 lacks aten::conv2d; lowers by aten::conv2d → " \
           "aten::convolution" in github.out


def test_check_model_lifecycle_and_union(rt, net_archives, tmp_path):
    rt.ok("deprecate", "aten::hardtanh", "--reason", "test", "--replacement", "aten::clamp", now=NOW)
    extra = tmp_path / "extra.txt"
    extra.write_text("aten::hardtanh\n")
    result = rt("check-model", net_archives / "net-core.pt2", extra, "--runtime", "executorch@1.3.0",
                "--format", "json", now=NOW)
    assert result.code == 0
    data = result.json()
    assert data["operators"][-1] == "aten::hardtanh" and len(data["models"]) == 2
    [note] = data["lifecycle"]
    assert (note["op"], note["state"], note["next_step"], note["replacement"]) == \
        ("aten::hardtanh", "deprecating", "deprecated", "aten::clamp")
    assert note["next_step_on"].startswith("2026-06-15")
    text = rt("check-model", extra, "--runtime", "executorch@1.3.0", now=NOW).out
    assert "warning aten::hardtanh is deprecating since 2026-06-01; it may become deprecated on 2026-06-15" in text


def test_check_model_bad_input(rt, net_archives, tmp_path):
    core = net_archives / "net-core.pt2"
    bad(rt, "check-model", core, "--runtime", "executorch@0.1.0", words=["unknown runtime executorch@0.1.0"])
    blob = tmp_path / "blob.pt2"
    blob.write_bytes(b"\x00\x01garbage")
    result = bad(rt, "check-model", blob, "--runtime", "executorch@1.3.0", words=[str(blob)])
    assert result.err.count("\n") == 1 and "Traceback" not in result.err
    kernels = EXECUTORCH / "1.3.0" / "optimized.yaml"
    bad(rt, "check-model", kernels, "--runtime", "executorch@1.3.0", words=["kernel-yaml file is not accepted"])


# --- the coverage matrix -------------------------------------------------------------------------------


def test_coverage_matrix(rt, models_dir, tmp_path):
    data = rt.ok("runtimes", "coverage", "--models", models_dir, "--format", "json").json()
    names = [r["runtime"] for r in data["runtimes"]]
    assert names == [f"executorch@{v}" for v in RELEASES]
    listed = {r["runtime"]: r for r in rt.ok("runtimes", "list", "--json").json()["runtimes"]}
    opset = json.loads(rt.ok("opset", "build", "--format", "json").out)
    # the matrix has every core operator; the opset leaves out the non-functional ones (drift)
    # (the symbolic sizes tagged core are graph operators: no kernel, so not in the matrix)
    core_ops = {e["op"] for e in opset["operators"] if e["why"] == "core"} | set(opset["not_functional"])
    assert {row["op"] for row in data["operators"]} == core_ops
    for i, r in enumerate(data["runtimes"]):
        assert r["core_have"] == listed[r["runtime"]]["core_have"]
        assert r["core_have"] == sum(row["kernels"][r["runtime"]] is not None for row in data["operators"])
        assert set(r["models_run"]) == {m["model"] for m in data["models"] if not m["missing"][r["runtime"]]}
        assert r["models_total"] == 43
    runs = [len(r["models_run"]) for r in data["runtimes"]]
    assert runs == sorted(runs) and runs[0] < runs[-1]
    alexnet = next(m for m in data["models"] if m["model"] == "torchvision#alexnet")
    assert alexnet["missing"]["executorch@1.0.0"] == ["aten::_adaptive_avg_pool2d"]
    assert alexnet["missing"]["executorch@1.3.0"] == []
    md = rt.ok("runtimes", "coverage", "--models", models_dir, "--format", "md").out
    assert md.startswith("# Core ATen coverage by runtime (snapshot 2.13.0)")
    assert "| torchvision#alexnet | lacks aten::_adaptive_avg_pool2d | lacks aten::_adaptive_avg_pool2d | " \
           "lacks aten::_adaptive_avg_pool2d | runs |" in md
    assert "| aten::add.Tensor | add.out | add.out | add.out | add.out |" in md
    out = tmp_path / "matrix.md"
    assert rt.ok("runtimes", "coverage", "--models", models_dir, "--format", "md", "--out", out).out == f"wrote {out}\n"
    assert out.read_text() == md
    # as exported, every model names composite operators (aten::linear, aten::conv2d, ...) that no
    # out= kernel gives: none runs before torch.export's decompositions
    exported = rt.ok("runtimes", "coverage", "--models", models_dir, "--stage", "exported", "--format", "json").json()
    assert exported["stage"] == "exported" and all(r["models_run"] == [] for r in exported["runtimes"])
    bad(rt, "runtimes", "coverage", "--models", tmp_path / "none", words=["no such corpus"])


# --- both databases ----------------------------------------------------------------------------------


def test_on_sqlite_and_postgres(make_cli, any_db_url, tmp_path):
    """Registering, listing and checking run on a Core connection on both databases; an autogen-declared
    out= variant (no schema of its own) gives the entry that declares it."""
    from conftest import SAMPLE

    cli = make_cli(any_db_url)
    cli.ok("import", SAMPLE / "native_functions.v2.yaml", "--tags-yaml", SAMPLE / "tags.yaml", "--label", "v2")
    kernels = tmp_path / "kernels.yaml"
    kernels.write_text("- op: add.out\n  kernels: []\n- op: _adaptive_avg_pool3d.out\n")
    added = cli.ok("runtimes", "add", "tiny@0.1", "--ops", kernels, "--released", "2026-01-01", "--json").json()
    assert added["outcome"] == "added" and added["runtime"]["kernels"] == 2
    shown = cli.ok("runtimes", "show", "tiny@0.1", "--json").json()
    assert shown["gives"] == {"aten::_adaptive_avg_pool3d": "aten::_adaptive_avg_pool3d.out",
                              "aten::add.Tensor": "aten::add.out"}
    model = tmp_path / "model.txt"
    model.write_text("aten::add.Tensor\naten::_adaptive_avg_pool3d\n")
    assert cli("check-model", model, "--runtime", "tiny@0.1").code == 0
    model.write_text("aten::add.Tensor\naten::relu\n")
    result = cli("check-model", model, "--runtime", "tiny@0.1", "--format", "json")
    assert result.code == 1 and [m["op"] for m in result.json()["missing"]] == ["aten::relu"]
    assert [e["action"] for e in cli.ok("log", "--json").json()][-1] == "runtime-added"


# --- graph operators are no missing kernels ------------------------------------------------------------


def test_a_real_model_holding_an_assertion_runs_on_executorch(rt, models_dir):
    """bert keeps aten::_assert_tensor_metadata after PyTorch's own decompositions: an assertion
    ExecuTorch strips when it lowers, so the model runs where its kernels are."""
    corpus = models_dir / "transformers_ops.json"
    assert "aten::_assert_tensor_metadata" in json.loads(corpus.read_text())["models"]["bert"]["core_aten_ops"]
    check = rt.ok("check-model", f"{corpus}#bert@core-aten", "--runtime", "executorch@1.3.0", "--format", "json").json()
    assert check["runs"] and check["missing"] == []
    assert "assertion" in check["graph_ops"]["aten::_assert_tensor_metadata"]
    assert "executorch@1.3.0" in check["runtimes_running"]
    text = rt.ok("check-model", f"{corpus}#bert@core-aten", "--runtime", "executorch@1.3.0").out
    assert "graph operator aten::_assert_tensor_metadata" in text and "does not run" not in text
    matrix = rt.ok("runtimes", "coverage", "--models", models_dir, "--format", "json").json()
    newest = matrix["runtimes"][-1]
    assert newest["runtime"] == "executorch@1.3.0" and len(newest["models_run"]) == newest["models_total"] == 43
    assert all("aten::_assert_tensor_metadata" not in ops for m in matrix["models"] for ops in m["missing"].values())
    assert not {row["op"] for row in matrix["operators"]} & {"aten::sym_size.int", "aten::sym_numel", "aten::sym_stride.int"}


def test_a_real_export_with_a_data_dependent_size_runs_on_executorch(rt, torch_mod, tmp_path):
    """A program torch.export really produced, holding a symbolic size and a runtime assertion."""
    class Positives(torch_mod.nn.Module):
        def forward(self, x):
            where = x.nonzero()  # a size known only at run time
            return torch_mod.relu(where.float().sum(1) + x.shape[0])

    program = torch_mod.export.export(Positives(), (torch_mod.randn(8),),
                                      dynamic_shapes=({0: torch_mod.export.Dim("n")},)).run_decompositions()
    archive = tmp_path / "positives.pt2"
    torch_mod.export.save(program, archive)
    check = rt.ok("check-model", str(archive), "--runtime", "executorch@1.3.0", "--format", "json").json()
    held = set(check["operators"])
    graph = {"aten::sym_size.int", "aten::_assert_scalar", "aten::_assert_tensor_metadata"}
    assert graph <= held and graph <= set(check["graph_ops"])
    assert not {m["op"] for m in check["missing"]} & set(check["graph_ops"])
    assert check["runs"], check["missing"]


def test_sym_is_contiguous_needs_no_kernel_by_its_schema(rt, tmp_path):
    """aten::sym_is_contiguous is core-tagged since 2.9.0 and returns a SymBool: the snapshot's schema
    says no kernel runs it, so check-model, runtimes coverage and opset build never ask for one."""
    model = tmp_path / "model.txt"
    model.write_text("aten::sym_is_contiguous\naten::relu\n")
    check = rt("check-model", model, "--runtime", "executorch@0.2.0", "--format", "json")
    assert check.code == 0, check.out
    assert "SymBool" in check.json()["graph_ops"]["aten::sym_is_contiguous"]
    assert "graph operator aten::sym_is_contiguous: its schema returns only symbolic values (SymBool)" in \
        rt.ok("check-model", model, "--runtime", "executorch@0.2.0").out
    against_snapshot = rt("check-model", model, "--runtime", "2.13.0", "--format", "json")
    assert against_snapshot.code == 0
    assert [n["rule"] for n in against_snapshot.json()["notes"] if n["op"] == "aten::sym_is_contiguous"] == \
        ["graph-operator"]
    corpus = tmp_path / "tiny_ops.json"
    corpus.write_text(json.dumps({"source": "test", "models": {"contig": {
        "family": "test", "exported_ops": ["aten::relu", "aten::sym_is_contiguous"],
        "core_aten_ops": ["aten::relu", "aten::sym_is_contiguous"]}}}))
    matrix = rt.ok("runtimes", "coverage", "--models", corpus, "--format", "json").json()
    assert "aten::sym_is_contiguous" not in {row["op"] for row in matrix["operators"]}
    [row] = matrix["models"]
    assert all(missing == [] for missing in row["missing"].values())
    assert row["graph_ops"] == ["aten::sym_is_contiguous"]
    opset = json.loads(rt.ok("opset", "build", "--format", "json").out)
    assert "aten::sym_is_contiguous" not in {e["op"] for e in opset["operators"]}
    assert "SymBool" in opset["graph_ops"]["aten::sym_is_contiguous"]


def test_executorch_serves_its_prim_ops(rt, executorch_dir, tmp_path):
    """ExecuTorch serves aten::_local_scalar_dense (`.item()`) and the symbolic sizes from its prim
    ops, outside its kernel yaml: registered from the data opgov ships for its real releases."""
    shown = rt.ok("runtimes", "show", "executorch@1.3.0", "--json").json()
    from opgov.formats.runtime_files import prim_ops

    cpp = executorch_dir / "1.3.0" / "register_prim_ops.cpp"
    assert shown["served"] == list(prim_ops(cpp.read_text(), str(cpp)))
    assert "aten::_local_scalar_dense" in shown["served"] and "aten::_local_scalar_dense" not in shown["kernels"]
    assert "aten::_local_scalar_dense" not in shown["core_missing"]
    assert shown["runtime"]["served"] == 25 and shown["runtime"]["torch"] == "2.12"
    listed = {r["runtime"]: r for r in rt.ok("runtimes", "list", "--json").json()["runtimes"]}
    assert [listed[f"executorch@{v}"]["served"] for v in RELEASES] == [16, 23, 25, 25]
    assert [listed[f"executorch@{v}"]["torch"] for v in RELEASES] == ["2.3", "2.6", "2.9", "2.12"]
    model = tmp_path / "item.txt"
    model.write_text("aten::_local_scalar_dense\naten::relu\n")
    check = rt("check-model", model, "--runtime", "executorch@0.2.0", "--format", "json")
    assert check.code == 0, check.out
    assert check.json()["provided"]["aten::_local_scalar_dense"] == "served by the runtime (prim op)"
    matrix = rt.ok("runtimes", "coverage", "--format", "json").json()
    [row] = [row for row in matrix["operators"] if row["op"] == "aten::_local_scalar_dense"]
    assert all(kernel is not None for kernel in row["kernels"].values())
    # given by hand: a prim ops source or a list, and the PyTorch pin file
    served = tmp_path / "served.txt"
    served.write_text("aten::_local_scalar_dense\n")
    added = rt.ok("runtimes", "add", "engine@1.0", "--ops", executorch_dir / "1.3.0" / "optimized.yaml",
                  "--served", served, "--torch-pin", executorch_dir / "0.5.0" / "pytorch-pin.txt", "--json").json()
    assert added["runtime"]["served"] == 1 and added["runtime"]["torch"] == "2.6"
    pin = tmp_path / "pin.txt"
    pin.write_text("0123456789abcdef0123456789abcdef01234567\n")
    bad(rt, "runtimes", "add", "engine@2.0", "--ops", served, "--torch-pin", pin, words=[str(pin), "names no PyTorch release"])
    bad(rt, "runtimes", "add", "engine@2.0", "--ops", served, "--torch", "two", words=["--torch"])
    bad(rt, "runtimes", "add", "engine@2.0", "--ops", served, "--served", pin, words=[str(pin)])
