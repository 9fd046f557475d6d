"""What the registry holds now, as several use cases and the pages read it: the recorded
decomposition rules, each operator's category and lifecycle, the out= variants, the home page's
counts, the lifecycle steps coming due."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import func, select

from opgov.db.tables import decomp_rules, lifecycle_steps, operators, proposals, snapshots
from opgov.reads.common import Ctx, periods

if TYPE_CHECKING:
    from opgov.results.reports import LifecycleDue


def current_rules(session) -> dict[str, tuple[str, ...]]:
    """``{operator: targets}`` of every recorded rule."""
    return {r.operator: tuple(r.targets) for r in session.execute(select(decomp_rules.c.operator,
                                                                         decomp_rules.c.targets))}


def registry_state(session) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """(categories, lifecycles, operators tagged core in the latest snapshot) of the operators
    present now or deleted."""
    c = operators.c
    categories: dict[str, str] = {}
    lifecycles: dict[str, str] = {}
    tagged: set[str] = set()
    for name, category, lifecycle, tags, present in session.execute(
            select(c.qualname, c.category, c.lifecycle, c.tags, c.present)):
        if present or lifecycle == "deleted":
            categories[name], lifecycles[name] = category, lifecycle
            if present and tags and "core" in tags:
                tagged.add(name)
    return categories, lifecycles, tagged


def implicit_operators(session) -> set[str]:
    """The present operators whose kernel is CompositeImplicitAutograd (a decomposition)."""
    c = operators.c
    return set(session.scalars(select(c.qualname).where(c.present, c.composite_implicit)))


def out_variants(ctx: Ctx, names) -> dict[str, str]:
    """Functional operator → its out= variant, for ``names`` (ExecuTorch's kernels are the out=
    variants). Variants are grouped as torchgen groups them (:func:`opgov.core.schema.family_key`);
    an out= operator that only ``autogen:`` declares belongs to the entry that declares it."""
    from opgov.core.schema import FunctionSchema, family_key

    wanted = set(names)
    c = operators.c
    rows = ctx.session.execute(select(c.qualname, c.name, c.schema, c.kind, c.autogen_of).where(c.present)).all()
    bases = {name.split("::", 1)[1].split(".")[0].rstrip("_") for name in wanted}
    by_family: dict[tuple, str] = {}
    found: dict[str, str] = {}
    for qualname, name, schema, kind, autogen_of in rows:
        if kind != "out":
            continue
        if schema is None:
            if autogen_of in wanted:
                found.setdefault(autogen_of, qualname)
        elif name.rstrip("_") in bases:
            by_family.setdefault(family_key(FunctionSchema.parse(schema)), qualname)
    for qualname, name, schema, kind, _ in rows:
        if qualname in wanted and qualname not in found and schema is not None and kind == "functional":
            out = by_family.get(family_key(FunctionSchema.parse(schema)))
            if out is not None:
                found[qualname] = out
    return found


def home_counts(ctx: Ctx) -> dict[str, int]:
    """The home page's three numbers: present operators, core ones, open proposals."""
    c = operators.c
    present = ctx.session.execute(select(func.count()).where(c.present)).scalar_one()
    core = ctx.session.execute(select(func.count()).where(c.present, c.category == "core")).scalar_one()
    open_ = ctx.session.execute(select(func.count()).select_from(proposals)
                                .where(proposals.c.status == "open")).scalar_one()
    return {"operators": present, "core": core, "open_proposals": open_}


def snapshot_history(ctx: Ctx) -> tuple[str, ...]:
    """Every snapshot's label, in the order of history (the page's "waiting since" choices)."""
    s = snapshots.c
    return tuple(ctx.session.execute(select(s.label).order_by(s.position)).scalars())


PERIOD_DAYS = 7
"""The default length of the period: a week before ``as_of``."""


SOON_DAYS = 7
"""Lifecycle transitions and exceptions coming due within this many days after ``as_of``."""


def lifecycle_coming_due(ctx: Ctx, *, as_of: datetime | None = None,
                         since: datetime | None = None) -> tuple[LifecycleDue, ...]:
    """The lifecycle steps coming due as the weekly report for ``(since, as_of]`` lists them (default
    this week: the /queue page's list), from the last step each operator took by ``as_of``: those
    overdue (possible by ``since``), possible now (within the period), then those possible within
    :data:`SOON_DAYS` after ``as_of``, each group by date and operator."""
    from opgov.core.lifecycle import next_timed_step
    from opgov.results.reports import LifecycleDue

    as_of = as_of or ctx.now()
    since = since or as_of - timedelta(days=PERIOD_DAYS)
    o, step = operators.c, lifecycle_steps.c
    names = dict(ctx.session.execute(select(o.id, o.qualname)).all())
    last: dict[int, tuple] = {}
    reasons: dict[int, str] = {}
    for row in ctx.session.execute(select(step.operator_id, step.to_state, step.at, step.actor, step.reason)
                                   .where(step.at <= as_of).order_by(step.at, step.id)):
        last[row.operator_id] = row
        if row.to_state == "deprecating":
            reasons[row.operator_id] = row.reason or ""
    policy = periods(ctx)
    overdue, now, soon = [], [], []
    for op_id, row in last.items():
        due = next_timed_step(row.to_state, row.at, policy) if row.to_state in ("deprecating", "deprecated") else None
        if due is None:
            continue
        item = LifecycleDue(operator=names[op_id], from_state=due.state, to_state=due.to_state,
                            due_on=due.due_at.date(), previous_step_at=row.at, previous_step_actor=row.actor,
                            reason=row.reason or reasons.get(op_id, ""))
        if due.due_at <= since:
            overdue.append(item)
        elif due.due_at <= as_of:
            now.append(item)
        elif due.due_at <= as_of + timedelta(days=SOON_DAYS):
            soon.append(item)
    order = lambda item: (item.due_on, item.operator)  # noqa: E731 - as the report orders each list
    return tuple(sorted(overdue, key=order) + sorted(now, key=order) + sorted(soon, key=order))
