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
    # until its content is recorded whole and tags.yaml, replaced first, is in place (then it waits at
    # native_functions.yaml's rename; a loaded machine may take a moment between the two)
    deadline = time.monotonic() + 30
    while (not sum_path(lock_path(ws.nf)).exists() or lock_path(ws.tags).exists()) and time.monotonic() < deadline:
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


# --- the file change and its event never come apart ----------------------------------------------------

AFTER_RENAME = """\
import os, sys, time

target = sys.argv[1]
real_replace = os.replace

def replace(src, dst):
    real_replace(src, dst)
    if os.path.basename(src) == target:  # installed; the transaction (and its event) not yet committed
        time.sleep(60)

os.replace = replace
from opgov.cli.main import run
run(sys.argv[2:])
"""


def _syncs(ws: Workspace) -> list[dict]:
    from tests.cli.test_sync_cli import invoke

    code, out, err = invoke(ws.url, "log", "--json", "--limit", "0")
    assert code == 0, err
    import json

    return [e for e in json.loads(out) if e["action"] == "yaml.sync"]


def _verified(ws: Workspace) -> None:
    from tests.cli.test_sync_cli import invoke

    code, out, err = invoke(ws.url, "log", "verify")
    assert code == 0, err + out


def _killed_after_rename(ws: Workspace, old_nf: bytes) -> bytes:
    """A real `sync-yaml --write` SIGKILLed once native_functions.yaml is installed and before its
    transaction commits; the bytes it installed."""
    import os
    import subprocess
    import sys

    from tests.cli.test_sync_cli import REPO

    argv = ["--db", ws.url, "--actor", "syncbot", "sync-yaml", str(ws.nf), "--tags-yaml", str(ws.tags), "--write"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("OPGOV_NOW", None)
    proc = subprocess.Popen([sys.executable, "-c", AFTER_RENAME, lock_path(ws.nf).name, *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ws.dir)
    deadline = time.monotonic() + 60  # until native_functions.yaml is installed, then it waits
    while ws.nf.read_bytes() == old_nf and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    installed = ws.nf.read_bytes()
    assert installed != old_nf, proc.stderr.read()
    assert (ws.dir / f"{NF}.sync-intent").exists()
    return installed


def _found_once(ws: Workspace, before: list[dict], installed: bytes) -> None:
    """The next run logs the stopped write, marked as found, and a third run logs nothing more."""
    import hashlib

    code, out, err = ws.sync("--write")  # the next run
    assert code == 0, err
    found = [e for e in _syncs(ws) if e not in before]
    assert len(found) == 1 and found[0]["subject"] == f"file:{ws.nf}", found
    assert found[0]["after"]["sha256"] == hashlib.sha256(installed).hexdigest() and found[0]["after"]["found"], found
    assert set(found[0]["after"]) == {"sha256", "found", "write"}
    assert "stopped before it logged it" in found[0]["reason"]
    assert not (ws.dir / f"{NF}.sync-intent").exists()
    _verified(ws)
    code, _, err = ws.sync("--write")  # and once only
    assert code == 0 and len(_syncs(ws)) == len(before) + 1, err


def test_a_sync_killed_between_its_rename_and_its_commit_is_logged_by_the_next_run(governed, tmp_path):  # noqa: F811
    db, release = governed
    ws = Workspace(db, release, tmp_path / "torn")
    before = _syncs(ws)
    installed = _killed_after_rename(ws, (release / NF).read_bytes())
    assert _syncs(ws) == before  # the file changed, the event did not commit: the window the issue found
    _found_once(ws, before, installed)


def test_a_killed_sync_is_logged_even_when_an_earlier_sync_wrote_the_same_bytes(governed, tmp_path):  # noqa: F811
    """Issue 42: a bot re-syncing a fresh checkout. An earlier sync wrote these bytes (and logged
    them); the file is checked out afresh and synced again, killed after its rename: the next run
    still logs that write (before: the earlier event's SHA-256 hid it, 21 events for 22 writes)."""
    db, release = governed
    ws = Workspace(db, release, tmp_path / "again")
    old_nf, old_tags = (release / NF).read_bytes(), (release / TAGS).read_bytes()
    code, _, err = ws.sync("--write")  # the first sync, logged
    assert code == 0, err
    first = ws.nf.read_bytes()
    ws.nf.write_bytes(old_nf)  # a fresh checkout
    ws.tags.write_bytes(old_tags)
    before = _syncs(ws)
    installed = _killed_after_rename(ws, old_nf)
    assert installed == first  # the same bytes as the earlier, logged write
    assert _syncs(ws) == before
    _found_once(ws, before, installed)


def test_a_sync_killed_before_its_rename_logs_nothing_found(governed, tmp_path):  # noqa: F811
    db, release = governed
    ws = Workspace(db, release, tmp_path / "before")
    before = _syncs(ws)
    proc = _writer(ws, pause="rename", target=lock_path(ws.nf).name)
    assert _wait_for_temp(ws, proc, lock_path(ws.nf).name, partial=True), proc.stderr.read()
    deadline = time.monotonic() + 30
    while not (ws.dir / f"{NF}.sync-intent").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(60)
    for lock in (lock_path(ws.nf), lock_path(ws.tags)):  # the advice followed: remove what is not installed
        for leftover in (lock, sum_path(lock)):
            leftover.unlink(missing_ok=True)
    code, _, err = ws.sync("--write")
    assert code == 0, err
    new = [e for e in _syncs(ws) if e not in before]
    assert len(new) == 1 and "found" not in new[0]["after"] and new[0]["after"]["changes"] > 0, new
    assert not (ws.dir / f"{NF}.sync-intent").exists()
    _verified(ws)
