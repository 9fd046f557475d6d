"""Reading a file, and naming the file and line of what is wrong in it.

Every reader in :mod:`opgov.formats` reads through :func:`read_text` and attaches the place of a
problem with :func:`context` (torchgen's ``context()`` idea): the parsing code below raises plain
:class:`~opgov.core.errors.BadInput` about the value it looked at, and the reader that knows the
file and line wraps it, instead of catching and re-raising at every call.

Each reader has two forms: one that takes a path, and one that takes the content already in
memory (``str`` or ``bytes``) with the name its messages give it (``name:line: ...``). The path
form reads the file and calls the other, so an upload to `opgov serve` is read as a local file
is, and answered in the same words, with no temporary file. :class:`Content` carries such a
file through a service that also takes paths; :func:`text_of` checks content as
:func:`read_text` checks a file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from opgov.core.errors import BadInput

__all__ = ["MAX_FILE_BYTES", "Content", "check_file", "context", "read_bytes", "read_content", "read_text",
           "text_of"]

MAX_FILE_BYTES = 64 * 1024 * 1024
"""The largest file opgov reads (64 MiB): PyTorch's native_functions.yaml is 0.6 MB, a model's
operator list a few kB; twice what ``opgov serve`` accepts in one request (32 MiB). A larger file,
or anything that is not a regular file (a FIFO, /dev/zero, a socket), is refused before a byte
of it is read."""

_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind_refusal(mode: int, name: str) -> BadInput | None:
    if stat.S_ISDIR(mode):
        return BadInput("is a directory, expected a file", file=name)
    if not stat.S_ISREG(mode):
        kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
        return BadInput(f"is {kind}, not a regular file: opgov reads only files", file=name)
    return None


def _os_refusal(err: OSError, name: str) -> BadInput:
    if isinstance(err, FileNotFoundError):
        return BadInput("no such file", file=name)
    if isinstance(err, IsADirectoryError):
        return BadInput("is a directory, expected a file", file=name)
    if err.errno == errno.ELOOP:
        return BadInput("a loop of symbolic links that never reaches a file", file=name)
    return BadInput(f"cannot read: {err.strerror or err}", file=name)


def _too_big(size: int, name: str, limit: int) -> BadInput:
    return BadInput(f"is {size:,} bytes; opgov reads files of at most {limit:,} bytes", file=name)


def check_file(path: str | Path, *, limit: int | None = MAX_FILE_BYTES) -> os.stat_result:
    """The status of a regular file of at most ``limit`` bytes (None: any size, for an archive read
    member by member), or one line of :class:`BadInput` naming it: no such file, a directory, a
    FIFO, a device, a loop of symbolic links, too large."""
    name = str(path)
    try:
        status = os.stat(path)
    except OSError as err:
        raise _os_refusal(err, name) from None
    refusal = _kind_refusal(status.st_mode, name)
    if refusal is None and limit is not None and status.st_size > limit:
        refusal = _too_big(status.st_size, name, limit)
    if refusal is not None:
        raise refusal
    return status


def read_bytes(path: str | Path, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, checked (as :func:`check_file`) on
    the file opened, before a byte is read: opening never waits (a FIFO without a writer) and a
    file that grows past ``limit`` while read is refused at ``limit``."""
    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise _os_refusal(err, name) from None
    try:
        status = os.fstat(fd)
        refusal = _kind_refusal(status.st_mode, name)
        if refusal is None and status.st_size > limit:
            refusal = _too_big(status.st_size, name, limit)
        if refusal is not None:
            raise refusal
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as err:
        raise _os_refusal(err, name) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise _too_big(len(data), name, limit)
    return data


@dataclass(frozen=True, slots=True)
class Content:
    """A file already in memory (an upload): its bytes or text, and the name messages give it.
    Not a tuple, so that it is never mistaken for a ``(name, text)`` pair."""

    data: str | bytes
    name: str

    def release(self) -> None:
        """Let go of the bytes, which every holder of this file shares: for a service that has read
        them whole and works on long after (an import of an upload: the rows it writes would
        otherwise cost the upload's size again, issue 42). ``data`` is empty afterwards."""
        object.__setattr__(self, "data", b"")


