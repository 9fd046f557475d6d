"""Decomposition rules in the database, their checks, the opset builder and model checks.
The logic is pure (:mod:`opgov.decomps`, :mod:`opgov.opset`, :mod:`opgov.corpus`); this module
feeds it from the database and records rule changes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import select

from opgov.db.models import DecompRule, Operator, Snapshot, SnapshotEntry
from opgov.errors import BadInput, PolicyRefusal
from opgov.services.common import Ctx, find_snapshot, get_int_setting, log_event, require

# A rule recorded by a committee decision outranks one from a rules file, which outranks one
# derived from torch's decomposition table.
PRECEDENCE = {"decision": 3, "file": 2, "torch": 1}


def current_rules(session) -> dict[str, tuple[str, ...]]:
    return {r.operator: tuple(r.targets) for r in session.scalars(select(DecompRule))}


def registry_state(session) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """(categories, lifecycles, operators tagged core in the latest snapshot) of the operators
    present now or deleted."""
    rows = session.execute(select(Operator.qualname, Operator.category, Operator.lifecycle, Operator.tags,
                                  Operator.present)).all()
    live = [r for r in rows if r.present or r.lifecycle == "deleted"]
    return ({r.qualname: r.category for r in live}, {r.qualname: r.lifecycle for r in live},
            {r.qualname for r in live if r.present and "core" in (r.tags or [])})


def refuse_if_breaks(session, changes: list, *, what: str) -> None:
    """Refuse (with the path) a change that would make a decomposition produce a non-core operator."""
    from opgov.decomps import would_break

    categories, lifecycle, _ = registry_state(session)
    broken = would_break(current_rules(session), categories, changes, lifecycle=lifecycle)
    if broken:
        first = broken[0]
        more = f" (and {len(broken) - 1} more)" if len(broken) > 1 else ""
        raise PolicyRefusal(f"{what} would break a decomposition: {first.message}{more}", subject=first.operator)


def _upsert(ctx: Ctx, op: str, targets: list[str], source: str, detail: str) -> str:
    """Record a rule unless one of higher precedence exists. Returns added/updated/unchanged/kept."""
    rule = ctx.session.scalars(select(DecompRule).where(DecompRule.operator == op)).first()
    if rule is None:
        ctx.session.add(DecompRule(operator=op, targets=targets, source=source, source_detail=detail,
                                   created_at=ctx.now(), created_by=ctx.actor))
        return "added"
    if PRECEDENCE[rule.source] > PRECEDENCE[source]:
        return "kept"
    if list(rule.targets) == targets and rule.source == source:
        return "unchanged"
    rule.targets, rule.source, rule.source_detail = targets, source, detail
    rule.created_at, rule.created_by = ctx.now(), ctx.actor
    return "updated"


def load_rules(ctx: Ctx, path: str) -> dict[str, Any]:
    from opgov.decomps import RuleChange, load_rules_file

    require(ctx, "decomps", "change decomposition rules")
    rules_file = load_rules_file(path)
    known = set(ctx.session.scalars(select(Operator.qualname)))
    for rule in rules_file.rules:
        for name in (rule.op, *rule.into):
            if name not in known:
                raise BadInput(f"unknown operator {name} (rule for {rule.op})", file=path, line=rule.line)
    existing = ctx.session.scalars(select(DecompRule)).all()
    higher = {r.operator for r in existing if r.source == "decision"}
    changes = [RuleChange(r.op, r.into) for r in rules_file.rules if r.op not in higher]
    refuse_if_breaks(ctx.session, changes, what=f"loading {path}")
    counts: dict[str, int] = {}
    detail = f"{rules_file.source} ({path})"
    for rule in rules_file.rules:
        outcome = _upsert(ctx, rule.op, list(rule.into), "file", detail)
        counts[outcome] = counts.get(outcome, 0) + 1
    log_event(ctx, "decomps.load", f"file:{path}", after={"source": rules_file.source, **counts})
    return {"file": path, "source": rules_file.source, "rules": len(rules_file.rules), **counts}


def import_torch_rules(ctx: Ctx, *, time_budget_s: float = 50.0) -> dict[str, Any]:
    """Record the rules observed by tracing torch.export's default decomposition table."""
    from opgov.torch_decomps import torch_decomposition_rules

    require(ctx, "decomps", "change decomposition rules")
    known = set(ctx.session.scalars(select(Operator.qualname)))
    found = torch_decomposition_rules(time_budget_s=time_budget_s)
    counts: dict[str, int] = {}
    untraced, unknown = [], []
    import torch

    detail = f"torch {torch.__version__} default decomposition table, traced"
    for rule in found:
        if rule.op not in known:
            unknown.append(rule.op)
            continue
        if rule.into is None:
            untraced.append({"operator": rule.op, "reason": rule.reason})
            continue
        targets = [t for t in rule.into if t in known]
        outcome = _upsert(ctx, rule.op, targets, "torch", detail)
        counts[outcome] = counts.get(outcome, 0) + 1
    log_event(ctx, "decomps.import_torch", "torch", after={"table": len(found), **counts,
                                                            "untraced": len(untraced)})
    return {"table": len(found), **counts, "untraced": untraced, "not_in_registry": unknown}


