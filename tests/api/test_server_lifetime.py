"""One server, one lifetime, against a real `opgov serve --workers 2` on 127.0.0.1: killing its
main process outright (SIGKILL: no clean-up runs) takes its workers with it, so the port is free
for the next `opgov serve`; and a serve whose port is taken says which process holds it."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.api.test_api_serve import OPGOV, opgov, start


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def db(tmp_path):
    url = f"sqlite:///{tmp_path / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    return url


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads processes from /proc")
def test_killing_the_main_process_takes_its_workers_and_frees_the_port(db):
    server = start(db, workers=2)
    try:
        main = server.process.pid
        workers = set()
        deadline = time.monotonic() + 60  # start-up, not a timing assertion
        while len(workers) < 2 and time.monotonic() < deadline:
            workers = {p for p in _children(main) if "opgov" in open(f"/proc/{p}/cmdline").read()
                       or "multiprocessing" in open(f"/proc/{p}/cmdline").read()}
            time.sleep(0.2)
        assert len(workers) >= 2, workers
        os.kill(main, signal.SIGKILL)
        server.process.wait(30)
        deadline = time.monotonic() + 30  # the workers' grace is 10 s; this only bounds the test
        while any(_alive(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(p) for p in workers), "a worker outlived its supervisor"
        port = int(server.url.rsplit(":", 1)[1])
        again = subprocess.Popen([*OPGOV, "--db", db, "serve", "--host", "127.0.0.1", "--port", str(port)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            import httpx

            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and again.poll() is None:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            assert again.poll() is None, again.stdout.read()
        finally:
            again.terminate()
            again.wait(20)
    finally:
        for pid in workers if "workers" in locals() else ():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        server.stop()


def test_a_taken_port_is_named_with_what_holds_it(db):
    server = start(db)
    try:
        port = server.url.rsplit(":", 1)[1]
        done = subprocess.run([*OPGOV, "--db", db, "serve", "--host", "127.0.0.1", "--port", port],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        line = done.stderr.strip()
        assert "\n" not in line and f"port {port} on 127.0.0.1 is in use by pid {server.process.pid} (" in line, line
        assert "serve" in line
    finally:
        server.stop()
