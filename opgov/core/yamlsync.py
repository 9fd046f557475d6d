"""Byte-preserving edits of ``native_functions.yaml`` (the sync bot's core).

The database is the source of truth for governance; PyTorch's build reads the YAML. This module
turns a desired state per operator into the smallest text edit that makes the file agree, and
touches nothing else: comments, blank lines, key order, quoting, other tags and the way an entry
spells its tags all stay. It is pure (text in, text out) and imports only the standard library;
declaring the governed tags in ``tags.yaml`` is :mod:`opgov.formats.tags`. It never YAML-loads
``native_functions.yaml``: a line scanner reads the few things it needs, which keeps ``opgov
sync-yaml --check`` fast.

What the scanner understands
    Every entry starts with a line ``- func: <schema>`` at column 0; its other keys are indented
    two spaces. An entry's *span* runs from its ``func:`` line to the line before the next entry;
    its *body* ends at the last indented line of the span that is neither blank nor a comment (the
    blank lines and comments after it belong to the gap before the next entry). ``tags:`` must be a
    plain name (``tags: core``) or a flow list (``tags: [core, pointwise]``), either optionally
    followed by a comment; ``autogen:`` is a comma-separated list of names. Anything else the
    scanner can notice (a list item that does not start with ``func:``, a duplicate operator, a
    tags value in another form) is :class:`~opgov.core.errors.BadInput` naming the file and line.

Governed tags
    Only ``core``, ``deprecating`` and ``deprecated`` (:data:`GOVERNED_TAGS`) are ever added or
    removed. Every other tag stays where it is.

How tags are written
    * An existing tags line keeps its spelling: the text before the value, the flow list's inner
      spacing and separator, the order of the tags already there and a trailing comment. New tags
      are appended at the end in the order ``core, deprecating, deprecated``.
    * A scalar stays a scalar while it holds one tag; it becomes a flow list when a second tag is
      added (``tags: pointwise`` → ``tags: [pointwise, core]``).
    * A flow list stays a flow list, even with one tag left: ``[core, pointwise]`` minus ``core``
      is ``[pointwise]``. (So ``tags: pointwise`` plus ``core`` and minus ``core`` again ends as
      ``tags: [pointwise]``: the file does not say which spelling came first.)
    * When the last tag goes, the whole ``tags:`` line goes (with its trailing comment, if any).
      Adding tags to an entry that had none and removing them again restores the original bytes.
    * An entry without tags gets ``  tags: NAME`` (several: ``  tags: [a, b]``) as a new line right
      after the last line of its body. That is where the file itself usually keeps it: in 2.13.0,
      777 of 901 tags lines are the entry's last key.

How an entry is deleted
    The ``func:`` line and the rest of the body go, together with the comment block directly
    above the ``func:`` line (comment lines with no blank line between them and the entry; they
    describe it). A comment block separated from the entry by a blank line stays (it is usually a
    section header or a note on several entries), and so does a column-0 comment block inside the
    body that a blank line separates from the lines above it (in the real files such blocks
    describe the *next* entry; a stray key line follows them). Comments after the body stay.
    Blank lines are then tidied where something was removed: a run of blank lines left touching a
    removed region shrinks to one blank line, or to none at the start or end of the file, so no
    double blank line is created. If a deleted operator is named in another entry's ``autogen:``,
    the name is removed from that list, and the ``autogen:`` line goes when it becomes empty.
    Deleting an entry also removes the operators its own ``autogen:`` declares.

Conflicts (reported, and the operator is left untouched)
    ``missing-in-file``: the desired state has an operator (not marked deleted) that the file
    lacks. ``missing-in-database``: the file has an operator (an entry, or a name in an
    ``autogen:`` list) that the desired state lacks. ``schema-differs``: the ``func:`` text differs
    from :attr:`Desired.schema`. ``autogen-tags``: governed tags are wanted on an operator that only
    ``autogen:`` declares, so there is no entry to carry them. ``autogen-blocked``: deleting the
    operator would need an edit to, or would remove, an operator that is itself in conflict or is
    not marked deleted. An operator marked deleted that the file no longer has is simply in sync.

Line numbers in :class:`Entry`, :class:`Change` and :class:`Conflict` are 1-based and refer to the
text given to :func:`scan` / :func:`plan`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from opgov.core.errors import BadInput

GOVERNED_TAGS: tuple[str, ...] = ("core", "deprecating", "deprecated")
"""The tags governance owns, in the order they are appended to a tags line."""

GOVERNED: frozenset[str] = frozenset(GOVERNED_TAGS)

DEFAULT_TAG_DESCRIPTIONS: Mapping[str, str] = {
    "core": (
        "This tag marks an operator as a member of the core ATen opset: the small, stable set of "
        "operators that graph capture (torch.export) produces and that backends are expected to "
        "implement. Operators outside the set decompose into core operators. Membership is "
        "decided by the core ATen opset governance process, not by hand."
    ),
    "deprecating": (
        "This tag marks an operator that governance has decided to retire. It still works, but "
        "tools such as torch.export should warn when a program uses it, and callers should move "
        "to its documented replacement before it becomes deprecated."
    ),
    "deprecated": (
        "This tag marks an operator whose retirement period has ended. Tools such as torch.export "
        "should refuse programs that use it; the operator is kept only so that old code fails "
        "with a clear message, and it will be removed in a later release."
    ),
}
"""Descriptions written into ``tags.yaml`` for the governed tags when they are not declared."""

_TAG_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNC_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)?")
# value, optional trailing comment (YAML needs whitespace before '#'), optional CR of a CRLF file
_KEY_VALUE_RE = re.compile(r"(?P<value>.*?)(?P<comment>[ \t]+#.*)?(?P<cr>\r?)")
_FLOW_RE = re.compile(r"\[(?P<lead>[ \t]*)(?P<inner>.*?)(?P<trail>[ \t]*)\]")
_SEP_RE = re.compile(r"[ \t]*,[ \t]*")
# The scanner searches "\n" + text with patterns that start at a newline (much faster than
# MULTILINE "^"): a match's start is then the offset of its line in the text.
# The lines it reads: entry starts and the two keys it edits.
_KEY_LINE_RE = re.compile(r"\n(- func|  tags|  autogen):(.*)")
# column 0 holds only '- func:', comments and blank lines; indentation is spaces
_BAD_LINE_RE = re.compile(r"\n(?:[^-#\s]|-(?! func:)|[\t\f\v]+[^\s])")
# an indented line that is neither blank nor a comment
_CONTENT_RE = re.compile(r"\n +[^\s#]")

Action = Literal["add-tag", "remove-tag", "delete-entry", "remove-autogen"]
ConflictKind = Literal[
    "missing-in-file", "missing-in-database", "schema-differs", "autogen-tags", "autogen-blocked",
    "family-split",  # reported by the sync service (opgov.services.sync), not by plan()
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``- func:`` entry as the scanner sees it (all line numbers 1-based)."""

    func: str
    """The schema text after ``func:``, exactly as written (surrounding spaces removed)."""
    name: str
    """The operator's func name: ``add.Tensor``, ``abs``."""
    line: int
    """The ``- func:`` line."""
    end_line: int
    """The last line of the body (the last indented line that is not blank or a comment)."""
    span_end: int
    """The last line before the next entry (or the last line of the file)."""
    tags: tuple[str, ...]
    tags_line: int | None
    autogen: tuple[str, ...]
    autogen_line: int | None

    @property
    def span(self) -> tuple[int, int]:
        """First and last line (inclusive) from this ``func:`` line up to the next entry."""
        return (self.line, self.span_end)

    @property
    def governed_tags(self) -> frozenset[str]:
        return GOVERNED.intersection(self.tags)


