"""What uploads may cost a worker of a real `opgov serve` on 127.0.0.1: a body that arrives too
slowly is cut off with 408 (and frees its slot), every upload — with a token or without — counts
against the worker's budget (503 with Retry-After past it), and reads stay answered meanwhile."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from tests.api.test_api_serve import MAX_UPLOAD, V1, opgov, start


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('uploads') / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    opgov(url, "import", str(V1), "--label", "v1")
    server = start(url, env={"OPGOV_BODY_TIMEOUT": "3", "OPGOV_UPLOAD_BUDGET_BYTES": str(MAX_UPLOAD + 50_000),
                             "OPGOV_ANONYMOUS_UPLOADS": "2"})
    server.tokens["chair"] = opgov(url, "tokens", "create", "chair", actor="chair").split()[0]
    try:
        yield server
    finally:
        server.stop()


def _slow(server, length: int, token: str | None = None) -> socket.socket:
    """A connection that declares a body of ``length`` bytes and sends its first byte only."""
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    sock.sendall((f"POST /api/v1/check-bc HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: multipart/form-data; "
                  f"boundary=b\r\nContent-Length: {length}\r\n\r\n-").encode())
    return sock


def _answer(sock: socket.socket) -> str:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode("latin-1")


def test_a_body_that_arrives_too_slowly_is_cut_off_with_408(served):
    slow = [_slow(served, 1000) for _ in range(2)]  # both anonymous slots, a byte and then nothing
    try:
        with httpx.Client(base_url=served.url, timeout=30) as anyone:
            busy = anyone.post("/api/v1/check-bc", files={"old": ("a.yaml", V1.read_bytes()),
                                                          "new": ("b.yaml", V1.read_bytes())})
            assert busy.status_code == 503 and busy.headers["retry-after"]
            for sock in slow:  # bounded: the server's body timeout is 3 s, the socket's 30 s
                head = _answer(sock)
                assert head.startswith("HTTP/1.1 408 ") and "problem+json" in head, head
            # the slots are free again
            again = anyone.post("/api/v1/check-bc", files={"old": ("a.yaml", V1.read_bytes()),
                                                           "new": ("b.yaml", V1.read_bytes())})
            assert again.status_code == 200, again.text
    finally:
        for sock in slow:
            sock.close()


def test_every_upload_counts_against_the_worker_s_budget_and_reads_stay_answered(served):
    token = served.tokens["chair"]
    holding = _slow(served, MAX_UPLOAD, token)  # a member's upload: not capped by the anonymous slots
    try:
        time.sleep(0.5)  # let the server take its request line (this only orders the two requests)
        with httpx.Client(base_url=served.url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as chair:
            over = chair.post("/api/v1/check-bc", files={"old": ("a.yaml", V1.read_bytes()),
                                                         "new": ("b.yaml", V1.read_bytes())})
            assert over.status_code == 503 and over.headers["retry-after"], over.text
            assert "busy taking in other uploads" in over.json()["detail"]
            assert chair.get("/api/v1/operators", params={"q": "add"}).status_code == 200  # reads are answered
        assert _answer(holding).startswith("HTTP/1.1 408 ")
    finally:
        holding.close()
    with httpx.Client(base_url=served.url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as chair:
        fine = chair.post("/api/v1/check-bc", files={"old": ("a.yaml", V1.read_bytes()),
                                                     "new": ("b.yaml", V1.read_bytes())})
        assert fine.status_code == 200, fine.text
