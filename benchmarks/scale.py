#!/usr/bin/env python3
"""How opgov's storage and reads grow with history: a database of many snapshots.

    .venv/bin/python benchmarks/scale.py --quick                     # 15 and 30 snapshots, SQLite
    .venv/bin/python benchmarks/scale.py                             # 15, 100 and 1,000 snapshots
    .venv/bin/python benchmarks/scale.py --postgres URL --svg docs/scale.svg

History: the four real releases in order (../shared/pytorch), then perturbed nightlies of 2.13.0:
each nightly adds three operators, changes the schema of one added before (a new defaulted
argument) and removes three added before: a few added, changed and removed entries each. The
history is built by the import service in this process; the last ``--repeat`` imports before each
checkpoint are whole `opgov import` processes, timed. At each checkpoint it records the database
size (SQLite: the file; PostgreSQL: ``pg_database_size``), the median time of those imports, and
the median of
``--repeat`` runs of each read: ``opgov ops show aten::add.Tensor``, ``opgov report weekly``,
``opgov check-bc`` between the first and the last snapshot, and the service's operator read
(what ``GET /api/v1/operators/aten::add.Tensor`` costs the server when its answer is not cached:
``show_op`` and the JSON body, in process), each with its CPU time beside the wall time (CPU time
moves far less when other work shares the machine). Prints a markdown table; ``--svg`` also draws
time and size against history length (no plotting library).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("OPGOV_SHARED_DIR", ROOT.parent / "shared"))
DATA = Path(os.environ.get("OPGOV_PYTORCH_DATA", SHARED / "pytorch"))
RELEASES = ["2.0.0", "2.6.0", "2.12.0", "2.13.0"]
OPGOV = [sys.executable, "-m", "opgov"]
READS = ["ops show", "report weekly", "check-bc", "service read"]


def nightly(base: str, n: int) -> str:
    """2.13.0 with the nightly operators of night ``n``: those of the last 4 nights, the oldest
    about to go, one of them with a changed schema."""
    lines = []
    for night in range(max(1, n - 3), n + 1):
        for k in range(3):
            extra = ", int extra=0" if (night, k) == (n - 1, 0) else ""
            lines.append(f"- func: opgov_nightly_{night}_{k}(Tensor self{extra}) -> Tensor\n"
                         "  dispatch:\n    CompositeExplicitAutograd: opgov_nightly\n")
    return base + "\n" + "".join(lines)


CPU: dict[str, list[float]] = {}  # case → CPU seconds of each timed process (user + system)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sh(cmd: list[str], env: dict[str, str], ok=(0,), case: str | None = None) -> float:
    """Run ``cmd``; its wall time (and, under ``case``, its CPU time in :data:`CPU`)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in ok:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
    if case is not None:
        CPU.setdefault(case, []).append(_children_cpu() - cpu)
    return time.perf_counter() - start


def size_of(url: str) -> int:
    if url.startswith("sqlite"):
        return Path(url.split("///", 1)[1]).stat().st_size
    from sqlalchemy import create_engine, text

    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    with engine.connect() as connection:
        value = connection.execute(text("SELECT pg_database_size(current_database())")).scalar()
    engine.dispose()
    return int(value)


def service_read(url: str, repeat: int) -> tuple[float, float]:
    """What the service does for ``GET /api/v1/operators/aten::add.Tensor`` when its answer is not
    cached: the read transaction, ``show_op`` and the JSON body; (wall, CPU) medians, in process."""
    from opgov.core.clock import SystemClock
    from opgov.db.engine import make_engine, resolve_url, transaction
    from opgov.reads.common import Ctx
    from opgov.results.plain import to_json
    from opgov.services.ops import show_op

    engine = make_engine(resolve_url(url))
    walls, cpus = [], []
    try:
        for n in range(repeat + 1):
            start, cpu = time.perf_counter(), time.process_time()
            with transaction(engine, write=False) as session:
                to_json(show_op(Ctx(session=session, actor="bench", clock=SystemClock()), "aten::add.Tensor"))
            if n:  # the first one warms up
                walls.append(time.perf_counter() - start)
                cpus.append(time.process_time() - cpu)
    finally:
        engine.dispose()
    return statistics.median(walls), statistics.median(cpus)


