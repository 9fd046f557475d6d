#!/usr/bin/env python3
"""opgov's speed targets, measured as whole processes against a baseline in the same run.

    .venv/bin/python benchmarks/run.py            # print the results as a markdown table
    .venv/bin/python benchmarks/run.py --write    # also replace the table in docs/performance.md

Each case runs its command and its baseline alternately, ``--repeat`` times (default 9), and
compares medians, so that load on the machine affects both alike. The baseline of the file-reading
targets is a bare Python process that only loads native_functions.yaml with ``yaml.CSafeLoader``.
Databases are prepared before timing (not timed). Needs ../shared/pytorch (or OPGOV_PYTORCH_DATA)
and ../shared/models; torchgen's parser is measured when torch is installed.
"""

from __future__ import annotations

import argparse
import os
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


def run(cmd: list[str], env: dict[str, str], setup=None, ok=(0,)) -> float:
    if setup is not None:
        setup()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in ok:
        raise SystemExit(f"benchmark command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    return elapsed


@dataclass
class Result:
    name: str
    seconds: float
    baseline_name: str | None
    baseline: float | None
    target: str
    passed: bool

    def row(self) -> str:
        ratio = f"{self.seconds / self.baseline:.2f}×" if self.baseline else "–"
        base = f"{self.baseline:.3f} s ({self.baseline_name})" if self.baseline else "–"
        return (f"| {self.name} | {self.seconds:.3f} s | {base} | {ratio} | {self.target} | "
                f"{'yes' if self.passed else '**no**'} |")


def measure(repeat: int, cmd, env, baseline=None, setup=None, ok=(0,)) -> tuple[float, float | None]:
    ours, base = [], []
    for _ in range(repeat):
        ours.append(run(cmd, env, setup, ok))
        if baseline is not None:
            base.append(run(baseline, env, ok=ok))
    return statistics.median(ours), (statistics.median(base) if base else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--write", action="store_true", help=f"update the table in {DOC.relative_to(ROOT)}")
    args = parser.parse_args()
    if not all(nf(v).is_file() for v in RELEASES):
        raise SystemExit(f"the PyTorch registries are not at {DATA} (set OPGOV_PYTORCH_DATA)")
    work = Path(tempfile.mkdtemp(prefix="opgov-bench-"))
    env = {**os.environ, "OPGOV_ACTOR": "bench", "HOME": str(work)}
    env.pop("OPGOV_DATABASE_URL", None)
    env.pop("OPGOV_NOW", None)
    results: list[Result] = []
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
        results.append(Result("`opgov --help`", seconds, None, None, "< 0.2 s", seconds < 0.2))

        seconds, base = measure(args.repeat, [*OPGOV, "--db", db("import.db"), "import", str(nf("2.13.0")),
                                              "--label", "2.13.0"], env, load_yaml_cmd(nf("2.13.0")), setup=fresh)
        results.append(Result("`opgov import` 2.13.0 into a fresh database", seconds, "CSafeLoader load", base,
                              "≤ 2.5× baseline", seconds <= 2.5 * base))
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
        results.append(Result("`opgov check-bc` 2.12.0 → 2.13.0 (no database)", seconds, "CSafeLoader load of both",
                              base, "≤ 3× baseline", seconds <= 3 * base))

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
        results.append(Result("`opgov check-pr` 2.12.0 → 2.13.0 (no database)", seconds,
                              "`opgov check-bc` on the same pair", base, "≤ 1.2× check-bc", seconds <= 1.2 * base))

        # a database with the 2.13.0 release, for sync-yaml and opset build
        opgov("db", "upgrade", url=db("one.db"))
        opgov("import", str(nf("2.13.0")), "--tags-yaml", str(tags("2.13.0")), "--label", "2.13.0", url=db("one.db"))
        copy = work / "native_functions.yaml"
        shutil.copyfile(nf("2.13.0"), copy)
        seconds, base = measure(args.repeat, [*OPGOV, "--db", db("one.db"), "sync-yaml", str(copy), "--check"], env,
                                load_yaml_cmd(nf("2.13.0")))
        results.append(Result("`opgov sync-yaml --check` on 2.13.0", seconds, "CSafeLoader load", base,
                              "≤ 2× baseline", seconds <= 2 * base))
        if (MODELS / "torchvision_ops.json").is_file():
            seconds, _ = measure(args.repeat, [*OPGOV, "--db", db("one.db"), "opset", "build", "--preset",
                                               "core-aten", "--models", str(MODELS)], env)
            results.append(Result("`opgov opset build --models` (both corpora, 2.13.0)", seconds, None, None,
                                  "< 1 s", seconds < 1.0))

        # four releases with history for the report
        opgov("db", "upgrade", url=db("four.db"))
        for version in RELEASES:
            opgov("import", str(nf(version)), "--tags-yaml", str(tags(version)), "--label", version, url=db("four.db"))
        opgov("decisions", "load", str(ROOT / "data" / "decisions" / "core-aten-review-2023.yaml"), url=db("four.db"))
        seconds, _ = measure(args.repeat, [*OPGOV, "--db", db("four.db"), "report", "weekly", "--format", "html",
                                           "--out", str(work / "report.html")], env)
        results.append(Result("`opgov report weekly --format html` (four releases)", seconds, None, None, "< 1 s",
                              seconds < 1.0))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = ["| case | opgov (median) | baseline (median) | ratio | target | met |",
             "|---|---|---|---|---|---|", *[r.row() for r in results]]
    stamp = (f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} on {os.cpu_count()} cores, Python "
             f"{sys.version.split()[0]}, median of {args.repeat} runs each (baselines interleaved).")
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