def list_rules(ctx: Ctx) -> list[dict[str, Any]]:
    return [{"operator": r.operator, "into": list(r.targets), "source": r.source, "detail": r.source_detail,
             "recorded_at": r.created_at.isoformat(), "by": r.created_by}
            for r in ctx.session.scalars(select(DecompRule).order_by(DecompRule.operator))]


def check_decompositions(ctx: Ctx) -> list:
    from opgov.decomps import check

    categories, lifecycle, tagged = registry_state(ctx.session)
    present = set(ctx.session.scalars(select(Operator.qualname).where(Operator.present)))
    yaml_core = {name: name in tagged for name in present}
    return check(current_rules(ctx.session), categories, lifecycle, yaml_core)


def build(ctx: Ctx, *, preset: str, decompose: list[str], keep: list[str], models: str | None):
    from opgov.corpus import load_corpus, merge_models
    from opgov.opset import OpInfo, build_opset, coverage

    rows = ctx.session.execute(select(Operator.qualname, Operator.category, Operator.lifecycle, Operator.kind)
                               .where(Operator.present)).all()
    operators = {r.qualname: OpInfo(r.category, r.lifecycle, r.kind) for r in rows}
    if not operators:
        raise BadInput("the database holds no snapshot yet: run `opgov import` first")
    rules = current_rules(ctx.session)
    opset = build_opset(operators=operators, rules=rules, preset=preset, decompose=decompose, keep=keep)
    cov = None
    if models:
        path = Path(models)
        files = sorted(path.glob("*_ops.json")) if path.is_dir() else [path]
        if not files or not all(f.is_file() for f in files):
            raise BadInput(f"{models}: no corpus file (a *_ops.json file, or a folder of them)")
        cov = coverage(opset, merge_models([load_corpus(f) for f in files]), rules)
    return opset, cov


def corpora_dir() -> Path | None:
    value = os.environ.get("OPGOV_MODELS_DIR")
    return Path(value) if value else None


def check_model(ctx: Ctx, spec: str, *, runtime: str | None = None):
    from opgov.corpus import OpState, check_model as check, resolve_model_ops

    ops = resolve_model_ops(spec, corpora_dir=corpora_dir())
    session = ctx.session
    state = {r.qualname: OpState(r.category, r.lifecycle,
                                 r.lifecycle_since if r.lifecycle == "deprecating" else None, r.replacement)
             for r in session.execute(select(Operator.qualname, Operator.category, Operator.lifecycle,
                                             Operator.lifecycle_since, Operator.replacement))}
    snapshots = []
    for snap in session.scalars(select(Snapshot).order_by(Snapshot.id)):
        names = set(session.scalars(select(Operator.qualname).join(SnapshotEntry, SnapshotEntry.operator_id == Operator.id)
                                    .where(SnapshotEntry.snapshot_id == snap.id)))
        snapshots.append((snap.label, names))
    runtime_ops = None
    if runtime is not None:
        label = find_snapshot(session, runtime).label
        runtime_ops = next(names for lbl, names in snapshots if lbl == label)
    return check(ops, state=state, runtime_ops=runtime_ops,
                 deprecating_period_days=get_int_setting(session, "deprecating_days"), snapshots=snapshots,
                 runtime_label=f"snapshot {runtime}" if runtime else "the runtime")
