"""The fast way to read native_functions.yaml: rapidyaml (``ryml``), when it is installed.

rapidyaml parses 2.13.0's file into a flat node array in a few milliseconds; this module walks
that array once, by index (the nodes of a freshly parsed tree are numbered in document order, so
a node's children follow it), and gives each entry what :mod:`opgov.formats.registry` needs of it:
``func``, ``tags``, the ``dispatch`` keys, ``autogen``, its top-level keys and their single values.

It accepts only what the libyaml path (:mod:`opgov.formats.safeyaml`) reads the same way, and
gives up — returns ``None``, and the caller reads the file with libyaml — on anything else:

* a parse error (libyaml then words it, with its line), rapidyaml not installed;
* an anchor, an alias, an explicit tag, a merge key (``<<``), a duplicate key, a null key, a
  second document, nesting deeper than :data:`opgov.formats.safeyaml.MAX_DEPTH`;
* a character libyaml refuses or counts as a line break that Python does not (NEL, LS, PS);
* a layout whose entry lines it cannot name exactly: each entry must start with ``-`` in the
  first column and have its content on that line (``- func: ...``), as every real file does.

To keep its memory small (a tree costs some six times the text it holds), the file is parsed
256 KiB of whole entries at a time (:func:`iter_entries`), each piece cut before an entry's ``-``
line; plain ASCII bytes are read as they are, without a decoded copy.

Entry lines come from those ``-`` lines, counted in the text: their number must equal the number
of entries the parser found, so every entry gets the exact line libyaml would give it. Lines of
keys inside an entry are not computed: they only ever appear in error messages, and any error
found on this path is reported by reading the file again with libyaml.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from typing import Iterator, NamedTuple

#: Characters libyaml refuses (outside its printable set) or counts as line breaks (compiled on
#: first use, for a text that is not ASCII: the pattern costs a few milliseconds to compile).
_UNUSUAL_PATTERN = "[^\t\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
_UNUSUAL_ASCII = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
_DASH_LINE = re.compile(r"^-[^\n]*", re.MULTILINE)
_DASH_LINE_BYTES = re.compile(rb"^-[^\n]*", re.MULTILINE)
_UNUSUAL_ASCII_BYTES = re.compile(b"[\x00-\x08\x0b-\x1f\x7f]")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})


class Entry(NamedTuple):
    """One ``- func:`` entry, as either reader gives it to the registry builder."""

    line: int
    func: str | None  # None: no func, or a null one
    tags: tuple[str, ...]
    dispatch: tuple[tuple[str, int], ...] | None  # the keys of a dispatch mapping (comma lists split)
    dispatch_bad_line: int | None  # the line of a dispatch that is neither a mapping nor null
    autogen: str | None
    keys: dict[str, int]  # top-level key → line
    scalars: dict[str, str]  # top-level keys with a single value → it


class GiveUp(Exception):
    """This path cannot read the file exactly as libyaml would: read it with libyaml."""


def _ryml():
    try:
        import ryml
    except ImportError:  # not installed, or built for another Python
        return None
    return ryml


def available() -> bool:
    return _ryml() is not None


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """rapidyaml's C++ error handler prints to file descriptor 2 before raising; the error is
    reported by libyaml instead, so that print is sent to /dev/null."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 2)
        finally:
            os.close(null)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def entries(text: str | bytes, max_depth: int) -> list[Entry] | None:
    """The entries of a native_functions.yaml ``text`` (or its bytes, when ASCII: no decoded copy
    is made), or ``None`` where libyaml must read it (see the module docstring)."""
    found = iter_entries(text, max_depth)
    if found is None:
        return None
    try:
        return list(found)
    except GiveUp:
        return None


#: The text rapidyaml parses at once: a tree costs some six times the text it holds, so a large
#: file is parsed a piece of whole entries at a time (each piece begins at an entry's ``-`` line).
CHUNK_CHARS = 256 * 1024