class Filler:
    """Imports in this process (the import service, one transaction each, as `opgov import` runs
    it), to build a long history in minutes rather than hours; the imports that are timed are
    whole `opgov import` processes."""

    def __init__(self, url: str) -> None:
        from opgov.db.engine import make_engine, resolve_url

        self.engine = make_engine(resolve_url(url))

    def __call__(self, path: Path, label: str, at: datetime) -> None:
        from opgov.core.clock import FixedClock
        from opgov.db.engine import transaction
        from opgov.reads.common import Ctx
        from opgov.services.imports import import_snapshot

        with transaction(self.engine, orm=False, write=True) as session:
            import_snapshot(Ctx(session=session, actor="bench", clock=FixedClock(at)), str(path), label=label)

    def close(self) -> None:
        self.engine.dispose()


START = datetime(2024, 1, 1, 2, 0, tzinfo=timezone.utc)


def day(n: int) -> datetime:
    """When the n-th import happens: one a day, at two in the morning."""
    return START + timedelta(days=n)


def scenario(url: str, checkpoints: list[int], repeat: int, work: Path, env: dict[str, str]) -> list[dict]:
    base = (DATA / "2.13.0" / "native_functions.yaml").read_text(encoding="utf-8")
    db = ["--db", url]
    # a simulation database, so that each import can be a day after the one before (a nightly bot)
    sh([*OPGOV, *db, "db", "upgrade", "--simulation"], env)
    rows, count = [], 0
    fill = Filler(url)

    def next_import() -> tuple[Path, str]:
        nonlocal count
        count += 1
        if count <= len(RELEASES):
            version = RELEASES[count - 1]
            return DATA / version / "native_functions.yaml", version
        path = work / f"nightly-{count % 2}.yaml"
        path.write_text(nightly(base, count - len(RELEASES)), encoding="utf-8")
        return path, f"nightly-{count}"

    try:
        for target in checkpoints:
            timed = max(1, min(repeat, target - count))  # the last imports before the checkpoint, timed
            while count < target - timed:
                path, label = next_import()
                fill(path, label, day(count))
            import_times = []
            while count < target:
                path, label = next_import()
                import_times.append(sh([*OPGOV, *db, "import", str(path), "--label", label],
                                       {**env, "OPGOV_NOW": day(count).isoformat()}, case="import"))
            reads = {
                "ops show": [*OPGOV, *db, "ops", "show", "aten::add.Tensor"],
                "report weekly": [*OPGOV, *db, "report", "weekly", "--format", "html", "--out", str(work / "r.html")],
                "check-bc": [*OPGOV, *db, "check-bc", RELEASES[0], label if count > len(RELEASES) else RELEASES[-1]],
            }
            row = {"snapshots": count, "size": size_of(url), "import": statistics.median(import_times),
                   "import cpu": statistics.median(CPU.pop("import")[-len(import_times):])}
            read_env = {**env, "OPGOV_NOW": (day(count) + timedelta(hours=1)).isoformat()}
            for name, cmd in reads.items():
                CPU.pop(name, None)
                row[name] = statistics.median(sh(cmd, read_env, ok=(0, 1), case=name) for _ in range(repeat))
                row[f"{name} cpu"] = statistics.median(CPU[name])
            row["service read"], row["service read cpu"] = service_read(url, max(5, repeat * 3))
            rows.append(row)
            print(f"  {url.split(':', 1)[0]} {count} snapshots: {row}", file=sys.stderr, flush=True)
    finally:
        fill.close()
    return rows


def table(results: dict[str, list[dict]]) -> str:
    out = ["| database | snapshots | size | import | " + " | ".join(READS) + " |",
           "|---|---|---|---|" + "---|" * len(READS)]
    for backend, rows in results.items():
        first = rows[0]
        for row in rows:
            reads = " | ".join(f"{row[r] * 1000:.0f} ms ({row[r] / first[r]:.2f}×; "
                               f"CPU {row[r + ' cpu'] / first[r + ' cpu']:.2f}×)" for r in READS)
            out.append(f"| {backend} | {row['snapshots']} | {row['size'] / 1e6:.1f} MB | "
                       f"{row['import'] * 1000:.0f} ms (CPU {row['import cpu'] * 1000:.0f} ms) | {reads} |")
    return "\n".join(out)