@dataclass(frozen=True, slots=True)
class Desired:
    """What governance wants for one operator, keyed by its func name (``add.Tensor``).

    ``schema`` is the ``func:`` text of the latest snapshot, compared with the file; ``None``
    skips the comparison (operators declared only by ``autogen:`` have no ``func:`` line).
    ``managed_tags`` is the complete set of governed tags the operator should carry.
    ``delete`` removes the operator from the file (its other fields are then not used).
    """

    func_name: str
    schema: str | None
    managed_tags: frozenset[str] = frozenset()
    delete: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.managed_tags) - GOVERNED
        if unknown:
            raise BadInput(
                f"tags {sorted(unknown)} are not governed (governed: {', '.join(GOVERNED_TAGS)})",
                subject=self.func_name,
            )
        if not isinstance(self.managed_tags, frozenset):
            object.__setattr__(self, "managed_tags", frozenset(self.managed_tags))


@dataclass(frozen=True, slots=True)
class Change:
    """One edit. ``line`` is the affected line of the old text: the tags line (or, when the entry
    has none yet, its ``func:`` line), the ``func:`` line of a deleted entry, or the ``autogen:``
    line a name is removed from. ``entry`` is the entry whose lines change."""

    operator: str
    action: Action
    tag: str | None
    line: int
    entry: str


