#!/usr/bin/env python3
"""What one upload costs a worker of `opgov serve` in memory, route by route, on loopback only.

    .venv/bin/python benchmarks/uploads.py                 # print the table (bodies of about 8 MB)
    .venv/bin/python benchmarks/uploads.py --mb 30         # bodies near the 32 MiB bound
    .venv/bin/python benchmarks/uploads.py --write         # and replace the table in docs/performance.md
    .venv/bin/python benchmarks/uploads.py --only import   # one route alone, first on a fresh worker

Starts `opgov serve` (one worker: the process it starts) on 127.0.0.1 at a free port over a SQLite
database holding PyTorch 2.13.0 (../shared/pytorch or OPGOV_PYTORCH_DATA; the copy in tests/data
otherwise), then sends each upload route a body of about ``--mb`` MB, one request at a time, and
reads the worker's peak resident memory (``VmHWM``, reset to what it holds before each request
by writing 5 to ``/proc/PID/clear_refs``). The figure is the peak's growth over the memory the
worker held before the request, as a multiple of the request's body: the bound is 6 times
(issue 42). Each route is first sent a small request, so that what the route loads once (its
modules) is not counted. Linux only (``/proc``).

The bodies are real files made bigger, as a hostile or careless user would: PyTorch 2.13.0's
entries again and again under new names (``add`` → ``add_r3``), and the same size of the
smallest entries a registry can hold (``- func: f1(Tensor self) -> Tensor``), which cost the most
per byte; operator lists of unknown names; an archive whose program holds a real program's nodes
again and again.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("OPGOV_SHARED_DIR", ROOT.parent / "shared"))
DATA = Path(os.environ.get("OPGOV_PYTORCH_DATA", SHARED / "pytorch"))
OPGOV = [sys.executable, "-m", "opgov"]
HOST = "127.0.0.1"  # loopback only, always
BOUND = 6


def release_dir() -> Path:
    for folder in (DATA / "2.13.0", ROOT / "tests" / "data" / "pytorch" / "2.13.0"):
        if (folder / "native_functions.yaml").is_file():
            return folder
    sys.exit("no PyTorch 2.13.0 native_functions.yaml (set OPGOV_PYTORCH_DATA)")


def renamed(release: Path, size: int, tag: str = "r") -> bytes:
    """About ``size`` bytes of the release's entries again and again, each copy renamed, without the
    lines that name other entries (and without the mutating ones, whose out= variants a renamed copy
    would not name: torchgen's rules, which `import` checks, would refuse them)."""
    text = (release / "native_functions.yaml").read_text(encoding="utf-8")
    head, *entries = re.split(r"(?m)^(?=- func:)", text)
    out, total, copy = [head], len(head), 0
    while total < size:
        for entry in entries:
            if "!" in entry.split("\n", 1)[0]:
                continue
            entry = re.sub(r"^- func: ([A-Za-z0-9_]+)", rf"- func: \g<1>_{tag}{copy}", entry, count=1)
            entry = "".join(line for line in entry.splitlines(keepends=True)
                            if not line.lstrip().startswith(("structured_delegate:", "autogen:")))
            out.append(entry)
            total += len(entry)
            if total >= size:
                break
        copy += 1
    return "".join(out).encode("utf-8")


def smallest(size: int) -> bytes:
    lines, total, i = [], 0, 0
    while total < size:
        line = f"- func: f{i}(Tensor self) -> Tensor\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines).encode()


def rules(release: Path, size: int) -> bytes:
    """A rules file of about ``size`` bytes: a rule for each functional operator of the release (into
    ``aten::add.Tensor``), each with a long note."""
    text = (release / "native_functions.yaml").read_text(encoding="utf-8")
    ops = [f"aten::{m.group(1)}" + (f".{m.group(2)}" if m.group(2) else "")
           for m in re.finditer(r"(?m)^- func: ([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\(([^\n]*)$", text)
           if "!" not in m.group(3) and not m.group(1).endswith("_") and m.group(2) not in ("out",)]
    ops = [op for op in ops if op != "aten::add.Tensor"]
    note = "x" * max(10, size // max(1, len(ops)) - 80)
    lines = ["format: 1", "source: benchmark", "rules:"]
    lines += [f"  - {{op: {op}, into: [aten::add.Tensor], note: \"{note}\"}}" for op in ops]
    return ("\n".join(lines) + "\n").encode()


def decisions(release: Path, size: int) -> bytes:
    """A decisions file of about ``size`` bytes: each functional operator of the release kept custom,
    with a long rationale."""
    text = (release / "native_functions.yaml").read_text(encoding="utf-8")
    ops = sorted({f"aten::{m.group(1)}" + (f".{m.group(2)}" if m.group(2) else "")
                  for m in re.finditer(r"(?m)^- func: ([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\(([^\n]*)$", text)
                  if "!" not in m.group(3) and not m.group(1).endswith("_") and m.group(2) != "out"})
    why = "y" * max(10, size // max(1, len(ops)) - 80)
    lines = ["source: benchmark", "decided_at: 2024-01-02", "decided_by: [chair]", "decisions:"]
    lines += [f"  - {{op: {op}, category: custom, rationale: \"{why}\"}}" for op in ops]
    return ("\n".join(lines) + "\n").encode()


def inflated(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return sum(info.file_size for info in zf.infolist())


def names(size: int) -> bytes:
    lines, total, i = [], 0, 0
    while total < size:
        line = f"aten::no_such_operator_{i}.Tensor\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines).encode()


def archive(size: int) -> bytes:
    """A .pt2 whose program repeats a real-looking node (inputs, outputs, metadata) to ``size`` bytes
    of JSON (inflated)."""
    node = {"target": "torch.ops.aten.add.Tensor", "name": "add",
            "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}, "kind": 1},
                       {"name": "other", "arg": {"as_tensor": {"name": "y"}}, "kind": 1}],
            "outputs": [{"as_tensor": {"name": "add"}}],
            "metadata": {"stack_trace": "File \"model.py\", line 12, in forward\n    return x + y",
                         "nn_module_stack": "L__self__,,torch.nn.Module", "torch_fn": "add_1;method_add"}}
    one = len(json.dumps(node)) + 2
    program = {"graph_module": {"graph": {"nodes": [node] * max(1, size // one), "outputs": [],
                                          "tensor_values": {"x": {"dtype": 7}, "y": {"dtype": 7}}}},
               "schema_version": {"major": 8, "minor": 0}}
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("model/models/model.json", json.dumps(program))
    return out.getvalue()


def status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise SystemExit(f"no {key} for {pid}")


def opgov(db: str, *args: str, actor: str = "bench") -> str:
    done = subprocess.run([*OPGOV, "--db", db, "--actor", actor, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"opgov {' '.join(args)}: {done.stderr}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=8.0, help="about how many MB each body holds")
    parser.add_argument("--write", action="store_true", help="replace the table in docs/performance.md")
    parser.add_argument("--only", default="", help="the routes whose description holds this text (e.g. import)")
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    release = release_dir()
    folder = Path(tempfile.mkdtemp(prefix="opgov-uploads-"))
    db = f"sqlite:///{folder / 'opgov.db'}"
    opgov(db, "db", "upgrade")
    opgov(db, "import", str(release / "native_functions.yaml"), "--label", "2.13.0")
    token = opgov(db, "tokens", "create", "chair", actor="chair").split()[0]
    tags = (release / "tags.yaml").read_bytes()
    small_nf = (ROOT / "data" / "sample" / "native_functions.v1.yaml").read_bytes()
    sample_rules = (ROOT / "data" / "sample" / "rules.yaml").read_bytes()
    registry, tiny = renamed(release, size // 2), smallest(size // 2)
    model = archive(size)
    under = "".join(f"- func: f{i}(Tensor self) -> Tensor\n" for i in range(24_000)).encode()
    big_registry = renamed(release, size, tag="s")
    # a registry declares at most 25,000 functions (opgov.formats.registry): about 5 MB of real entries
    importable = renamed(release, min(size, 4_000_000), tag="i")
    cases = [  # (what, method, path, files or json, the small warm-up request's files or json, with a token)
        ("`check-bc`, PyTorch's entries renamed (old = new)", "/api/v1/check-bc",
         {"old": ("old.yaml", registry), "new": ("new.yaml", registry)},
         {"old": ("a.yaml", small_nf), "new": ("b.yaml", small_nf)}, False),
        ("`check-bc`, the smallest entries (old = new)", "/api/v1/check-bc",
         {"old": ("old.yaml", tiny), "new": ("new.yaml", tiny)}, None, False),
        ("`check-bc`, the smallest entries, 24,000 functions each (under the bound)", "/api/v1/check-bc",
         {"old": ("old.yaml", under), "new": ("new.yaml", under)}, None, False),
        ("`sync-yaml` (check), PyTorch's entries renamed", "/api/v1/sync-yaml",
         {"native_functions": ("native_functions.yaml", big_registry), "tags": ("tags.yaml", tags)},
         {"native_functions": ("native_functions.yaml", small_nf), "tags": ("tags.yaml", tags)}, False),
        ("`sync-yaml --write`, PyTorch's entries renamed", "/api/v1/sync-yaml/write",
         {"native_functions": ("native_functions.yaml", big_registry), "tags": ("tags.yaml", tags)},
         {"native_functions": ("native_functions.yaml", small_nf), "tags": ("tags.yaml", tags)}, True),
        ("`decisions load`, each operator kept custom, with long rationales", "/api/v1/decisions",
         {"decisions": ("decisions.yaml", decisions(release, size))}, None, True),
        ("`check-model`, a list of unknown operator names", "/api/v1/check-model",
         {"models": ("ops.txt", names(size))}, {"models": ("ops.txt", b"aten::add.Tensor\n")}, False),
        ("`check-model`, a .pt2 whose program repeats real nodes (× its inflated program)", "/api/v1/check-model",
         {"models": ("model.pt2", model)}, {"models": ("small.pt2", archive(10_000))}, False),
        ("`runtimes add`, a list of kernels", "/api/v1/runtimes",
         {"ops": ("kernels.txt", names(size))}, None, True),
        ("`decomps load`, a rule for each operator, with long notes", "/api/v1/decomps",
         {"rules": ("rules.yaml", rules(release, size))}, {"rules": ("rules.yaml", sample_rules)}, True),
        ("`import`, PyTorch's entries renamed (at most 4 MB: 18,724 functions)", "/api/v1/snapshots",
         {"native_functions": ("native_functions.yaml", importable), "tags": ("tags.yaml", tags)},
         {"native_functions": ("native_functions.yaml", small_nf), "tags": ("tags.yaml", tags)}, True),
    ]
    cases = [case for case in cases if args.only in case[0]]
    if args.write and args.only:
        sys.exit("--write replaces the whole table: measure every route (no --only)")
    port = free_port()
    log = folder / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", HOST, "--port", str(port)],
                                  stdout=out, stderr=subprocess.STDOUT)
    url = f"http://{HOST}:{port}"
    rows = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit(f"opgov serve did not start: {log.read_text()}")
            time.sleep(0.2)
        pid = server.pid
        extra = {"label": "2.13.0-big"}
        for what, path, files, warm, member in cases:
            headers = {"Authorization": f"Bearer {token}"} if member else {}
            data = extra if path == "/api/v1/snapshots" else ({"runtime": "bench@1.0"} if path == "/api/v1/runtimes"
                                                              else None)
            with httpx.Client(base_url=url, timeout=600, headers=headers) as client:
                if warm is not None:
                    client.post(path, files=warm, data={"label": "warm"} if path == "/api/v1/snapshots" else data)
                Path(f"/proc/{pid}/clear_refs").write_text("5")
                before = status(pid, "VmHWM")
                request = client.build_request("POST", path, files=files, data=data)
                body = len(request.read())
                if "inflated" in what:  # an archive: its cost is that of what it inflates to
                    body = sum(inflated(f[1]) for f in files.values())
                start = time.perf_counter()
                answer = client.send(request)
                seconds = time.perf_counter() - start
            growth = status(pid, "VmHWM") - before
            rows.append((what, body, answer.status_code, growth, seconds))
            print(f"{what}: {body / 1e6:.1f} MB body, HTTP {answer.status_code}, peak +{growth / 1e6:.0f} MB "
                  f"({growth / body:.1f}x), {seconds:.1f} s", file=sys.stderr)
            if answer.status_code >= 400:
                print(f"  {answer.text[:200]}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait(30)
    load = os.getloadavg()[0]
    table = [f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores, Python "
             f"{sys.version.split()[0]}, one worker, bodies of about {args.mb:g} MB; load average {load:.1f} at the end.",
             "", "| upload | body | answer | worker's peak growth | × body | bound | met | time |",
             "|---|---|---|---|---|---|---|---|"]
    for what, body, code, growth, seconds in rows:
        table.append(f"| {what} | {body / 1e6:.1f} MB | {code} | {growth / 1e6:.0f} MB | {growth / body:.1f}× | "
                     f"≤ {BOUND}× | {'yes' if growth <= BOUND * body else '**no**'} | {seconds:.1f} s |")
    text = "\n".join(table)
    print(text)
    if args.write:
        doc = ROOT / "docs" / "performance.md"
        current = doc.read_text()
        begin, end = "<!-- upload memory: begin -->", "<!-- upload memory: end -->"
        if begin in current:
            head, rest = current.split(begin, 1)
            _, tail = rest.split(end, 1)
            doc.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
        else:
            doc.write_text(current.rstrip("\n") + f"\n\n## Memory per upload\n\n{begin}\n{text}\n{end}\n")


if __name__ == "__main__":
    main()
