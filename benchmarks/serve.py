#!/usr/bin/env python3
"""Latency and throughput of one operator read through `opgov serve`, on loopback only.

    .venv/bin/python benchmarks/serve.py                       # SQLite, 1 worker
    .venv/bin/python benchmarks/serve.py --postgres URL --workers 4

Prepares a database holding PyTorch 2.13.0 (../shared/pytorch, or the sample registry when that
is missing), starts `opgov serve` on 127.0.0.1 at a free port, then for 1, 8 and 32 concurrent
clients (threads, each with its own keep-alive httpx connection) sends GET
/api/v1/operators/aten%3A%3Aadd.Tensor for a bounded number of requests (``--requests`` per
level, at most ``--seconds`` per level) after a warm-up, and prints p50, p99 and requests/s as a
markdown table. The client shares the machine with the server, so the figures are a floor.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("OPGOV_SHARED_DIR", ROOT.parent / "shared"))
DATA = Path(os.environ.get("OPGOV_PYTORCH_DATA", SHARED / "pytorch"))
OPGOV = [sys.executable, "-m", "opgov"]
PATH = "/api/v1/operators/aten%3A%3Aadd.Tensor"


def run(db: str, *args: str) -> None:
    subprocess.run([*OPGOV, "--db", db, "--actor", "bench", *args], check=True, capture_output=True)


def prepare(db: str) -> str:
    registry = DATA / "2.13.0" / "native_functions.yaml"
    label = "2.13.0"
    if not registry.is_file():
        registry, label = ROOT / "data" / "sample" / "native_functions.v1.yaml", "sample-v1"
    run(db, "db", "upgrade")
    run(db, "import", str(registry), "--label", label)
    return label


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def level(url: str, clients: int, total: int, seconds: float) -> tuple[float, float, float, int]:
    """(p50 ms, p99 ms, requests/s, errors) of ``total`` requests spread over ``clients`` threads."""
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    per_client = max(1, total // clients)
    deadline = time.perf_counter() + seconds

    def client() -> None:
        nonlocal errors
        mine, bad = [], 0
        with httpx.Client(base_url=url, timeout=30) as c:
            for _ in range(per_client):
                if time.perf_counter() > deadline:
                    break
                start = time.perf_counter()
                status = c.get(PATH).status_code
                mine.append(time.perf_counter() - start)
                bad += status != 200
        with lock:
            latencies.extend(mine)
            errors += bad

    threads = [threading.Thread(target=client) for _ in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - began
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return statistics.median(latencies) * 1000, p99 * 1000, len(latencies) / elapsed, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL", help="an empty PostgreSQL database to use instead of SQLite")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--requests", type=int, default=2000, help="requests per concurrency level")
    parser.add_argument("--seconds", type=float, default=20.0, help="at most this long per level")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="opgov-bench-serve-") as tmp:
        db = args.postgres or f"sqlite:///{tmp}/opgov.db"
        label = prepare(db)
        port = free_port()
        server = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", "127.0.0.1", "--port", str(port),
                                   "--workers", str(args.workers)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            else:
                raise SystemExit("opgov serve did not start")
            level(url, 4, 200, 10)  # warm-up: connections, caches
            kind = "PostgreSQL" if args.postgres else "SQLite"
            print(f"GET {PATH} on {kind} ({label}), {args.workers} worker(s)\n")
            print("| clients | requests | p50 | p99 | requests/s | errors |")
            print("|---|---|---|---|---|---|")
            for clients in (1, 8, 32):
                p50, p99, rate, errors = level(url, clients, args.requests, args.seconds)
                print(f"| {clients} | {args.requests} | {p50:.1f} ms | {p99:.1f} ms | {rate:.0f} | {errors} |")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
