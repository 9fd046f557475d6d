"""``.opgov.toml``: the repository's policy for ``opgov check-pr`` (read with :mod:`tomllib`).

```toml
# opgov policy for this repository
registry = "aten/src/ATen/native/native_functions.yaml"   # the file check-pr compares
rules_file = "opgov/decomp_rules.yaml"                    # optional: decomposition rules (format 1)
default_branch = "main"                                   # optional: base of the merge base
decisions_file = "opgov-decisions.yaml"                   # optional: `opgov decisions export FILE`

[reviewers]
core_maintainers = ["alice", "pytorch/core-aten-maintainers"]   # GitHub logins or org/team
committee = ["pytorch/core-aten-committee"]

[rules]
except = ["operator-added"]                    # rule ids never reported
[rules.severity]                               # error | warning | info | off
native-function-added = "error"
[rules.ignore_only]                            # rule id → operator globs it ignores
core-schema-changed = ["aten::_foreach_*"]

[[allow]]                                      # BC breaks of non-core operators let through
operator = "aten::_nested_*"                   # a glob; or `regex = "..."` searched in the schema
schema = "int\\[\\] sizes"                      # optional: must be found in the old or new schema
reason = "nested tensor internals"
owner = "alice"
link = "https://github.com/pytorch/pytorch/issues/1"
expires = 2026-12-31                           # last day it applies

[[decision]]                                   # committee decisions on record
op = "aten::fused_rms_norm"
category = "core"
link = "https://github.com/pytorch/pytorch/issues/2"
```

Paths are relative to the directory holding ``.opgov.toml``. Every problem is one
:class:`BadInput` naming the file and, where it can be found, the line.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.core.prgate import PR_RULES, AllowEntry, Decision, Policy
from opgov.core.vocab import Category

CONFIG_NAME = ".opgov.toml"
DEFAULT_REGISTRY = "aten/src/ATen/native/native_functions.yaml"
CATEGORIES = tuple(Category)
_TOP = {"registry", "rules_file", "default_branch", "decisions_file", "reviewers", "rules", "allow", "decision"}
_ALLOW = {"operator", "regex", "schema", "reason", "owner", "link", "expires"}
_DECISION = {"op", "category", "link", "note"}
_SEVERITIES = ("error", "warning", "info", "off")


@dataclass(frozen=True)
class PolicyConfig:
    """A read ``.opgov.toml``: the :class:`Policy` and where things are."""

    path: Path | None  # None: no config file found (defaults)
    root: Path  # the directory paths are relative to
    registry: str
    rules_file: str | None
    default_branch: str | None
    decisions_file: str | None
    policy: Policy


def find_config(start: Path | None = None) -> Path | None:
    """``.opgov.toml`` in ``start`` (default: the working directory) or the nearest parent."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


