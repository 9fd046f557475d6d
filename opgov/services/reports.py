"""The weekly committee report: fill :class:`opgov.results.reports.WeeklyReport` from the database.

The period is ``(since, as_of]``: ``as_of`` defaults to now and ``since`` to seven days before
``as_of``, so consecutive weekly reports neither overlap nor leave a gap. A date given alone
means its midnight UTC.

Everything is read *as of* ``as_of``, so last week's report can be generated again later and
says what it said then:

- what happened (decided proposals, compatibility findings, operators removed from the yaml)
  is what the events of the period recorded;
- what waits (the review queue, open proposals and their votes, lifecycle timers, exceptions,
  the opset counts) is the state at ``as_of``: snapshots imported, proposals opened, votes cast,
  lifecycle steps taken, exceptions recorded or removed and committee decisions made after
  ``as_of`` are left out. The category an undecided operator has follows the import heuristics
  of the latest import (tags rarely change), and the lifecycle periods are the current settings.

The number of queries does not grow with the database (one more per import in the period, for
its removals): the sections are assembled in Python from one read of each table they need.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import selectinload

from opgov import __version__
from opgov.db.models import BcException, Event, Finding, LifecycleStep, Operator, Proposal, Snapshot
from opgov.core.errors import BadInput
from opgov.core.lifecycle import next_timed_step
from opgov.core.vocab import Category, Lifecycle, Severity
from opgov.results.reports import (CategoryCounts, CompatFinding, DecidedProposal, DeprecatedOp, DriftItem,
                                  ExceptionEntry, LifecycleCounts, LifecycleDue, OpenProposal, OpsetNow, RemovedOp,
                                  ReviewItem, SnapshotRef, TagChange, TrendPoint, Vote, WeeklyReport)
from opgov.reads.common import Ctx, get_int_setting, periods
from opgov.reads.registry import PERIOD_DAYS, SOON_DAYS


CATEGORIES = tuple(Category)
LIFECYCLE_STATES = tuple(Lifecycle)
SEVERITIES = frozenset(Severity)


def _suggestion_reason(category: str, source: str) -> str:
    """Why the import heuristics (:meth:`opgov.formats.registry.RegistryOp.suggested_category`) chose ``category``."""
    if category == "core":
        return "tagged core in native_functions.yaml" if source == "yaml-tag" else "core"
    if category == "decomposable":
        return "it has a CompositeImplicitAutograd kernel: a decomposition exists already"
    return "not tagged core and no CompositeImplicitAutograd kernel"


def weekly(ctx: Ctx, *, as_of: str | None = None, since: str | None = None, format: str = "json"):  # noqa: A002
    """``opgov report weekly`` (``GET /api/v1/report/weekly``): :func:`weekly_report` for the period
    given as ISO 8601 dates or times (``as_of`` default now, ``since`` default 7 days earlier);
    ``format`` md or html answers its text (opgov.render.report)."""
    from opgov.core.clock import parse_time

    end = parse_time(as_of, what="as_of") if as_of else None
    start = parse_time(since, what="since") if since else None
    report = weekly_report(ctx, as_of=end, since=start)
    if format == "json":
        return report
    from opgov.render import report as render
    from opgov.results.rendered import Rendered

    return Rendered(render.render_markdown(report) if format == "md" else render.render_html(report))


def period_start(as_of: datetime, since: datetime | None) -> datetime:
    """The start of the period ending at ``as_of``: ``since``, defaulting to :data:`PERIOD_DAYS`
    before; refuses an empty period."""
    since = as_of - timedelta(days=PERIOD_DAYS) if since is None else since
    if since >= as_of:
        raise BadInput(f"the period is empty: --since {_point(since)} is not before --as-of {_point(as_of)}")
    return since


def _point(value: datetime) -> str:
    return value.strftime("%Y-%m-%d" if value.hour == value.minute == value.second == 0 else "%Y-%m-%d %H:%M UTC")


@dataclass(frozen=True)
class _Op:
    id: int
    qualname: str
    schema: str | None
    autogen_of: str | None
    kind: str
    category: str
    category_source: str
    needs_review: bool
    present: bool
    first_snapshot_id: int
    tags: list[str] | None = None
    review_reason: str | None = None
    lifecycle: str = "active"


def weekly_report(ctx: Ctx, *, as_of: datetime | None = None, since: datetime | None = None,
                  with_agenda: bool = True) -> WeeklyReport:
    """The committee's weekly report for the period ``(since, as_of]`` (see the module docstring);
    ``with_agenda``: False leaves the queue's agenda out (the /queue page shows the queue itself)."""
    session = ctx.session
    as_of = as_of or ctx.now()
    since = period_start(as_of, since)

    from opgov.reads.common import is_historical, latest_snapshot_id

    # the imports up to as_of; a release stored with --historical is history, not an import of the week
    snapshots = [s for s in session.scalars(select(Snapshot).order_by(Snapshot.position))
                 if s.imported_at <= as_of and not is_historical(s.stats)]
    snap_by_id = {s.id: s for s in snapshots}
    in_period = [s for s in snapshots if since < s.imported_at]
    ops = [_Op(*row) for row in session.execute(select(
        Operator.id, Operator.qualname, Operator.schema, Operator.autogen_of, Operator.kind, Operator.category,
        Operator.category_source, Operator.needs_review, Operator.present, Operator.first_snapshot_id,
        Operator.tags, Operator.review_reason, Operator.lifecycle))]
    by_id = {op.id: op for op in ops}
    by_name = {op.qualname: op for op in ops}
    latest = bool(snapshots) and snapshots[-1].id == latest_snapshot_id(session)
    present = _present_at(session, ops, snapshots, latest)
    undecided = _undecided_after(session, as_of)
    category_at = partial(_category_at, undecided)
    review_queue = _review_queue(ops, snapshots, snap_by_id, present, undecided, category_at)
    proposals_open, proposals_decided = _proposals(ctx, by_id, since, as_of)
    lifecycle = _lifecycle_at(ctx, by_id, since, as_of)
    findings = _findings(ctx, in_period, snapshots, as_of)
    positions = {s.label: s.position for s in snapshots}
    tag_changes = [TagChange(snapshot=f.snapshot, position=positions[f.snapshot], operator=f.operator, edit=_edit_of(f), rule=f.rule,
                             severity=f.severity, message=f.message) for f in findings if f.kind == "policy"]
    findings = [f for f in findings if f.kind != "policy"]
    drift = _core_drift(ctx, ops, present, category_at) if latest else []
    removed = _removed(ctx, in_period, snapshots, by_id, by_name, lifecycle.deleted_at)
    closure_facts, closure_rows = _closure_rows(session) if snapshots else (None, [])
    expired, expiring = _exceptions_at(session, as_of)
    opset_now = _opset_now(present, by_id, category_at, lifecycle)
    # Each snapshot's categories when it was imported; the latest one's as of the report's day
    # (decisions since its import included), so the trend ends where opset_now and `ops list` are.
    trend = [TrendPoint(label=s.label, imported_at=s.imported_at,
                        categories=(opset_now.categories if s is snapshots[-1] else
                                    CategoryCounts(**{c: int((s.stats or {}).get("category", {}).get(c, 0))
                                                      for c in CATEGORIES})))
             for s in trend_points(snapshots, in_period)]
    from opgov.services.queue import agenda, queue_items

    # the queue is today's: for a report of the latest snapshot, the review queue's suggestions are the
    # queue's (one suggestion engine: the agenda, `opgov queue` and `triage --suggested` say the same)
    read = queue_items(ctx) if latest else None
    if read is not None:
        suggested = {i.operator: i for i in read.items}
        review_queue = [replace(r, suggestion=suggested[r.operator].suggestion,
                                suggestion_reason=suggested[r.operator].because)
                        if r.operator in suggested else r for r in review_queue]
    meeting = agenda(ctx, read=read) if with_agenda and read is not None else None
    return WeeklyReport(as_of=as_of, since=since, generated_by=f"opgov {__version__} for {ctx.actor}",
                        soon_days=SOON_DAYS, review_queue=tuple(review_queue), agenda=meeting,
                        proposals_open=tuple(proposals_open),
                        proposals_decided=tuple(proposals_decided), lifecycle_overdue=tuple(lifecycle.overdue),
                        lifecycle_due_now=tuple(lifecycle.due_now), lifecycle_due_soon=tuple(lifecycle.due_soon),
                        deprecated_ops=tuple(lifecycle.deprecated), tag_changes=tuple(tag_changes),
                        core_drift=tuple(drift), decomp_closure=tuple(closure_rows), closure_facts=closure_facts,
                        compat_findings=tuple(findings),
                        removed_without_deprecation=tuple(removed), exceptions_expired=tuple(expired),
                        exceptions_expiring=tuple(expiring), opset_now=opset_now, opset_trend=tuple(trend))


