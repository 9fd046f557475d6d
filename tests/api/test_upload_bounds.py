"""What uploads may cost a worker of a real `opgov serve` on 127.0.0.1: a body that arrives too
slowly is cut off with 408 (and frees its slot), every upload — with a token or without — counts
against the worker's budget (503 with Retry-After past it), reads stay answered meanwhile, and one
upload's parse costs the worker a small multiple of its body in memory."""

from __future__ import annotations

import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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



def _trickle(sock: socket.socket, data: bytes, every: float) -> tuple[int, bytes]:
    """Send ``data`` a byte at a time, ``every`` seconds apart, until the server answers or closes:
    (bytes sent, what it answered)."""
    sock.setblocking(False)
    sent = 0
    try:
        for byte in data:
            try:
                sock.sendall(bytes([byte]))
            except (BrokenPipeError, ConnectionResetError, BlockingIOError):
                break
            sent += 1
            time.sleep(every)
            try:
                answer = sock.recv(65536)
            except BlockingIOError:
                continue
            except ConnectionResetError:
                return sent, b""
            return sent, answer  # an answer, or b"": closed
        sock.settimeout(30)
        try:
            return sent, sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            return sent, b""
    finally:
        sock.close()


def test_a_body_trickled_a_byte_at_a_time_is_cut_off_with_408(served):
    """Issue 42, slowloris: a body that never stops arriving but never arrives (a byte every 0.2 s of
    a declared 1,000: 200 s) is answered 408 and closed at the body timeout (3 s here), long
    before the client has sent it, and the worker answers others meanwhile."""
    port = int(served.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(("POST /api/v1/check-model HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Content-Length: 1000\r\n\r\n").encode())
    with ThreadPoolExecutor(1) as pool:
        trickled = pool.submit(_trickle, sock, b'{"operators": ["' + b"x" * 983 + b'"]}', 0.2)
        with httpx.Client(base_url=served.url, timeout=30) as anyone:
            assert anyone.get("/healthz").status_code == 200  # the worker is not held by it
        sent, answer = trickled.result(timeout=120)
    assert answer.startswith(b"HTTP/1.1 408 ") and b"problem+json" in answer, answer[:200]
    assert sent < 1000  # cut off while the client was still sending


def test_a_request_head_trickled_a_byte_at_a_time_is_closed(served):
    """Slowloris on the request's head (a header line a byte every 0.2 s, never ending): the
    connection is closed at the body timeout (3 s here), before the head is complete; the worker
    answers others meanwhile. So does a connection that sends nothing at all."""
    port = int(served.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    silent = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"y" * 1000 + b"\r\n\r\n"
    with ThreadPoolExecutor(1) as pool:
        trickled = pool.submit(_trickle, sock, head, 0.2)
        with httpx.Client(base_url=served.url, timeout=30) as anyone:
            assert anyone.get("/healthz").status_code == 200
        sent, answer = trickled.result(timeout=120)
    assert answer == b"" and sent < len(head)  # closed, not answered, long before the head's end
    try:
        assert silent.recv(1) == b""  # closed too (the socket's own timeout, 30 s, bounds the wait)
    finally:
        silent.close()


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


#: What one check-bc upload may raise a worker's peak memory by, as a multiple of its body
#: (measured: 7.4x for 2.13.0 against itself, 1.2 MB; 5.9x for 7 MB; 4.5x for 30 MB).
MEMORY_PER_BODY_BYTE = 8


def _renamed_entries(release: Path, size: int) -> bytes:
    """A native_functions.yaml of about ``size`` bytes: the release's entries again and again, each
    copy's functions renamed (``add`` → ``add_r1``), without the lines that name other entries."""
    text = (release / "native_functions.yaml").read_text(encoding="utf-8")
    head, *entries = re.split(r"(?m)^(?=- func:)", text)
    out, total, copy = [head], len(head), 0
    while total < size:
        for entry in entries:
            entry = re.sub(r"^- func: ([A-Za-z0-9_]+)", rf"- func: \g<1>_r{copy}", entry, count=1)
            entry = "".join(line for line in entry.splitlines(keepends=True)
                            if not line.lstrip().startswith(("structured_delegate:", "autogen:")))
            out.append(entry)
            total += len(entry)
        copy += 1
    return "".join(out).encode("utf-8")


def _status(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} for pid {pid}")


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's /proc")
def test_an_upload_costs_a_worker_a_small_multiple_of_its_body(tmp_path, pytorch_release):
    release = pytorch_release("2.13.0")
    if not (release / "native_functions.yaml").is_file():
        pytest.skip("PyTorch 2.13.0's native_functions.yaml is not in the shared data")
    data = _renamed_entries(release, 3_000_000)
    url = f"sqlite:///{tmp_path / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    server = start(url, env={"OPGOV_MAX_UPLOAD_BYTES": str(16 << 20), "OPGOV_UPLOAD_BUDGET_BYTES": str(32 << 20)})
    try:
        pid = server.process.pid
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        workers = [int(c) for c in children] or [pid]
        with httpx.Client(base_url=server.url, timeout=120) as anyone:
            for _ in range(2):  # the worker's modules are loaded by a small check first
                warm = anyone.post("/api/v1/check-bc", files={"old": ("a.yaml", V1.read_bytes()),
                                                              "new": ("b.yaml", V1.read_bytes())})
                assert warm.status_code == 200, warm.text
            before = {}
            for worker in workers:  # its peak memory from now on (5: reset the peak to what it holds)
                Path(f"/proc/{worker}/clear_refs").write_text("5")
                before[worker] = _status(worker, "VmHWM")
            checked = anyone.post("/api/v1/check-bc", files={"old": ("old.yaml", data), "new": ("new.yaml", data)})
            assert checked.status_code == 200, checked.text
            assert checked.json()["findings"] == []  # the file against itself: nothing broke
        body = 2 * len(data)
        growth = max(_status(worker, "VmHWM") - before[worker] for worker in workers)
        assert growth > body / 2  # the worker did read the upload
        assert growth <= MEMORY_PER_BODY_BYTE * body, f"{growth / body:.1f} times the body"
    finally:
        server.stop()


def test_uploads_past_the_slots_read_a_503_never_a_reset(tmp_path):
    """Issue 42: with both anonymous slots taken, a third and a fourth upload at once (12 MB each, more
    than a socket's buffers hold) were reset mid-body; now each reads a 503 with Retry-After (the
    server reads their bodies and drops them, then answers), and the next upload is served."""
    url = f"sqlite:///{tmp_path / 'opgov.db'}"
    opgov(url, "db", "upgrade")
    server = start(url, env={"OPGOV_MAX_UPLOAD_BYTES": str(16 << 20), "OPGOV_UPLOAD_BUDGET_BYTES": str(64 << 20),
                             "OPGOV_ANONYMOUS_UPLOADS": "2", "OPGOV_BODY_TIMEOUT": "20"})
    big = b"x" * (6 << 20)
    try:
        _two_past_the_slots(server, big)
        with httpx.Client(base_url=server.url, timeout=30) as anyone:  # the slots are free again
            again = anyone.post("/api/v1/check-bc", files={"old": ("a.yaml", V1.read_bytes()),
                                                           "new": ("b.yaml", V1.read_bytes())})
            assert again.status_code == 200, again.text
    finally:
        server.stop()


def _two_past_the_slots(server, big: bytes) -> None:
    slow = [_slow(server, 1000) for _ in range(2)]  # both anonymous slots
    try:
        time.sleep(0.5)  # let the server take their request lines (this only orders the requests)

        def upload(_: int) -> tuple[int, str, str]:
            # a plain client: it sends its whole body, then reads (one that reads while it sends may
            # find an early answer among the ruins; this one cannot)
            boundary = "b0undary"
            body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{name}.yaml"'
                            f'\r\n\r\n'.encode() + big + b"\r\n" for name in ("old", "new"))
            body += f"--{boundary}--\r\n".encode()
            port = int(server.url.rsplit(":", 1)[1])
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall((f"POST /api/v1/check-bc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; "
                              f"boundary={boundary}\r\nContent-Length: {len(body)}\r\n\r\n").encode())
                sock.sendall(body)  # a reset raises here (ConnectionResetError, BrokenPipeError)
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
            head, _, text = answer.decode("latin-1").partition("\r\n\r\n")
            status = int(head.split()[1])
            retry_after = re.search(r"(?im)^retry-after: *(\S+)", head)
            return status, retry_after.group(1) if retry_after else "", text

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(upload, range(2)))
        for status, retry_after, text in answers:
            assert status == 503 and retry_after, text
            assert "busy with other uploads" in text
    finally:
        for sock in slow:
            sock.close()
