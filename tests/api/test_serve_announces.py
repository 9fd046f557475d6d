"""`opgov serve` says where it listens once it answers there, not before: the line came 15–25 s
before the first answer on a loaded machine (issue 43), and a script that reads the address and
goes to it got "connection refused". A real server process on 127.0.0.1, a free port; the request
is sent the moment the line is read, with no retry."""

from __future__ import annotations

import os
import queue
import subprocess
import threading

import httpx
import pytest

from tests.api.test_api_serve import OPGOV, V1, free_port, opgov


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('announce') / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    opgov(url, "import", str(V1), "--label", "v1")
    return url


@pytest.mark.parametrize("workers", [1, 2])
def test_the_address_is_said_once_the_server_answers(db, workers):
    port = free_port()
    server = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", "127.0.0.1", "--port", str(port),
                               "--workers", str(workers)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env={k: v for k, v in os.environ.items() if k != "OPGOV_NOW"})
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in server.stdout], daemon=True).start()
    try:
        line = lines.get(timeout=90)  # start-up on a busy machine, not a timing assertion
        assert line.startswith("opgov serving ") and f"on http://127.0.0.1:{port} " in line, line
        answer = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10)  # at once, no retry
        assert answer.status_code == 200 and answer.json()["status"] == "ok"
        assert f"({workers} worker{'s' if workers > 1 else ''})" in line
    finally:
        server.terminate()
        server.wait(timeout=30)
