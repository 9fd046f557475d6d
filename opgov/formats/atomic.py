"""Replace a file's content atomically: readers see the old bytes or the new, never a mix.

:func:`atomic_write_text` creates a temporary file in the target's own directory (so the final
rename stays on one file system), named ``.{name}.opgov-tmp-{random}`` so a person can tell what
it is. It writes the bytes with unbuffered ``os.write`` calls (no user-space buffer is left to
flush), fsyncs the file, renames it over the target with :func:`os.replace` (atomic on POSIX)
and fsyncs the directory so the rename itself survives a crash. On any exception the temporary
file is removed and the exception propagates; on success nothing but the target is left. The
target's permission bits are kept (a new file gets ``0o666`` minus the umask, like any other new
file); a symbolic link is followed and the file it points to is replaced. Text is encoded as
given, with no newline translation.

A process killed outright (SIGKILL, power loss) cannot clean up after itself: the target is then
still the old version, but a temporary file may remain. The next :func:`atomic_write_text` for
the same target removes such leftovers once they are older than :data:`STALE_AFTER_SECONDS`
(younger ones may belong to a writer that is still running).
"""

from __future__ import annotations

import os
import secrets
import stat
import time
from pathlib import Path

STALE_AFTER_SECONDS = 3600.0
"""Age after which a leftover temporary file of a killed writer is removed."""

_CHUNK = 1 << 20


def temp_prefix(path: str | os.PathLike[str]) -> str:
    """The name prefix of the temporary files used to write ``path``."""
    return f".{Path(path).name}.opgov-tmp-"


def _remove_stale(directory: Path, prefix: str, now: float) -> None:
    try:
        candidates = [p for p in directory.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return
    for leftover in candidates:
        try:
            if now - leftover.lstat().st_mtime > STALE_AFTER_SECONDS:
                leftover.unlink()
        except OSError:
            pass  # another writer got there first, or it is not ours to remove


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # platforms without directory handles
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Make ``path`` hold exactly ``text`` encoded with ``encoding`` (no newline translation)."""
    target = Path(os.path.realpath(path))
    directory = target.parent
    prefix = temp_prefix(target)
    data = text.encode(encoding)
    _remove_stale(directory, prefix, time.time())

    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None

    fd = -1
    tmp: Path | None = None
    try:
        while True:
            tmp = directory / f"{prefix}{secrets.token_hex(4)}"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
                break
            except FileExistsError:
                continue
        if mode is not None:
            os.fchmod(fd, mode)
        view = memoryview(data)
        written = 0
        while written < len(view):
            written += os.write(fd, view[written:written + _CHUNK])
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, target)
        tmp = None
        _fsync_directory(directory)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        if tmp is not None:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
        raise
