#!/usr/bin/env python3
"""Latency and throughput of one operator read through `opgov serve`, on loopback only.

    .venv/bin/python benchmarks/serve.py                                   # SQLite, 1 worker
    .venv/bin/python benchmarks/serve.py --postgres URL --workers 2        # PostgreSQL: a server it may create a database on

Prepares a database holding PyTorch 2.13.0 (../shared/pytorch, or the sample registry when that
is missing), starts `opgov serve` on 127.0.0.1 at a free port, then for 1, 8 and 32 concurrent
clients sends GET /api/v1/operators/aten%3A%3Aadd.Tensor: a bounded number of requests per level
(``--requests``, and at most ``--seconds``) after a warm-up, and prints p50, p99 and requests/s
as a markdown table.

The client is cheap so that it does not become the bottleneck on a small machine, where it shares
the CPU with the server: one process (not the benchmark's own) running asyncio with one
keep-alive HTTP/1.1 connection per client over raw streams, no HTTP library. Each row also
gives the client's CPU time as a share of the level's wall time (100% = one core) and the
server's, and the load average of the machine before each level (others' work counts too).
``--if-none-match`` sends the ETag of the first answer back (the 304 path); ``--no-cache`` turns
the server's response cache off (OPGOV_RESPONSE_CACHE=0) to measure the service call itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("OPGOV_SHARED_DIR", ROOT.parent / "shared"))
DATA = Path(os.environ.get("OPGOV_PYTORCH_DATA", SHARED / "pytorch"))
OPGOV = [sys.executable, "-m", "opgov"]
PATH = "/api/v1/operators/aten%3A%3Aadd.Tensor"
HOST = "127.0.0.1"  # loopback only, always


# --- the client (run in its own process: `serve.py --client PORT CLIENTS TOTAL SECONDS [ETAG]`) ------------


async def _one_client(port: int, count: int, deadline: float, etag: str | None, latencies: list[float],
                      statuses: dict[int, int]) -> None:
    reader, writer = await asyncio.open_connection(HOST, port)
    request = (f"GET {PATH} HTTP/1.1\r\nHost: {HOST}:{port}\r\nAccept: application/json\r\n"
               + (f"If-None-Match: {etag}\r\n" if etag else "") + "\r\n").encode()
    clock = time.perf_counter
    try:
        for _ in range(count):
            if clock() > deadline:
                break
            start = clock()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            latencies.append(clock() - start)
            statuses[status] = statuses.get(status, 0) + 1
    finally:
        writer.close()


async def _level(port: int, clients: int, total: int, seconds: float, etag: str | None) -> dict:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    per_client = max(1, total // clients)
    cpu0, began = time.process_time(), time.perf_counter()
    deadline = began + seconds
    await asyncio.gather(*(_one_client(port, per_client, deadline, etag, latencies, statuses)
                           for _ in range(clients)))
    elapsed = time.perf_counter() - began
    cpu = time.process_time() - cpu0
    latencies.sort()
    n = len(latencies)
    return {"requests": n, "elapsed": elapsed, "client_cpu": cpu, "statuses": statuses,
            "p50": latencies[n // 2] * 1000, "p99": latencies[min(n - 1, int(n * 0.99))] * 1000}


def client_main(argv: list[str]) -> None:
    port, clients, total, seconds = int(argv[0]), int(argv[1]), int(argv[2]), float(argv[3])
    etag = argv[4] if len(argv) > 4 else None
    print(json.dumps(asyncio.run(_level(port, clients, total, seconds, etag))))


# --- the driver ---------------------------------------------------------------------------------------------


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
        s.bind((HOST, 0))
        return s.getsockname()[1]


def tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a process and its children still running (the workers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
            children = [c for task in Path(f"/proc/{p}/task").iterdir() for c in (task / "children").read_text().split()]
        except OSError:
            continue
        todo.extend(int(c) for c in children)
    return total


def level(port: int, server_pid: int, clients: int, total: int, seconds: float, etag: str | None = None) -> dict:
    load = os.getloadavg()[0]
    server0 = tree_cpu(server_pid)
    out = subprocess.run([sys.executable, __file__, "--client", str(port), str(clients), str(total), str(seconds),
                          *([etag] if etag else [])], check=True, capture_output=True, text=True,
                         timeout=seconds + 60)
    result = json.loads(out.stdout)
    result["server_cpu"] = tree_cpu(server_pid) - server0
    result["load"] = load
    return result


def first_etag(port: int) -> str:
    with socket.create_connection((HOST, port), timeout=30) as s:
        s.sendall(f"GET {PATH} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"etag:"):
            return line[5:].strip().decode()
    raise SystemExit("the operator's answer carries no ETag")


def wait_ready(port: int, server: subprocess.Popen) -> None:
    for _ in range(600):
        if server.poll() is not None:
            raise SystemExit(f"opgov serve exited: {server.stderr.read().decode()}")
        try:
            with socket.create_connection((HOST, port), timeout=2) as s:
                s.sendall(f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode())
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("opgov serve did not start")


@contextmanager
def database(postgres: str | None, tmp: str) -> Iterator[str]:
    """A SQLite file in ``tmp``, or a new database on the PostgreSQL server of ``postgres``."""
    if postgres is None:
        yield f"sqlite:///{tmp}/opgov.db"
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from opgov.db.engine import resolve_url

    admin = make_url(resolve_url(postgres))
    name = f"opgov_bench_serve_{os.getpid()}"
    engine = create_engine(admin, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.set(database=name).render_as_string(hide_password=False)
    finally:
        with engine.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", metavar="URL",
                        help="PostgreSQL instead of SQLite: a server (URL of any database there) on which the "
                             "benchmark creates a database of its own, dropped at the end")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--requests", type=int, default=20000, help="requests per concurrency level")
    parser.add_argument("--seconds", type=float, default=20.0, help="at most this long per level")
    parser.add_argument("--if-none-match", action="store_true", help="revalidate with the ETag (304s)")
    parser.add_argument("--no-cache", action="store_true", help="the server's response cache off")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="opgov-bench-serve-") as tmp, database(args.postgres, tmp) as db:
        label = prepare(db)
        port = free_port()
        env = {**os.environ, **({"OPGOV_RESPONSE_CACHE": "0"} if args.no_cache else {})}
        server = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", HOST, "--port", str(port),
                                   "--workers", str(args.workers)], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_ready(port, server)
            etag = first_etag(port) if args.if_none_match else None
            # warm-up at the highest concurrency: every worker's connections, pool and cache
            level(port, server.pid, 32, 3200, 10, etag)
            kind = "PostgreSQL" if args.postgres else "SQLite"
            what = ", If-None-Match (304)" if etag else ""
            what += ", response cache off" if args.no_cache else ""
            print(f"GET {PATH} on {kind} ({label}), {args.workers} worker(s){what}; {os.cpu_count()} CPUs\n")
            print("| clients | requests | p50 | p99 | requests/s | statuses | client CPU | server CPU | load |")
            print("|---|---|---|---|---|---|---|---|---|")
            for clients in (1, 8, 32):
                r = level(port, server.pid, clients, args.requests, args.seconds, etag)
                statuses = ", ".join(f"{n}×{s}" for s, n in sorted(r["statuses"].items()))
                print(f"| {clients} | {r['requests']} | {r['p50']:.1f} ms | {r['p99']:.1f} ms | "
                      f"{r['requests'] / r['elapsed']:.0f} | {statuses} | {100 * r['client_cpu'] / r['elapsed']:.0f}% "
                      f"| {100 * r['server_cpu'] / r['elapsed']:.0f}% | {r['load']:.1f} |", flush=True)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        client_main(sys.argv[2:])
    else:
        main()