class _Lines:
    """Finds the line of a key or a table in the TOML text (tomllib does not report them)."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def headers(self, name: str) -> list[int]:
        pattern = re.compile(rf"^\s*\[\[\s*{re.escape(name)}\s*\]\]")
        return [i + 1 for i, line in enumerate(self.lines) if pattern.match(line)]

    def key(self, key: str, start: int = 1, end: int | None = None) -> int | None:
        pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
        for i in range(start - 1, end if end is not None else len(self.lines)):
            if pattern.match(self.lines[i]):
                return i + 1
        return None

    def table(self, name: str) -> int | None:
        pattern = re.compile(rf"^\s*\[\s*{re.escape(name)}\s*\]")
        return next((i + 1 for i, line in enumerate(self.lines) if pattern.match(line)), None)


def _strings(value, what: str, file: str, line: int | None) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise BadInput(f"{what} must be a list of non-empty strings", file=file, line=line)
    return tuple(v.strip() for v in value)


def _text(value, what: str, file: str, line: int | None, *, required: bool = True) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{what} must be a non-empty string", file=file, line=line)
    return value.strip()


def _unknown(table: dict, allowed: set[str], what: str, file: str, lines: _Lines, start: int = 1,
             end: int | None = None) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise BadInput(f"unknown key {extra[0]!r} in {what} (allowed: {', '.join(sorted(allowed))})",
                       file=file, line=lines.key(extra[0], start, end) or lines.table(extra[0]))


MAX_CONFIG_BYTES = 1024 * 1024  # a policy is a few dozen lines; anything near this is not one


def read_policy_config(path: Path | None) -> PolicyConfig:
    """Read ``path`` (or the defaults when None). Raises :class:`BadInput` with file and line."""
    if path is None:
        return PolicyConfig(None, Path.cwd(), DEFAULT_REGISTRY, None, None, None, Policy())
    from opgov.formats.files import read_bytes

    raw = read_bytes(path, limit=MAX_CONFIG_BYTES + 1)  # one more: _config words the size
    return _config(raw, str(path), path)


def parse_policy_config(content: str | bytes, name: str) -> PolicyConfig:
    """:func:`read_policy_config` of a ``.opgov.toml`` already in memory: messages name it ``name``,
    and its paths are relative to the folder ``name`` is in."""
    return _config(content.encode("utf-8") if isinstance(content, str) else content, name, Path(name))


def _config(raw: bytes, file: str, path: Path) -> PolicyConfig:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason})", file=file) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise BadInput(f"is {len(raw):,} bytes; a policy file is at most {MAX_CONFIG_BYTES:,}", file=file)
    try:
        data = tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per level of nested arrays or inline tables
        raise BadInput("malformed TOML: nested too deeply", file=file) from None
    except tomllib.TOMLDecodeError as err:
        found = re.search(r"\(at line (\d+), column \d+\)", str(err))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(err)) or "malformed TOML"
        raise BadInput(f"malformed TOML: {message}", file=file, line=int(found.group(1)) if found else None) from None
    lines = _Lines(text)
    _unknown(data, _TOP, "the file", file, lines)

    def top_text(key: str) -> str | None:
        return _text(data.get(key), key, file, lines.key(key), required=False)

    registry = top_text("registry") or DEFAULT_REGISTRY

    reviewers = data.get("reviewers", {})
    if not isinstance(reviewers, dict):
        raise BadInput("[reviewers] must be a table", file=file, line=lines.key("reviewers"))
    start = lines.table("reviewers") or 1
    _unknown(reviewers, {"core_maintainers", "committee"}, "[reviewers]", file, lines, start)
    maintainers = _strings(reviewers.get("core_maintainers", []), "reviewers.core_maintainers", file,
                           lines.key("core_maintainers", start))
    committee = _strings(reviewers.get("committee", []), "reviewers.committee", file, lines.key("committee", start))

    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise BadInput("[rules] must be a table", file=file, line=lines.key("rules"))
    _unknown(rules, {"except", "severity", "ignore_only"}, "[rules]", file, lines, lines.table("rules") or 1)
    known = set(PR_RULES) | _compat_rule_ids()

    def rule_id(rid: str, line: int | None) -> str:
        if rid not in known:
            raise BadInput(f"unknown rule id {rid!r} (see `opgov check-pr --list-rules`)", file=file, line=line)
        return rid

    excepted = frozenset(rule_id(r, lines.key("except")) for r in
                         _strings(rules.get("except", []), "rules.except", file, lines.key("except")))
    severity: dict[str, str] = {}
    sev_table = rules.get("severity", {})
    if not isinstance(sev_table, dict):
        raise BadInput("[rules.severity] must be a table", file=file, line=lines.key("severity"))
    sev_start = lines.table("rules.severity") or 1
    for rid, value in sev_table.items():
        line = lines.key(rid, sev_start)
        rule_id(rid, line)
        if value not in _SEVERITIES:
            raise BadInput(f"severity of {rid} must be one of {', '.join(_SEVERITIES)}, got {value!r}",
                           file=file, line=line)
        severity[rid] = value
    ignore_only: dict[str, tuple[str, ...]] = {}
    ignore_table = rules.get("ignore_only", {})
    if not isinstance(ignore_table, dict):
        raise BadInput("[rules.ignore_only] must be a table", file=file, line=lines.key("ignore_only"))
    ign_start = lines.table("rules.ignore_only") or 1
    for rid, patterns in ignore_table.items():
        line = lines.key(rid, ign_start)
        ignore_only[rule_id(rid, line)] = _strings(patterns, f"rules.ignore_only.{rid}", file, line)

    allow = _allow_entries(data.get("allow", []), file, lines)
    decisions = _decisions(data.get("decision", []), file, lines)
    policy = Policy(core_maintainers=maintainers, committee=committee, severity=severity, excepted=excepted,
                    ignore_only=ignore_only, allow=allow, decisions=decisions, file=path.name)
    return PolicyConfig(path, path.parent, registry, top_text("rules_file"), top_text("default_branch"),
                        top_text("decisions_file"), policy)


def _compat_rule_ids() -> set[str]:
    from opgov.core import compat

    return {r.id for r in compat.RULES}


def _allow_entries(items, file: str, lines: _Lines) -> tuple[AllowEntry, ...]:
    if not isinstance(items, list):
        raise BadInput("'allow' must be an array of tables ([[allow]])", file=file, line=lines.key("allow"))
    headers = lines.headers("allow")
    entries = []
    for i, item in enumerate(items):
        start = headers[i] if i < len(headers) else None
        end = headers[i + 1] - 1 if i + 1 < len(headers) else None
        if not isinstance(item, dict):
            raise BadInput("each [[allow]] entry must be a table", file=file, line=start)
        _unknown(item, _ALLOW, "an [[allow]] entry", file, lines, start or 1, end)

        def at(key: str) -> int | None:
            return lines.key(key, start or 1, end) or start

        operator = _text(item.get("operator"), "operator", file, at("operator"), required=False)
        regex = _text(item.get("regex"), "regex", file, at("regex"), required=False)
        if operator is None and regex is None:
            raise BadInput("an [[allow]] entry needs 'operator' (a glob) or 'regex'", file=file, line=start)
        schema = _text(item.get("schema"), "schema", file, at("schema"), required=False)
        for key, pattern in (("regex", regex), ("schema", schema)):
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as err:
                    raise BadInput(f"{key} {pattern!r} is not a regular expression ({err})", file=file,
                                   line=at(key)) from None
        reason = _text(item.get("reason"), "reason (why the break is acceptable)", file, at("reason"))
        owner = _text(item.get("owner"), "owner (who answers for the entry)", file, at("owner"))
        link = _text(item.get("link"), "link", file, at("link"), required=False)
        expires = item.get("expires")
        if isinstance(expires, datetime):
            expires = expires.date()
        if not isinstance(expires, date):
            raise BadInput("expires must be a date (expires = 2026-12-31)", file=file, line=at("expires"))
        label = operator or f"regex {regex}"
        entries.append(AllowEntry(name=f"{Path(file).name}:{start} ({label})", operator=operator, regex=regex,
                                  schema=schema, reason=reason, owner=owner, link=link, expires=expires,
                                  file=Path(file).name, line=start))
    return tuple(entries)


def _decisions(items, file: str, lines: _Lines) -> tuple[Decision, ...]:
    from opgov.core.names import canonical

    if not isinstance(items, list):
        raise BadInput("'decision' must be an array of tables ([[decision]])", file=file, line=lines.key("decision"))
    headers = lines.headers("decision")
    out = []
    for i, item in enumerate(items):
        start = headers[i] if i < len(headers) else None
        end = headers[i + 1] - 1 if i + 1 < len(headers) else None
        if not isinstance(item, dict):
            raise BadInput("each [[decision]] must be a table", file=file, line=start)
        _unknown(item, _DECISION, "a [[decision]]", file, lines, start or 1, end)
        op_line = lines.key("op", start or 1, end) or start
        try:
            op = canonical(_text(item.get("op"), "op", file, op_line))
        except BadInput as err:
            raise BadInput(err.message, file=file, line=op_line) from None
        category = item.get("category")
        if category not in CATEGORIES:
            raise BadInput(f"category of {op} must be one of {', '.join(CATEGORIES)}, got {category!r}",
                           file=file, line=lines.key("category", start or 1, end) or start)
        out.append(Decision(op, category, f"{Path(file).name}:{start}"))
    return tuple(out)


def decisions_from_file(path: Path) -> tuple[Decision, ...]:
    """The decisions of an exported decisions file (``opgov decisions export``)."""
    from opgov.formats.decisions import read_decisions_file

    return tuple(Decision(r.op, r.category, f"{path.name}:{r.line}") for r in read_decisions_file(str(path)))


def load_config(config: str | None) -> PolicyConfig:
    """The policy of ``--config`` (a file), else of the .opgov.toml :func:`find_config` finds."""
    if config is not None:
        path = Path(config)
        if not path.is_file():
            raise BadInput("no such file", file=config)
        return read_policy_config(path)
    return read_policy_config(find_config())