def _present_at(session, ops: list[_Op], snapshots: list, latest: bool) -> set[int]:
    """The operators in the yaml at as_of: those of the latest snapshot imported by then."""
    if not snapshots:
        return set()
    if latest:
        return {op.id for op in ops if op.present}
    from opgov.db import entries

    return entries.operator_ids_at(session, snapshots[-1].position)


def _undecided_after(session, as_of: datetime) -> dict[str, dict[str, Any]]:
    """The committee decisions recorded after as_of, to undo: each operator's first one's
    ``before`` (its state at as_of)."""
    undecided: dict[str, dict[str, Any]] = {}
    for subject, before in session.execute(select(Event.subject, Event.before)
                                           .where(Event.action == "category.decided", Event.at > as_of)
                                           .order_by(Event.at, Event.id)):
        undecided.setdefault(subject, before or {})
    return undecided


def _category_at(undecided: dict[str, dict[str, Any]], op: _Op) -> tuple[str, str]:
    """``(category, its source)`` of ``op`` at as_of (``undecided``: :func:`_undecided_after`)."""
    before = undecided.get(op.qualname)
    if before is not None:
        return before.get("category", op.category), before.get("category_source", op.category_source)
    return op.category, op.category_source


@dataclass
class _Lifecycle:
    """The lifecycle at as_of: each operator's last step taken by then, when the deleted ones
    were deleted, and the report's lifecycle lists."""

    last_step: dict[int, Any] = field(default_factory=dict)
    deleted_at: dict[int, datetime] = field(default_factory=dict)
    overdue: list[LifecycleDue] = field(default_factory=list)
    due_now: list[LifecycleDue] = field(default_factory=list)
    due_soon: list[LifecycleDue] = field(default_factory=list)
    deprecated: list[DeprecatedOp] = field(default_factory=list)

    def state_at(self, op_id: int) -> str:
        step = self.last_step.get(op_id)
        return step.to_state if step is not None else "active"