def iter_entries(text: str | bytes, max_depth: int) -> Iterator[Entry] | None:
    """:func:`entries`, given one at a time as pieces of the text are parsed: the iterator raises
    :class:`GiveUp` where libyaml must read the file; ``None`` where that is known at once."""
    ryml = _ryml()
    if isinstance(text, bytes):
        if not text.isascii():
            return None
        unusual, dash_line = _UNUSUAL_ASCII_BYTES, _DASH_LINE_BYTES
    else:
        unusual = _UNUSUAL_ASCII if text.isascii() else re.compile(_UNUSUAL_PATTERN)
        dash_line = _DASH_LINE
    if ryml is None or unusual.search(text) is not None:
        return None
    # the line of each entry: its "-" in the first column (checked against the parsed entries);
    # a "-" line without content on it ("-" alone, "- # note") is left to libyaml
    # (found with a search, not by splitting the text: a list of every line would cost twice the text)
    lines: list[int] = []
    starts: list[int] = []  # where each entry's line begins in the text
    number, last = 1, 0
    newline = "\n" if isinstance(text, str) else b"\n"
    for found in dash_line.finditer(text):
        content = found.group()
        if isinstance(content, bytes):
            content = content.decode("ascii")
        if len(content) == 1 or content[1] in " \t":
            rest = content[2:].lstrip(" \t")
            if not rest or rest[0] == "#":
                return None
            number += text.count(newline, last, found.start())
            last = found.start()
            lines.append(number)
            starts.append(last)
    return _pieces(ryml, text, max_depth, lines, starts)


def _pieces(ryml, text: str | bytes, max_depth: int, lines: list[int], starts: list[int]) -> Iterator[Entry]:
    """Parse and walk ``text`` a piece at a time (:data:`CHUNK_CHARS`), cut before entry lines.
    A cut inside something that spans lines (a quoted or flow value) leaves a piece rapidyaml
    refuses, and a document marker or a piece that is no list of entries gives up: libyaml reads it."""
    cuts = [0]  # the index in ``lines`` each piece begins with (the first also holds what precedes it)
    begin = 0
    for k in range(1, len(lines)):
        if starts[k] - begin >= CHUNK_CHARS:
            cuts.append(k)
            begin = starts[k]
    cuts.append(len(lines))
    for first, stop in zip(cuts, cuts[1:]):
        begin = 0 if first == 0 else starts[first]
        end = starts[stop] if stop < len(lines) else len(text)
        piece = text[begin:end]
        buf = bytearray(piece) if isinstance(piece, bytes) else bytearray(piece, "utf-8")  # the tree points into it
        del piece
        try:
            with _quiet_stderr():
                tree = ryml.parse_in_place(buf)
        except Exception:  # noqa: BLE001 - rapidyaml's exceptions; libyaml words the error
            raise GiveUp from None
        try:
            found = _walk(ryml, tree, max_depth, lines[first:stop])
        except (IndexError, KeyError):  # a tree not laid out as the walk expects
            raise GiveUp from None
        finally:
            del tree, buf
        yield from found