@dataclass(frozen=True, slots=True)
class Conflict:
    """A disagreement the bot cannot settle; the operator is left untouched."""

    operator: str
    kind: ConflictKind
    reason: str
    line: int | None


@dataclass(frozen=True, slots=True)
class SyncPlan:
    new_text: str
    changes: tuple[Change, ...]
    conflicts: tuple[Conflict, ...]

    @property
    def in_sync(self) -> bool:
        """No edit is needed (conflicts may still exist)."""
        return not self.changes


# ----------------------------------------------------------------------------------- scanning


def _split_lines(text: str) -> tuple[list[str], bool]:
    """Lines without their ``\\n`` (a CR of CRLF stays on the line), and whether the text ends
    with a newline."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
        return lines, True
    return lines, False


def _join_lines(lines: list[str], final_newline: bool) -> str:
    if not lines:
        return ""
    return "\n".join(lines) + ("\n" if final_newline else "")


def _is_blank(line: str) -> bool:
    return not line or line.isspace()


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _parse_tags_value(value: str, path: str, lineno: int) -> tuple[str, ...]:
    if value.startswith("["):
        m = _FLOW_RE.fullmatch(value)
        if m is None:
            raise BadInput(f"cannot read tags value {value!r}", file=path, line=lineno)
        inner = m["inner"]
        tags = tuple(_SEP_RE.split(inner)) if inner else ()
    else:
        tags = (value,)
    for tag in tags:
        if not _TAG_RE.fullmatch(tag):
            raise BadInput(
                f"cannot read tags value {value!r} (expected a tag name or [a, b])",
                file=path, line=lineno,
            )
    return tags


def _parse_autogen_value(value: str, path: str, lineno: int) -> tuple[str, ...]:
    names = tuple(_SEP_RE.split(value))
    for name in names:
        if not _FUNC_NAME_RE.fullmatch(name):
            raise BadInput(
                f"cannot read autogen value {value!r} (expected a.out, b.out)",
                file=path, line=lineno,
            )
    return names


def _value(line: str) -> str:
    """A key's value without a trailing comment (YAML needs whitespace before ``#``)."""
    if "#" in line:
        m = _KEY_VALUE_RE.fullmatch(line)
        assert m is not None  # the pattern matches any string
        return m["value"].strip()
    return line.strip()


def _refuse_bad_line(text: str, path: str) -> None:
    """A list item that does not start with ``func:``, or text at column 0 that is not an entry or a
    comment: refused with its line."""
    bad = _BAD_LINE_RE.search("\n" + text)
    if bad is not None:
        lineno = text.count("\n", 0, bad.start()) + 1
        what = ("entry does not start with '- func:'" if text[bad.start()] == "-"
                else "expected '- func:', an indented key, a comment or a blank line")
        raise BadInput(what, file=path, line=lineno)


