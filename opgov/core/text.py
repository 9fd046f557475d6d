"""Text every database stores: what opgov refuses in any text it is given, in words.

PostgreSQL's ``text`` cannot hold the NUL character (U+0000), and no UTF-8 database (nor the
drivers that encode to it) can hold a lone surrogate (U+D800 to U+DFFF, which JSON's ``\\ud800``
and an argument that is not UTF-8 produce). SQLite would store a NUL; opgov refuses it there too,
so the same input gets the same answer on both databases. Pure: used by the formats readers (with
the file and line), the API's request check (a 422 naming the parameter) and the database's last
check before a statement is sent (opgov.db.limits).
"""

from __future__ import annotations

import re

from opgov.core.errors import BadInput

__all__ = ["UNSTORABLE", "require_text", "unstorable"]

# NUL, and the surrogates: what a UTF-8 PostgreSQL database refuses
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored, as words to follow the thing's name ("holds a NUL character
    (U+0000) at character 2"), or None when every database stores it."""
    found = UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    what = "a NUL character (U+0000)" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
    return f"holds {what} at character {found.start() + 1}, which no database stores"


def require_text(value: str | None, what: str) -> str:
    """``value`` without surrounding blanks; :class:`BadInput` (``WHAT must not be empty``) when
    there is nothing else."""
    if value is None or not value.strip():
        raise BadInput(f"{what} must not be empty")
    return value.strip()