def _lifecycle_at(ctx: Ctx, by_id: dict[int, _Op], since: datetime, as_of: datetime) -> _Lifecycle:
    """The deprecated operators at as_of and the transitions overdue, due in the period, due soon."""
    found = _Lifecycle()
    deprecation_reason: dict[int, str] = {}
    for step in ctx.session.execute(select(LifecycleStep.operator_id, LifecycleStep.to_state, LifecycleStep.at,
                                           LifecycleStep.actor, LifecycleStep.reason, LifecycleStep.replacement)
                                    .where(LifecycleStep.at <= as_of).order_by(LifecycleStep.at, LifecycleStep.id)):
        found.last_step[step.operator_id] = step
        if step.to_state == "deprecating":
            deprecation_reason[step.operator_id] = step.reason or ""
        elif step.to_state == "deleted":
            found.deleted_at[step.operator_id] = step.at
    policy = periods(ctx)
    for op_id, step in found.last_step.items():
        if step.to_state not in ("deprecating", "deprecated"):
            continue
        name, why = by_id[op_id].qualname, deprecation_reason.get(op_id, "")
        found.deprecated.append(DeprecatedOp(operator=name, state=step.to_state, since=step.at,
                                             replacement=step.replacement, reason=why))
        due = next_timed_step(step.to_state, step.at, policy)
        if due is None:
            continue
        item = LifecycleDue(operator=name, from_state=due.state, to_state=due.to_state, due_on=due.due_at.date(),
                            previous_step_at=step.at, previous_step_actor=step.actor, reason=step.reason or why)
        if due.due_at <= since:
            found.overdue.append(item)
        elif due.due_at <= as_of:
            found.due_now.append(item)
        elif due.due_at <= as_of + timedelta(days=SOON_DAYS):
            found.due_soon.append(item)
    return found