def _body_end(text: str, start_pos: int, first_line: int, stop_pos: int, stop_line: int) -> int:
    """The last line of the entry starting at ``start_pos`` (line ``first_line``) whose next one
    starts at ``stop_pos`` (line ``stop_line``): the last line before it that is neither blank nor a
    comment."""
    end = stop_pos - 1 if text[stop_pos - 1] == "\n" else stop_pos  # end of the line above
    end_line = stop_line
    while True:
        begin = text.rfind("\n", 0, end) + 1
        if begin <= start_pos:
            return first_line
        end_line -= 1
        stripped = text[begin:end].lstrip()
        if stripped and stripped[0] != "#":
            return end_line
        end = begin - 1


def _func_name(func: str, seen: dict[str, int], path: str, lineno: int) -> str:
    """The operator name of a ``func:`` value, refused when unreadable or a duplicate."""
    paren = func.find("(")
    name = func[:paren].strip() if paren > 0 else ""
    if not name or not _FUNC_NAME_RE.fullmatch(name):
        raise BadInput(f"cannot read an operator name from func: {func!r}", file=path, line=lineno)
    if name in seen:
        raise BadInput(f"duplicate operator {name} (first at line {seen[name]})", file=path, line=lineno)
    return name


def scan(text: str, *, path: str = "native_functions.yaml") -> list[Entry]:
    """The entries of a native_functions.yaml text, in file order.

    Raises :class:`BadInput` (with file and line) for what a line scanner can notice: a list item
    that does not start with ``func:``, text at column 0 that is not an entry or a comment, an
    empty or nameless schema, a duplicate func name, a ``tags:`` or ``autogen:`` value in a form
    it cannot read, or one of those keys twice in an entry.
    """
    _refuse_bad_line(text, path)
    src = "\n" + text
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    n = len(text)
    lineno = 1
    counted = 0  # text offset up to which newlines are counted into ``lineno``
    start_pos = -1  # offset of the current entry's func line
    func = name = ""
    first_line = 0
    tags: tuple[str, ...] = ()
    tags_line: int | None = None
    autogen: tuple[str, ...] = ()
    autogen_line: int | None = None
    for m in _KEY_LINE_RE.finditer(src):
        pos = m.start()
        lineno += text.count("\n", counted, pos)
        counted = pos
        key = m[1]
        if key == "- func":
            if start_pos < 0:
                head = _CONTENT_RE.search(src, 0, pos + 1)
                if head is not None:
                    raise BadInput("indented text before the first entry", file=path,
                                   line=text.count("\n", 0, head.start()) + 1)
            else:
                entries.append(Entry(func, name, first_line, _body_end(text, start_pos, first_line, pos, lineno),
                                     lineno - 1, tags, tags_line, autogen, autogen_line))
            func = _value(m[2])
            name = _func_name(func, seen, path, lineno)
            seen[name] = lineno
            start_pos = pos
            first_line = lineno
            tags, tags_line, autogen, autogen_line = (), None, (), None
        elif start_pos < 0:
            raise BadInput(f"{key.strip()}: before the first entry", file=path, line=lineno)
        elif key == "  tags":
            if tags_line is not None:
                raise BadInput(f"second tags: in entry {name}", file=path, line=lineno)
            tags = _parse_tags_value(_value(m[2]), path, lineno)
            tags_line = lineno
        else:
            if autogen_line is not None:
                raise BadInput(f"second autogen: in entry {name}", file=path, line=lineno)
            autogen = _parse_autogen_value(_value(m[2]), path, lineno)
            autogen_line = lineno
    if start_pos >= 0:
        lineno += text.count("\n", counted, n)
        if n and text[-1] != "\n":
            lineno += 1  # a last line without a newline
        entries.append(Entry(func, name, first_line, _body_end(text, start_pos, first_line, n, lineno),
                             lineno - 1, tags, tags_line, autogen, autogen_line))
    elif (head := _CONTENT_RE.search(src)) is not None:
        raise BadInput("indented text but no '- func:' entry", file=path,
                       line=text.count("\n", 0, head.start()) + 1)
    return entries


