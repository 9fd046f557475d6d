"""Reading operators: the list and one operator's whole story."""

from __future__ import annotations

from sqlalchemy import select

from opgov.core.vocab import Category, Lifecycle
from opgov.db import entries
from opgov.db.models import Decision, Finding, LifecycleStep, Operator, Proposal, Snapshot
from opgov.services.common import Ctx, find_operator
from opgov.results.models import (DecisionView, HistoryEntry, LifecycleStepView, OperatorDetail, OperatorFinding,
                                    OperatorSummary, ProposalRef)

CATEGORIES = tuple(Category)
LIFECYCLES = tuple(Lifecycle)


def _summary_fields(op: Operator) -> dict:
    return {"name": op.qualname, "schema": op.schema, "kind": op.kind, "tags": list(op.tags),
            "category": op.category, "category_source": op.category_source, "lifecycle": op.lifecycle,
            "present": op.present, "needs_review": op.needs_review, "autogen_of": op.autogen_of,
            "replacement": op.replacement}


def op_summary(op: Operator) -> OperatorSummary:
    return OperatorSummary(**_summary_fields(op))


def list_ops(ctx: Ctx, *, category: str | None = None, lifecycle: str | None = None, tag: str | None = None,
             include_all: bool = False, q: str | None = None) -> list[OperatorSummary]:
    """Operators present in the latest snapshot (``include_all``: every operator ever seen), by
    name; ``q`` keeps those whose name contains it (case-insensitive)."""
    query = select(Operator).order_by(Operator.qualname)
    if not include_all:
        query = query.where(Operator.present)
    if category:
        query = query.where(Operator.category == category)
    if lifecycle:
        query = query.where(Operator.lifecycle == lifecycle)
    ops = ctx.session.scalars(query).all()
    if tag:
        ops = [op for op in ops if tag in op.tags]
    if q:
        needle = q.lower()
        ops = [op for op in ops if needle in op.qualname.lower()]
    return [op_summary(op) for op in ops]


def _history(session, op: Operator) -> tuple[list[HistoryEntry], str | None, str | None]:
    """The operator's runs in the order of history, with the stretches it was absent between and
    after them; and the labels of the first and last snapshots holding it. Its cost follows the
    number of changes, not the number of snapshots."""
    runs = entries.runs_of(session, [op.id])
    if not runs:
        return [], None, None
    latest = entries.latest_position(session)
    spans: list[tuple[int, int, entries.Run | None]] = []
    for run in runs:
        last = latest if run.last_pos is None else run.last_pos
        if spans and spans[-1][1] + 1 < run.first_pos:
            spans.append((spans[-1][1] + 1, run.first_pos - 1, None))
        spans.append((run.first_pos, last, run))
    if spans[-1][1] < latest:
        spans.append((spans[-1][1] + 1, latest, None))
    wanted = {p for first, last, _ in spans for p in (first, last)}
    at = {r.position: r for r in session.execute(select(Snapshot.position, Snapshot.id, Snapshot.label,
                                                        Snapshot.imported_at).where(Snapshot.position.in_(wanted)))}
    from opgov.core.tags import governance_tags_edited as edited

    history, previous, previous_tags = [], None, None
    for first, last, run in spans:
        line = entries.lines_of(session, at[last].id).get(op.id) if run is not None else None
        schema = run.schema if run is not None else None
        history.append(HistoryEntry(
            snapshot=at[first].label, imported_at=at[first].imported_at, last_snapshot=at[last].label,
            snapshots=last - first + 1, present=run is not None, schema=schema, line=line,
            tags=list(run.tags) if run is not None else [],
            changed=run is not None and previous is not None and schema != previous,
            tags_changed=edited(previous_tags, run.tags) if run is not None else []))
        if run is not None:
            previous, previous_tags = schema, list(run.tags)
    held = [h for h in history if h.present]
    return history, held[0].snapshot, held[-1].last_snapshot


def show_op(ctx: Ctx, name: str) -> OperatorDetail:
    """One operator's story: schema history (a run of snapshots per change), decisions,
    proposals, lifecycle, findings."""
    session = ctx.session
    op = find_operator(session, name)
    history, first_seen, last_seen = _history(session, op)
    decisions = [DecisionView(id=d.id, category=d.category, targets=list(d.targets), rationale=d.rationale,
                              decided_at=d.decided_at, decided_by=list(d.decided_by), votes=list(d.votes),
                              proposal=d.proposal_id, imported=d.imported, source=d.source, note=d.note)
                 for d in session.scalars(select(Decision).where(Decision.operator_id == op.id)
                                          .order_by(Decision.decided_at, Decision.id))]
    proposals = [ProposalRef(id=p.id, kind=p.kind, targets=list(p.targets), status=p.status, proposer=p.proposer,
                             created_at=p.created_at)
                 for p in session.scalars(select(Proposal).where(Proposal.operator_id == op.id)
                                          .order_by(Proposal.id))]
    lifecycle = [LifecycleStepView(from_state=s.from_state, to_state=s.to_state, at=s.at, actor=s.actor,
                                   reason=s.reason, replacement=s.replacement)
                 for s in session.scalars(select(LifecycleStep).where(LifecycleStep.operator_id == op.id)
                                          .order_by(LifecycleStep.at, LifecycleStep.id))]
    from opgov.services.compat_checks import judge_stored

    stored = session.scalars(select(Finding).where(Finding.operator == op.qualname)
                             .order_by(Finding.snapshot_id, Finding.id)).all()
    # judged now, against the exceptions in force now (as check-bc judges)
    labels = dict(session.execute(select(Snapshot.id, Snapshot.label)
                                  .where(Snapshot.id.in_({f.snapshot_id for f in stored}))).all())
    findings = [OperatorFinding(snapshot=labels.get(f.snapshot_id), kind=f.kind, rule=f.rule, severity=severity,
                                message=message, old_schema=f.old_schema, new_schema=f.new_schema)
                for f, (severity, message) in zip(stored, judge_stored(session, stored, ctx.now()))]
    sunset = None
    if op.lifecycle in ("deprecating", "deprecated") and op.lifecycle_since is not None:
        from datetime import timedelta

        from opgov.services.lifecycle import periods

        policy = periods(ctx)
        days = policy.deprecated_days + (policy.deprecating_days if op.lifecycle == "deprecating" else 0)
        sunset = op.lifecycle_since + timedelta(days=days)
    return OperatorDetail(**_summary_fields(op), lifecycle_since=op.lifecycle_since,
                          first_seen=first_seen, last_seen=last_seen,
                          history=history, decisions=decisions, proposals=proposals, lifecycle_steps=lifecycle,
                          findings=findings, sunset=sunset)