def _walk(ryml, tree, max_depth: int, lines: list[int]) -> list[Entry]:
    """One pass over the node array. The node types, keys and child counts are fetched with
    ``map`` over rapidyaml's C functions (no Python frame per node); values only where needed."""
    from itertools import repeat
    from sys import intern

    low = ryml._ryml  # the wrapper's C functions: its Python methods add a frame per call
    size = low.Tree_size(tree)
    if size == 0:
        raise GiveUp
    types = list(map(low.Tree_type, repeat(tree, size), range(size)))
    KEY, MAP, SEQ = ryml.KEY, ryml.MAP, ryml.SEQ
    CONTAINER = MAP | SEQ
    QUOTED = ryml.VAL_DQUO | ryml.VAL_SQUO | ryml.VAL_LITERAL | ryml.VAL_FOLDED
    KEY_QUOTED = ryml.KEY_DQUO | ryml.KEY_SQUO | ryml.KEY_LITERAL | ryml.KEY_FOLDED
    refused = (ryml.KEYANCH | ryml.VALANCH | ryml.KEYREF | ryml.VALREF | ryml.KEYTAG | ryml.VALTAG
               | ryml.DOC | (ryml.STREAM & ~ryml.SEQ))  # STREAM is a kind of SEQ: its own bit
    seen_flags = 0
    for flags in types:
        seen_flags |= flags
    if seen_flags & refused or not types[0] & SEQ:
        raise GiveUp
    with_key = [i for i, flags in enumerate(types) if flags & KEY]
    try:
        # interned: a few hundred distinct keys, repeated in every entry, are held once each
        keys = dict(zip(with_key, map(intern, map(str, map(low.Tree_key, repeat(tree, len(with_key)), with_key),
                                                  repeat("utf-8")))))
    except TypeError:  # a null key
        raise GiveUp from None
    containers = [i for i, flags in enumerate(types) if flags & CONTAINER]
    counts = dict(zip(containers, map(low.Tree_num_children, repeat(tree, len(containers)), containers)))
    Tree_val = low.Tree_val
    nulls = _NULLS

    def value(i: int, flags: int) -> tuple[str, bool]:
        """A scalar's text and whether YAML reads it as null."""
        raw = Tree_val(tree, i)
        if raw is None:
            return "", True
        text = str(raw, "utf-8")
        return text, not flags & QUOTED and text in nulls

    def unique(parent_keys: dict, i: int, flags: int) -> str:
        key = keys[i]
        if key in parent_keys or (key == "<<" and not flags & KEY_QUOTED):
            raise GiveUp
        parent_keys[key] = 0
        return key

    def skip(i: int, depth: int) -> int:
        """Past container ``i`` and everything in it, checking keys; ``depth`` is its own."""
        stack = [[counts[i], {} if types[i] & MAP else None]]
        i += 1
        while stack:
            top = stack[-1]
            if top[0] == 0:
                stack.pop()
                continue
            top[0] -= 1
            flags = types[i]
            if top[1] is not None:
                unique(top[1], i, flags)
            if flags & CONTAINER:
                if depth + len(stack) >= max_depth:
                    raise GiveUp
                stack.append([counts[i], {} if flags & MAP else None])
            i += 1
        return i

    found: list[Entry] = []
    if counts[0] != len(lines):
        raise GiveUp
    i = 1
    for line in lines:  # the entries
        if not types[i] & MAP:
            raise GiveUp  # libyaml words "expected a mapping with a 'func:' key"
        n = counts[i]
        i += 1
        entry_keys: dict[str, int] = {}
        scalars: dict[str, str] = {}
        tags: list[str] = []
        dispatch: list[tuple[str, int]] | None = None
        func = autogen = None
        dispatch_bad = False
        for _ in range(n):
            flags = types[i]
            key = keys[i]
            if key in entry_keys or (key == "<<" and not flags & KEY_QUOTED):
                raise GiveUp
            entry_keys[key] = line
            if not flags & CONTAINER:
                raw = Tree_val(tree, i)
                if raw is None:
                    text, null = "", True
                else:
                    text = str(raw, "utf-8")
                    null = not flags & QUOTED and text in nulls
                scalars[key] = text
                if key == "func":
                    func = None if null else text
                elif key == "tags":
                    if not null:
                        tags.extend(t.strip() for t in text.split(","))
                elif key == "autogen":
                    autogen = None if null else text
                elif key == "dispatch" and not null:
                    dispatch_bad = True
                i += 1
            elif key == "dispatch" and flags & MAP:
                dispatch = []
                seen: dict[str, int] = {}
                m = counts[i]
                i += 1
                for _ in range(m):
                    sub = types[i]
                    name = keys[i]
                    if name in seen or (name == "<<" and not sub & KEY_QUOTED):
                        raise GiveUp
                    seen[name] = 0
                    if "," in name:
                        dispatch.extend((k.strip(), line) for k in name.split(","))
                    else:
                        dispatch.append((name.strip(), line))
                    i = skip(i, 3) if sub & CONTAINER else i + 1
            elif key == "tags" and flags & SEQ:
                m = counts[i]
                i += 1
                for _ in range(m):
                    sub = types[i]
                    if sub & CONTAINER:
                        raise GiveUp  # "each tag must be a single value"
                    text, null = value(i, sub)
                    if not null:
                        tags.append(text.strip())
                    i += 1
            elif key in ("func", "autogen", "tags"):
                raise GiveUp  # "must be a single value": libyaml words it
            else:
                dispatch_bad = dispatch_bad or key == "dispatch"
                i = skip(i, 2)
        found.append(Entry(line, func, tuple(t for t in tags if t), None if dispatch is None else tuple(dispatch),
                           line if dispatch_bad else None, autogen, entry_keys, scalars))
    if i != size:  # not the tree this walk expects: leave it to libyaml
        raise GiveUp
    return found