def _exceptions_at(session, as_of: datetime) -> tuple[list[ExceptionEntry], list[ExceptionEntry]]:
    """(expired, expiring within SOON_DAYS): the BC exceptions on record at as_of."""
    today = as_of.date()
    expired, expiring = [], []
    for e in session.scalars(select(BcException).where(BcException.created_at <= as_of)):
        if e.removed_at is not None and e.removed_at <= as_of:
            continue
        entry = ExceptionEntry(pattern=e.pattern, reason=e.reason, created_by=e.created_by, expires_on=e.expires_on)
        if today > e.expires_on:  # an exception applies through its expiry date (opgov.core.compat)
            expired.append(entry)
        elif e.expires_on <= today + timedelta(days=SOON_DAYS):
            expiring.append(entry)
    return expired, expiring


def _opset_now(present: set[int], by_id: dict[int, _Op], category_at, lifecycle: _Lifecycle) -> OpsetNow:
    """The operators present at as_of per category, and per lifecycle state (the deleted ones too)."""
    categories = dict.fromkeys(CATEGORIES, 0)
    for op_id in present:
        category = category_at(by_id[op_id])[0]
        categories[category] = categories.get(category, 0) + 1
    states = dict.fromkeys(LIFECYCLE_STATES, 0)
    for op_id in present | set(lifecycle.deleted_at):
        states[lifecycle.state_at(op_id)] += 1
    return OpsetNow(categories=CategoryCounts(**{c: categories[c] for c in CATEGORIES}),
                    lifecycle=LifecycleCounts(**states))


def _closure_rows(session) -> tuple[str | None, list]:
    """(which facts, the closure section): the latest torch release opgov holds facts of (else the
    facts it ships for the latest snapshot, as the queue and ``decomps closure`` read them), compared
    with the one before it (if held): stopped closing, started closing, then every operator that
    does not close."""
    from opgov.core.closure import compare
    from opgov.core.errors import BadInput
    from opgov.results.closure import ClosureRow
    from opgov.services.closure import compute
    from opgov.reads.torch import torch_releases

    held = torch_releases(session)
    try:
        facts, label, now, _ = compute(session, held[-1] if held else None)
    except BadInput:  # no facts held, none shipped for the latest snapshot's label
        return None, []
    rows = []
    if len(held) > 1:
        _, _, before, _ = compute(session, held[-2])
        change = compare(before, now)
        for status, ops in (("stopped closing", change.stopped), ("started closing", change.started)):
            rows += [ClosureRow(torch=facts.version, snapshot=label, operator=op, status=status, since=held[-2],
                                why=now.item(op).why or "ends only in core operators now") for op in ops]
    rows += [ClosureRow(torch=facts.version, snapshot=label, operator=i.op, status="does not close", why=i.why or "")
             for i in now.open]
    return facts.describe(), rows


TREND_RELEASES = 24  # the opset trend shows at most this many releases before the period