def read_text(path: str | Path, *, exact: bool = False) -> str:
    """A UTF-8 text file, or one line of :class:`BadInput` naming it (no such file, a directory,
    not readable, binary or not UTF-8, empty; not a regular file or larger than
    :data:`MAX_FILE_BYTES`: :func:`read_bytes`). ``exact`` keeps line endings as they are (the sync
    bot rewrites files byte for byte). Every file a command is given is read here."""
    return text_of(read_bytes(path), str(path), exact=exact)


def read_content(path: str | Path) -> Content:
    """A file's bytes as :class:`Content` named as the user gave it (what a command sends a server
    and gives its service alike), or one line of :class:`BadInput` naming it, in the words of
    :func:`read_text`; the reader it goes to checks the rest (UTF-8, binary, empty)."""
    return Content(read_bytes(path), str(path))


def text_of(data: str | bytes, name: str, *, exact: bool = False) -> str:
    """The text of a file already in memory (an upload to `opgov serve`), with the checks and the
    words of :func:`read_text`: not UTF-8, binary or empty is one line of :class:`BadInput` naming
    ``name``, so a server answers what a local run says. Bytes are decoded as :func:`read_text`
    decodes a file (``\\r\\n`` and ``\\r`` read as ``\\n`` unless ``exact``); text is checked as is."""
    if isinstance(data, str):
        return _text_only(data, name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason} at byte {err.start})", file=name) from None
    if not exact and "\r" in text:  # what open(..., newline=None) does
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _text_only(text, name)


def plain_bytes(data: str | bytes) -> bool:
    """Whether ``data`` is bytes :func:`text_of` would give back unchanged (ASCII, no carriage
    return, no NUL, not blank): a reader may then read the bytes themselves, without a decoded copy."""
    return (isinstance(data, bytes) and data.isascii() and b"\r" not in data and b"\x00" not in data
            and not data.isspace() and len(data) > 0)


def _text_only(text: str, name: str) -> str:
    """``text``, unless it is binary (a NUL byte) or empty: one line of :class:`BadInput`."""
    if "\x00" in text:
        raise BadInput("a binary file (it holds NUL bytes), expected text", file=name,
                       line=text.count("\n", 0, text.index("\x00")) + 1)
    if not text.strip():
        raise BadInput("is empty", file=name)
    return text


@contextmanager
def context(file: str | Path, line: int | None = None, *, prefix: str = "") -> Iterator[None]:
    """Inside the block, a :class:`BadInput` that names no file is raised again naming ``file``
    (and ``line``), its message preceded by ``prefix``; one naming a file already passes as is.

    ::

        with context(path, line=7):
            target = canonical(text)    # BadInput("'x y' is not an operator name …")
        # → BadInput("path:7: 'x y' is not an operator name …")
    """
    try:
        yield
    except BadInput as err:
        if err.file is not None:
            raise
        raise type(err)(prefix + err.message, file=str(file), line=line, subject=err.subject) from None


def json_values(data: bytes) -> int:
    """At most how many values (objects, arrays, strings, numbers, literals) parsing the JSON text
    ``data`` builds, counted without parsing it: every value after the first follows a ``,`` or a
    ``:``, and every object or array opens with ``{`` or ``[`` (those inside strings count too, so
    this is a bound, never less). A reader refuses a text past its bound before building a tree
    some tens of times the text's size (``[{},{},…]``: a 64-byte object per 3 bytes)."""
    return data.count(b",") + data.count(b":") + data.count(b"[") + data.count(b"{") + 1


def iter_lines(text: str):
    """The lines of ``text`` one at a time, without their line ends (``\\n``; a ``\\r`` before it is
    stripped by whoever strips the line): neither a list of every line (``splitlines``) nor a
    four-bytes-a-character copy of the text (``io.StringIO``) is made."""
    start, end = 0, len(text)
    while start < end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end
        yield text[start:stop]
        start = stop + 1
