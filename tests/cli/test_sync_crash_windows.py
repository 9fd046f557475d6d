"""A killed `sync-yaml --write` leaves a lock whose advice is right (opgov.formats.atomic): the
refusal offers to install a lock only when it holds the complete new content its writer recorded
(length and SHA-256 in ``T.lock.sum``), and following that advice installs exactly what an
uninterrupted run writes; a lock killed mid-write, or one that only held the file, is to be
removed, never copied over the file. Kills are SIGKILL, at each step of the write."""

from __future__ import annotations

import signal
import time

from opgov.formats.atomic import lock_path, sum_path
from tests.cli.test_sync_cli import NF, TAGS, Workspace, _wait_for_temp, _writer, governed  # noqa: F401


def _refusal(ws: Workspace) -> str:
    code, _, err = ws.sync("--write")
    assert code == 2 and err.count("\n") == 1 and "locked by" in err, err
    return err


def test_the_lock_s_advice_after_a_kill_at_each_step(governed, tmp_path):  # noqa: F811
    db, release = governed
    ref = Workspace(db, release, tmp_path / "ref")
    old = ref.snapshot()
    code, _, err = ref.sync("--write")
    assert code == 0, err
    new = ref.snapshot()
    assert new != old and not list(ref.dir.glob("*.sum"))  # an uninterrupted run leaves nothing behind

    # killed with half of native_functions.yaml's new content in its lock: remove it, never install it
    ws = Workspace(db, release, tmp_path / "half")
    proc = _writer(ws, pause="write", target=lock_path(ws.nf).name)
    assert _wait_for_temp(ws, proc, lock_path(ws.nf).name, partial=True), proc.stderr.read()
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    lock = lock_path(ws.nf)
    assert 0 < lock.stat().st_size < len(new[0])
    err = _refusal(ws)  # tags.yaml's lock first: it was whole before native_functions.yaml's was begun
    assert "holds the complete new content" in err and f"mv {TAGS}.lock {TAGS}" in err, err
    lock_path(ws.tags).replace(ws.tags)  # the advice followed (new tags are declared, none used yet)
    sum_path(lock_path(ws.tags)).unlink()
    err = _refusal(ws)
    assert "does not hold complete new content" in err and "never copy it over the file" in err, err
    assert "mv " not in err and ws.snapshot() == (old[0], new[1])
    lock.unlink()  # the advice followed
    code, _, err = ws.sync("--write")
    assert code == 0, err
    assert ws.snapshot() == new

    # killed just before the rename: the lock is whole, and the advice to install it installs the new file
    ws = Workspace(db, release, tmp_path / "whole")
    proc = _writer(ws, pause="rename", target=lock_path(ws.nf).name)
    assert _wait_for_temp(ws, proc, lock_path(ws.nf).name, partial=True), proc.stderr.read()
    deadline = time.monotonic() + 30  # until its content is recorded whole (then it waits at the rename)
    while not sum_path(lock_path(ws.nf)).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    err = _refusal(ws)
    lock = lock_path(ws.nf)
    assert "holds the complete new content" in err and f"mv {lock.name} {NF}" in err, err
    assert f"{len(new[0]):,} bytes" in err
    lock.replace(ws.nf)  # the advice followed
    sum_path(lock).unlink()
    assert ws.snapshot() == new  # tags.yaml was replaced first, native_functions.yaml now by hand

    # a lock that only held the file (empty, as the issue found four of five): remove it
    ws = Workspace(db, release, tmp_path / "empty")
    lock_path(ws.tags).write_bytes(b"")
    err = _refusal(ws)
    assert "does not hold complete new content" in err and "mv " not in err, err
    # and a lock whose content no longer matches what was recorded is not offered either
    ws = Workspace(db, release, tmp_path / "changed")
    lock, total = lock_path(ws.tags), sum_path(lock_path(ws.tags))
    lock.write_bytes(new[1])
    import hashlib

    total.write_text(f"{len(new[1])} {hashlib.sha256(new[1]).hexdigest()}\n")
    assert "holds the complete new content" in _refusal(ws)
    lock.write_bytes(new[1][:-1] + b"x")
    assert "does not hold complete new content" in _refusal(ws)
