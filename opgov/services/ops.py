"""Reading operators: the list and one operator's whole story."""

from __future__ import annotations

from sqlalchemy import select

from opgov.core.vocab import Category, Lifecycle
from opgov.db import entries
from opgov.db.models import Decision, Finding, LifecycleStep, Operator, Proposal, Snapshot
from opgov.reads.common import Ctx, find_operator
from opgov.results.ops import (
    DecisionView, HistoryChange, HistoryEntry, LifecycleStepView, OperatorDetail, OperatorFinding, OperatorSummary,
    ProposalRef,
)

CATEGORIES = tuple(Category)
LIFECYCLES = tuple(Lifecycle)


def _summary_fields(op: Operator) -> dict:
    return {"name": op.qualname, "schema": op.schema, "kind": op.kind, "tags": list(op.tags),
            "category": op.category, "category_source": op.category_source, "lifecycle": op.lifecycle,
            "present": op.present, "needs_review": op.needs_review, "review_reason": op.review_reason,
            "autogen_of": op.autogen_of,
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


def list_operators(ctx: Ctx, *, category: str | None = None, lifecycle: str | None = None, q: str | None = None,
                   tag: str | None = None, all: bool = False) -> list[OperatorSummary]:  # noqa: A002
    """:func:`list_ops` as ``GET /api/v1/operators`` asks it (``all``: every operator ever seen)."""
    return list_ops(ctx, category=category, lifecycle=lifecycle, tag=tag, include_all=all, q=q)


# the events that change an operator's record (see :func:`_event_changes`)
RECORD_ACTIONS = ("operator.added", "operator.tags_changed", "operator.category_changed", "operator.reappeared",
                  "operator.schema_changed", "operator.own_entry", "category.decided", "lifecycle.deprecating",
                  "lifecycle.deprecated", "lifecycle.deleted", "lifecycle.active")


def _history(session, op: Operator) -> tuple[list[HistoryEntry], str | None, str | None]:
    """The operator's runs in the order of history, with the stretches it was absent between and
    after them; and the labels of the first and last snapshots holding it. Each run says what
    changed in it and why (:class:`HistoryChange`): its schema and tags against the previous run,
    and the category, review and lifecycle changes the log recorded while its snapshots were the
    latest. Its cost follows the number of changes, not the number of snapshots."""
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
                                                        Snapshot.imported_at, Snapshot.actor)
                                                 .where(Snapshot.position.in_(wanted)))}
    from opgov.core.tags import governance_tags_edited, tags_edited

    logged = _event_changes(session, op, [(first, last) for first, last, _ in spans])
    history, previous, previous_tags = [], None, None
    for index, (first, last, run) in enumerate(spans):
        line = entries.lines_of(session, at[last].id).get(op.id) if run is not None else None
        schema = run.schema if run is not None else None
        start = at[first]
        changes: list[HistoryChange] = []
        if run is not None and previous_tags is not None:
            told = {c.what: c for c in logged.get(("entry", index), ())}
            if schema != previous:
                event = told.get("schema")
                changes.append(HistoryChange(what="schema", before=previous, after=schema, snapshot=start.label,
                                             at=start.imported_at, actor=start.actor,
                                             event=event.event if event else None, reason=None))
            edits = tags_edited(previous_tags, run.tags)
            if edits:
                event = told.get("tags")
                changes.append(HistoryChange(what="tags", before=", ".join(previous_tags) or None,
                                             after=", ".join(run.tags) or None, snapshot=start.label,
                                             at=start.imported_at, actor=start.actor,
                                             reason=event.reason if event else " ".join(edits),
                                             event=event.event if event else None))
        changes.extend(logged.get(index, ()))
        history.append(HistoryEntry(
            snapshot=start.label, imported_at=start.imported_at, last_snapshot=at[last].label,
            snapshots=last - first + 1, present=run is not None, schema=schema, line=line,
            tags=list(run.tags) if run is not None else [],
            changed=run is not None and previous is not None and schema != previous,
            tags_changed=governance_tags_edited(previous_tags, run.tags) if run is not None else [],
            changes=changes))
        if run is not None:
            previous, previous_tags = schema, list(run.tags)
    held = [h for h in history if h.present]
    return history, held[0].snapshot, held[-1].last_snapshot


