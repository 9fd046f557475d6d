#!/usr/bin/env python3
"""How opgov's storage and reads grow with history: a database of many snapshots.

    .venv/bin/python benchmarks/scale.py --quick                     # 15 and 30 snapshots, SQLite
    .venv/bin/python benchmarks/scale.py                             # 15, 100 and 1,000 snapshots
    .venv/bin/python benchmarks/scale.py --postgres URL --svg docs/scale.svg

History: the four real releases in order (../shared/pytorch), then perturbed nightlies of 2.13.0:
each nightly adds three operators, changes the schema of one added before (a new defaulted
argument) and removes one added before, so each import is a real `opgov import` process with a few
added, changed and removed entries. At each checkpoint it records the database size (SQLite: the
file; PostgreSQL: ``pg_database_size``), the median time of the last imports, and the median of
``--repeat`` runs of each read: ``opgov ops show aten::add.Tensor``, ``opgov report weekly``,
``opgov check-bc`` between the first and the last snapshot, and the service's operator read
(``GET /api/v1/operators/aten::add.Tensor`` through :mod:`opgov.api`, in process). Prints a
markdown table; ``--svg`` also draws time and size against history length (no plotting library).
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


def sh(cmd: list[str], env: dict[str, str], ok=(0,)) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in ok:
        raise SystemExit(f"failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr}")
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


def service_read(url: str, repeat: int) -> float:
    from fastapi.testclient import TestClient

    from opgov.api.app import create_app
    from opgov.api.config import Config

    times = []
    with TestClient(create_app(Config(db=url))) as client:
        client.get("/api/v1/operators/aten%3A%3Aadd.Tensor").raise_for_status()  # warm-up
        for _ in range(repeat):
            start = time.perf_counter()
            client.get("/api/v1/operators/aten%3A%3Aadd.Tensor").raise_for_status()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def scenario(url: str, checkpoints: list[int], repeat: int, work: Path, env: dict[str, str]) -> list[dict]:
    base = (DATA / "2.13.0" / "native_functions.yaml").read_text(encoding="utf-8")
    db = ["--db", url]
    sh([*OPGOV, *db, "db", "upgrade"], env)
    rows, import_times, count = [], [], 0
    for target in checkpoints:
        while count < target:
            count += 1
            if count <= len(RELEASES):
                version = RELEASES[count - 1]
                path, label = DATA / version / "native_functions.yaml", version
            else:
                path, label = work / "nightly.yaml", f"nightly-{count}"
                path.write_text(nightly(base, count - len(RELEASES)), encoding="utf-8")
            import_times.append(sh([*OPGOV, *db, "import", str(path), "--label", label], env))
        reads = {
            "ops show": [*OPGOV, *db, "ops", "show", "aten::add.Tensor"],
            "report weekly": [*OPGOV, *db, "report", "weekly", "--format", "html", "--out", str(work / "r.html")],
            "check-bc": [*OPGOV, *db, "check-bc", RELEASES[0], label if count > len(RELEASES) else RELEASES[-1]],
        }
        row = {"snapshots": count, "size": size_of(url), "import": statistics.median(import_times[-5:])}
        for name, cmd in reads.items():
            row[name] = statistics.median(sh(cmd, env, ok=(0, 1)) for _ in range(repeat))
        row["service read"] = service_read(url, max(5, repeat * 3))
        rows.append(row)
        print(f"  {url.split(':', 1)[0]} {count} snapshots: {row}", file=sys.stderr)
    return rows


def table(results: dict[str, list[dict]]) -> str:
    out = ["| database | snapshots | size | import | " + " | ".join(READS) + " |",
           "|---|---|---|---|" + "---|" * len(READS)]
    for backend, rows in results.items():
        first = rows[0]
        for row in rows:
            reads = " | ".join(f"{row[r] * 1000:.0f} ms ({row[r] / first[r]:.2f}×)" for r in READS)
            out.append(f"| {backend} | {row['snapshots']} | {row['size'] / 1e6:.1f} MB | "
                       f"{row['import'] * 1000:.0f} ms | {reads} |")
    return "\n".join(out)


def svg(results: dict[str, list[dict]], path: Path) -> None:
    """Two small line charts side by side: read and import times, and database size, against the
    number of snapshots (SVG written by hand: no plotting dependency)."""
    width, height, pad = 360, 240, 48
    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * width + 40}" height="{height + 40}" '
             'font-family="sans-serif" font-size="11">', '<rect width="100%" height="100%" fill="white"/>']

    def chart(x0: int, title: str, series: list[tuple[str, list[tuple[float, float]]]]) -> None:
        xs = [x for _, pts in series for x, _ in pts] or [1]
        ys = [y for _, pts in series for _, y in pts] or [1]
        xmax, ymax = max(xs), max(ys) * 1.1 or 1

        def px(x: float) -> float:
            return x0 + pad + (width - pad - 10) * x / xmax

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
            parts.append(f'<text x="{x0 + pad + 6}" y="{34 + 13 * n}" fill="{colour}">{name}</text>')

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
          "each read's ratio is to its time at the first checkpoint.\n")
    print(table(results))
    if args.svg:
        svg(results, args.svg)


if __name__ == "__main__":
    main()
