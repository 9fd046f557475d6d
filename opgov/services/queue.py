"""The committee's workbench: every operator waiting for the committee, with its evidence and the
decision that evidence suggests (``opgov queue``, ``GET /api/v1/queue``, the ``/queue`` page),
and triage: a proposal opened, in one go, for each queued operator a glob or a name selects
(``opgov triage``) or for each suggestion (``opgov triage --suggested``).

An operator waits when the record says so: its category is undecided (new in a snapshot) or a
release added or dropped its ``core`` tag (both the review flag the import sets, as the weekly
report's review queue and ``opgov triage`` read it), or a proposal on it is open. The evidence
and the suggestion are :mod:`opgov.core.queue`'s; this module reads their facts from the
database (one read of each table), torch's recorded facts, the registered runtimes and the model
corpora (``OPGOV_MODELS_DIR``, or ``models``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select

from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.core.queue import (Advice, CompositeFact, Evidence, ModelsFact, Relative, RuntimeFact, RuntimesFact,
                              WaitFact, family_fact, kind_fact, suggest, torch_fact)
from opgov.core.vocab import QueueReason, Suggestion
from opgov.db.tables import operators, proposals, snapshots
from opgov.results.queue import (Agenda, AgendaItem, OpenProposalRef, QueueItem, QueueView, SuggestedProposal,
                                 SuggestedTriage, TriageResult)
from opgov.reads.common import Ctx

SORTS = ("waiting", "operator", "suggestion", "impact")
_SUGGESTION_ORDER = {s.value: i for i, s in enumerate(Suggestion)}


def _models(models: str | None):
    """(the corpora's name, no folder of the machine in it; their merged models) or (None, {})."""
    from opgov.reads.models import models_location

    location = models_location(models)
    if not location:
        return None, {}
    from opgov.reads.models import corpus_label, load_corpora

    return corpus_label(location), load_corpora(location)


@dataclass(frozen=True)
class QueueRead:
    """What :func:`queue_items` read: every queued operator with its evidence and suggestion
    (unfiltered, by name), the snapshot labels in history order and each label's place, and what
    the evidence was read from (torch's facts, the registered runtimes, the model corpora)."""

    items: tuple[QueueItem, ...]
    history: tuple[str, ...]
    place: dict[str, int]
    torch: str | None
    runtimes: tuple[str, ...]
    models: str | None


@dataclass
class _Sources:
    """What the evidence of every queued operator is read from: the snapshots, the open
    proposals, the present operators (their categories, kinds, families, graph operators),
    torch's facts, the rules, the registered runtimes and the model corpora."""

    history: list[str]
    labels_by_id: dict[int, str]
    snap_times: list
    open_by_op: dict
    categories: dict[str, str]
    kinds: dict[str, str]
    graph: dict
    families: dict[tuple[str, str], list[Relative]]
    base_of: dict[int, tuple[str, str]]
    facts: object
    rules: dict
    by_name: dict
    registered: tuple[str, ...]
    location: str | None
    corpus: dict
    runtimes_source: str = ""
    models_source: str = ""

    @property
    def latest(self) -> str | None:
        return self.history[-1] if self.history else None

    def is_core(self, op: str) -> bool:
        return self.categories.get(op) == "core" or op in self.graph

    def functional(self, op: str) -> str:  # what functionalization turns a target into, as the closure says
        from opgov.core.closure import functional_form

        return functional_form(op, self.kinds)


def queue_items(ctx: Ctx, *, models: str | None = None) -> QueueRead:
    """Every queued operator with its evidence and suggestion (unfiltered, by name); the snapshot
    labels in history order; each label's place; and what the evidence was read from."""
    c = operators.c
    rows = ctx.session.execute(select(c.id, c.qualname, c.namespace, c.name, c.schema, c.kind, c.tags,
                                      c.composite_implicit, c.present, c.first_snapshot_id, c.category,
                                      c.category_source, c.needs_review, c.review_reason)).all()
    src = _read_sources(ctx, rows, models)
    waiting = [r for r in rows if (r.needs_review and r.present) or r.id in src.open_by_op]
    items = [_queue_item(src, r) for r in waiting]
    items = _screened(ctx, items)
    items = _waiting_on(items)
    items.sort(key=lambda i: i.operator)
    return QueueRead(items=tuple(items), history=tuple(src.history),
                     place={label: i for i, label in enumerate(src.history)},
                     torch=src.facts.version if src.facts is not None else None, runtimes=src.registered,
                     models=src.location)


def _read_sources(ctx: Ctx, rows: list, models: str | None) -> _Sources:
    """What the queue's evidence is read from (:class:`_Sources`), one read of each table."""
    from opgov.core.graph_ops import graph_ops_of
    from opgov.core.schema import OperatorName
    from opgov.reads.registry import current_rules
    from opgov.reads.torch import opset_facts
    from opgov.reads.runtimes import runtimes_by_name

    session = ctx.session
    s = snapshots.c
    p = proposals.c
    families: dict[tuple[str, str], list[Relative]] = {}
    base_of: dict[int, tuple[str, str]] = {}
    for r in rows:
        if not r.present:
            continue
        key = (r.namespace, OperatorName(r.name).base)
        base_of[r.id] = key
        families.setdefault(key, []).append(Relative(operator=r.qualname, kind=r.kind, category=r.category,
                                                     decided=r.category_source == "decision"))
    by_name = runtimes_by_name(ctx)
    location, corpus = _models(models)
    src = _Sources(
        history=[label for label, in session.execute(select(s.label).order_by(s.position))],
        labels_by_id=dict(session.execute(select(s.id, s.label)).all()),
        snap_times=session.execute(select(s.label, s.imported_at).order_by(s.position)).all(),
        open_by_op={row.operator_id: row for row in session.execute(
            select(p.id, p.operator_id, p.kind, p.proposer, p.created_at).where(p.status == "open").order_by(p.id))},
        categories={r.qualname: r.category for r in rows if r.present},
        kinds={r.qualname: r.kind for r in rows if r.present},
        # the graph operators as `opset build` and the runtimes name them: from the snapshot's schemas
        graph=graph_ops_of((r.qualname, r.schema) for r in rows if r.present),
        families=families, base_of=base_of,
        facts=opset_facts(session),  # recorded by import-torch, else opgov's shipped facts (as opset build)
        rules=current_rules(session), by_name=by_name,
        registered=tuple(str(r.id) for versions in by_name.values() for r in versions),
        location=location, corpus=corpus)
    src.runtimes_source = ("registered runtimes (opgov runtimes add): " + ", ".join(src.registered) if src.registered
                           else "no runtime registered (opgov runtimes add)")
    src.models_source = (f"model corpora: {location}, {len(corpus)} models" if location
                         else "no model corpus configured (OPGOV_MODELS_DIR or --models)")
    return src


def _waits(src: _Sources, r) -> WaitFact:
    """Why and since when an operator waits: the import's review flag, an open proposal."""
    reasons, detail = [], []
    since = None
    if r.needs_review and r.present:
        why = r.review_reason or ""
        reasons.append(QueueReason.undecided.value if why.startswith("new in ") or not why
                       else QueueReason.tag_change.value)
        detail.append(why or "waits for the committee's review")
        since = _label_in(why, src.history) or src.labels_by_id.get(r.first_snapshot_id)
    proposal = src.open_by_op.get(r.id)
    if proposal is not None:
        reasons.append(QueueReason.proposal.value)
        detail.append(f"proposal {proposal.id} ({proposal.kind}) by {proposal.proposer} is open")
        if since is None:
            since = next((label for label, at in reversed(src.snap_times) if at <= proposal.created_at), src.latest)
    since = since or src.latest or ""
    return WaitFact(since=since, reasons=tuple(reasons), detail="; ".join(detail),
                    source="the record: the import's review flag" + (" and the open proposal" if proposal is not None else ""))


def _queue_item(src: _Sources, r) -> QueueItem:
    """One queued operator: its evidence, and the decision the evidence suggests."""
    from opgov.reads.runtimes import runtimes_of_operator

    op, latest = r.qualname, src.latest
    waits = _waits(src, r)
    proposal = src.open_by_op.get(r.id)
    ref = OpenProposalRef(id=proposal.id, kind=proposal.kind, proposer=proposal.proposer) if proposal is not None else None
    implemented = runtimes_of_operator(op, src.by_name)
    used = tuple(sorted(key for key, m in src.corpus.items() if op in m.exported_ops or op in m.core_aten_ops))
    evidence = Evidence(
        kind=kind_fact(op, r.kind, r.schema, src.graph.get(op)),
        family=family_fact(op, src.families.get(src.base_of.get(r.id, ("", "")), ()), latest),
        composite=CompositeFact(composite_implicit=bool(r.composite_implicit),
                                source=f"native_functions.yaml {latest}: its dispatch" if latest else "the import"),
        torch=(torch_fact(op, src.facts, src.is_core, src.graph.__contains__, src.functional)
               if src.facts is not None else None),
        runtimes=RuntimesFact(registered=src.registered, implemented_by=tuple(
            RuntimeFact(runtime=i.runtime, since=i.since or i.versions[0], latest=i.latest)
            for i in implemented), source=src.runtimes_source),
        models=ModelsFact(corpora=src.location, models=len(src.corpus), used_by=used, source=src.models_source),
        waiting=waits,
    )
    advice: Advice = suggest(evidence, tagged_core="core" in (r.tags or ()), rule=src.rules.get(op, ()))
    return QueueItem(operator=op, schema=r.schema or "", waiting_since=waits.since, reasons=waits.reasons,
                     category=r.category, category_source=r.category_source, proposal=ref,
                     evidence=evidence, suggestion=advice.suggestion.value, because=advice.because,
                     targets=tuple(advice.targets), impact=len(implemented) + len(used))


def _screened(ctx: Ctx, items: list[QueueItem]) -> list[QueueItem]:
    """Each suggestion checked as the proposal it stands for would be (:func:`opgov.services.governance.
    propose_allowed`, a dry run against the registry as it is, an open proposal aside): one the
    policy would refuse is not made; the operator is a human's call, with the refusal as why. So
    what the queue suggests is what ``triage --suggested`` proposes and what the policy accepts."""
    from dataclasses import replace

    from opgov.services.governance import propose_allowed

    wanted = [(i.operator, i.suggestion, f"suggested by the evidence: {i.because}",
               list(i.targets) if i.suggestion == Suggestion.decompose else None)
              for i in items if i.suggestion != Suggestion.human]
    if not wanted:
        return items
    refused = propose_allowed(ctx, wanted, apply=False, open_ok=True).refused
    return [replace(i, suggestion=Suggestion.human.value, targets=(),
                    because=f"the policy refuses {i.suggestion}: {refused[i.operator]} (the evidence: {i.because})")
            if i.operator in refused else i for i in items]


def _waiting_on(items: list[QueueItem]) -> list[QueueItem]:
    """A human's call only because export's decomposition ends in operators the queue suggests core
    says so: decided core, those operators make it a decomposition the policy accepts (the next
    `triage --suggested` proposes it)."""
    from dataclasses import replace

    suggested = {i.operator: i.suggestion for i in items}
    out = []
    for i in items:
        torch = i.evidence.torch
        if (i.suggestion == Suggestion.human and torch is not None and torch.export_decomposes and torch.not_core
                and all(suggested.get(op) == Suggestion.core for op in torch.not_core)):
            ops = ", ".join(torch.not_core)
            i = replace(i, because=f"{i.because} (the queue suggests {ops} core: once the committee decides so, "
                                   "this decomposition is one the policy accepts)")
        out.append(i)
    return out


def _label_in(reason: str, history: Sequence[str]) -> str | None:
    """The snapshot a review reason names first (``new in 2.6.0``, ``2.12.0 added the core tag…``)."""
    text = reason.removeprefix("new in ")
    found = [label for label in history if text == label or text.startswith(label + " ")]
    return max(found, key=len) if found else None


def _select(items: Sequence[QueueItem], history: Sequence[str], *, reason: Sequence[str] = (), match: Sequence[str] = (),
            snapshot: Sequence[str] = (), suggestion: Sequence[str] = ()) -> list[QueueItem]:
    for value in reason:
        if value not in {r.value for r in QueueReason}:
            raise BadInput(f"unknown reason {value!r} (one of {', '.join(r.value for r in QueueReason)})")
    for value in suggestion:
        if value not in _SUGGESTION_ORDER:
            raise BadInput(f"unknown suggestion {value!r} (one of {', '.join(_SUGGESTION_ORDER)})")
    for value in snapshot:
        if value not in history:
            raise NotFound(f"unknown snapshot {value!r}" + (f" (the snapshots: {', '.join(history)})" if history
                                                            else ": the database holds no snapshot yet"))
    return [i for i in items
            if (not reason or set(reason) & set(i.reasons))
            and (not match or any(fnmatch.fnmatchcase(i.operator, glob) for glob in match))
            and (not snapshot or i.waiting_since in snapshot)
            and (not suggestion or i.suggestion in suggestion)]


def queue(ctx: Ctx, *, reason: Sequence[str] = (), match: Sequence[str] = (), snapshot: Sequence[str] = (),
          suggestion: Sequence[str] = (), sort: str = "waiting", limit: int = 0, offset: int = 0,
          models: str | None = None) -> QueueView:
    """``opgov queue``: the operators waiting for the committee, each with its evidence and
    suggestion; filtered by ``reason``, a glob of ``match`` over the names, the ``snapshot`` they
    wait since and the ``suggestion``; sorted by ``sort`` (waiting: oldest first; operator;
    suggestion; impact: most runtimes and models first), then by name; a page of ``limit`` items
    (0: all) from ``offset``."""
    if sort not in SORTS:
        raise BadInput(f"unknown sort {sort!r} (one of {', '.join(SORTS)})")
    if limit < 0 or offset < 0:
        raise BadInput("limit and offset are whole numbers, 0 or more")
    return _view(queue_items(ctx, models=models), reason=reason, match=match, snapshot=snapshot,
                 suggestion=suggestion, sort=sort, limit=limit, offset=offset)


def _view(read: QueueRead, *, reason: Sequence[str] = (), match: Sequence[str] = (), snapshot: Sequence[str] = (),
          suggestion: Sequence[str] = (), sort: str = "waiting", limit: int = 0, offset: int = 0) -> QueueView:
    chosen = _select(read.items, read.history, reason=reason, match=match, snapshot=snapshot, suggestion=suggestion)
    place = read.place
    keys = {"waiting": lambda i: (place.get(i.waiting_since, -1), i.operator),
            "operator": lambda i: i.operator,
            "suggestion": lambda i: (_SUGGESTION_ORDER[i.suggestion], i.operator),
            "impact": lambda i: (-i.impact, i.operator)}
    chosen.sort(key=keys[sort])
    counts = {s.value: 0 for s in Suggestion}
    for item in chosen:
        counts[item.suggestion] += 1
    page = chosen[offset:offset + limit] if limit else chosen[offset:]
    return QueueView(total=len(chosen), offset=offset, limit=limit, sort=sort, counts=counts, items=tuple(page),
                     torch=read.torch, runtimes=read.runtimes, models=read.models)


def triage_suggested(ctx: Ctx, *, reason: Sequence[str] = (), match: Sequence[str] = (),
                     snapshot: Sequence[str] = (), suggestion: Sequence[str] = (), apply: bool = False,
                     models: str | None = None) -> SuggestedTriage:
    """``opgov triage --suggested``: a proposal for each queued operator the filters select whose
    suggestion is decompose (into its traced targets), core or custom, with the suggestion's
    reason as its rationale. A dry run (the default) names them and writes nothing; ``apply`` opens
    them, one event each, in this one transaction. An operator a human must look at (the queue
    already made a suggestion the policy refuses a human's call) and one with a proposal open are
    skipped, each with why, in a dry run as when applied; the policy is asked again as it opens
    them (a write between the two reads is refused with its words)."""
    from opgov.services.common import require
    from opgov.services.governance import propose_allowed

    if apply:
        require(ctx, "propose", "make proposals")
    read = queue_items(ctx, models=models)
    chosen = _select(read.items, read.history, reason=reason, match=match, snapshot=snapshot, suggestion=suggestion)
    if not chosen:
        raise BadInput("no operator of the queue matches")
    planned, skipped = [], {}
    for item in chosen:
        if item.proposal is not None:
            skipped[item.operator] = f"proposal {item.proposal.id} ({item.proposal.kind}) is open"
        elif item.suggestion == Suggestion.human:
            skipped[item.operator] = f"a human's call: {item.because}"
        else:
            planned.append(item)
    wanted = [(item.operator, item.suggestion, f"suggested by the evidence: {item.because}",
               list(item.targets) if item.suggestion == Suggestion.decompose else None) for item in planned]
    # what the policy refuses (a decomposition whose targets do not all end in core, ...) is skipped
    # with the refusal's words, in a dry run as when applied: the rest is proposed (the rules read once)
    screened = propose_allowed(ctx, wanted, apply=apply)
    allowed = screened.opened
    skipped.update((operator, f"the policy refuses it: {why}") for operator, why in screened.refused.items())
    opened = [SuggestedProposal(operator=operator, kind=kind, targets=tuple(targets or ()), rationale=rationale,
                                id=allowed[operator].id if allowed[operator] is not None else None)
              for operator, kind, rationale, targets in wanted if operator in allowed]
    return SuggestedTriage(applied=apply, proposals=tuple(opened), skipped=skipped)


AGENDA_SHOWN = 10  # operators the weekly report's agenda names in each of its two lists


def agenda(ctx: Ctx, *, shown: int = AGENDA_SHOWN, read: QueueRead | None = None) -> Agenda:
    """The weekly report's agenda: the queue's counts by suggestion, the oldest waiting, and those
    with the most runtime or model impact (the models of ``OPGOV_MODELS_DIR``); ``read``: what
    :func:`queue_items` answered, when the caller has it."""
    def entry(i: QueueItem) -> AgendaItem:
        return AgendaItem(operator=i.operator, waiting_since=i.waiting_since, suggestion=i.suggestion,
                          because=i.because, runtimes=len(i.evidence.runtimes.implemented_by),
                          models=len(i.evidence.models.used_by))

    read = read if read is not None else queue_items(ctx)
    oldest = _view(read, sort="waiting", limit=shown)
    impact = _view(read, sort="impact", limit=shown)
    return Agenda(total=oldest.total, counts=oldest.counts, oldest=tuple(entry(i) for i in oldest.items),
                  most_impact=tuple(entry(i) for i in impact.items if i.impact), shown=shown, torch=oldest.torch)


def _review_queue_names(session) -> list[str]:
    """The operators waiting for the committee (needs_review), present, functional, with no open
    proposal, by name."""
    waiting = session.execute(select(operators.c.id, operators.c.qualname)
                              .where(operators.c.needs_review.is_(True), operators.c.present.is_(True),
                                     operators.c.kind == "functional").order_by(operators.c.qualname)).all()
    opened = set(session.scalars(select(proposals.c.operator_id).where(proposals.c.status == "open")))
    return [qualname for id_, qualname in waiting if id_ not in opened]


def triage(ctx: Ctx, kind: str, rationale: str, *, match: list[str] | None = None,
           operators: list[str] | None = None, apply: bool = False) -> TriageResult:
    """Propose ``kind`` (core, decompose needs targets so is refused here, custom) with one rationale
    for every operator of the review queue that a glob of ``match`` or a name of ``operators`` selects.
    A dry run (the default) names them and writes nothing; ``apply`` opens one proposal each, in
    this one transaction (a refusal of any names it and writes none)."""
    from opgov.core.names import canonical
    from opgov.core.text import require_text
    from opgov.services.common import require
    from opgov.services.governance import propose_many

    if kind not in ("core", "custom"):
        raise BadInput(f"triage proposes core or custom (a decomposition needs its targets: propose-decompose), "
                       f"not {kind!r}")
    rationale = require_text(rationale, "the rationale")
    if not match and not operators:
        raise BadInput("name the operators to triage: --match GLOB and/or --file FILE")
    require(ctx, "propose", "make proposals")
    queue = _review_queue_names(ctx.session)
    wanted = {canonical(n) for n in operators or ()}
    outside = sorted(wanted - set(queue))
    if outside:
        raise PolicyRefusal(f"{outside[0]} is not in the review queue" + (f" (and {len(outside) - 1} more)"
                                                                      if len(outside) > 1 else ""), subject=outside[0])
    # nothing selected is an answer, not an error (the CLI says it and exits 2, as it always has)
    selected = [op for op in queue if op in wanted or any(fnmatch.fnmatchcase(op, glob) for glob in match or ())]
    opened = propose_many(ctx, [(op, kind, rationale, None) for op in selected]) if apply else []
    return TriageResult(kind=kind, applied=apply, selected=selected, proposals=opened)
