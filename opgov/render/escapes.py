"""Text from the database shown on a terminal, with control characters made visible.

A rationale, a member name or a reason is data someone typed; printed raw, an ESC sequence in it
could recolour or clear the terminal, rewrite the title (OSC), move the cursor to overwrite the
line above, or hide text behind a bidirectional override. :func:`visible` writes every such
character as a Python-style escape (``\\x1b``, ``\\u202e``), so it is seen, not obeyed. JSON
output needs none of this: its encoder escapes control characters already.
"""

from __future__ import annotations

_CONTROLS = [c for c in range(0x20) if c not in (0x09, 0x0A)] + [0x7F] + list(range(0x80, 0xA0))
_INVISIBLE = [*range(0x200B, 0x2010), 0x2028, 0x2029, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0xFEFF]
_KEEP_LINES = {c: f"\\x{c:02x}" for c in _CONTROLS} | {c: f"\\u{c:04x}" for c in _INVISIBLE}
_ONE_LINE = _KEEP_LINES | {0x0A: "\\n"}


def visible(text: str, *, one_line: bool = False) -> str:
    """``text`` with terminal control characters (C0 but tab and newline, DEL, C1), zero-width and
    bidirectional formatting characters written as escapes; ``one_line`` escapes newlines too."""
    return text.translate(_ONE_LINE if one_line else _KEEP_LINES)
