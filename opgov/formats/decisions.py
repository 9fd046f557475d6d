"""The historical-decisions file format (``opgov decisions load FILE``).

```yaml
# opgov decisions, format 1
source: core ATen opset review 2023      # recorded with every decision
decided_at: 2023-08-24                   # default date of every decision
decided_by: [core-aten-review-2023]      # who decided, default for every decision
decisions:
  - op: aten::ceil
    category: core                       # core | decomposable | custom
    rationale: Rounding is a primitive in ONNX and StableHLO ...
  - op: aten::log2
    category: decomposable
    into: [aten::log, aten::div.Scalar]  # decomposition targets (decomposable only)
    rationale: ...
    decided_at: 2023-09-01               # optional per decision
```
Pure: reads the file, checks it, reports problems with file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timezone

from opgov.core.errors import BadInput
from opgov.core.names import canonical
from opgov.core.vocab import Category
from opgov.formats.files import context, read_text, text_of

CATEGORIES = tuple(Category)


@dataclass(frozen=True)
class DecisionRecord:
    op: str
    category: str
    into: tuple[str, ...]
    rationale: str
    decided_at: datetime
    decided_by: list[str]
    source: str
    line: int


def _when(value, path: str, line: int) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, date):
        return datetime.combine(value, time(), tzinfo=timezone.utc)
    raise BadInput(f"decided_at must be a date, got {value!r}", file=path, line=line)


def _text(value, what: str, path: str, line: int) -> str:
    """A plain value written as text (``rationale: 42`` is the text "42"); a list or a mapping is
    refused."""
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        raise BadInput(f"{what} must be a single value, not a {type(value).__name__}", file=path, line=line)
    return str(value)


def _names(value, what: str, path: str, line: int) -> list[str]:
    """One name or a list of names (``decided_by: alice`` or ``decided_by: [alice, bob]``)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise BadInput(f"{what} must be a name or a list of names, got {value!r}", file=path, line=line)
    return [v.strip() for v in value]


def read_decisions_file(path: str) -> list[DecisionRecord]:
    """The records of a decisions file; a file without ``source:`` gives its path as the source."""
    return _records(read_text(path), str(path))


def parse_decisions(content: str | bytes, name: str) -> list[DecisionRecord]:
    """:func:`read_decisions_file` of a file already in memory (an upload): messages and the
    default ``source`` name it ``name``."""
    return _records(text_of(content, name), name)


def _records(text: str, path: str) -> list[DecisionRecord]:
    from opgov.formats.safeyaml import load  # noqa: PLC0415  (no aliases, merge or duplicate keys)

    data, root = load(text, path)
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        raise BadInput("expected a mapping with a 'decisions:' list", file=path, line=1)
    lines = []
    top = {key.value: key.start_mark.line + 1 for key, _ in root.value}
    for key, value in root.value:
        if key.value == "decisions":
            lines = [item.start_mark.line + 1 for item in value.value]
    source = _text(data.get("source"), "source", path, top.get("source", 1)).strip() or path
    default_when = data.get("decided_at")
    default_by = _names(data.get("decided_by") or ["imported"], "decided_by", path, top.get("decided_by", 1))
    records = []
    for index, item in enumerate(data["decisions"]):
        line = lines[index]
        if not isinstance(item, dict):
            raise BadInput("each decision must be a mapping with op, category and rationale", file=path, line=line)
        with context(path, line):
            op = canonical(_text(item.get("op"), "op", path, line))
        category = item.get("category")
        if not isinstance(category, str) or category not in CATEGORIES:
            raise BadInput(f"category of {op} must be one of {', '.join(CATEGORIES)}, got {category!r}",
                           file=path, line=line)
        rationale = _text(item.get("rationale"), f"the rationale of {op}", path, line).strip()
        if not rationale:
            raise BadInput(f"decision on {op} has no rationale", file=path, line=line)
        into = item.get("into") or []
        if not isinstance(into, list):
            raise BadInput(f"'into' of {op} must be a list of operators, got {into!r}", file=path, line=line)
        if category != "decomposable" and into:
            raise BadInput(f"'into' applies only to decomposable decisions ({op})", file=path, line=line)
        with context(path, line):
            targets = tuple(canonical(_text(t, f"a target of {op}", path, line)) for t in into)
        when = item.get("decided_at", default_when)
        if when is None:
            raise BadInput(f"decision on {op} has no decided_at (and the file sets none)", file=path, line=line)
        by = item["decided_by"] if "decided_by" in item else default_by
        records.append(DecisionRecord(op=op, category=category, into=targets, rationale=rationale,
                                      decided_at=_when(when, path, line),
                                      decided_by=_names(by, f"decided_by of {op}", path, line),
                                      source=source, line=line))
    return records


def dump_decisions(records: list[DecisionRecord], *, source: str) -> str:
    """The decisions file (format above) holding ``records``: what ``opgov decisions export``
    writes and ``read_decisions_file`` (and ``.opgov.toml``'s ``decisions_file``) reads back."""
    items = []
    for r in records:
        item = {"op": r.op, "category": r.category}
        if r.into:
            item["into"] = list(r.into)
        item.update({"rationale": r.rationale, "decided_at": r.decided_at.date(),
                     "decided_by": list(r.decided_by)})
        items.append(item)
    import yaml  # noqa: PLC0415  (only the export writes yaml)

    body = yaml.safe_dump({"source": source, "decisions": items}, sort_keys=False, allow_unicode=True, width=100)
    return "# opgov decisions, format 1 (written by `opgov decisions export`)\n" + body
