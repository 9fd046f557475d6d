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

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from opgov.core.errors import BadInput

__all__ = ["Content", "context", "read_content", "read_text", "text_of"]


@dataclass(frozen=True, slots=True)
class Content:
    """A file already in memory (an upload): its bytes or text, and the name messages give it.
    Not a tuple, so that it is never mistaken for a ``(name, text)`` pair."""

    data: str | bytes
    name: str


def read_text(path: str | Path, *, exact: bool = False) -> str:
    """A UTF-8 text file, or one line of :class:`BadInput` naming it (no such file, a directory,
    not readable, binary or not UTF-8, empty). ``exact`` keeps line endings as they are (the sync
    bot rewrites files byte for byte). Every file a command is given is read here."""
    name = str(path)
    try:
        with open(path, encoding="utf-8", newline="" if exact else None) as handle:
            text = handle.read()
    except FileNotFoundError:
        raise BadInput("no such file", file=name) from None
    except IsADirectoryError:
        raise BadInput("is a directory, expected a file", file=name) from None
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason} at byte {err.start})", file=name) from None
    except OSError as err:  # permission denied, a symlink loop, a name too long, an I/O error
        raise BadInput(f"cannot read: {err.strerror or err}", file=name) from None
    return _text_only(text, name)


def read_content(path: str | Path) -> Content:
    """A file's bytes as :class:`Content` named as the user gave it (what a command sends a server
    and gives its service alike), or one line of :class:`BadInput` naming it, in the words of
    :func:`read_text`; the reader it goes to checks the rest (UTF-8, binary, empty)."""
    name = str(path)
    try:
        with open(path, "rb") as handle:
            return Content(handle.read(), name)
    except FileNotFoundError:
        raise BadInput("no such file", file=name) from None
    except IsADirectoryError:
        raise BadInput("is a directory, expected a file", file=name) from None
    except OSError as err:
        raise BadInput(f"cannot read: {err.strerror or err}", file=name) from None


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
