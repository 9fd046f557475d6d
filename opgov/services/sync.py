"""The sync bot: write governance (``core``, ``deprecating``, ``deprecated``, deleted entries) back
into native_functions.yaml, changing nothing else. The text editing is :mod:`opgov.yamlsync`."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import or_, select

from opgov.db.models import Operator
from opgov.errors import BadInput
from opgov.services.common import Ctx, log_event, require

LIFECYCLE_TAGS = {"deprecating": "deprecating", "deprecated": "deprecated"}


@dataclass
class SyncResult:
    file: str
    mode: str  # check | diff | write
    changes: list = field(default_factory=list)  # yamlsync.Change
    conflicts: list = field(default_factory=list)  # yamlsync.Conflict
    tags_declared: list[str] = field(default_factory=list)
    tags_file: str | None = None
    diff: str = ""
    written: bool = False

    @property
    def in_sync(self) -> bool:
        return not self.changes and not self.tags_declared


def desired_state(ctx: Ctx) -> dict:
    """What governance wants for every operator the latest snapshot holds, or that was deleted."""
    from opgov.yamlsync import Desired

    rows = ctx.session.execute(select(Operator.namespace, Operator.name, Operator.overload, Operator.schema,
                                      Operator.category, Operator.kind, Operator.lifecycle)
                               .where(or_(Operator.present, Operator.lifecycle == "deleted"))).all()
    desired = {}
    for r in rows:
        if r.namespace != "aten":
            continue
        func_name = f"{r.name}.{r.overload}" if r.overload else r.name
        tags = set()
        if r.category == "core":
            tags.add("core")
        if r.lifecycle in LIFECYCLE_TAGS:
            tags.add(LIFECYCLE_TAGS[r.lifecycle])
        desired[func_name] = Desired(func_name, r.schema, frozenset(tags), delete=r.lifecycle == "deleted")
    return desired


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        raise BadInput("no such file", file=path) from None
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason})", file=path) from None


def sync_yaml(ctx: Ctx, path: str, *, mode: str, tags_yaml: str | None = None) -> SyncResult:
    from opgov import yamlsync
    from opgov.services.common import latest_snapshot

    if mode not in ("check", "diff", "write"):
        raise BadInput(f"unknown mode {mode!r}")
    if mode == "write":
        require(ctx, "sync", "write native_functions.yaml")
    if latest_snapshot(ctx.session) is None:
        raise BadInput("the database holds no snapshot yet: run `opgov import` first")
    text = _read(path)
    plan = yamlsync.plan(text, desired_state(ctx), path=path)
    result = SyncResult(file=path, mode=mode, changes=list(plan.changes), conflicts=list(plan.conflicts),
                        tags_file=tags_yaml)
    new_tags_text = None
    if tags_yaml is not None:
        tags_text = _read(tags_yaml)
        used = {t for e in yamlsync.scan(plan.new_text, path=path) for t in e.governed_tags}
        new_tags_text, result.tags_declared = yamlsync.ensure_tags_declared(tags_text, sorted(used), path=tags_yaml)
        if result.tags_declared and mode == "diff":
            result.diff += yamlsync.unified_diff(tags_text, new_tags_text, tags_yaml)
    if mode == "diff":
        result.diff = yamlsync.unified_diff(text, plan.new_text, path) + result.diff
    if mode == "write" and not result.in_sync:
        from opgov.atomic import atomic_write_text

        if result.tags_declared:  # declare first: a file whose tags are undeclared must never exist
            atomic_write_text(tags_yaml, new_tags_text)
        if result.changes:
            atomic_write_text(path, plan.new_text)
        result.written = True
        log_event(ctx, "yaml.sync", f"file:{path}",
                  after={"changes": len(result.changes), "conflicts": len(result.conflicts),
                         "tags_declared": result.tags_declared})
    return result


def summary_markdown(result: SyncResult) -> str:
    """A summary fit for the bot's pull-request description."""
    groups: dict[str, list[str]] = {}
    for change in result.changes:
        if change.action == "delete-entry":
            key = "Entries deleted (lifecycle complete)"
        elif change.action == "add-tag":
            key = f"`{change.tag}` added"
        elif change.action == "remove-tag":
            key = f"`{change.tag}` removed"
        else:
            key = change.action
        groups.setdefault(key, []).append(f"`aten::{change.operator}` (line {change.line})")
    lines = [f"opgov sync: {len(result.changes)} change(s) to `{result.file}`"
             + (f", {len(result.tags_declared)} tag(s) declared in `{result.tags_file}`" if result.tags_declared else "")]
    for key, items in groups.items():
        lines.append(f"\n**{key}** ({len(items)})")
        lines.extend(f"- {item}" for item in items)
    if result.tags_declared:
        lines.append("\n**Tags declared**")
        lines.extend(f"- `{t}`" for t in result.tags_declared)
    if result.conflicts:
        lines.append(f"\n**Not settled: file and database disagree** ({len(result.conflicts)}; left untouched)")
        lines.extend(f"- `aten::{c.operator}`: {c.reason}" + (f" (line {c.line})" if c.line else "")
                     for c in result.conflicts)
    return "\n".join(lines)
