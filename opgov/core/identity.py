"""Names a reviewer can tell apart: a member's name as opgov stores it.

A member's name is what the log shows as the author of every vote and decision, so two names that
look the same must not be two members. A new name is

- **normalised** (Unicode NFKC: full-width ``ａｌｉｃｅ`` is ``alice``, the ligature ``ﬁ`` is ``fi``),
  and stored so;
- **refused** when it holds a character nobody sees (a zero-width space, a joiner, a direction
  mark, a control character, an unassigned code point) or letters of scripts that do not go
  together (Latin ``alice`` with a Cyrillic ``а``); the scripts that are written together (Han with
  Hiragana and Katakana, with Bopomofo, with Hangul; each with Latin) are one name's, as in
  Unicode's "highly restrictive" profile (UTS #39);
- **compared** by its :func:`skeleton` (the normalised name, case folded) with the names already
  taken, so ``Alice`` cannot join beside ``alice``.

Pure: standard library only (``unicodedata``). A letter's script is read from its Unicode name
(``CYRILLIC SMALL LETTER A``), which the standard library has; it is exact for the scripts whose
letters are named after them, which are those a lookalike is made of.
"""

from __future__ import annotations

import unicodedata

from opgov.core.errors import BadInput

from opgov.core.text import require_text

__all__ = ["ANONYMOUS", "RESERVED_NAMES", "SYSTEM_ACTOR", "member_name", "member_skeleton", "normalise_member_name"]

# names opgov itself acts under: the unauthenticated caller of `opgov serve`, and opgov's own events
# (db.simulation). No member may take one, so no request or event can be mistaken for a member's.
ANONYMOUS = "anonymous"
SYSTEM_ACTOR = "opgov"
RESERVED_NAMES = frozenset({ANONYMOUS, SYSTEM_ACTOR})

# general categories nobody sees: format (ZWSP, ZWJ, direction marks, BOM), control, unassigned,
# private use, surrogates, and line or paragraph separators
_INVISIBLE = frozenset({"Cf", "Cc", "Cn", "Co", "Cs", "Zl", "Zp"})
_HAN = {"CJK": "Han", "HIRAGANA": "Hiragana", "KATAKANA": "Katakana", "BOPOMOFO": "Bopomofo", "HANGUL": "Hangul"}
# the sets of scripts one name may mix (UTS #39 "highly restrictive"), Latin allowed with each
_TOGETHER = (frozenset({"Latin", "Han", "Hiragana", "Katakana"}), frozenset({"Latin", "Han", "Bopomofo"}),
             frozenset({"Latin", "Han", "Hangul"}))


def _script(ch: str) -> str | None:
    """The script of a letter, from its Unicode name; None for what is not a letter (digits,
    punctuation, marks: the Common and Inherited scripts)."""
    if not unicodedata.category(ch).startswith("L"):
        return None
    word = unicodedata.name(ch, "").split(" ", 1)[0]
    if not word:
        return None
    return _HAN.get(word, word.capitalize())


def normalise_member_name(name: str) -> str:
    """``name`` (already not blank) as stored: NFKC, without surrounding blanks; or one line of
    :class:`BadInput` saying which character a reader could not tell apart."""
    normal = unicodedata.normalize("NFKC", name).strip()
    for index, ch in enumerate(normal):
        category = unicodedata.category(ch)
        if category in _INVISIBLE or (category == "Zs" and ch != " "):
            raise BadInput(f"member name {normal!r} holds an invisible character (U+{ord(ch):04X}, "
                           f"{unicodedata.name(ch, 'unnamed')}) at character {index + 1}: a reader could "
                           "not tell it from the name without it; choose a name without it")
    scripts: dict[str, str] = {}
    for ch in normal:
        script = _script(ch)
        if script is not None:
            scripts.setdefault(script, ch)
    if len(scripts) > 1 and not any(set(scripts) <= allowed for allowed in _TOGETHER):
        shown = ", ".join(f"{script} ({ch!r}, U+{ord(ch):04X})" for script, ch in scripts.items())
        raise BadInput(f"member name {normal!r} mixes the letters of several scripts: {shown}; a reader could "
                       "take it for another name; choose a name in one script")
    return normal


def member_skeleton(name: str) -> str:
    """What two names that a reader would take for one have in common: NFKC, case folded."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())


def member_name(name: str | None) -> str:
    """``name`` as a new member's name, normalised (:func:`normalise_member_name`: NFKC, no invisible
    characters, letters of one script): not empty, not a reserved name however it is spelled (its
    length is checked against the column with every other text, db.limits)."""
    name = normalise_member_name(require_text(name, "member name"))
    if member_skeleton(name) in RESERVED_NAMES:
        raise BadInput(f"{name!r} is reserved: opgov uses it for "
                       + ("requests without a token" if member_skeleton(name) == ANONYMOUS else "its own events")
                       + "; choose another member name")
    return name