def _event_changes(session, op: Operator, spans: list[tuple[int, int]]) -> dict:
    """The record changes the log holds about ``op``, by the index of the span (run) they belong
    to: an import's by the snapshot it names, any other by the snapshot that was the latest when
    it happened. Also, under ``("entry", index)``, the events recording the schema and tag edits of
    that run (their ids and the import's account)."""
    from opgov.db.models import Event

    events = session.execute(select(Event.id, Event.at, Event.actor, Event.action, Event.before, Event.after,
                                    Event.reason)
                             .where(Event.subject == op.qualname, Event.action.in_(RECORD_ACTIONS))
                             .order_by(Event.id)).all()
    if not events:
        return {}
    labels = {(e.after or {}).get("snapshot") for e in events} - {None}
    position_of = dict(session.execute(select(Snapshot.label, Snapshot.position)
                                       .where(Snapshot.label.in_(labels))).all()) if labels else {}

    def latest_at(when) -> int | None:
        return session.execute(select(Snapshot.position).where(Snapshot.imported_at <= when)
                               .order_by(Snapshot.position.desc()).limit(1)).scalar()

    def span_of(position: int | None) -> int:
        if position is None:
            return 0
        for i, (first, last) in enumerate(spans):
            if first <= position <= last:
                return i
        return len(spans) - 1 if position > spans[-1][1] else 0

    labels_at: dict[int, str] = {}

    def label_of(position: int) -> str:
        if position not in labels_at:
            labels_at[position] = session.execute(select(Snapshot.label)
                                                  .where(Snapshot.position == position)).scalar_one()
        return labels_at[position]

    out: dict = {}
    for e in events:
        before, after = e.before or {}, e.after or {}
        named = after.get("snapshot")
        position = position_of.get(named) if named else latest_at(e.at)
        index = span_of(position)
        snapshot = named or label_of(position if position is not None else spans[0][0])

        def change(what: str, old, new, *, reason=e.reason, by=()) -> None:
            out.setdefault(index, []).append(HistoryChange(
                what=what, before=None if old is None else str(old), after=None if new is None else str(new),
                snapshot=snapshot, at=e.at, actor=e.actor, by=list(by), reason=reason, event=e.id))

        action = e.action
        if action in ("operator.schema_changed", "operator.own_entry"):
            out.setdefault(("entry", index), []).append(HistoryChange(
                what="schema", before=None, after=None, snapshot=snapshot, at=e.at, actor=e.actor, reason=e.reason,
                event=e.id))
            continue
        if action == "operator.tags_changed":
            out.setdefault(("entry", index), []).append(HistoryChange(
                what="tags", before=None, after=None, snapshot=snapshot, at=e.at, actor=e.actor, reason=e.reason,
                event=e.id))
        if action.startswith("operator."):
            if before.get("category") != after.get("category") and after.get("category") is not None:
                change("category", before.get("category"), after["category"])
            if bool(before.get("needs_review")) != bool(after.get("needs_review")) and "needs_review" in after:
                change("review", "waits" if before.get("needs_review") else None,
                       "waits" if after["needs_review"] else "off the queue")
        elif action == "category.decided":
            change("category", before.get("category"), after.get("category"),
                   by=after.get("decided_by") or [e.actor])
            if before.get("needs_review"):
                change("review", "waits", "decided", by=after.get("decided_by") or [e.actor])
        elif action.startswith("lifecycle."):
            change("lifecycle", before.get("lifecycle"), after.get("lifecycle", action.split(".", 1)[1]),
                   reason=e.reason if not after.get("with") else f"{e.reason or ''} (with its family: "
                                                               f"{after['with']})".lstrip())
    return out


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
    from opgov.services.compat import judge_stored

    stored = session.scalars(select(Finding).where(Finding.operator == op.qualname)
                             .order_by(Finding.snapshot_id, Finding.id)).all()
    # judged now, against the exceptions in force now (as check-bc judges)
    labels = dict(session.execute(select(Snapshot.id, Snapshot.label)
                                  .where(Snapshot.id.in_({f.snapshot_id for f in stored}))).all())
    findings = [OperatorFinding(snapshot=labels.get(f.snapshot_id), kind=f.kind, rule=f.rule, severity=j.severity,
                                message=j.message, old_schema=f.old_schema, new_schema=f.new_schema)
                for f, j in zip(stored, judge_stored(session, stored, ctx.now()))]
    sunset = None
    if op.lifecycle in ("deprecating", "deprecated") and op.lifecycle_since is not None:
        from datetime import timedelta

        from opgov.reads.common import periods

        policy = periods(ctx)
        days = policy.deprecated_days + (policy.deprecating_days if op.lifecycle == "deprecating" else 0)
        sunset = op.lifecycle_since + timedelta(days=days)
    return OperatorDetail(**_summary_fields(op), lifecycle_since=op.lifecycle_since,
                          first_seen=first_seen, last_seen=last_seen,
                          history=history, decisions=decisions, proposals=proposals, lifecycle_steps=lifecycle,
                          findings=findings, sunset=sunset)
