"""PyTorch's BC allow-list (``ALLOW_LIST`` in
``test/forward_backward_compatibility/check_forward_backward_compatibility.py``) as
``.opgov.toml`` ``[[allow]]`` entries.

The list holds tuples ``(name_regex, datetime.date(Y, M, D))`` and optionally a third element, a
regex the schema must also match. PyTorch searches both regexes in the schema's text
(``aten::name.overload(args) -> ret``) and ignores entries whose date has passed. The file is
read with :mod:`ast` (never executed); the comment above a group of entries becomes their reason.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from opgov.core.errors import BadInput


@dataclass(frozen=True)
class TorchAllowEntry:
    regex: str
    expires: date
    schema: str | None
    comment: str | None
    line: int


def _date(node: ast.expr, path: str) -> date:
    """``datetime.date(2022, 9, 1)`` / ``date(...)`` / ``datetime.datetime(...)``: its date."""
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        args = node.args
        if name in ("date", "datetime") and 3 <= len(args) and all(
                isinstance(a, ast.Constant) and isinstance(a.value, int) for a in args[:3]):
            try:
                return date(args[0].value, args[1].value, args[2].value)
            except ValueError as err:
                raise BadInput(f"not a valid date ({err})", file=path, line=node.lineno) from None
    raise BadInput("expected datetime.date(YEAR, MONTH, DAY) as the second element", file=path,
                   line=getattr(node, "lineno", None))


def _string(node: ast.expr, what: str, path: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            re.compile(node.value)
        except re.error as err:
            raise BadInput(f"{what} {node.value!r} is not a regular expression ({err})", file=path,
                           line=node.lineno) from None
        return node.value
    raise BadInput(f"expected a string ({what})", file=path, line=getattr(node, "lineno", None))


def read_torch_allowlist(path: str | Path, *, name: str = "ALLOW_LIST") -> list[TorchAllowEntry]:
    """The entries of ``name`` in the Python file ``path``, in order, with their lines."""
    path = str(path)
    from opgov.formats.files import read_bytes

    try:
        source = read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(f"cannot read as UTF-8 text ({getattr(err, 'reason', None) or err})", file=path) from None
    return _entries(source, path, name)


def parse_torch_allowlist(content: str | bytes, file: str, *, name: str = "ALLOW_LIST") -> list[TorchAllowEntry]:
    """:func:`read_torch_allowlist` of a Python file already in memory; messages name it ``file``."""
    if isinstance(content, bytes):
        try:
            content = content.decode("utf-8")
        except UnicodeDecodeError as err:
            raise BadInput(f"cannot read as UTF-8 text ({err.reason})", file=file) from None
        content = content.replace("\r\n", "\n").replace("\r", "\n")  # as reading the file does
    return _entries(content, file, name)


def _entries(source: str, path: str, name: str) -> list[TorchAllowEntry]:
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as err:
        raise BadInput(f"not Python: {err.msg}", file=path, line=err.lineno) from None
    value = None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            value = node.value
    if value is None:
        raise BadInput(f"no {name} = [...] at the top level", file=path)
    if not isinstance(value, ast.List):
        raise BadInput(f"{name} is not a list literal", file=path, line=value.lineno)
    lines = source.splitlines()
    entries: list[TorchAllowEntry] = []
    comment: str | None = None
    previous_end = value.lineno
    for item in value.elts:
        # the comment lines between the previous entry and this one describe this group
        between = [lines[i].strip() for i in range(previous_end, item.lineno - 1)]
        if "" in between:  # a blank line ends a commented group
            comment = None
        texts = [t.lstrip("#").strip() for t in between if t.startswith("#") and t.lstrip("#").strip()]
        if texts:
            comment = " ".join(texts)
        previous_end = item.end_lineno or item.lineno
        if not isinstance(item, ast.Tuple) or len(item.elts) not in (2, 3):
            raise BadInput(f"each {name} item must be (name_regex, datetime.date(...)[, schema_regex])",
                           file=path, line=item.lineno)
        regex = _string(item.elts[0], "name regex", path)
        expires = _date(item.elts[1], path)
        schema = _string(item.elts[2], "schema regex", path) if len(item.elts) == 3 else None
        entries.append(TorchAllowEntry(regex, expires, schema, comment, item.lineno))
    return entries


def _toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string is a TOML basic string


def to_toml(entries: list[TorchAllowEntry], *, source: str, owner: str, link: str | None = None) -> str:
    """``[[allow]]`` tables for ``entries``."""
    out: list[str] = []
    for e in entries:
        reason = f"PyTorch ALLOW_LIST ({source}:{e.line})" + (f": {e.comment}" if e.comment else "")
        out.append("[[allow]]")
        out.append(f"regex = {_toml_string(e.regex)}")
        if e.schema is not None:
            out.append(f"schema = {_toml_string(e.schema)}")
        out.append(f"reason = {_toml_string(reason)}")
        out.append(f"owner = {_toml_string(owner)}")
        if link:
            out.append(f"link = {_toml_string(link)}")
        out.append(f"expires = {e.expires.isoformat()}")
        out.append("")
    return "\n".join(out)


def convert(entries: list[TorchAllowEntry], *, today: date, include_expired: bool,
            existing: set[tuple[str, str | None]]) -> tuple[list[TorchAllowEntry], dict[str, int]]:
    """The entries to write: duplicates merged (the later expiry wins), entries already in the
    config skipped, and expired ones dropped unless asked for (PyTorch ignores them too)."""
    merged: dict[tuple[str, str | None], TorchAllowEntry] = {}
    duplicates = 0
    for e in entries:
        key = (e.regex, e.schema)
        if key in merged:
            duplicates += 1
            if e.expires > merged[key].expires:
                merged[key] = e
            continue
        merged[key] = e
    kept, expired, present = [], 0, 0
    for key, e in merged.items():
        if key in existing:
            present += 1
        elif e.expires < today and not include_expired:
            expired += 1
        else:
            kept.append(e)
    return kept, {"read": len(entries), "written": len(kept), "duplicates": duplicates, "expired": expired,
                  "already_present": present}
