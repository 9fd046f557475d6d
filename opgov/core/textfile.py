"""Reading a text file that a command was given: one line of :class:`BadInput` naming the file
when it is missing, a directory, binary (a ``.pt2`` archive, say) or empty. Every reader of a
file argument starts here, so none of them can fail with a traceback on such a file."""

from __future__ import annotations

from pathlib import Path

from opgov.core.errors import BadInput


def read_text_file(path: str | Path, *, what: str = "a text file", exact: bool = False,
                   allow_empty: bool = False) -> str:
    """The UTF-8 text of ``path``. ``what`` completes "expected …" in the messages; ``exact``
    keeps line endings as they are (the sync bot rewrites files byte for byte)."""
    name = str(path)
    try:
        with open(name, encoding="utf-8", newline="" if exact else None) as handle:
            text = handle.read()
    except FileNotFoundError:
        raise BadInput("no such file", file=name) from None
    except IsADirectoryError:
        raise BadInput(f"is a directory, expected {what}", file=name) from None
    except UnicodeDecodeError:
        raise BadInput(f"binary, not UTF-8 text: expected {what}", file=name) from None
    except OSError as err:
        raise BadInput(f"cannot read: {err.strerror or err}", file=name) from None
    if "\x00" in text:
        raise BadInput(f"binary (it holds NUL bytes), expected {what}", file=name)
    if not allow_empty and not text.strip():
        raise BadInput(f"empty, expected {what}", file=name)
    return text
