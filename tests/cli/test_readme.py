"""The README's everyday flow, run as written: each `opgov …` line of its "Everyday use" block, in
order, by the real program, in a folder holding the files the lines name (the sample registry as
`native_functions.yaml`, a git checkout whose `origin/main` holds the previous release, a kernel
yaml, a model; no ../shared beside it: the model corpora are those opgov ships). Only the port of
`serve` is a free one."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import httpx

from tests.conftest import REPO, SAMPLE

OPGOV = [sys.executable, "-m", "opgov"]


def everyday_lines() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Everyday use", 1)[1].split("```", 2)[1]
    return [re.sub(r"\s+#\s.*$", "", line).strip() for line in block.splitlines() if line.startswith("opgov ")]


def _pt2(ops: list[str]) -> bytes:
    """A torch.export archive's program, as opgov reads it (no torch needed to write one)."""
    nodes = [{"target": f"torch.ops.aten.{op}", "inputs": [], "outputs": []} for op in ops]
    program = {"graph_module": {"graph": {"nodes": nodes, "outputs": []}}, "schema_version": {"major": 8}}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("model/models/model.json", json.dumps(program))
    return buffer.getvalue()


def _git(work: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=ci@example.org", "-c", "user.name=ci", *args], cwd=work, check=True,
                   capture_output=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _folder(tmp_path: Path) -> Path:
    work = tmp_path / "pytorch"
    native = work / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (native / "native_functions.yaml").write_bytes((SAMPLE / "native_functions.v1.yaml").read_bytes())
    _git(work, "init", "-q", ".")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "the previous release")
    _git(work, "update-ref", "refs/remotes/origin/main", "HEAD")
    (native / "native_functions.yaml").write_bytes((SAMPLE / "native_functions.v2.yaml").read_bytes())  # the PR
    (work / "native_functions.yaml").write_bytes((SAMPLE / "native_functions.v2.yaml").read_bytes())
    (work / "tags.yaml").write_bytes((SAMPLE / "tags.yaml").read_bytes())
    (work / "functions.yaml").write_text("- op: add.out\n- op: mul.out\n", encoding="utf-8")
    (work / "model.pt2").write_bytes(_pt2(["add.Tensor", "mul.Tensor"]))
    return work  # nothing beside it: a model corpus a line names is one opgov ships


def test_the_everyday_flow_runs_as_written(tmp_path):
    lines = everyday_lines()
    assert lines[0] == "opgov db upgrade" and len(lines) > 15
    work = _folder(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_")} | {
        "OPGOV_DATABASE_URL": f"sqlite:///{tmp_path / 'opgov.db'}", "OPGOV_ACTOR": "alice", "COLUMNS": "160"}
    said = {}
    for line in lines:
        argv = shlex.split(line)[1:]
        if argv[0] == "serve":  # runs until stopped: on a free port, asked once, stopped
            port = _free_port()
            argv[argv.index("--port") + 1] = str(port)
            server = subprocess.Popen([*OPGOV, *argv], cwd=work, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
            try:
                deadline = time.monotonic() + 60  # start-up, not a timing assertion
                while True:
                    assert server.poll() is None, server.stdout.read()
                    try:
                        answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/proposals", timeout=2)
                        break
                    except httpx.TransportError:
                        assert time.monotonic() < deadline, "opgov serve did not answer"
                        time.sleep(0.2)
                assert [p["operator"] for p in answer.json()] == ["aten::fused_rms_norm"]
            finally:
                server.terminate()
                server.wait(timeout=20)
            continue
        done = subprocess.run([*OPGOV, *argv], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        # a check that finds errors exits 1 (the sample's v2 breaks a core operator) and says which
        expected = {0, 1} if argv[0].startswith("check-") else {0}
        assert done.returncode in expected, f"{line}: exit {done.returncode}: {done.stderr}"
        assert done.returncode == 0 or "::error " in done.stdout
        assert "Traceback" not in done.stderr
        said[" ".join(argv[:2])] = done.stdout
    assert "proposal 1: 1 approve, 0 reject" in said["review 1"]
    assert "aten::fused_rms_norm" in said["proposals list"] and "bob" not in said["proposals list"]
    assert said["deprecate aten::glu"].startswith("aten::glu: active → deprecating (replacement aten::sigmoid)")
    assert "chain intact" in said["log verify"]
    assert "models (core-aten operators): " in said["opset build"] and "/43 covered" in said["opset build"]
    assert (work / "report.html").is_file() and (work / "site" / "index.html").is_file()
    # in a GitHub workflow a passing check-model says so (a notice), rather than nothing
    for extra, said in ((["--runtime", "executorch@1.3.0"], "executorch@1.3.0 runs model.pt2: it has all 2 operators"),
                        ([], "2 operators: 0 error(s), 0 warning(s), 0 note(s)")):
        done = subprocess.run([*OPGOV, "check-model", "model.pt2", *extra, "--format", "github"], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.splitlines()[-1] == f"::notice title=opgov check-model::{said}"


def test_no_line_of_the_readme_or_the_guide_needs_shared_models():
    """A clone has no ../shared beside it: the model corpora ship in the package, by name
    (`--models shipped`, `torchvision#resnet18`), so no line a newcomer copies names that folder."""
    for doc in (REPO / "README.md", REPO / "docs" / "source" / "user-guide.md.in"):
        lines = [n for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1) if "shared/models" in line]
        assert not lines, f"{doc.relative_to(REPO)}:{lines[0] if lines else ''} names ../shared/models"
