"""Lifecycle use cases: deprecate, mark-deprecated, delete, undeprecate, tick."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from opgov.db.models import LifecycleStep, Operator
from opgov.core.errors import BadInput, PolicyRefusal
from opgov.core.lifecycle import Periods, check_step, next_timed_step
from opgov.services.common import (Ctx, find_operator, get_int_setting, log_event, require, require_text,
                                   serialize)


def periods(ctx: Ctx) -> Periods:
    return Periods(deprecating_days=get_int_setting(ctx.session, "deprecating_days"),
                   deprecated_days=get_int_setting(ctx.session, "deprecated_days"))


def _step(ctx: Ctx, op: Operator, to_state: str, reason: str | None, replacement: str | None = None) -> dict[str, Any]:
    now = ctx.now()
    problem = check_step(op.lifecycle, to_state, op.lifecycle_since, now, periods(ctx))
    if problem:
        raise PolicyRefusal(f"{op.qualname} cannot become {to_state}: {problem}", subject=op.qualname)
    before = {"lifecycle": op.lifecycle, "since": op.lifecycle_since.isoformat() if op.lifecycle_since else None}
    from_state = op.lifecycle
    op.lifecycle, op.lifecycle_since = to_state, now
    if to_state == "deprecating":
        op.replacement = replacement
    elif to_state == "active":
        op.replacement = None
    ctx.session.add(LifecycleStep(operator_id=op.id, from_state=from_state, to_state=to_state, at=now,
                                  actor=ctx.actor, reason=reason, replacement=op.replacement))
    log_event(ctx, f"lifecycle.{to_state}", op.qualname, before=before,
              after={"lifecycle": to_state, "replacement": op.replacement}, reason=reason)
    ctx.session.flush()
    return {"operator": op.qualname, "from": from_state, "to": to_state, "at": now.isoformat(),
            "replacement": op.replacement, "next": _next_view(ctx, op)}


def _next_view(ctx: Ctx, op: Operator) -> dict[str, Any] | None:
    due = next_timed_step(op.lifecycle, op.lifecycle_since, periods(ctx))
    return None if due is None else {"to": due.to_state, "possible_from": due.due_at.isoformat()}


def deprecate(ctx: Ctx, op_name: str, *, reason: str, replacement: str | None = None) -> dict[str, Any]:
    reason = require_text(reason, "the reason")
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, op_name, lock=True)
    replacement_name = None
    if replacement:
        target = find_operator(ctx.session, replacement)
        if target.id == op.id:
            raise BadInput(f"{op.qualname} cannot replace itself")
        if target.lifecycle != "active":
            raise PolicyRefusal(f"replacement {target.qualname} is {target.lifecycle}")
        replacement_name = target.qualname
    require(ctx, "lifecycle", "change operator lifecycles")
    if op.category == "core" and replacement_name is None:
        raise PolicyRefusal(f"{op.qualname} is core: deprecating it needs --replacement (the operator models "
                            "should move to)")
    return _step(ctx, op, "deprecating", reason, replacement_name)


def mark_deprecated(ctx: Ctx, op_name: str, *, reason: str | None = None) -> dict[str, Any]:
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, op_name, lock=True)
    require(ctx, "lifecycle", "change operator lifecycles")
    return _step(ctx, op, "deprecated", reason)


def delete(ctx: Ctx, op_name: str, *, reason: str | None = None) -> dict[str, Any]:
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, op_name, lock=True)
    require(ctx, "lifecycle", "change operator lifecycles")
    return _step(ctx, op, "deleted", reason)


def undeprecate(ctx: Ctx, op_name: str, *, reason: str) -> dict[str, Any]:
    reason = require_text(reason, "the reason")
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, op_name, lock=True)
    require(ctx, "lifecycle", "change operator lifecycles")
    return _step(ctx, op, "active", reason)


def tick(ctx: Ctx, *, apply: bool = False, within_days: int = 0) -> dict[str, Any]:
    """Transitions due now, and those coming due within ``within_days``; ``apply`` performs the due
    ones. Each operator row is locked and re-checked before it moves, so two bots ticking at once
    never apply a transition twice."""
    if not 0 <= within_days <= 36500:
        raise BadInput(f"--within must be between 0 and 36500 days, got {within_days}")
    if apply:
        require(ctx, "tick", "apply due lifecycle transitions")
        serialize(ctx, "import", shared=True)
    now, policy = ctx.now(), periods(ctx)
    horizon = now + timedelta(days=within_days)
    due_now, coming, applied = [], [], []
    candidates = ctx.session.scalars(select(Operator).where(Operator.lifecycle.in_(("deprecating", "deprecated")))
                                     .order_by(Operator.qualname)).all()
    for op in candidates:
        due = next_timed_step(op.lifecycle, op.lifecycle_since, policy)
        if due is None:
            continue
        item = {"operator": op.qualname, "from": due.state, "to": due.to_state, "since": due.since.isoformat(),
                "due_at": due.due_at.isoformat(), "days_left": due.days_left(now)}
        if due.is_due(now):
            due_now.append(item)
        elif due.due_at <= horizon:
            coming.append(item)
    if apply:
        for item in due_now:
            locked = ctx.session.scalars(select(Operator).where(Operator.qualname == item["operator"])
                                         .with_for_update().execution_options(populate_existing=True)).one()
            if locked.lifecycle != item["from"]:
                continue  # another ticker moved it first
            _step(ctx, locked, item["to"], "due: applied by tick")
            applied.append(item)
    return {"now": now.isoformat(), "due": due_now, "within": coming, "applied": applied}
