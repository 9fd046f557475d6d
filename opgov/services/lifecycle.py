"""Lifecycle use cases: deprecate, mark-deprecated, delete, undeprecate, tick, and the upgraders'
180-day timers the tick reports."""

from __future__ import annotations

import dataclasses
import math
from datetime import timedelta

from sqlalchemy import select

from opgov.db.models import LifecycleStep, Operator
from opgov.core.errors import BadInput, PolicyRefusal
from opgov.core.lifecycle import check_step, check_within, next_timed_step
from opgov.reads.common import Ctx, find_operator, periods
from opgov.core.text import require_text
from opgov.services.common import log_event, require, serialize
from opgov.core.upgraders import replaceable_from
from opgov.results.lifecycle import (
    LifecycleStepResult, NextStep, Reference, TickItem, TickResult, UpgraderTimer, UpgraderTimers,
)
from opgov.reads.upgraders import bumps_of, recorded_upgraders


def family(session, op: Operator, *, lock: bool = False) -> list[Operator]:
    """The torchgen family of ``op``: the functional, in-place, out= (and other) variants that
    share its signature (:func:`opgov.core.schema.family_key`, as torchgen groups them), and the
    operators that only their ``autogen:`` declares. ``op`` first, then by name. The lifecycle
    moves a family together: torchgen rejects an out= variant whose functional sibling is gone."""
    from opgov.core.schema import FunctionSchema, family_key

    owner = op
    if op.schema is None and op.autogen_of:  # an autogen operator belongs to its declaring entry's family
        owner = session.scalars(select(Operator).where(Operator.qualname == op.autogen_of)).first() or op
    if owner.schema is None:
        return [op]
    key = family_key(FunctionSchema.parse(owner.schema))
    base = FunctionSchema.parse(owner.schema).name.base
    names = [base, f"{base}_", f"__{base}__", f"__i{base}__"]
    query = select(Operator).where(Operator.namespace == owner.namespace, Operator.name.in_(names))
    if lock:
        query = query.with_for_update()
    candidates = session.scalars(query).all()
    members = {c.qualname: c for c in candidates
               if c.schema is not None and family_key(FunctionSchema.parse(c.schema)) == key}
    for c in candidates:  # autogen operators of any member
        if c.schema is None and c.autogen_of in members:
            members[c.qualname] = c
    if candidates:
        autogen = session.scalars(select(Operator).where(Operator.autogen_of.in_(list(members)))).all()
        members.update({a.qualname: a for a in autogen})
    members.pop(op.qualname, None)
    # a member the registry dropped still moves with its family once the family is in the lifecycle
    # (a release that drops cholesky drops cholesky.out too: deleting one deletes both); one that
    # left long before, never deprecated, is history and stays out
    return [op, *sorted((m for m in members.values() if m.present or m.lifecycle != "active"),
                        key=lambda m: m.qualname)]


# how far along the lifecycle each state is: a reference whose own state is behind the step's is
# left behind by it (deprecating gelu leaves an active gelu_backward behind)
_ORDER = {"active": 0, "deprecating": 1, "deprecated": 2, "deleted": 3}
# the names torchgen and autograd give an operator's backward and forward-mode companions
_COMPANIONS = ("_backward", "_double_backward", "_jvp", "_backward_jvp")