def svg(results: dict[str, list[dict]], path: Path) -> None:
    """Two small line charts side by side: read and import times, and database size, against the
    number of snapshots (SVG written by hand: no plotting dependency)."""
    width, height, pad, legend = 480, 240, 48, 170
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width + 40}" height="{height + 40}" '
             'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" fill="white"/>']

    def chart(x0: int, title: str, series: list[tuple[str, list[tuple[float, float]]]]) -> None:
        xs = [x for _, pts in series for x, _ in pts] or [1]
        ys = [y for _, pts in series for _, y in pts] or [1]
        xmax, ymax = max(xs), max(ys) * 1.1 or 1

        def px(x: float) -> float:  # the plot, with the legend to its right
            return x0 + pad + (width - pad - legend) * x / xmax

        def py(y: float) -> float:
            return 20 + (height - pad) * (1 - y / ymax)

        parts.append(f'<text x="{x0 + width / 2}" y="14" text-anchor="middle">{title}</text>')
        parts.append(f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(xmax)}" y2="{py(0)}" stroke="black"/>')
        parts.append(f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(0)}" y2="{py(ymax)}" stroke="black"/>')
        for frac in (0, 0.5, 1):
            parts.append(f'<text x="{px(0) - 4}" y="{py(ymax / 1.1 * frac) + 4}" text-anchor="end">'
                         f'{ymax / 1.1 * frac:.3g}</text>')
        for x in sorted(set(xs)):
            parts.append(f'<text x="{px(x)}" y="{py(0) + 14}" text-anchor="middle">{x:g}</text>')
        parts.append(f'<text x="{x0 + width / 2}" y="{height + 10}" text-anchor="middle">snapshots</text>')
        for n, (name, pts) in enumerate(series):
            colour = colours[n % (len(series) // 2 if len(series) > len(colours) else len(colours))]
            points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
            dash = ' stroke-dasharray="5,3"' if name.startswith("PostgreSQL") else ""
            parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"{dash}/>')
            parts.append(f'<text x="{x0 + width - legend + 14}" y="{34 + 13 * n}" fill="{colour}">{name}</text>')

    times, sizes = [], []
    for backend, rows in results.items():
        for name in ["import", *READS]:
            times.append((f"{backend} {name}", [(r["snapshots"], r[name]) for r in rows]))
        sizes.append((backend, [(r["snapshots"], r["size"] / 1e6) for r in rows]))
    chart(0, "time (s); PostgreSQL dashed", times)
    chart(width + 40, "database size (MB)", sizes)
    parts.append("</svg>")
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="15 and 30 snapshots instead of 15, 100 and 1,000")
    parser.add_argument("--postgres", metavar="URL", help="also on this PostgreSQL database (created and dropped)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--svg", type=Path, help="write the plot here")
    args = parser.parse_args()
    checkpoints = [15, 30] if args.quick else [15, 100, 1000]
    work = Path(tempfile.mkdtemp(prefix="opgov-scale-"))
    env = {**os.environ, "OPGOV_ACTOR": "bench", "HOME": str(work)}
    env.pop("OPGOV_DATABASE_URL", None)
    env.pop("OPGOV_NOW", None)
    load = os.getloadavg()[0]
    results: dict[str, list[dict]] = {}
    try:
        results["SQLite"] = scenario(f"sqlite:///{work / 'scale.db'}", checkpoints, args.repeat, work, env)
        if args.postgres:
            from sqlalchemy import create_engine, text

            admin = create_engine(args.postgres.replace("postgresql://", "postgresql+psycopg://", 1),
                                  isolation_level="AUTOCOMMIT")
            name = f"opgov_scale_{os.getpid()}"
            with admin.connect() as connection:
                connection.execute(text(f'CREATE DATABASE "{name}"'))
            try:
                url = args.postgres.rsplit("/", 1)[0] + "/" + name
                results["PostgreSQL"] = scenario(url, checkpoints, args.repeat, work, env)
            finally:
                with admin.connect() as connection:
                    connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                admin.dispose()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {os.cpu_count()} cores; "
          f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end. Times are medians; "
          "each read's ratios (wall and CPU time) are to its times at the first checkpoint.\n")
    print(table(results))
    if args.svg:
        svg(results, args.svg)


if __name__ == "__main__":
    main()
