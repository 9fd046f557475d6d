"""The weekly committee report: fill :class:`opgov.report.WeeklyReport` from the database.

The period is ``[since, as_of]``; ``since`` defaults to seven days before ``as_of``. Sections
that describe what happened (decided proposals, compatibility findings, removals) take the
snapshots and events of the period; sections that describe what waits (the review queue, open
proposals, lifecycle timers, exceptions) are read from the current state, with timers measured
against ``as_of``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select

from opgov.db.models import (BcException, Finding, LifecycleStep, Operator, Proposal, Snapshot, SnapshotEntry)
from opgov.lifecycle import next_timed_step
from opgov.report import (CategoryCounts, CompatFinding, DecidedProposal, DeprecatedOp, ExceptionEntry,
                          LifecycleCounts, LifecycleDue, OpenProposal, OpsetNow, RemovedOp, ReviewItem, SnapshotRef,
                          TrendPoint, Vote, WeeklyReport)
from opgov.services.common import Ctx, get_int_setting
from opgov.services.lifecycle import periods

SOON_DAYS = 7
SUGGESTION_REASONS = {
    "core": "tagged core in native_functions.yaml",
    "decomposable": "its kernel is CompositeImplicitAutograd: a decomposition already exists",
    "custom": "it has kernels of its own and no decomposition",
}


def weekly_report(ctx: Ctx, *, as_of: datetime | None = None, since: datetime | None = None) -> WeeklyReport:
    session = ctx.session
    as_of = as_of or ctx.now()
    since = since or as_of - timedelta(days=7)
    snapshots = session.scalars(select(Snapshot).order_by(Snapshot.id)).all()
    by_id = {s.id: s for s in snapshots}

    review_queue = []
    for op in session.scalars(select(Operator).where(Operator.present, Operator.needs_review)):
        first = by_id[op.first_snapshot_id]
        suggested = op.category  # not yet decided: the import heuristic's category
        review_queue.append(ReviewItem(operator=op.qualname, schema_text=op.schema or "(autogen)",
                                       first_seen=SnapshotRef(label=first.label, imported_at=first.imported_at),
                                       suggested_category=suggested, suggestion_reason=SUGGESTION_REASONS[suggested]))

    quorum = get_int_setting(session, "quorum")
    proposals_open, proposals_decided = [], []
    for p in session.scalars(select(Proposal).order_by(Proposal.id)):
        votes = p.votes
        if p.status == "open" and p.created_at <= as_of:
            proposals_open.append(OpenProposal(
                id=p.id, operator=p.operator.qualname, kind=p.kind, targets=tuple(p.targets), proposer=p.proposer,
                created_at=p.created_at, age_days=max(0, (as_of - p.created_at).days),
                approvals=tuple(v.voter for v in votes if v.approve),
                rejections=tuple(v.voter for v in votes if not v.approve), quorum=quorum, rationale=p.rationale))
        elif p.closed_at is not None and since <= p.closed_at <= as_of:
            proposals_decided.append(DecidedProposal(
                id=p.id, operator=p.operator.qualname, kind=p.kind, targets=tuple(p.targets), outcome=p.status,
                decided_at=p.closed_at, rationale=p.rationale,
                votes=tuple(Vote(voter=v.voter, approve=v.approve, comment=v.comment) for v in votes)))

    overdue, due_now, due_soon, deprecated = [], [], [], []
    policy = periods(ctx)
    for op in session.scalars(select(Operator).where(Operator.lifecycle.in_(("deprecating", "deprecated")))
                              .order_by(Operator.qualname)):
        step = session.scalars(select(LifecycleStep).where(LifecycleStep.operator_id == op.id)
                               .order_by(LifecycleStep.at.desc(), LifecycleStep.id.desc()).limit(1)).first()
        deprecated.append(DeprecatedOp(operator=op.qualname, state=op.lifecycle, since=op.lifecycle_since,
                                       replacement=op.replacement, reason=(step.reason or "") if step else ""))
        due = next_timed_step(op.lifecycle, op.lifecycle_since, policy)
        if due is None:
            continue
        item = LifecycleDue(operator=op.qualname, from_state=due.state, to_state=due.to_state,
                            due_on=due.due_at.date(), previous_step_at=due.since,
                            previous_step_actor=step.actor if step else "unknown",
                            reason=(step.reason or "") if step else "")
        if due.due_at <= as_of - timedelta(days=SOON_DAYS):
            overdue.append(item)
        elif due.due_at <= as_of:
            due_now.append(item)
        elif due.due_at <= as_of + timedelta(days=SOON_DAYS):
            due_soon.append(item)

    in_period = [s for s in snapshots if since <= s.imported_at <= as_of]
    findings = []
    removed = []
    names = dict(session.execute(select(Operator.id, Operator.qualname)).all())
    lifecycle_of = dict(session.execute(select(Operator.qualname, Operator.lifecycle)).all())
    for snap in in_period:
        for f in session.scalars(select(Finding).where(Finding.snapshot_id == snap.id, Finding.kind != "new")):
            findings.append(CompatFinding(snapshot=snap.label, operator=f.operator, kind=f.kind, rule=f.rule,
                                          severity=f.severity if f.severity in ("error", "warning") else "info",
                                          message=f.message))
        previous = max((s for s in snapshots if s.id < snap.id), key=lambda s: s.id, default=None)
        if previous is None:
            continue
        before = dict(session.execute(select(SnapshotEntry.operator_id, SnapshotEntry.schema)
                                      .where(SnapshotEntry.snapshot_id == previous.id)).all())
        after = set(session.scalars(select(SnapshotEntry.operator_id).where(SnapshotEntry.snapshot_id == snap.id)))
        for op_id in sorted(set(before) - after, key=lambda i: names[i]):
            if lifecycle_of[names[op_id]] != "deleted":
                removed.append(RemovedOp(snapshot=snap.label, operator=names[op_id],
                                         last_schema=before[op_id] or "(autogen)"))

    today = as_of.date()
    expired, expiring = [], []
    for e in session.scalars(select(BcException).where(BcException.removed_at.is_(None))):
        entry = ExceptionEntry(pattern=e.pattern, reason=e.reason, created_by=e.created_by, expires_on=e.expires_on)
        if e.expires_on < today:
            expired.append(entry)
        elif e.expires_on <= today + timedelta(days=SOON_DAYS):
            expiring.append(entry)

    rows = session.execute(select(Operator.category, Operator.lifecycle, Operator.present)).all()
    present = [r for r in rows if r.present]
    counted = [r for r in rows if r.present or r.lifecycle == "deleted"]
    opset_now = OpsetNow(
        categories=CategoryCounts(**{c: sum(1 for r in present if r.category == c)
                                     for c in ("core", "decomposable", "custom")}),
        lifecycle=LifecycleCounts(**{s: sum(1 for r in counted if r.lifecycle == s)
                                     for s in ("active", "deprecating", "deprecated", "deleted")}))
    trend = [TrendPoint(label=s.label, imported_at=s.imported_at,
                        categories=CategoryCounts(**{c: int((s.stats or {}).get("category", {}).get(c, 0))
                                                     for c in ("core", "decomposable", "custom")}))
             for s in snapshots if s.imported_at <= as_of]
    return WeeklyReport(as_of=as_of, since=since, generated_by=f"opgov, for {ctx.actor}", soon_days=SOON_DAYS,
                        review_queue=tuple(review_queue), proposals_open=tuple(proposals_open),
                        proposals_decided=tuple(proposals_decided), lifecycle_overdue=tuple(overdue),
                        lifecycle_due_now=tuple(due_now), lifecycle_due_soon=tuple(due_soon),
                        deprecated_ops=tuple(deprecated), compat_findings=tuple(findings),
                        removed_without_deprecation=tuple(removed), exceptions_expired=tuple(expired),
                        exceptions_expiring=tuple(expiring), opset_now=opset_now, opset_trend=tuple(trend))