def desired_from_file(text: str, *, path: str = "native_functions.yaml") -> dict[str, Desired]:
    """The state a file expresses, as a desired state: planning with it changes nothing.

    Entries get their ``func:`` text and governed tags; names only ``autogen:`` declares get
    ``schema=None`` and no tags.
    """
    result: dict[str, Desired] = {}
    entries = scan(text, path=path)
    for e in entries:
        result[e.name] = Desired(e.name, e.func, e.governed_tags)
    for e in entries:
        for a in e.autogen:
            if a not in result:
                result[a] = Desired(a, None)
    return result


# ----------------------------------------------------------------------------------- planning


def _new_tags(current: tuple[str, ...], wanted: frozenset[str]) -> tuple[str, ...]:
    kept = tuple(t for t in current if t not in GOVERNED or t in wanted)
    return kept + tuple(t for t in GOVERNED_TAGS if t in wanted and t not in current)


def _render_list_line(line: str, key_len: int, items: tuple[str, ...]) -> str:
    """``line`` (a ``  tags:`` or ``  autogen:`` line) with its value replaced by ``items``,
    keeping the text before the value, the flow/scalar/comma style and a trailing comment."""
    m = _KEY_VALUE_RE.fullmatch(line, key_len)
    assert m is not None
    raw = m["value"]
    value = raw.strip()
    prefix = line[: key_len + len(raw) - len(raw.lstrip())]
    comment = m["comment"] or ""
    cr = m["cr"]
    flow = _FLOW_RE.fullmatch(value)
    if flow is not None:
        seps = _SEP_RE.findall(flow["inner"])
        sep = seps[0] if seps else ", "
        new_value = f"[{flow['lead']}{sep.join(items)}{flow['trail']}]"
    elif len(items) == 1:
        new_value = items[0]
    elif key_len == len("  autogen:"):
        seps = _SEP_RE.findall(value)
        new_value = (seps[0] if seps else ", ").join(items)
    else:
        new_value = f"[{', '.join(items)}]"
    trailing_ws = raw[len(raw.rstrip()):] if comment == "" else ""
    return f"{prefix}{new_value}{trailing_ws}{comment}{cr}"


def _new_tags_line(items: tuple[str, ...], cr: str) -> str:
    value = items[0] if len(items) == 1 else f"[{', '.join(items)}]"
    return f"  tags: {value}{cr}"


def plan(text: str, desired: Mapping[str, Desired], *,
         path: str = "native_functions.yaml") -> SyncPlan:
    """The edit that makes ``text`` agree with ``desired`` (see the module docstring).

    Planning again on ``plan(...).new_text`` with the same desired state yields no changes. When
    nothing changes, ``new_text`` is ``text`` itself.
    """
    entries = scan(text, path=path)
    by_name = {e.name: e for e in entries}
    declarers: dict[str, list[Entry]] = {}
    for e in entries:
        for a in e.autogen:
            if a not in by_name:
                declarers.setdefault(a, []).append(e)
    conflicts = _conflicts(entries, by_name, declarers, desired)
    deleting = _deleting(entries, by_name, declarers, desired, conflicts)
    removals, owners = _autogen_removals(declarers, desired, deleting, conflicts)
    changes = [Change(n, "remove-autogen", None, idx + 1, owners[idx].name)
               for idx, names in removals.items() for n in names]
    deletions: list[Entry] = []
    tag_edits: list[tuple[Entry, tuple[str, ...]]] = []
    for e in entries:
        if e.name in conflicts.ops:
            continue
        d = desired[e.name]
        if e.name in deleting:
            changes.append(Change(e.name, "delete-entry", None, e.line, e.name))
            deletions.append(e)
            continue
        if not e.tags and not d.managed_tags:
            continue  # the common case, decided without building sets
        have = e.governed_tags
        if have == d.managed_tags:
            continue
        where = e.tags_line if e.tags_line is not None else e.line
        changes += [Change(e.name, "remove-tag", t, where, e.name) for t in GOVERNED_TAGS
                    if t in have and t not in d.managed_tags]
        changes += [Change(e.name, "add-tag", t, where, e.name) for t in GOVERNED_TAGS
                    if t in d.managed_tags and t not in have]
        tag_edits.append((e, _new_tags(e.tags, d.managed_tags)))
    if not changes:
        return SyncPlan(text, (), tuple(conflicts.found))
    return SyncPlan(_edited(text, removals, owners, deletions, tag_edits), tuple(changes), tuple(conflicts.found))


