"""Replace files' content atomically, with git's lock-file protocol.

To write ``T`` a writer creates ``T.lock`` beside it with ``O_CREAT | O_EXCL`` (so exactly one
writer can hold it), writes the whole new content into it with unbuffered ``os.write`` calls,
gives it ``T``'s permission bits and owner, fsyncs it, renames it over ``T`` with
:func:`os.replace` (atomic on POSIX) and fsyncs the directory so the rename itself survives a
crash. Readers see the old bytes or the new, never a mix. Text is encoded as given, with no
newline translation.

* **A second writer** finds ``T.lock`` and is refused (:class:`FileLocked`) with a message naming
  the lock. Nothing is ever waited for.
* **A writer killed outright** (SIGKILL, power loss) leaves ``T`` as it was and its ``T.lock``
  behind. The lock is never removed silently: the next writer is refused with a message that
  says how old it is, and a person who knows no writer is running removes it (as with git).
  A writer that fails in any other way removes its own lock.
* **Whether a lock left behind is complete** is recorded: once the new content is whole and
  synced in ``T.lock``, its length and SHA-256 are written (and synced) to ``T.lock.sum``, which
  goes when the lock does. The refusal checks the lock against it and offers to install the
  lock (``mv T.lock T``) only when they match; a lock without it, or that does not match (a writer
  killed while writing, or one that only held the file), is to be removed, never installed.
* **Several files** (:func:`replace_files`): every lock is taken and every new content written
  before the first rename, so an error while preparing (a full disk, a read-only file, a
  lock held) changes none of them. If a later rename fails, the files already replaced get their
  old content back.
* **The target's mode and owner** are kept (a new file gets ``0o666`` minus the umask). A
  read-only target (no write bit at all) is refused rather than replaced.
* **Hard links** are kept: a target with more than one link (or whose owner this process cannot
  give to a new file) has the new content copied into its existing inode once the lock file
  holds all of it. That copy is not atomic for readers; if the writer dies during it, ``T.lock``
  remains with the complete new content, and the refusal message says so.
* **Symbolic links** are followed only within the target's own directory: a link that points
  out of it (or a loop) is refused, so a planted link cannot make opgov write elsewhere.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from opgov.core.errors import BadInput

LOCK_SUFFIX = ".lock"
SUM_SUFFIX = ".sum"
STALE_AFTER_SECONDS = 3600.0
"""Age after which a lock left behind is called stale in the refusal message (it is still never
removed without a person)."""

_CHUNK = 1 << 20


class FileLocked(BadInput):
    """Another writer holds the target's lock, or a killed one left it behind."""


class UnsafeTarget(BadInput):
    """The target cannot be written as asked: read-only, a symbolic link out of its directory, a
    loop of links."""


def lock_path(path: str | os.PathLike[str]) -> Path:
    """The lock file that guards writes of ``path`` (``path`` with ``.lock`` appended)."""
    path = Path(path)
    return path.with_name(path.name + LOCK_SUFFIX)


def resolve_target(path: str | os.PathLike[str]) -> Path:
    """The file to write for ``path``: ``path`` itself, or where a symbolic link in the same
    directory points. Raises :class:`UnsafeTarget` for a link out of the directory or a loop."""
    path = Path(os.path.abspath(path))
    if not path.is_symlink():
        return path
    try:
        real = Path(os.path.realpath(path, strict=True))
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeTarget("a loop of symbolic links", file=str(path)) from None
        if err.errno != errno.ENOENT:
            raise UnsafeTarget(f"cannot follow the symbolic link ({err.strerror})", file=str(path)) from None
        real = Path(os.path.realpath(path))  # a dangling link: it names the file to create
    if real.parent != Path(os.path.realpath(path.parent)):
        raise UnsafeTarget(f"a symbolic link to {real}, outside its directory: not followed", file=str(path))
    return real


def sum_path(lock: Path) -> Path:
    """Where the length and digest of a lock's complete content are recorded."""
    return lock.with_name(lock.name + SUM_SUFFIX)


def lock_is_complete(lock: Path) -> tuple[int, str] | None:
    """(length, SHA-256) of ``lock``'s content when it is the complete content its writer recorded
    (``T.lock.sum``), else None."""
    import hashlib

    try:
        length_text, digest = sum_path(lock).read_text(encoding="ascii").split()
        length = int(length_text)
        if lock.stat().st_size != length:
            return None
        hasher = hashlib.sha256()
        with open(lock, "rb") as handle:
            for chunk in iter(lambda: handle.read(_CHUNK), b""):
                hasher.update(chunk)
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return (length, digest) if hasher.hexdigest() == digest else None