def trend_points(snapshots: list, in_period: list) -> list:
    """The snapshots the opset trend shows, oldest first: the releases (labels that read as a final
    version, such as ``2.13.0``), at most :data:`TREND_RELEASES` of them, then every import of the
    period and the latest. A nightly bot's history of a thousand snapshots gives a trend of a few
    dozen points, as a short history gives all of its own."""
    from opgov.services.imports import version_of

    shown = {id(s) for s in in_period}
    if snapshots:
        shown.add(id(snapshots[-1]))
    releases = [s for s in snapshots if id(s) not in shown and (v := version_of(s.label)) is not None
                and not (v.is_prerelease or v.is_devrelease)]
    shown.update(id(s) for s in releases[-TREND_RELEASES:])
    return [s for s in snapshots if id(s) in shown]


def _review_queue(ops, snapshots, snap_by_id, present, undecided, category_at) -> list[ReviewItem]:
    """New functional operators (of any import but the first) with no committee decision at as_of."""
    if not snapshots:
        return []
    baseline_id = snapshots[0].id
    queue = []
    for op in ops:
        if op.id not in present or op.first_snapshot_id not in snap_by_id:
            continue
        before = undecided.get(op.qualname)
        waiting = op.needs_review or (before is not None and before.get("category_source") != "decision"
                                      and op.kind == "functional" and op.first_snapshot_id != baseline_id)
        if not waiting:
            continue
        first = snap_by_id[op.first_snapshot_id]
        category, source = category_at(op)
        queue.append(ReviewItem(operator=op.qualname, schema_text=op.schema or "",
                                generated_from=op.autogen_of if op.schema is None else None,
                                first_seen=SnapshotRef(label=first.label, imported_at=first.imported_at),
                                suggested_category=category,
                                suggestion_reason=("its core tag was dropped from native_functions.yaml: core until "
                                                   "the committee decides" if category == "core"
                                                   and source == "yaml-tag" and "core" not in (op.tags or ())
                                                   else _suggestion_reason(category, source)),
                                review_reason=op.review_reason if op.needs_review else None))
    return queue


def _edit_of(finding: CompatFinding) -> str:
    """``-core`` for a core-tag-removed finding; the lifecycle tag a lifecycle-tag-edited one names."""
    if finding.rule == "core-tag-added":
        return "+core"
    if finding.rule == "core-tag-removed":
        return "-core"
    tag = next((t for t in ("deprecating", "deprecated") if f"`{t}`" in finding.message), "lifecycle")
    return ("+" if " adds " in finding.message else "-") + tag


def _core_drift(ctx: Ctx, ops, present: set[int], category_at) -> list[DriftItem]:
    """Present operators whose category on record and `core` tag in the latest snapshot disagree,
    with why: the review reason (a release moved the tag, the committee has not decided), or the
    committee's decision the yaml does not carry yet."""
    from opgov.db.models import Decision

    drift = []
    for op in ops:
        if op.id not in present or op.lifecycle == "deleted":
            continue
        category, source = category_at(op)
        tagged = "core" in (op.tags or ())
        if (category == "core") == tagged:
            continue
        if op.needs_review and op.review_reason:
            why = op.review_reason
        elif source == "decision":
            decided = ctx.session.scalars(select(Decision).where(Decision.operator_id == op.id,
                                                                 Decision.note.is_(None))
                                          .order_by(Decision.decided_at.desc(), Decision.id.desc())).first()
            why = (f"the committee decided {category}" + (f" ({decided.source}, {decided.decided_at:%Y-%m-%d})"
                                                          if decided is not None else "")
                   + ("; the yaml does not tag it core yet (opgov sync-yaml writes the tag)" if category == "core"
                      else "; the yaml still tags it core (opgov sync-yaml removes the tag)"))
        else:
            why = "the yaml tag and the category disagree"
        drift.append(DriftItem(operator=op.qualname, category=category, category_source=source, tagged_core=tagged,
                               waiting=op.needs_review, reason=why))
    return drift