def left_behind(session, moved: list[Operator], to_state: str) -> list[Reference]:
    """What still refers to the operators ``moved`` (a family) in the same native_functions.yaml,
    or in the decomposition rules, and stays behind the step to ``to_state``: their backward (and
    forward-mode) companions by torchgen's naming, entries whose ``structured_delegate:`` names one
    of them, operators an ``autogen:`` of theirs declares, and rules that decompose into them.
    Only operators the latest snapshot holds (a rule's operator, whatever it is), whose lifecycle is
    behind ``to_state``. Nothing for a step back to active."""
    from opgov.db.models import DecompRule

    if to_state == "active":
        return []
    names = {m.qualname for m in moved}
    bases = {(m.namespace, m.name) for m in moved}
    found: dict[tuple[str, str], Reference] = {}

    def add(op: Operator, relation: str, of: str) -> None:
        if op.qualname in names or not op.present or _ORDER[op.lifecycle] >= _ORDER[to_state]:
            return
        found.setdefault((op.qualname, relation), Reference(operator=op.qualname, relation=relation, of=of,
                                                             lifecycle=op.lifecycle))

    for namespace, base in sorted(bases):
        for other in session.scalars(select(Operator).where(Operator.namespace == namespace,
                                                            Operator.name.startswith(f"{base}_", autoescape=True))):
            suffix = other.name[len(base):]
            if suffix in _COMPANIONS:
                add(other, "backward" if "backward" in suffix else "forward-mode derivative", f"{namespace}::{base}")
    for other in session.scalars(select(Operator).where(Operator.delegate.in_(names))):
        add(other, "structured_delegate", other.delegate)
    for other in session.scalars(select(Operator).where(Operator.autogen_of.in_(names))):
        add(other, "autogen", other.autogen_of)
    for rule in session.scalars(select(DecompRule).order_by(DecompRule.operator)):
        hit = next((t for t in rule.targets if t in names), None)
        if hit is not None and rule.operator not in names:
            op = session.scalars(select(Operator).where(Operator.qualname == rule.operator)).first()
            if op is None or op.lifecycle == "deleted" or _ORDER[op.lifecycle] < _ORDER[to_state]:
                found.setdefault((rule.operator, "decomposition rule"), Reference(
                    operator=rule.operator, relation="decomposition rule", of=hit,
                    lifecycle=op.lifecycle if op is not None else None))
    return sorted(found.values(), key=lambda r: (r.operator, r.relation))


def _step(ctx: Ctx, op: Operator, to_state: str, reason: str | None, replacement: str | None = None) -> LifecycleStepResult:
    """Move ``op`` and its whole family (see :func:`family`) to ``to_state`` together, with one
    timer: every member is checked before any moves, and a refusal names the member."""
    now = ctx.now()
    # a member already there (moved alone by an older opgov) keeps its own timer; a deleted one is done
    members = [op] + [m for m in family(ctx.session, op, lock=True)[1:]
                      if m.lifecycle != to_state and m.lifecycle != "deleted"]
    for member in members:
        problem = check_step(member.lifecycle, to_state, member.lifecycle_since, now, periods(ctx))
        if problem:
            raise PolicyRefusal(f"{op.qualname} cannot become {to_state}: "
                                + (problem if member is op else
                                   f"{member.qualname}, of its family, cannot: {problem} (a family moves together)"),
                                subject=member.qualname)
    from_state = op.lifecycle
    behind = left_behind(ctx.session, members, to_state)
    for member in members:
        before = {"lifecycle": member.lifecycle,
                  "since": member.lifecycle_since.isoformat() if member.lifecycle_since else None}
        member_from = member.lifecycle
        member.lifecycle, member.lifecycle_since = to_state, now
        if to_state == "deprecating":
            member.replacement = replacement
        elif to_state == "active":
            member.replacement = None
        ctx.session.add(LifecycleStep(operator_id=member.id, from_state=member_from, to_state=to_state, at=now,
                                      actor=ctx.actor, reason=reason, replacement=member.replacement))
        after = {"lifecycle": to_state, "replacement": member.replacement}
        if member is not op:
            after["with"] = op.qualname
        else:
            after["family"] = [m.qualname for m in members[1:]]
            if behind:
                after["left_behind"] = [dataclasses.asdict(r) for r in behind]
        log_event(ctx, f"lifecycle.{to_state}", member.qualname, before=before, after=after, reason=reason)
    ctx.session.flush()
    return LifecycleStepResult(operator=op.qualname, from_state=from_state, to_state=to_state, at=now,
                               replacement=op.replacement, next=_next_view(ctx, op),
                               family=[m.qualname for m in members[1:]], left_behind=behind)


def _next_view(ctx: Ctx, op: Operator) -> NextStep | None:
    due = next_timed_step(op.lifecycle, op.lifecycle_since, periods(ctx))
    return None if due is None else NextStep(to=due.to_state, possible_from=due.due_at)


