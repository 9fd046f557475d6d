#!/usr/bin/env python3
"""opgov's speed targets, measured as whole processes against a baseline in the same run.

    .venv/bin/python benchmarks/run.py            # print the results as a markdown table
    .venv/bin/python benchmarks/run.py --write    # also replace the table in docs/performance.md

Each case runs its command and its baseline alternately, ``--repeat`` times (default 9), and
compares medians, so that load on the machine affects both alike. The table also gives each
command's CPU time (user + system of the process and its forked children, from ``getrusage``):
on a machine shared with other work, CPU time moves much less with the load than wall time. The baseline of the file-reading
targets is a bare Python process that only loads native_functions.yaml with ``yaml.CSafeLoader``.
Databases are prepared before timing (not timed). Needs ../shared/pytorch (or OPGOV_PYTORCH_DATA)
and ../shared/models; torchgen's parser is measured when torch is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("OPGOV_SHARED_DIR", ROOT.parent / "shared"))
DATA = Path(os.environ.get("OPGOV_PYTORCH_DATA", SHARED / "pytorch"))
MODELS = SHARED / "models"
PY = sys.executable
OPGOV = [PY, "-m", "opgov"]
RELEASES = ["2.0.0", "2.6.0", "2.12.0", "2.13.0"]
DOC = ROOT / "docs" / "performance.md"
BEGIN, END = "<!-- benchmark results: begin -->", "<!-- benchmark results: end -->"


def nf(version: str) -> Path:
    return DATA / version / "native_functions.yaml"


def tags(version: str) -> Path:
    return DATA / version / "tags.yaml"


def load_yaml_cmd(*paths: Path) -> list[str]:
    loads = "; ".join(f"yaml.load(open({str(p)!r}), Loader=yaml.CSafeLoader)" for p in paths)
    return [PY, "-c", f"import yaml; {loads}"]


CPU: dict[int, float] = {}  # id of a measured list → CPU seconds of each run (user + system, children)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(cmd, env: dict[str, str], setup=None, ok=(0,), cpu: list[float] | None = None) -> float:
    """Wall time of ``cmd`` (or of each command of a list of commands, in turn); its CPU time
    (the processes' user + system time, forked children included) is appended to ``cpu``."""
    if setup is not None:
        setup()
    cmds = cmd if cmd and isinstance(cmd[0], list) else [cmd]
    start, start_cpu = time.perf_counter(), _cpu()
    for one in cmds:
        done = subprocess.run(one, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode not in ok:
            raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(one)}\n{done.stderr}")
    elapsed = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_cpu() - start_cpu)
    return elapsed


@dataclass
class Result:
    name: str
    seconds: float
    baseline_name: str | None
    baseline: float | None
    target: str
    passed: bool
    cpu: float | None = None  # median CPU seconds (user + system) of the command
    baseline_cpu: float | None = None

    def row(self) -> str:
        ratio = f"{self.seconds / self.baseline:.2f}×" if self.baseline else "–"
        base = f"{self.baseline:.3f} s ({self.baseline_name})" if self.baseline else "–"
        cpu = "–" if self.cpu is None else f"{self.cpu:.3f} s"
        if self.cpu is not None and self.baseline_cpu:
            cpu += f" / {self.baseline_cpu:.3f} s ({self.cpu / self.baseline_cpu:.2f}×)"
        return (f"| {self.name} | {self.seconds:.3f} s | {base} | {ratio} | {cpu} | {self.target} | "
                f"{'yes' if self.passed else '**no**'} |")


LAST_CPU: list[float | None] = [None, None]  # medians of the last measure(): command, baseline


