"""A model checked down to its arguments against the torch release a runtime follows, each verdict
checked against torch itself: small modules exported and saved with torch 2.13.0, registries
derived from PyTorch's real 2.13.0 native_functions.yaml (an older one without an argument and
with a changed default, a newer one with a renamed argument), and torch.export.load of the archive
reading each call with the derived release's schema (torch._C.parse_schema of it), as that release
would."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import bad, run_opgov

NOW = "2026-06-01T09:00Z"
_run = run_opgov

# the edits that make the derived releases, each (2.13.0's line, the derived release's)
OLDER = {  # 2.12.1: gelu knew no `approximate`; leaky_relu's default slope was another
    "- func: gelu(Tensor self, *, str approximate='none') -> Tensor": "- func: gelu(Tensor self) -> Tensor",
    "- func: leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor":
        "- func: leaky_relu(Tensor self, Scalar negative_slope=0.02) -> Tensor",
}
NEWER = {  # 2.14.0: cumsum's `dim` renamed `axis`
    "- func: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor":
        "- func: cumsum(Tensor self, int axis, *, ScalarType? dtype=None) -> Tensor",
}
CUMSUM_2_13 = "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"


def derive(source: Path, edits: dict[str, str], folder: Path) -> Path:
    text = (source / "native_functions.yaml").read_text()
    for old, new in edits.items():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    folder.mkdir()
    (folder / "native_functions.yaml").write_text(text)
    shutil.copyfile(source / "tags.yaml", folder / "tags.yaml")
    return folder


def small_programs(torch) -> dict:
    """Small modules with random weights, exported in memory with this torch (2.13.0): each makes
    one of the verdicts."""

    class TanhGelu(torch.nn.Module):  # passes an argument the older release does not know
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            y = self.linear(x)
            return torch.nn.functional.gelu(y, approximate="tanh") + torch.nn.functional.gelu(y)

    class Leaky(torch.nn.Module):  # leaves leaky_relu's slope to its default
        def forward(self, x):
            return torch.nn.functional.leaky_relu(x.half()).float()

    class Cumulative(torch.nn.Module):  # names cumsum's `dim`, which the newer release renamed
        def forward(self, x):
            return torch.cumsum(x, 1) * 2

    return {name: torch.export.export(module.eval(), (torch.randn(2, 4),))
            for name, module in (("gelu", TanhGelu()), ("leaky", Leaky()), ("cumsum", Cumulative()))}


def saved_archives(torch, programs: dict, folder: Path) -> dict[str, Path]:
    """The archives torch saves of ``programs``."""
    out = {}
    for name, program in programs.items():
        out[name] = folder / f"{name}.pt2"
        torch.export.save(program, out[name])
    return out


@pytest.fixture(scope="module")
def archives(torch_mod, tmp_path_factory) -> dict[str, Path]:
    """The small modules, exported and saved with this torch (2.13.0)."""
    return saved_archives(torch_mod, small_programs(torch_mod), tmp_path_factory.mktemp("archives"))


@pytest.fixture(scope="module")
def releases(pytorch_release, tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("releases")
    real = pytorch_release("2.13.0")
    return {"2.12.1": derive(real, OLDER, folder / "2.12.1"), "2.13.0": real,
            "2.14.0": derive(real, NEWER, folder / "2.14.0")}


@pytest.fixture(scope="module")
def args_db(tmp_path_factory, releases) -> Path:
    """The three releases imported, and two runtimes: one following the older release, one the newer."""
    path = tmp_path_factory.mktemp("args") / "opgov.db"
    url = f"sqlite:///{path}"
    _run("--db", url, "db", "upgrade", "--simulation")
    for label in ("2.12.1", "2.13.0", "2.14.0"):
        folder = releases[label]
        _run("--db", url, "--now", NOW, "import", folder / "native_functions.yaml", "--tags-yaml",
             folder / "tags.yaml", "--label", label)
    kernels = path.parent / "kernels.txt"
    kernels.write_text("aten::addmm\naten::gelu\naten::add.Tensor\naten::leaky_relu\naten::_to_copy\naten::cumsum\n"
                       "aten::mul.Tensor\naten::permute\naten::linear\naten::to.dtype\naten::t\naten::mul.Scalar\n")
    _run("--db", url, "--now", NOW, "runtimes", "add", "engine@1.0", "--ops", kernels, "--torch", "2.12")
    _run("--db", url, "--now", NOW, "runtimes", "add", "engine@2.0", "--ops", kernels, "--torch", "2.14")
    return path


@pytest.fixture
def cli(make_cli, args_db, tmp_path):
    path = tmp_path / "copy.db"
    shutil.copyfile(args_db, path)
    return make_cli(f"sqlite:///{path}", upgrade=False)


# --- torch, reading the archive as the derived release would --------------------------------------------


def schema_text(folder: Path, op: str) -> str:
    name = op.removeprefix("aten::")
    for line in (folder / "native_functions.yaml").read_text().splitlines():
        if line.startswith(f"- func: {name}("):
            return line.removeprefix("- func: ")
    raise AssertionError(op)


def load_as(torch, monkeypatch, archive: Path, release: Path, ops: list[str]):
    """torch.export.load of ``archive`` with the schemas ``release`` declares for ``ops``."""
    import torch._export.serde.serialize as serde

    real = serde._get_schema_from_target
    schemas = {op: torch._C.parse_schema("aten::" + schema_text(release, op)) for op in ops}

    def schema_of(target):
        name = target.name()
        overload = getattr(target, "_overloadname", "default")
        key = name if overload == "default" else f"{name}.{overload}"
        return schemas.get(key) or real(target)

    monkeypatch.setattr(serde, "_get_schema_from_target", schema_of)
    try:
        return torch.export.load(archive)
    finally:
        monkeypatch.setattr(serde, "_get_schema_from_target", real)


# --- the verdicts ----------------------------------------------------------------------------------------------


def test_a_new_argument_on_an_older_runtime_is_a_forward_break(cli, archives, releases, torch_mod, monkeypatch):
    check = cli("check-model", archives["gelu"], "--runtime", "engine@1.0", "--format", "json")
    assert check.code == 1
    data = check.json()
    assert data["missing"] == [] and not data["runs"]
    [args] = data["arguments"]
    assert (args["torch_version"].split("+")[0], args["model_release"], args["runtime_release"]) == \
        ("2.13.0", "2.13.0", "2.12.1")
    [problem] = args["problems"]
    assert (problem["rule"], problem["severity"], problem["op"], problem["argument"], problem["calls"]) == \
        ("argument-unknown", "error", "aten::gelu", "approximate", 1)  # the other call leaves it to its default
    assert problem["call"] == "gelu" and "approximate='tanh'" in problem["message"]
    assert "2.12.1" in problem["message"] and "2.13.0" in problem["message"]
    # torch itself: 2.12.1's deserializer drops the argument from the call that passed it
    program = load_as(torch_mod, monkeypatch, archives["gelu"], releases["2.12.1"], ["aten::gelu"])
    geluses = [n for n in program.graph.nodes if n.op == "call_function" and "gelu" in str(n.target)]
    assert len(geluses) == 2 and all("approximate" not in n.kwargs for n in geluses)
    same = load_as(torch_mod, monkeypatch, archives["gelu"], releases["2.13.0"], ["aten::gelu"])
    kept = same.graph.find_nodes(op="call_function", target=torch_mod.ops.aten.gelu.default)
    assert [n.kwargs.get("approximate") for n in kept] == ["tanh", None]  # its own release keeps it
    # one line per problem, exit 1; GitHub annotations for CI
    text = cli("check-model", archives["gelu"], "--runtime", "engine@1.0").out
    assert "does not run" in text and "as exported" in text
    [line] = [line for line in text.splitlines() if "argument-unknown" in line]
    assert line.startswith("error   argument-unknown: gelu passes approximate='tanh' to aten::gelu")
    github = cli("check-model", archives["gelu"], "--runtime", "engine@1.0", "--format", "github").out
    assert "::error title=opgov argument-unknown::gelu passes approximate='tanh'" in github
    # the same model on a runtime of its own release: nothing to say
    assert cli("check-model", archives["gelu"], "--runtime", "2.13.0").code == 0


def test_a_changed_default_left_to_itself_is_a_silent_numerics_change(cli, archives, releases, torch_mod,
                                                                         monkeypatch):
    check = cli("check-model", archives["leaky"], "--runtime", "engine@1.0", "--format", "json")
    assert check.code == 0  # it runs, silently otherwise
    [args] = check.json()["arguments"]
    [problem] = args["problems"]
    assert (problem["rule"], problem["severity"], problem["op"], problem["argument"]) == \
        ("default-changed", "warning", "aten::leaky_relu", "negative_slope")
    assert "0.01 in torch 2.13.0 and 0.02 in 2.12.1" in problem["message"]
    # the dtypes each operator is called with, from the archive's tensor metadata
    dtypes = {d["op"]: d["dtypes"] for d in args["dtypes"]}
    assert dtypes["aten::leaky_relu"] == ["float16"]
    # torch itself: the archive names no slope, so the loading release's default applies
    program = load_as(torch_mod, monkeypatch, archives["leaky"], releases["2.12.1"], ["aten::leaky_relu"])
    [node] = program.graph.find_nodes(op="call_function", target=torch_mod.ops.aten.leaky_relu.default)
    assert len(node.args) == 1 and not node.kwargs
    older = torch_mod._C.parse_schema("aten::" + schema_text(releases["2.12.1"], "aten::leaky_relu"))
    assert older.arguments[1].default_value == pytest.approx(0.02)
    assert torch_mod.ops.aten.leaky_relu.default._schema.arguments[1].default_value == pytest.approx(0.01)
    # a snapshot label as the runtime stands for torch of that release
    snap = cli("check-model", archives["leaky"], "--runtime", "2.12.1", "--format", "json")
    assert snap.code == 0 and snap.json()["ok"]
    assert [p["rule"] for p in snap.json()["arguments"][0]["problems"]] == ["default-changed"]
    text = cli("check-model", archives["leaky"], "--runtime", "2.12.1").out
    assert "warning default-changed: leaky_relu leaves negative_slope of aten::leaky_relu to its default" in text
    assert "dtypes  " in text and "aten::leaky_relu float16" in text


def test_a_renamed_argument_runs_only_through_an_upgrader(cli, archives, releases, torch_mod, monkeypatch):
    check = cli("check-model", archives["cumsum"], "--runtime", "engine@2.0", "--format", "json")
    assert check.code == 1
    [problem] = check.json()["arguments"][0]["problems"]
    assert (problem["rule"], problem["severity"], problem["op"], problem["upgrader"]) == \
        ("schema-bc-break", "error", "aten::cumsum", None)
    assert "between torch 2.13.0 and 2.14.0" in problem["message"] and "no upgrader" in problem["message"]
    # torch itself: 2.14.0's deserializer finds no `axis` in the call and refuses the archive
    import torch._export.serde.serialize as serde

    seen: list[BaseException] = []
    real_inputs = serde.GraphModuleDeserializer.deserialize_inputs

    def watched(self, target, node):  # torch's own matching, its failure kept to look at
        try:
            return real_inputs(self, target, node)
        except Exception as err:
            seen.append(err)
            raise

    monkeypatch.setattr(serde.GraphModuleDeserializer, "deserialize_inputs", watched)
    with pytest.raises(RuntimeError, match="error when deserializing"):
        load_as(torch_mod, monkeypatch, archives["cumsum"], releases["2.14.0"], ["aten::cumsum"])
    monkeypatch.setattr(serde.GraphModuleDeserializer, "deserialize_inputs", real_inputs)
    assert [type(e) for e in seen] == [KeyError] and seen[0].args == ("axis",)  # the call names no `axis`
    # with an upgrader on record for cumsum as 2.13.0 declares it, it runs through that upgrader
    cli.ok("upgraders", "add", "aten::cumsum", "--versions", "0-9", "--old-schema", CUMSUM_2_13,
           "--bumped-on", "2026-05-01", "--reason", "cumsum's dim renamed axis", now=NOW)
    upgraded = cli("check-model", archives["cumsum"], "--runtime", "engine@2.0", "--format", "json")
    assert upgraded.code == 0
    [problem] = upgraded.json()["arguments"][0]["problems"]
    assert (problem["severity"], problem["upgrader"]) == ("warning", "cumsum_0_9")
    assert "runs only through the upgrader cumsum_0_9" in problem["message"]
    # on the older runtime the same archive loads as it is
    assert cli("check-model", archives["cumsum"], "--runtime", "engine@1.0", "--format", "json").json()[
        "arguments"][0]["problems"] == []


def test_what_cannot_be_checked_says_why(cli, archives, tmp_path, executorch_free_kernels):
    kernels = executorch_free_kernels
    cli.ok("runtimes", "add", "bare@1", "--ops", kernels, now=NOW)
    [args] = cli("check-model", archives["gelu"], "--runtime", "bare@1", "--format", "json").json()["arguments"]
    assert not args["checked"] and "without the torch release" in args["note"]
    cli.ok("runtimes", "add", "far@1", "--ops", kernels, "--torch", "2.3", now=NOW)
    [args] = cli("check-model", archives["gelu"], "--runtime", "far@1", "--format", "json").json()["arguments"]
    assert not args["checked"] and "no snapshot holds torch 2.3" in args["note"]
    # an operator list has no arguments to check
    ops = tmp_path / "ops.txt"
    ops.write_text("aten::gelu\n")
    assert cli("check-model", ops, "--runtime", "engine@1.0", "--format", "json").json()["arguments"] == []


@pytest.fixture
def executorch_free_kernels(tmp_path) -> Path:
    path = tmp_path / "k.txt"
    path.write_text("aten::gelu\naten::addmm\n")
    return path


def test_the_server_answers_what_a_local_run_says(cli, archives):
    """check-model against `opgov serve` (a real process on 127.0.0.1): the same arguments, lines and
    exit code as with --db."""
    import os
    import subprocess
    import sys

    from tests.api.test_api_serve import start

    server = start(cli.url)
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")} | {"COLUMNS": "200"}
        runs = {}
        for where, extra in (("local", {}), ("remote", {"OPGOV_SERVER": server.url})):
            for fmt in ("json", "text"):
                argv = [sys.executable, "-m", "opgov", *(["--db", cli.url] if where == "local" else []),
                        "check-model", str(archives["gelu"]), "--runtime", "engine@1.0", "--format", fmt]
                done = subprocess.run(argv, capture_output=True, text=True, env=env | extra, timeout=300)
                runs[where, fmt] = (done.returncode, done.stdout, done.stderr)
        assert runs["remote", "json"] == runs["local", "json"] and runs["local", "json"][0] == 1
        assert runs["remote", "text"] == runs["local", "text"]
        [args] = json.loads(runs["remote", "json"][1])["arguments"]
        assert [p["rule"] for p in args["problems"]] == ["argument-unknown"]
    finally:
        server.stop()
