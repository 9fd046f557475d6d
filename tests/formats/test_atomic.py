"""Atomic file replacement: the target is always the old or the new version, never partial."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from opgov.formats import atomic
from opgov.formats.atomic import STALE_AFTER_SECONDS, atomic_write_text, temp_prefix

REPO = Path(__file__).resolve().parents[2]
OLD = "old version\n" * 1000
NEW_LINE = "- func: new(Tensor self) -> Tensor  # é\r\n"


def leftovers(directory: Path, target: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(temp_prefix(target)))


def test_writes_exactly_the_given_text(tmp_path):
    target = tmp_path / "native_functions.yaml"
    target.write_text(OLD)
    text = "a\r\nb\rc\n\u00e9 no newline at the end"
    atomic_write_text(target, text)
    assert target.read_bytes() == text.encode("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["native_functions.yaml"]


def test_keeps_the_permission_bits(tmp_path):
    target = tmp_path / "tags.yaml"
    target.write_text(OLD)
    for mode in (0o640, 0o755, 0o600):
        target.chmod(mode)
        atomic_write_text(target, NEW_LINE)
        assert stat.S_IMODE(target.stat().st_mode) == mode


def test_a_new_file_gets_the_usual_mode(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    target = tmp_path / "fresh.yaml"
    atomic_write_text(target, NEW_LINE)
    assert target.read_bytes().decode() == NEW_LINE
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_a_symlink_is_followed(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text(OLD)
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    atomic_write_text(link, NEW_LINE)
    assert link.is_symlink()
    assert real.read_bytes().decode() == NEW_LINE


def test_an_error_mid_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch):
    target = tmp_path / "native_functions.yaml"
    target.write_text(OLD)
    real_write = os.write
    calls = []

    def failing_write(fd, data):
        calls.append(len(data))
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(atomic.os, "write", failing_write)
    with pytest.raises(OSError, match="No space"):
        atomic_write_text(target, NEW_LINE * 100_000)  # several chunks
    assert len(calls) == 2
    assert target.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["native_functions.yaml"]


def test_an_error_before_the_rename_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "native_functions.yaml"
    target.write_text(OLD)

    def failing_replace(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_text(target, NEW_LINE)
    assert target.read_text() == OLD
    assert leftovers(tmp_path, target) == []


# A writer in its own process, slowed down so the test can kill it at a chosen moment. It
# creates the signal file once it is inside the phase named on the command line.
WRITER = textwrap.dedent(
    """
    import os, sys, time
    from opgov.formats import atomic

    target, signal_file, phase, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

    def arrived():
        with open(signal_file, "w"):
            pass

    real_write, real_fsync = os.write, os.fsync

    def slow_write(fd, data):
        n = real_write(fd, data)
        arrived()
        time.sleep(0.2)
        return n

    def slow_fsync(fd):
        real_fsync(fd)
        arrived()
        time.sleep(60)

    if phase == "write":
        os.write = slow_write
    elif phase == "fsync":
        os.fsync = slow_fsync
    atomic.atomic_write_text(target, sys.argv[5] * repeat)
    """
)
REPEAT = 200_000  # about 8 MiB: several write chunks


def start_writer(target: Path, phase: str, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    signal_file = tmp_path / f"arrived-{phase}"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target), str(signal_file), phase, str(REPEAT), NEW_LINE],
        env=env,
    )
    return proc, signal_file


def wait_for(signal_file: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not signal_file.exists():
        assert proc.poll() is None, "the writer ended before reaching the phase"
        assert time.monotonic() < deadline, "the writer never reached the phase"
        time.sleep(0.01)


@pytest.mark.parametrize("phase", ["write", "fsync"])
def test_a_writer_killed_mid_write_leaves_the_old_version(tmp_path, phase):
    work = tmp_path / "registry"
    work.mkdir()
    target = work / "native_functions.yaml"
    target.write_text(OLD)
    proc, signal_file = start_writer(target, phase, tmp_path)
    try:
        wait_for(signal_file, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert target.read_text() == OLD

    # the killed writer could not clean up: its temporary file is there, and it is partial
    # when killed while writing
    [left] = leftovers(work, target)
    size = (work / left).stat().st_size
    new_size = len((NEW_LINE * REPEAT).encode())
    if phase == "write":
        assert 0 < size < new_size
    else:
        assert size == new_size

    # the next write in that directory removes it once it is stale, and succeeds
    stale = time.time() - STALE_AFTER_SECONDS - 60
    os.utime(work / left, (stale, stale))
    atomic_write_text(target, NEW_LINE)
    assert target.read_bytes().decode() == NEW_LINE
    assert leftovers(work, target) == []


def test_a_writer_left_alone_leaves_the_new_version(tmp_path):
    work = tmp_path / "registry"
    work.mkdir()
    target = work / "native_functions.yaml"
    target.write_text(OLD)
    proc, _ = start_writer(target, "none", tmp_path)
    assert proc.wait(timeout=60) == 0
    assert target.read_bytes() == (NEW_LINE * REPEAT).encode()
    assert sorted(p.name for p in work.iterdir()) == ["native_functions.yaml"]


def test_only_stale_leftovers_of_the_same_target_are_removed(tmp_path):
    target = tmp_path / "native_functions.yaml"
    target.write_text(OLD)
    stale = time.time() - STALE_AFTER_SECONDS - 60
    old_own = tmp_path / f"{temp_prefix(target)}dead"
    young_own = tmp_path / f"{temp_prefix(target)}busy"
    old_other = tmp_path / f"{temp_prefix(tmp_path / 'tags.yaml')}dead"
    for p in (old_own, young_own, old_other):
        p.write_text("partial")
    os.utime(old_own, (stale, stale))
    os.utime(old_other, (stale, stale))
    atomic_write_text(target, NEW_LINE)
    assert not old_own.exists()
    assert young_own.exists() and old_other.exists()
