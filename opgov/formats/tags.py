"""Reading ``tags.yaml`` and declaring the governed tags in it, in the file's own style.

The sync bot (:mod:`opgov.services.sync`) declares ``core``, ``deprecating`` and ``deprecated``
when the edits of :mod:`opgov.core.yamlsync` use a tag the file does not declare yet. The file is
small, so PyYAML reads it; appending keeps every existing byte.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping

from opgov.core.errors import BadInput
from opgov.core.yamlsync import _TAG_RE, DEFAULT_TAG_DESCRIPTIONS, _split_lines

__all__ = ["declared_tags", "ensure_tags_declared"]


def _load_tags_yaml(tags_text: str, path: str) -> list[dict[str, object]]:
    from opgov.formats.safeyaml import load  # noqa: PLC0415  (no aliases, merge or duplicate keys)

    data, _ = load(tags_text, path)
    if data is None:
        return []
    if not isinstance(data, list) or not all(isinstance(x, dict) and "tag" in x for x in data):
        raise BadInput("expected a list of '- tag: NAME' items", file=path)
    return data


def declared_tags(tags_text: str, *, path: str = "tags.yaml") -> set[str]:
    """The tag names a tags.yaml text declares."""
    return {str(item["tag"]) for item in _load_tags_yaml(tags_text, path)}


def _tags_style(lines: list[str]) -> tuple[str, str]:
    """(indent of ``desc:`` under ``- tag:``, indent of the description body) as the file does it;
    the real files use two and ten spaces."""
    for i, line in enumerate(lines):
        stripped = line.lstrip(" ")
        if stripped.startswith("desc: |") and i + 1 < len(lines):
            body = lines[i + 1]
            key_indent = line[: len(line) - len(stripped)]
            body_indent = body[: len(body) - len(body.lstrip(" "))]
            if len(body_indent) > len(key_indent):
                return key_indent, body_indent
    return "  ", "          "


def ensure_tags_declared(tags_text: str, tags: Iterable[str],
                         descriptions: Mapping[str, str] | None = None, *,
                         path: str = "tags.yaml") -> tuple[str, list[str]]:
    """Declare every tag in ``tags`` that ``tags_text`` does not, appending ``- tag: NAME`` with a
    ``desc: |`` block in the file's own indentation. Returns the new text (``tags_text`` itself
    when nothing is missing) and the names added, in the order given.

    ``descriptions`` adds to or overrides :data:`DEFAULT_TAG_DESCRIPTIONS`. A tag already declared
    with an empty description, or one needing a description that none is given for, is
    :class:`BadInput`.
    """
    items = _load_tags_yaml(tags_text, path)
    have = {str(item["tag"]): item.get("desc") for item in items}
    descs = {**DEFAULT_TAG_DESCRIPTIONS, **(descriptions or {})}
    missing: list[str] = []
    for tag in tags:
        if not _TAG_RE.fullmatch(tag):
            raise BadInput(f"{tag!r} is not a valid tag name", file=path)
        if tag in have:
            if not have[tag] or not str(have[tag]).strip():
                raise BadInput(f"tag {tag} is declared without a description", file=path)
            continue
        if tag in missing:
            continue
        if not descs.get(tag, "").strip():
            raise BadInput(f"no description to declare tag {tag} with", file=path)
        missing.append(tag)
    if not missing:
        return tags_text, []

    lines, _ = _split_lines(tags_text)
    cr = "\r" if lines and lines[0].endswith("\r") else ""
    key_indent, body_indent = _tags_style(lines)
    width = 72
    block: list[str] = []
    for tag in missing:
        block.append(f"- tag: {tag}{cr}")
        block.append(f"{key_indent}desc: |{cr}")
        for para in descs[tag].strip().splitlines():
            wrapped = textwrap.wrap(para, width) or [""]
            block.extend(f"{body_indent}{w}{cr}" if w else cr for w in wrapped)
    prefix = tags_text
    if prefix and not prefix.endswith("\n"):
        prefix += cr + "\n"
    new_text = prefix + "\n".join(block) + "\n"
    added = declared_tags(new_text, path=path) - set(have)
    assert added == set(missing), (added, missing)
    return new_text, missing