def measure(repeat: int, cmd, env, baseline=None, setup=None, ok=(0,)) -> tuple[float, float | None]:
    """Median wall times of ``cmd`` and its ``baseline``, run alternately; their median CPU times
    are left in :data:`LAST_CPU`."""
    ours, base, ours_cpu, base_cpu = [], [], [], []
    for _ in range(repeat):
        ours.append(run(cmd, env, setup, ok, cpu=ours_cpu))
        if baseline is not None:
            base.append(run(baseline, env, ok=ok, cpu=base_cpu))
    LAST_CPU[:] = [statistics.median(ours_cpu), statistics.median(base_cpu) if base_cpu else None]
    return statistics.median(ours), (statistics.median(base) if base else None)


def result(name: str, seconds: float, baseline_name: str | None, baseline: float | None, target: str,
           passed: bool) -> Result:
    return Result(name, seconds, baseline_name, baseline, target, passed, LAST_CPU[0], LAST_CPU[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--write", action="store_true", help=f"update the table in {DOC.relative_to(ROOT)}")
    args = parser.parse_args()
    if not all(nf(v).is_file() for v in RELEASES):
        raise SystemExit(f"the PyTorch registries are not at {DATA} (set OPGOV_PYTORCH_DATA)")
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    work = Path(tempfile.mkdtemp(prefix="opgov-bench-"))
    env = {**os.environ, "OPGOV_ACTOR": "bench", "HOME": str(work)}
    env.pop("OPGOV_DATABASE_URL", None)
    env.pop("OPGOV_NOW", None)
    results: list[Result] = []
    # opgov's modules as an installed opgov has them: compiled to bytecode (pip compiles a wheel's
    # modules when it installs them). An editable install under PYTHONDONTWRITEBYTECODE=1 would
    # otherwise compile every module from source in every timed process (~0.05 s for check-bc).
    subprocess.run([PY, "-m", "compileall", "-q", str(ROOT / "opgov")], check=True, stdout=subprocess.DEVNULL)
    try:
        def db(name: str) -> str:
            return f"sqlite:///{work / name}"

        def opgov(*a: str, url: str, ok=(0,)) -> None:
            subprocess.run([*OPGOV, "--db", url, *a], env=env, check=False, stdout=subprocess.DEVNULL)

        # an empty, migrated database to copy before each timed import
        opgov("db", "upgrade", url=db("empty.db"))

        def fresh() -> None:
            shutil.copyfile(work / "empty.db", work / "import.db")

        seconds, _ = measure(args.repeat, [*OPGOV, "--help"], env)
        results.append(result("`opgov --help`", seconds, None, None, "≤ 0.1 s", seconds <= 0.1))

        seconds, base = measure(args.repeat, [*OPGOV, "--db", db("import.db"), "import", str(nf("2.13.0")),
                                              "--label", "2.13.0"], env, load_yaml_cmd(nf("2.13.0")), setup=fresh)
        results.append(result("`opgov import` 2.13.0 into a fresh database", seconds, "CSafeLoader load", base,
                              "≤ 1.5× baseline", seconds <= 1.5 * base))
        try:
            import torchgen  # noqa: F401

            torchgen_cmd = [PY, "-c", "from torchgen.gen import parse_native_yaml; "
                            f"parse_native_yaml({str(nf('2.13.0'))!r}, {str(tags('2.13.0'))!r})"]
            tg, _ = measure(max(3, args.repeat // 3), torchgen_cmd, env)
            results.append(Result("`opgov import` 2.13.0 vs torchgen `parse_native_yaml`", seconds,
                                  "torchgen parse_native_yaml", tg, "< torchgen", seconds < tg))
        except ImportError:
            print("torch is not installed: torchgen comparison skipped", file=sys.stderr)

        seconds, base = measure(args.repeat, [*OPGOV, "check-bc", str(nf("2.12.0")), str(nf("2.13.0")),
                                              "--format", "json"], env,
                                load_yaml_cmd(nf("2.12.0"), nf("2.13.0")), ok=(0, 1))
        results.append(result("`opgov check-bc` 2.12.0 → 2.13.0 (no database)", seconds, "CSafeLoader load of both",
                              base, "≤ 1.0× baseline", seconds <= 1.0 * base))

        # the PR gate on the same pair, against check-bc itself: what the policy rules, the
        # repository's .opgov.toml and the extra outputs cost on top of the BC/FC verdicts
        policy = work / ".opgov.toml"
        policy.write_text('[reviewers]\ncore_maintainers = ["alice", "bob"]\ncommittee = ["core-aten"]\n'
                          '[[allow]]\noperator = "aten::_foreach_*"\nreason = "benchmark"\nowner = "bench"\n'
                          'expires = 2099-12-31\n', encoding="utf-8")
        bc_cmd = [*OPGOV, "check-bc", str(nf("2.12.0")), str(nf("2.13.0")), "--format", "json"]
        seconds, base = measure(args.repeat, [*OPGOV, "check-pr", "--config", str(policy), "--base",
                                              str(nf("2.12.0")), "--head", str(nf("2.13.0")), "--format", "json"],
                                env, bc_cmd, ok=(0, 1))
        results.append(result("`opgov check-pr` 2.12.0 → 2.13.0 (no database)", seconds,
                              "`opgov check-bc` on the same pair", base, "≤ 1.2× check-bc", seconds <= 1.2 * base))

        # a database with the 2.13.0 release, for sync-yaml and opset build
        opgov("db", "upgrade", url=db("one.db"))
        opgov("import", str(nf("2.13.0")), "--tags-yaml", str(tags("2.13.0")), "--label", "2.13.0", url=db("one.db"))
        copy = work / "native_functions.yaml"
        shutil.copyfile(nf("2.13.0"), copy)
        seconds, base = measure(args.repeat, [*OPGOV, "--db", db("one.db"), "sync-yaml", str(copy), "--check"], env,
                                load_yaml_cmd(nf("2.13.0")))
        results.append(result("`opgov sync-yaml --check` on 2.13.0", seconds, "CSafeLoader load", base,
                              "≤ 1.0× baseline", seconds <= 1.0 * base))
        if (MODELS / "torchvision_ops.json").is_file():
            seconds, _ = measure(args.repeat, [*OPGOV, "--db", db("one.db"), "opset", "build", "--preset",
                                               "core-aten", "--models", str(MODELS)], env)
            results.append(result("`opgov opset build --models` (both corpora, 2.13.0)", seconds, None, None,
                                  "< 1 s", seconds < 1.0))

        # replaying the four releases into a fresh database (four `opgov import` processes)
        def fresh_four() -> None:
            shutil.copyfile(work / "empty.db", work / "four.db")

        replay = [[*OPGOV, "--db", db("four.db"), "import", str(nf(version)), "--tags-yaml", str(tags(version)),
                   "--label", version] for version in RELEASES]
        seconds, _ = measure(max(3, args.repeat // 3), replay, env, setup=fresh_four)
        results.append(result("replaying the four releases into a fresh database", seconds, None, None, "≤ 2 s",
                              seconds <= 2.0))

        # four releases with history for the report (the replay left them)
        opgov("decisions", "load", str(ROOT / "data" / "decisions" / "core-aten-review-2023.yaml"), url=db("four.db"))
        seconds, _ = measure(args.repeat, [*OPGOV, "--db", db("four.db"), "report", "weekly", "--format", "html",
                                           "--out", str(work / "report.html")], env)
        results.append(result("`opgov report weekly --format html` (four releases)", seconds, None, None, "< 1 s",
                              seconds < 1.0))

        # the committee's workbench on the replay: ExecuTorch's registries, the models and, when torch
        # is installed, torch's facts (decomps import-torch: prepared, not timed)
        executorch = SHARED / "executorch"
        for version in ("0.2.0", "0.5.0", "1.0.0", "1.3.0"):
            kernels = executorch / version / "portable-functions.yaml"
            if kernels.is_file():
                opgov("runtimes", "add", f"executorch@{version}", "--ops", str(kernels), url=db("four.db"))
        try:
            import torch  # noqa: F401

            opgov("decomps", "import-torch", "--budget", "600", url=db("four.db"))
        except ImportError:
            print("torch is not installed: the queue is measured without torch's facts", file=sys.stderr)
        queue_env = {**env, "OPGOV_MODELS_DIR": str(MODELS)} if (MODELS / "torchvision_ops.json").is_file() else env
        seconds, base = measure(args.repeat, [*OPGOV, "--db", db("four.db"), "queue", "--format", "json"], queue_env,
                                [*OPGOV, "--db", db("four.db"), "ops", "list", "--format", "json"])
        results.append(result("`opgov queue --format json` (four releases, runtimes, models, torch's facts)", seconds,
                              "`opgov ops list --format json`", base, "≤ 1 s", seconds <= 1.0))
        list_cmd = [*OPGOV, "--db", db("four.db"), "ops", "list", "--format", "json"]

        # clearing the queue: every suggestion proposed in one command, then approved by two other
        # maintainers (quorum 2) in one bulk review each; each timed run starts from a copy
        shutil.copyfile(work / "four.db", work / "queue.db")

        def fresh_queue() -> None:
            shutil.copyfile(work / "queue.db", work / "clear.db")

        triage_cmd = [*OPGOV, "--db", db("clear.db"), "triage", "--suggested", "--apply"]
        fresh_queue()
        subprocess.run(triage_cmd, env=queue_env, check=True, stdout=subprocess.DEVNULL)
        shutil.copyfile(work / "clear.db", work / "opened.db")
        listed = subprocess.run([*OPGOV, "--db", db("opened.db"), "proposals", "--open", "--json"], env=env,
                                check=True, capture_output=True, text=True)
        ids = [str(p["id"]) for p in json.loads(listed.stdout)]

        def fresh_opened() -> None:
            shutil.copyfile(work / "opened.db", work / "clear.db")

        reviews = [[*OPGOV, "--db", db("clear.db"), "--actor", voter, "review", *ids, "--approve", "--comment",
                    "the evidence says so"] for voter in ("m2", "m3")]
        few = max(3, args.repeat // 3)
        seconds, base = measure(few, triage_cmd, queue_env, list_cmd, setup=fresh_queue)
        results.append(result(f"`opgov triage --suggested --apply` ({len(ids)} proposals)", seconds,
                              "`opgov ops list --format json`", base, "≤ 5× baseline", seconds <= 5 * base))
        seconds, base = measure(few, reviews, env, list_cmd, setup=fresh_opened)
        results.append(result(f"`opgov review ID… --approve` by a second, then a third maintainer ({len(ids)} "
                              "proposals each; the third's votes decide them)", seconds,
                              "`opgov ops list --format json`", base, "≤ 10× baseline", seconds <= 10 * base))
        clearing = [[*OPGOV, "--db", db("clear.db"), "queue", "--format", "json"], triage_cmd, *reviews]
        seconds, base = measure(few, clearing, queue_env, list_cmd, setup=fresh_queue)
        results.append(result(f"clearing the queue: `queue`, `triage --suggested --apply`, two `review` "
                              f"({len(clearing)} commands)", seconds, "`opgov ops list --format json`", base,
                              "≤ 10 s", seconds <= 10.0))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = ["| case | opgov (median) | baseline (median) | ratio | CPU: opgov / baseline | target | met |",
             "|---|---|---|---|---|---|---|", *[r.row() for r in results]]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    stamp = (f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores, Python "
             f"{sys.version.split()[0]}, median of {args.repeat} runs each (baselines interleaved)"
             + (f"; load average {load_start:.1f} at the start, {load:.1f} at the end." if load is not None else "."))
    table = "\n".join([stamp, "", *lines])
    print(table)
    if args.write:
        text = DOC.read_text()
        if BEGIN not in text or END not in text:
            raise SystemExit(f"{DOC} lacks the {BEGIN} … {END} markers")
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        DOC.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    if not all(r.passed for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