def _describe_lock(lock: Path, target: Path) -> str:
    try:
        age = time.time() - lock.lstat().st_mtime
    except OSError:
        age = 0.0
    if age > STALE_AFTER_SECONDS:
        when = f"{age / 3600:.1f} h old: a writer was probably killed"
    else:
        when = f"{max(age, 0):.0f} s old: another writer may be running"
    complete = lock_is_complete(lock)
    total = sum_path(lock).name
    if complete is not None:
        return (f"locked by {lock} ({when}); if no opgov is writing {target.name}, the lock holds the complete new "
                f"content it did not install ({complete[0]:,} bytes, SHA-256 {complete[1][:12]}…, as its writer "
                f"recorded in {total}): install it with `mv {lock.name} {target.name}` or drop it, then remove "
                f"{total}, and try again")
    return (f"locked by {lock} ({when}); if no opgov is writing {target.name}, the lock does not hold complete new "
            f"content (its writer was stopped before it recorded it whole): remove {lock.name}"
            + (f" and {total}" if sum_path(lock).exists() else "") + " — never copy it over the file — and try again")


def _record_sum(lock: Path, data: bytes) -> None:
    """Record that ``lock`` holds all of ``data`` (its length and SHA-256), synced."""
    import hashlib

    fd = os.open(sum_path(lock), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        _write_all(fd, f"{len(data)} {hashlib.sha256(data).hexdigest()}\n".encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _drop_sum(lock: Path) -> None:
    try:
        os.unlink(sum_path(lock))
    except FileNotFoundError:
        pass


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


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    written = 0
    while written < len(view):
        written += os.write(fd, view[written:written + _CHUNK])


@dataclass
class PreparedWrite:
    """One target whose lock is held and whose new content sits, complete and synced, in it."""

    target: Path
    lock: Path
    data: bytes
    in_place: bool  # copy into the existing inode (hard links, an owner we cannot give away)
    old: bytes | None  # the content replaced, to put back if a later file of the set fails
    done: bool = False

    def commit(self) -> None:
        if self.in_place:
            fd = os.open(self.target, os.O_WRONLY)
            try:
                _write_all(fd, self.data)
                os.ftruncate(fd, len(self.data))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.unlink(self.lock)
        else:
            os.replace(self.lock, self.target)
        self.done = True
        _fsync_directory(self.target.parent)
        _drop_sum(self.lock)

    def abort(self) -> None:
        if not self.done:
            try:
                os.unlink(self.lock)
            except FileNotFoundError:
                pass
            _drop_sum(self.lock)


def prepare_write(path: str | os.PathLike[str], text: str | bytes, *, encoding: str = "utf-8",
                  keep_old: bool = False) -> PreparedWrite:
    """Take ``path``'s lock and write ``text`` into it (see the module docstring); nothing is
    visible at ``path`` until :meth:`PreparedWrite.commit`. On any error the lock is removed."""
    target = resolve_target(path)
    lock = lock_path(target)
    data = text if isinstance(text, bytes) else text.encode(encoding)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeTarget("not a regular file", file=str(target))
        if not st.st_mode & 0o222:
            raise UnsafeTarget("is read-only (no write permission bit): not replaced", file=str(target))
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        raise FileLocked(_describe_lock(lock, target), file=str(target)) from None
    in_place = st is not None and st.st_nlink > 1
    try:
        try:
            if st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))
                if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                    try:
                        os.fchown(fd, st.st_uid, st.st_gid)
                    except PermissionError:
                        in_place = True  # only the existing inode keeps its owner
            old = target.read_bytes() if keep_old and st is not None else None
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if data:  # (an empty lock only holds the file while a run decides)
            _record_sum(lock, data)
        else:
            _drop_sum(lock)  # one a writer killed after its rename left
    except BaseException:
        os.unlink(lock)
        _drop_sum(lock)
        raise
    return PreparedWrite(target=target, lock=lock, data=data, in_place=in_place, old=old)


def replace_files(contents: list[tuple[str | os.PathLike[str], str]], *, encoding: str = "utf-8") -> None:
    """Give every path its text, all or none as far as a file system allows: all locks are
    taken and all contents written before the first rename (an error then changes nothing);
    a failed rename puts the files already replaced back. A kill between two renames leaves
    the earlier files new and the later ones old: order ``contents`` so that this is safe."""
    prepared: list[PreparedWrite] = []
    try:
        for path, text in contents:
            prepared.append(prepare_write(path, text, encoding=encoding, keep_old=len(contents) > 1))
        for i, item in enumerate(prepared):
            try:
                item.commit()
            except BaseException:
                for earlier in reversed(prepared[:i]):
                    if earlier.old is not None:
                        try:
                            prepare_write(earlier.target, earlier.old).commit()
                        except (OSError, BadInput):
                            pass  # the original error says what went wrong first
                raise
    finally:
        for item in prepared:
            item.abort()


def atomic_write_text(path: str | os.PathLike[str], text: str, *, encoding: str = "utf-8") -> None:
    """Make ``path`` hold exactly ``text`` encoded with ``encoding`` (no newline translation)."""
    replace_files([(path, text)], encoding=encoding)