def deprecate(ctx: Ctx, name: str, *, reason: str, replacement: str | None = None) -> LifecycleStepResult:
    reason = require_text(reason, "the reason")
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, name, lock=True)
    replacement_name = None
    if replacement:
        target = find_operator(ctx.session, replacement)
        if target.id == op.id:
            raise BadInput(f"{op.qualname} cannot replace itself")
        # what models move to: an operator they can call now, and one a program holds after
        # functionalization
        if not target.present:
            raise PolicyRefusal(f"replacement {target.qualname} is not in the latest snapshot", subject=target.qualname)
        if target.lifecycle != "active":
            raise PolicyRefusal(f"replacement {target.qualname} is {target.lifecycle}", subject=target.qualname)
        if target.kind != "functional":
            raise PolicyRefusal(f"replacement {target.qualname} is {'an' if target.kind[0] in 'aeiou' else 'a'} "
                                f"{target.kind} variant; name a functional operator", subject=target.qualname)
        if target.qualname in {m.qualname for m in family(ctx.session, op)}:
            raise PolicyRefusal(f"replacement {target.qualname} is in the family of {op.qualname}, which is "
                                "deprecated with it", subject=target.qualname)
        replacement_name = target.qualname
    require(ctx, "lifecycle", "change operator lifecycles")
    if op.category == "core" and replacement_name is None:
        raise PolicyRefusal(f"{op.qualname} is core: deprecating it needs --replacement (the operator models "
                            "should move to)")
    return _step(ctx, op, "deprecating", reason, replacement_name)


def mark_deprecated(ctx: Ctx, name: str, *, reason: str | None = None) -> LifecycleStepResult:
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, name, lock=True)
    require(ctx, "lifecycle", "change operator lifecycles")
    return _step(ctx, op, "deprecated", reason)


def delete(ctx: Ctx, name: str, *, reason: str | None = None) -> LifecycleStepResult:
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, name, lock=True)
    require(ctx, "lifecycle", "change operator lifecycles")
    return _step(ctx, op, "deleted", reason)


def undeprecate(ctx: Ctx, name: str, *, reason: str) -> LifecycleStepResult:
    reason = require_text(reason, "the reason")
    serialize(ctx, "import", shared=True)
    op = find_operator(ctx.session, name, lock=True)
    require(ctx, "lifecycle", "change operator lifecycles")
    return _step(ctx, op, "active", reason)


def tick(ctx: Ctx, *, apply: bool = False, within_days: int = 0) -> TickResult:
    """Transitions due now, and those coming due within ``within_days``; ``apply`` performs the due
    ones. Each operator row is locked and re-checked before it moves, so two bots ticking at once
    never apply a transition twice."""
    check_within(within_days)
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
        item = TickItem(operator=op.qualname, from_state=due.state, to_state=due.to_state, since=due.since,
                        due_at=due.due_at, days_left=due.days_left(now))
        if due.is_due(now):
            due_now.append(item)
        elif due.due_at <= horizon:
            coming.append(item)
    if apply:
        from dataclasses import replace

        from opgov.core.clock import FixedClock

        ctx = replace(ctx, clock=FixedClock(now))  # the steps are taken at the tick's ``now``, as it answers
        moved: set[str] = set()  # members of a family moved with an operator applied before
        for item in due_now:
            if item.operator in moved:
                applied.append(item)
                continue
            locked = ctx.session.scalars(select(Operator).where(Operator.qualname == item.operator)
                                         .with_for_update().execution_options(populate_existing=True)).one()
            if locked.lifecycle != item.from_state:
                continue  # another ticker moved it first
            moved.update(_step(ctx, locked, item.to_state, "due: applied by tick").family)
            applied.append(item)
    return TickResult(now=now, due=due_now, within=coming, applied=applied)


def upgrader_timers(ctx: Ctx, *, within_days: int = 0) -> UpgraderTimers:
    """In-force upgraders whose 180 days after their bump have passed (they may be replaced now), and
    those whose 180 days end within ``within_days``."""
    now = ctx.now()
    horizon = now + timedelta(days=max(within_days, 0))
    bump_dates = bumps_of(ctx.session)
    due, within = [], []
    for u, _ in recorded_upgraders(ctx.session, bump_dates):
        if u.replaced_by is not None or u.bumped_on is None:
            continue
        ready = replaceable_from(u.bumped_on)
        left = max(0, math.ceil((ready - now).total_seconds() / 86400))
        timer = UpgraderTimer(name=u.name, operator=u.operator, bump=u.bumped_at, bumped_on=u.bumped_on,
                              replaceable_from=ready, days_left=left)
        if ready <= now:
            due.append(timer)
        elif ready <= horizon:
            within.append(timer)
    return UpgraderTimers(due=due, within=within)