class _Conflicts:
    """The conflicts found so far, and the operators they name."""

    def __init__(self) -> None:
        self.found: list[Conflict] = []
        self.ops: set[str] = set()

    def add(self, op: str, kind: ConflictKind, reason: str, line: int | None) -> None:
        self.found.append(Conflict(op, kind, reason, line))
        self.ops.add(op)


def _conflicts(entries: list[Entry], by_name: dict[str, Entry], declarers: dict[str, list[Entry]],
               desired: Mapping[str, Desired]) -> _Conflicts:
    """Where the file and the database disagree on what exists: an entry (or an operator only an
    autogen: declares) the database does not know, a schema that differs, tags on an operator only
    an autogen: declares, an operator of the database not in the file."""
    conflicts = _Conflicts()
    for e in entries:
        d = desired.get(e.name)
        if d is None:
            conflicts.add(e.name, "missing-in-database", "in the file but unknown to the database", e.line)
        elif d.schema is not None and d.schema != e.func:
            conflicts.add(e.name, "schema-differs",
                          f"schema in the file {e.func!r} differs from the database's {d.schema!r}", e.line)
    for a, decl in declarers.items():
        d = desired.get(a)
        first = decl[0]
        if d is None:
            conflicts.add(a, "missing-in-database", f"declared by autogen: of {first.name} but unknown to the database",
                          first.autogen_line)
        elif not d.delete and d.managed_tags:
            conflicts.add(a, "autogen-tags", f"only autogen: of {first.name} declares it, so it cannot carry tags "
                          f"{sorted(d.managed_tags)}", first.autogen_line)
    for op, d in desired.items():
        if not d.delete and op not in by_name and op not in declarers:
            conflicts.add(op, "missing-in-file", "known to the database but not in the file", None)
    return conflicts


def _deleting(entries: list[Entry], by_name: dict[str, Entry], declarers: dict[str, list[Entry]],
              desired: Mapping[str, Desired], conflicts: _Conflicts) -> dict[str, Entry]:
    """The entries to delete; one whose autogen: declares an operator that would be lost with it
    (in conflict, or not marked deleted) is a conflict instead."""
    deleting: dict[str, Entry] = {
        e.name: e for e in entries
        if e.name not in conflicts.ops and (d := desired.get(e.name)) is not None and d.delete
    }
    for name, e in list(deleting.items()):
        for a in e.autogen:
            if a in by_name:
                continue
            d = desired.get(a)
            survivors = [x for x in declarers.get(a, ()) if x.name not in deleting]
            if survivors or (d is not None and d.delete and a not in conflicts.ops):
                continue
            why = "is in conflict" if a in conflicts.ops else "the database does not mark deleted"
            conflicts.add(name, "autogen-blocked", f"deleting it would remove {a} (declared by its autogen:), which {why}",
                          e.line)
            del deleting[name]
            break
    return deleting


def _autogen_removals(declarers: dict[str, list[Entry]], desired: Mapping[str, Desired],
                      deleting: dict[str, Entry], conflicts: _Conflicts) -> tuple[dict[int, list[str]], dict[int, Entry]]:
    """The autogen-only operators marked deleted, removed from every surviving declaration:
    (0-based autogen: line → the names to remove, 0-based autogen: line → its entry)."""
    removals: dict[int, list[str]] = {}
    owners: dict[int, Entry] = {}
    for a, decl in declarers.items():
        d = desired.get(a)
        if d is None or not d.delete or a in conflicts.ops:
            continue
        survivors = [x for x in decl if x.name not in deleting]
        blocked = [x.name for x in survivors if x.name in conflicts.ops]
        if blocked:
            conflicts.add(a, "autogen-blocked", f"declared by autogen: of {', '.join(blocked)}, which is in conflict",
                          decl[0].autogen_line)
            continue
        for x in survivors:
            assert x.autogen_line is not None
            removals.setdefault(x.autogen_line - 1, []).append(a)
            owners[x.autogen_line - 1] = x
    return removals, owners


