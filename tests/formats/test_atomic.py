"""Atomic file replacement with git's lock-file protocol: the target is always the old or the new
version, never partial; one writer at a time; a lock left behind is reported, never removed."""

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
from opgov.formats.atomic import (STALE_AFTER_SECONDS, FileLocked, UnsafeTarget, atomic_write_text, lock_path,
                                  prepare_write, replace_files)

REPO = Path(__file__).resolve().parents[2]
OLD = "old version\n" * 1000
NEW_LINE = "- func: new(Tensor self) -> Tensor  # é\r\n"


def leftovers(directory: Path, target: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name == lock_path(target).name)


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

    # the killed writer could not clean up: its lock file is there, and it is partial when
    # killed while writing
    [left] = leftovers(work, target)
    assert left == "native_functions.yaml.lock"
    size = (work / left).stat().st_size
    new_size = len((NEW_LINE * REPEAT).encode())
    if phase == "write":
        assert 0 < size < new_size
    else:
        assert size == new_size

    # the next writer is refused and told about the lock, which stays, even once it is stale
    with pytest.raises(FileLocked, match="locked by .*native_functions.yaml.lock .*s old"):
        atomic_write_text(target, NEW_LINE)
    stale = time.time() - STALE_AFTER_SECONDS - 60
    os.utime(work / left, (stale, stale))
    with pytest.raises(FileLocked, match=r"1\.0 h old: a writer was probably killed") as info:
        atomic_write_text(target, NEW_LINE)
    assert "\n" not in str(info.value)
    assert target.read_text() == OLD and leftovers(work, target) == [left]

    # a person removes it, and the next write succeeds
    (work / left).unlink()
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


def test_a_second_writer_is_refused_while_the_first_holds_the_lock(tmp_path):
    target = tmp_path / "native_functions.yaml"
    target.write_text(OLD)
    first = prepare_write(target, "first\n")
    with pytest.raises(FileLocked) as info:
        atomic_write_text(target, "second\n")
    assert str(info.value).startswith(f"{target}: locked by {lock_path(target)} (0 s old: another writer may be running)")
    assert target.read_text() == OLD
    first.commit()
    assert target.read_text() == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["native_functions.yaml"]


def test_a_lock_of_another_file_does_not_matter(tmp_path):
    target = tmp_path / "native_functions.yaml"
    (tmp_path / "tags.yaml.lock").write_text("someone else's")
    atomic_write_text(target, NEW_LINE)
    assert target.read_bytes().decode() == NEW_LINE


def test_a_read_only_target_is_refused(tmp_path):
    target = tmp_path / "tags.yaml"
    target.write_text(OLD)
    target.chmod(0o444)
    with pytest.raises(UnsafeTarget, match="read-only"):
        atomic_write_text(target, NEW_LINE)
    assert target.read_text() == OLD
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tags.yaml"]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_keeps_the_owner(tmp_path):
    target = tmp_path / "tags.yaml"
    target.write_text(OLD)
    os.chown(target, 4321, 8765)
    atomic_write_text(target, NEW_LINE)
    st = target.stat()
    assert (st.st_uid, st.st_gid) == (4321, 8765)
    assert target.read_bytes().decode() == NEW_LINE


def test_keeps_hard_links(tmp_path):
    target = tmp_path / "native_functions.yaml"
    target.write_text(OLD)
    other = tmp_path / "elsewhere.yaml"
    os.link(target, other)
    inode = target.stat().st_ino
    atomic_write_text(target, NEW_LINE)
    assert target.stat().st_ino == inode and target.stat().st_nlink == 2
    assert other.read_bytes().decode() == NEW_LINE == target.read_bytes().decode()
    atomic_write_text(target, "short\n")  # shorter than before: the rest is cut off
    assert other.read_text() == "short\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.yaml", "native_functions.yaml"]


def test_a_symlink_out_of_the_directory_is_not_followed(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious\n")
    work = tmp_path / "repo"
    work.mkdir()
    link = work / "tags.yaml"
    link.symlink_to(outside)
    with pytest.raises(UnsafeTarget, match="outside its directory"):
        atomic_write_text(link, NEW_LINE)
    assert outside.read_text() == "precious\n" and link.is_symlink()
    (work / "up.yaml").symlink_to(Path("..") / "outside.txt")  # relative, the same escape
    with pytest.raises(UnsafeTarget):
        atomic_write_text(work / "up.yaml", NEW_LINE)
    assert sorted(p.name for p in work.iterdir()) == ["tags.yaml", "up.yaml"]


def test_a_symlink_loop_is_refused(tmp_path):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(UnsafeTarget, match="loop"):
        atomic_write_text(a, NEW_LINE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.yaml", "b.yaml"]


def test_a_dangling_symlink_in_the_directory_names_the_file_to_create(tmp_path):
    link = tmp_path / "link.yaml"
    link.symlink_to("real.yaml")
    atomic_write_text(link, NEW_LINE)
    assert (tmp_path / "real.yaml").read_bytes().decode() == NEW_LINE and link.is_symlink()


def test_two_files_an_error_while_preparing_the_second_changes_neither(tmp_path):
    tags, nf = tmp_path / "tags.yaml", tmp_path / "native_functions.yaml"
    tags.write_text(OLD)
    nf.write_text(OLD)
    nf.chmod(0o444)
    with pytest.raises(UnsafeTarget):
        replace_files([(tags, "declared\n"), (nf, "used\n")])
    assert tags.read_text() == OLD == nf.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["native_functions.yaml", "tags.yaml"]


def test_two_files_a_failed_second_rename_puts_the_first_back(tmp_path, monkeypatch):
    tags, nf = tmp_path / "tags.yaml", tmp_path / "native_functions.yaml"
    tags.write_text(OLD)
    nf.write_text(OLD)
    real_replace = os.replace

    def replace(src, dst):
        if Path(dst).name == "native_functions.yaml":
            raise OSError(errno.EIO, "Input/output error")
        return real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace)
    with pytest.raises(OSError, match="Input/output"):
        replace_files([(tags, "declared\n"), (nf, "used\n")])
    assert tags.read_text() == OLD == nf.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["native_functions.yaml", "tags.yaml"]


# --- a real small file system: full, and read-only --------------------------------------------------------


@pytest.fixture
def small_fs(tmp_path):
    """A 64 KiB tmpfs (needs root and a kernel that lets this process mount)."""
    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def test_a_full_disk_leaves_the_old_file_and_no_lock(small_fs):
    target = small_fs / "native_functions.yaml"
    target.write_text("old\n" * 2000)  # 8 KiB
    with pytest.raises(OSError) as info:
        atomic_write_text(target, "new\n" * 40_000)  # 160 KiB: more than the disk holds
    assert info.value.errno == errno.ENOSPC
    assert target.read_text() == "old\n" * 2000
    assert sorted(p.name for p in small_fs.iterdir()) == ["native_functions.yaml"]


def test_a_read_only_folder_leaves_the_file(small_fs):
    target = small_fs / "tags.yaml"
    target.write_text(OLD)
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    with pytest.raises(OSError) as info:
        atomic_write_text(target, NEW_LINE)
    assert info.value.errno == errno.EROFS
    assert target.read_text() == OLD