def _proposals(ctx: Ctx, by_id, since: datetime, as_of: datetime) -> tuple[list, list]:
    """Proposals open at as_of (with the votes cast by then), and those closed in the period."""
    quorum = get_int_setting(ctx.session, "quorum")
    opened, decided = [], []
    for p in ctx.session.scalars(select(Proposal).where(Proposal.created_at <= as_of)
                                 .options(selectinload(Proposal.votes)).order_by(Proposal.id)):
        operator = by_id[p.operator_id].qualname
        if p.closed_at is None or p.closed_at > as_of:
            votes = [v for v in p.votes if v.at <= as_of]
            opened.append(OpenProposal(
                id=p.id, operator=operator, kind=p.kind, targets=tuple(p.targets), proposer=p.proposer,
                created_at=p.created_at, age_days=(as_of - p.created_at).days,
                approvals=tuple(v.voter for v in votes if v.approve),
                rejections=tuple(v.voter for v in votes if not v.approve), quorum=quorum, rationale=p.rationale))
        elif p.closed_at > since:
            decided.append(DecidedProposal(
                id=p.id, operator=operator, kind=p.kind, targets=tuple(p.targets), outcome=p.status,
                decided_at=p.closed_at, rationale=p.rationale,
                votes=tuple(Vote(voter=v.voter, approve=v.approve, comment=v.comment) for v in p.votes)))
    return opened, decided


def _findings(ctx: Ctx, in_period: list, snapshots: list, as_of: datetime) -> list[CompatFinding]:
    """BC/FC findings of the imports in the period (new operators go to the review queue instead),
    in import order and by operator; the report puts errors first."""
    if not in_period:
        return []
    order = {s.id: i for i, s in enumerate(snapshots)}
    labels = {s.id: s.label for s in snapshots}
    from opgov.services.compat import judge_stored

    rows = ctx.session.execute(select(Finding.snapshot_id, Finding.base_snapshot_id, Finding.operator, Finding.kind,
                                      Finding.rule, Finding.severity, Finding.message)
                               .where(Finding.snapshot_id.in_([s.id for s in in_period]), Finding.kind != "new")).all()
    rows.sort(key=lambda r: (order[r.snapshot_id], r.operator, r.rule))
    # judged as of the report's day: an exception in force then (even one recorded after the
    # import) waives the break, as check-bc says
    judged = judge_stored(ctx.session, rows, as_of)
    return [CompatFinding(snapshot=labels[r.snapshot_id], operator=r.operator, kind=r.kind, rule=r.rule,
                          severity=j.severity if j.severity in SEVERITIES else "info", message=j.message)
            for r, j in zip(rows, judged)]


def _removed(ctx: Ctx, in_period: list, snapshots: list, by_id, by_name, deleted_at) -> list[RemovedOp]:
    """Operators an import of the period no longer holds, unless their lifecycle had reached
    ``deleted`` by then. An operator generated by ``autogen:`` leaves with its entry: it counts as
    deleted when the operator it is generated from was."""
    from opgov.db import entries

    removed = []
    index = {s.id: i for i, s in enumerate(snapshots)}
    for snap in in_period:
        if index[snap.id] == 0:
            continue
        previous = snapshots[index[snap.id] - 1]

        def deleted_by_then(op_id: int | None) -> bool:
            return op_id is not None and op_id in deleted_at and deleted_at[op_id] <= snap.imported_at

        now = entries.operator_ids_at(ctx.session, snap.position)
        gone = [(r.operator_id, r.schema) for r in entries.entries_at(ctx.session, previous.position)
                if r.operator_id not in now]
        rows = []
        for op_id, schema in gone:
            op = by_id[op_id]
            parent = by_name.get(op.autogen_of) if op.autogen_of else None
            if deleted_by_then(op_id) or (schema is None and parent is not None and deleted_by_then(parent.id)):
                continue
            rows.append(RemovedOp(snapshot=snap.label, operator=op.qualname, last_schema=schema or "",
                                  generated_from=op.autogen_of if schema is None else None))
        removed += sorted(rows, key=lambda r: r.operator)
    return removed