def _edited(text: str, removals: dict[int, list[str]], owners: dict[int, Entry], deletions: list[Entry],
            tag_edits: list[tuple[Entry, tuple[str, ...]]]) -> str:
    """The edits rendered on the lines of the text."""
    lines, final_newline = _split_lines(text)
    cr = "\r" if lines and lines[0].endswith("\r") else ""
    replace: dict[int, str | None] = {}  # 0-based line index -> new text (None: drop the line)
    insert_after: dict[int, str] = {}
    delete_lines: set[int] = set()
    for idx, names in removals.items():
        remaining = tuple(n for n in owners[idx].autogen if n not in names)
        replace[idx] = _render_list_line(lines[idx], 10, remaining) if remaining else None
    for e in deletions:
        delete_lines.update(_entry_deletion(lines, e))
    for e, new in tag_edits:
        if e.tags_line is None:
            insert_after[e.end_line - 1] = _new_tags_line(new, cr)
        elif new:
            replace[e.tags_line - 1] = _render_list_line(lines[e.tags_line - 1], 7, new)
        else:
            replace[e.tags_line - 1] = None
    return _join_lines(_apply(lines, replace, insert_after, delete_lines), final_newline)


def _entry_deletion(lines: list[str], e: Entry) -> list[int]:
    """0-based indices removed with entry ``e``: the comment block attached above it and its
    body, except column-0 comment blocks inside the body that follow a blank line."""
    start, end = e.line - 1, e.end_line - 1
    lead = start
    while lead > 0 and _is_comment(lines[lead - 1]):
        lead -= 1
    out = list(range(lead, start + 1))
    keeping = False
    for j in range(start + 1, end + 1):
        line = lines[j]
        if line.startswith("#") and (keeping or _is_blank(lines[j - 1])):
            keeping = True
            continue
        keeping = False
        out.append(j)
    return out


def _apply(lines: list[str], replace: Mapping[int, str | None], insert_after: Mapping[int, str],
           delete_lines: set[int]) -> list[str]:
    out: list[str] = []
    seams: list[int] = []  # positions in ``out`` where deleted entry lines were
    pos = 0
    for i in sorted(set(replace) | set(insert_after) | delete_lines):
        out.extend(lines[pos:i])
        pos = i + 1
        if i in delete_lines:
            if not seams or seams[-1] != len(out):
                seams.append(len(out))
            continue
        new = replace.get(i, lines[i])
        if new is not None:
            out.append(new)
        if i in insert_after:
            out.append(insert_after[i])
    out.extend(lines[pos:])
    if not seams:
        return out
    # tidy blank lines around removed entries
    drop: set[int] = set()
    for p in seams:
        a = p
        while a > 0 and _is_blank(out[a - 1]):
            a -= 1
        b = p
        while b < len(out) and _is_blank(out[b]):
            b += 1
        keep = 0 if a == 0 or b == len(out) else 1
        drop.update(range(a + keep, b))
    return [line for k, line in enumerate(out) if k not in drop] if drop else out


# ----------------------------------------------------------------------------------- diffs


def unified_diff(old_text: str, new_text: str, path: str) -> str:
    """A unified diff (``a/PATH`` → ``b/PATH``, three lines of context) as ``git diff`` shows it;
    empty when the texts are equal."""
    if old_text == new_text:
        return ""
    old = old_text.splitlines(keepends=True)
    new = new_text.splitlines(keepends=True)
    label = path.lstrip("/")
    parts: list[str] = []
    for line in difflib.unified_diff(old, new, f"a/{label}", f"b/{label}"):
        parts.append(line)
        if not line.endswith("\n"):
            parts.append("\n\\ No newline at end of file\n")
    return "".join(parts)
