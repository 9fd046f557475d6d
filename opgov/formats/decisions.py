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

import yaml

from opgov.core.errors import BadInput
from opgov.core.names import canonical

CATEGORIES = ("core", "decomposable", "custom")


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


def read_decisions_file(path: str) -> list[DecisionRecord]:
    from opgov.formats.files import read_text

    text = read_text(path)
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        root = yaml.compose(text, Loader=loader)
        data = yaml.load(text, Loader=loader)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        raise BadInput(f"malformed YAML: {err.problem}", file=path, line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict) or not isinstance(data.get("decisions"), list):
        raise BadInput("expected a mapping with a 'decisions:' list", file=path, line=1)
    lines = []
    for key, value in root.value:
        if key.value == "decisions":
            lines = [item.start_mark.line + 1 for item in value.value]
    source = str(data.get("source") or path)
    default_when = data.get("decided_at")
    default_by = data.get("decided_by") or ["imported"]
    if isinstance(default_by, str):
        default_by = [default_by]
    records = []
    for index, item in enumerate(data["decisions"]):
        line = lines[index]
        if not isinstance(item, dict):
            raise BadInput("each decision must be a mapping with op, category and rationale", file=path, line=line)
        try:
            op = canonical(str(item.get("op", "")))
        except BadInput as err:
            raise BadInput(err.message, file=path, line=line) from None
        category = item.get("category")
        if category not in CATEGORIES:
            raise BadInput(f"category of {op} must be one of {', '.join(CATEGORIES)}, got {category!r}",
                           file=path, line=line)
        rationale = str(item.get("rationale") or "").strip()
        if not rationale:
            raise BadInput(f"decision on {op} has no rationale", file=path, line=line)
        into = item.get("into") or []
        if category != "decomposable" and into:
            raise BadInput(f"'into' applies only to decomposable decisions ({op})", file=path, line=line)
        try:
            targets = tuple(canonical(str(t)) for t in into)
        except BadInput as err:
            raise BadInput(err.message, file=path, line=line) from None
        when = item.get("decided_at", default_when)
        if when is None:
            raise BadInput(f"decision on {op} has no decided_at (and the file sets none)", file=path, line=line)
        by = item.get("decided_by", default_by)
        records.append(DecisionRecord(op=op, category=category, into=targets, rationale=rationale,
                                      decided_at=_when(when, path, line),
                                      decided_by=[by] if isinstance(by, str) else list(by), source=source, line=line))
    return records
