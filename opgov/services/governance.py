"""Members, settings, proposals, votes and historical decisions. Each function is one use case, run inside
the caller's transaction; a refusal raises before anything is written."""

from __future__ import annotations

import dataclasses

from sqlalchemy import func, select

from opgov.db.models import DecompRule, Decision, Member, Operator, Proposal, Setting, Vote
from opgov.services.decomps import BreakChecks, refuse_if_breaks
from opgov.core.errors import BadInput, NotFound, OpgovError, PolicyRefusal
from opgov.core.names import parse_op_name
from opgov.formats.files import Content
from opgov.core.vocab import ProposalKind
from opgov.core.settings import SETTING_HELP, setting_value
from opgov.reads.common import (ROLES, Ctx, find_operator, find_proposal, get_int_setting, get_setting, latest_snapshot,
                                lookalike_member, role_of, single_user_mode)
from opgov.core.identity import member_name
from opgov.core.text import require_text
from opgov.services.common import log_event, logged_after, require, serialize
from opgov.results.governance import (
    DecisionsLoaded, MemberView, ProposalDecision, ProposalView, SettingChange, Settings, VoteView,
)

KIND_TO_CATEGORY = {kind.value: kind.category.value for kind in ProposalKind}


# --- members ----------------------------------------------------------------------------------------


def add_member(ctx: Ctx, name: str, role: str) -> MemberView:
    name = member_name(name)
    if role not in ROLES:
        raise BadInput(f"unknown role {role!r} (one of {', '.join(ROLES)})")
    session = ctx.session
    if single_user_mode(session):
        if role != "maintainer":
            raise PolicyRefusal("the first member must be a maintainer (otherwise nobody could govern)")
    else:
        require(ctx, "members", "add members")
    if session.scalars(select(Member).where(Member.name == name)).first() is not None:
        raise PolicyRefusal(f"{name} is already a member")
    taken = lookalike_member(session, name)
    if taken is not None:
        raise PolicyRefusal(f"{name!r} would read as the member {taken!r} (the same name once normalised and "
                            "case folded); choose a name a reader can tell apart")
    member = Member(name=name, role=role, added_at=ctx.now(), added_by=ctx.actor)
    session.add(member)
    log_event(ctx, "member.add", f"member:{name}", after={"role": role})
    return member_view(member)  # what the members list then shows (one reading of the clock)


def member_view(m: Member) -> MemberView:
    return MemberView(name=m.name, role=m.role, added_at=m.added_at, added_by=m.added_by)


def list_members(ctx: Ctx) -> list[MemberView]:
    return [member_view(m) for m in ctx.session.scalars(select(Member).order_by(Member.name))]


def remove_member(ctx: Ctx, name: str) -> MemberView:
    session = ctx.session
    # lock the maintainers first, then check: two removing each other at once must not leave none
    session.scalars(select(Member.id).where(Member.role == "maintainer").with_for_update()).all()
    require(ctx, "members", "remove members")
    member = session.scalars(select(Member).where(Member.name == name)).first()
    if member is None:
        raise NotFound(f"unknown member {name!r}")
    if member.role == "maintainer":
        maintainers = session.scalar(select(func.count()).select_from(Member).where(Member.role == "maintainer"))
        others = session.scalar(select(func.count()).select_from(Member).where(Member.name != name))
        if maintainers == 1 and others:
            raise PolicyRefusal(f"{name} is the last maintainer; add another maintainer first")
    removed = member_view(member)
    from opgov.services.tokens import revoke_member_tokens

    revoke_member_tokens(ctx, member, reason=f"{name} is no longer a member")
    session.delete(member)
    log_event(ctx, "member.remove", f"member:{name}", before={"role": member.role})
    return removed


# --- settings ---------------------------------------------------------------------------------------


def set_setting(ctx: Ctx, key: str, value: str | int) -> SettingChange:
    number = setting_value(key, value)
    require(ctx, "config", "change settings")
    before = get_setting(ctx.session, key)
    ctx.session.merge(Setting(key=key, value=str(number)))
    log_event(ctx, "config.set", f"setting:{key}", before={"value": before}, after={"value": str(number)})
    return SettingChange(key=key, before=before, value=str(number))


def list_settings(ctx: Ctx) -> Settings:
    values: dict[str, int | bool] = {key: get_int_setting(ctx.session, key) for key in SETTING_HELP}
    values["simulation"] = get_setting(ctx.session, "simulation") == "true"
    return Settings(**values)


# --- proposals --------------------------------------------------------------------------------------


def proposal_views(ctx: Ctx, proposals: list[Proposal]) -> list[ProposalView]:
    """The proposals as every answer shows them — the write that made or changed one, ``proposals``,
    ``proposals show``: with votes, the decision once approved, and the category it confirms (as
    its ``proposal.open`` event recorded it)."""
    if not proposals:
        return []
    ids = [p.id for p in proposals]
    quorum = get_int_setting(ctx.session, "quorum")
    decisions = {d.proposal_id: ProposalDecision(category=d.category, decided_at=d.decided_at,
                                                 decided_by=list(d.decided_by), rationale=d.rationale)
                 for d in ctx.session.scalars(select(Decision).where(Decision.proposal_id.in_(ids)))}
    wanted = set(ids)
    confirms: dict[int, str] = {}
    for event in logged_after(ctx, "proposal.open", {p.operator.qualname for p in proposals}):
        after = event.after
        pid = after.get("proposal")
        if pid in wanted and after.get("confirms"):
            # "confirmed" (category and source) since issue 24; before it the event held a bool only
            confirms[pid] = after.get("confirmed") or KIND_TO_CATEGORY[after["kind"]]
    views = []
    for p in proposals:
        votes = [VoteView(voter=v.voter, approve=v.approve, comment=v.comment, at=v.at) for v in p.votes]
        views.append(ProposalView(id=p.id, operator=p.operator.qualname, kind=p.kind, targets=list(p.targets),
                                  rationale=p.rationale, proposer=p.proposer, created_at=p.created_at,
                                  status=p.status, closed_at=p.closed_at,
                                  approvals=[v.voter for v in votes if v.approve],
                                  rejections=[v.voter for v in votes if not v.approve], votes=votes, quorum=quorum,
                                  decision=decisions.get(p.id), confirms=confirms.get(p.id)))
    return views


def _changes(op: Operator, kind: str, targets: list[str]) -> list:
    """The rule and category changes a proposal makes, for the decomposition checks."""
    from opgov.core.decomps import CategoryChange, RuleChange

    changes: list = [CategoryChange(op.qualname, KIND_TO_CATEGORY[kind])]
    if kind == "decompose":
        changes.append(RuleChange(op.qualname, tuple(targets)))
    return changes


def propose(ctx: Ctx, operator: str, kind: str, rationale: str, *, targets: list[str] | None = None) -> ProposalView:
    """Propose moving an operator into a category. Refusals name the reason."""
    planned = _plan(ctx, operator, kind, rationale, targets)
    refuse_if_breaks(ctx.session, planned.changes, what=planned.what)
    return proposal_views(ctx, [_open(ctx, planned)])[0]  # what a GET answers next


def propose_many(ctx: Ctx, wanted: list[tuple[str, str, str, list[str] | None]]) -> list[ProposalView]:
    """:func:`propose` of each ``(operator, kind, rationale, targets)`` of ``wanted``, in order, in
    this one transaction: the same proposals, events and refusals as one :func:`propose` after the
    other (the first refusal names its operator and writes none), with the decomposition rules
    checked once for the whole batch rather than once per proposal. The operators are distinct."""
    planned, refused = _screen(ctx, wanted, role=True)
    if refused:
        raise next(iter(refused.values()))  # the first refused, in the order asked
    return proposal_views(ctx, [_open(ctx, p) for p in planned.values()]) if planned else []


@dataclasses.dataclass(frozen=True)
class ProposalsAllowed:
    """What :func:`propose_allowed` answers, each in the order asked."""

    opened: dict[str, ProposalView | None]  # operator → its proposal (opened when applied, else None): passed
    refused: dict[str, str]  # operator → the refusal's words


def propose_allowed(ctx: Ctx, wanted: list[tuple[str, str, str, list[str] | None]], *,
                    apply: bool, open_ok: bool = False) -> ProposalsAllowed:
    """Each of ``wanted`` checked as :func:`propose` checks it, each alone against the registry as it
    is: those that pass (``opened``: operator → its proposal, opened when ``apply``, else None) and
    the others (``refused``: operator → the refusal's words). Without ``apply`` it writes nothing and
    asks no role; ``open_ok`` (a dry run only): a proposal open on the operator is set aside (the
    queue asks what the policy says of the suggestion itself)."""
    planned, refused = _screen(ctx, wanted, role=apply, open_ok=open_ok and not apply)
    views = (proposal_views(ctx, [_open(ctx, p) for p in planned.values()]) if apply and planned
             else [None] * len(planned))
    return ProposalsAllowed(opened=dict(zip(planned, views)),
                            refused={operator: str(error) for operator, error in refused.items()})


def _screen(ctx: Ctx, wanted: list[tuple[str, str, str, list[str] | None]], *,
            role: bool, open_ok: bool = False) -> tuple[dict[str, "_Planned"], dict[str, OpgovError]]:
    """:func:`_plan` and the decomposition rules' check of each of ``wanted``, the registry read once:
    operator → its plan for those that pass, operator → its refusal for the others, each in order."""
    checks, planned, refused = BreakChecks(ctx.session), {}, {}
    known = _Known.read(ctx.session, wanted, lock=role, open_ok=open_ok)
    for operator, kind, rationale, targets in wanted:
        try:
            plan = _plan(ctx, operator, kind, rationale, targets, role=role, open_ok=open_ok, known=known)
            checks.refuse(plan.changes, plan.what)
        except OpgovError as error:
            refused[operator] = error
        else:
            planned[operator] = plan
    return planned, refused


@dataclasses.dataclass(frozen=True)
class _Known:
    """The operators a batch of proposals names and the proposals open on them, each read in one
    query (a bulk triage plans ~1,200 proposals: one query per name was most of the queue's time).
    A name it does not hold is looked up alone, for the refusal's words."""

    operators: dict[str, Operator]
    open_on: dict[int, Proposal]

    CHUNK = 500  # names per IN (...): well within every database's bound on parameters

    @classmethod
    def read(cls, session, wanted: list[tuple[str, str, str, list[str] | None]], *, lock: bool,
             open_ok: bool) -> "_Known":
        proposed, targeted = cls._names(w[0] for w in wanted), cls._names(t for w in wanted for t in w[3] or ())
        operators: dict[str, Operator] = {}
        # a real proposal locks its operator's row (one open proposal per operator, even in a race),
        # not its targets'
        for names, locked in ((proposed, lock), (targeted - proposed, False)):
            ordered = sorted(names)
            for start in range(0, len(ordered), cls.CHUNK):
                query = select(Operator).where(Operator.qualname.in_(ordered[start:start + cls.CHUNK]))
                operators.update((op.qualname, op) for op in session.scalars(
                    query.with_for_update() if locked else query))
        open_on: dict[int, Proposal] = {}
        if not open_ok:
            ids = sorted(op.id for op in operators.values())
            for start in range(0, len(ids), cls.CHUNK):
                for proposal in session.scalars(select(Proposal).where(
                        Proposal.operator_id.in_(ids[start:start + cls.CHUNK]), Proposal.status == "open")):
                    open_on.setdefault(proposal.operator_id, proposal)
        return cls(operators, open_on)

    @staticmethod
    def _names(texts) -> set[str]:
        names = set()
        for text in texts:
            try:
                names.add(str(parse_op_name(text)))
            except OpgovError:
                pass  # refused with its own words when its proposal is planned
        return names

    def operator(self, session, text: str) -> Operator:
        try:
            found = self.operators.get(str(parse_op_name(text)))
        except OpgovError:
            found = None
        return found if found is not None else find_operator(session, text)


@dataclasses.dataclass(frozen=True)
class _Planned:
    """A proposal that passed every check but the decomposition rules', not written yet."""

    op: Operator
    kind: str
    targets: list[str]
    rationale: str
    confirms: bool

    @property
    def changes(self) -> list:
        return _changes(self.op, self.kind, self.targets)

    @property
    def what(self) -> str:
        return f"proposal {self.kind} for {self.op.qualname}"


def _plan(ctx: Ctx, operator: str, kind: str, rationale: str, targets: list[str] | None, *,
          role: bool = True, open_ok: bool = False, known: _Known | None = None) -> _Planned:
    if kind not in KIND_TO_CATEGORY:
        raise BadInput(f"unknown proposal kind {kind!r}")
    rationale = require_text(rationale, "the rationale")
    session = ctx.session
    # one open proposal per operator, even in a race: its row is locked (``known`` read it locked)
    op = known.operator(session, operator) if known else find_operator(session, operator, lock=role)
    # (``role`` False: a dry run, which writes nothing, locks nothing and asks no role)
    if role:
        require(ctx, "propose", "make proposals")
    category = KIND_TO_CATEGORY[kind]
    if op.lifecycle == "deleted":
        raise PolicyRefusal(f"{op.qualname} is deleted")
    if op.kind != "functional":
        article = "an" if op.kind[0] in "aeiou" else "a"  # an inplace / an out / a mutable / a scratch
        raise PolicyRefusal(f"{op.qualname} is {article} {op.kind} variant; categories are decided for functional "
                            "operators only (core holds only functional operators)")
    # A category the import placed (the yaml tag, the heuristic) awaits the committee: a proposal
    # may confirm it, which records a decision and takes the operator off the review queue. A
    # category the committee decided cannot be proposed again, unless the operator waits for the
    # committee again (a release added or dropped its core tag since): confirming it then is a decision.
    if op.category == category and op.category_source == "decision" and not op.needs_review:
        raise PolicyRefusal(f"{op.qualname} is already {category} (decided)")
    if kind == "decompose":
        from opgov.core.graph_ops import NOT_GRAPH_OPS, graph_op_reason, schema_reason

        graph = None if op.qualname in NOT_GRAPH_OPS else (
            graph_op_reason(op.qualname) or (schema_reason(op.schema) if op.schema else None))
        if graph is not None:
            raise PolicyRefusal(f"{op.qualname} is a graph operator ({graph}): torch.export holds it, so it is never "
                                "decomposed (propose core or custom)")
    # One open proposal per operator: two open at once (core and custom, say) could both pass.
    if open_ok:
        open_one = None
    elif known and op.qualname in known.operators:
        open_one = known.open_on.get(op.id)
    else:
        open_one = session.scalars(select(Proposal).where(Proposal.operator_id == op.id,
                                                          Proposal.status == "open")).first()
    if open_one is not None:
        raise PolicyRefusal(f"proposal {open_one.id} to make {op.qualname} {KIND_TO_CATEGORY[open_one.kind]} is "
                            "already open: decide or withdraw it first")
    resolved: list[str] = []
    if kind == "decompose":
        if not targets and not op.composite_implicit:
            raise BadInput("--into needs at least one target operator (only an operator with a "
                           "CompositeImplicitAutograd kernel decomposes without: its kernel is the decomposition)")
        for target in targets:
            target_op = known.operator(session, target) if known else find_operator(session, target)
            if target_op.qualname == op.qualname:
                raise PolicyRefusal(f"{op.qualname} cannot decompose into itself")
            resolved.append(target_op.qualname)
    elif targets:
        raise BadInput("--into applies only to propose-decompose")
    confirms = op.category == category  # the category the import placed, awaiting the committee
    return _Planned(op, kind, resolved, rationale, confirms)


def _open(ctx: Ctx, planned: _Planned) -> Proposal:
    op, kind, resolved, rationale, confirms = (planned.op, planned.kind, planned.targets, planned.rationale,
                                               planned.confirms)
    proposal = Proposal(operator_id=op.id, kind=kind, targets=resolved, rationale=rationale, proposer=ctx.actor,
                        created_at=ctx.now(), status="open")
    ctx.session.add(proposal)
    ctx.session.flush()
    log_event(ctx, "proposal.open", op.qualname, after={
        "proposal": proposal.id, "kind": kind, "targets": resolved, "confirms": confirms,
        **({"confirmed": f"{op.category} ({op.category_source})"} if confirms else {})}, reason=rationale)
    return proposal


def review(ctx: Ctx, proposal_id: int, *, approve: bool, comment: str) -> ProposalView:
    """A maintainer's vote. A later vote of the same maintainer replaces the earlier one. When
    approvals reach the quorum the proposal is approved and decided; when rejections reach it,
    it is rejected and closed."""
    comment = require_text(comment, "the comment")
    serialize(ctx, "import", shared=True)  # a vote may decide: never in the middle of an import
    proposal = find_proposal(ctx.session, proposal_id, lock=True)
    require(ctx, "review", "review proposals")
    replaced = _vote(ctx, proposal, approve, comment)
    view = show_proposal(ctx, proposal.id)  # what a GET answers next: the decision the vote made, if any
    return view if replaced is None else dataclasses.replace(view, replaced=replaced)


def review_many(ctx: Ctx, proposal_ids: list[int], *, approve: bool, comments: list[str]) -> list[ProposalView]:
    """A maintainer's vote on each of ``proposal_ids``, in this one transaction: each vote is its own
    record and event, as :func:`review` makes it, and decides its proposal when it reaches the
    quorum. ``comments``: one for every vote, or one per proposal in the same order. A refusal on
    any proposal names it and writes none of the votes (the caller's transaction rolls back)."""
    if not proposal_ids:
        raise BadInput("name at least one proposal to review")
    if len(comments) not in (1, len(proposal_ids)):
        raise BadInput(f"give one comment for every proposal, or one per proposal in the order of the ids "
                       f"({len(proposal_ids)} ids, {len(comments)} comments)")
    seen: set[int] = set()
    for pid in proposal_ids:
        if pid in seen:
            raise BadInput(f"proposal {pid} is named twice")
        seen.add(pid)
    texts = [require_text(c, "the comment") for c in comments]
    texts = texts * len(proposal_ids) if len(texts) == 1 else texts
    session = ctx.session
    serialize(ctx, "import", shared=True)  # a vote may decide: never in the middle of an import
    # lock every proposal first, in id order: two maintainers voting on the same proposals in bulk,
    # whatever order each names them in, wait for each other rather than deadlock
    for pid in sorted(proposal_ids):
        find_proposal(session, pid, lock=True)
    require(ctx, "review", "review proposals")
    proposals = [find_proposal(session, pid) for pid in proposal_ids]
    for proposal in proposals:  # every refusal before the first vote
        _may_vote(ctx, proposal)
    checks = BreakChecks(session)  # the registry read once for every decision these votes make
    replaced = [_vote(ctx, proposal, approve, comment, checks) for proposal, comment in zip(proposals, texts)]
    return [view if earlier is None else dataclasses.replace(view, replaced=earlier)
            for view, earlier in zip(proposal_views(ctx, proposals), replaced)]


def _may_vote(ctx: Ctx, proposal: Proposal) -> None:
    if proposal.status != "open":
        raise PolicyRefusal(f"proposal {proposal.id} is {proposal.status}, not open")
    if proposal.proposer == ctx.actor:
        raise PolicyRefusal(f"{ctx.actor} proposed {proposal.id} and may not review it")


def _vote(ctx: Ctx, proposal: Proposal, approve: bool, comment: str,
          checks: BreakChecks | None = None) -> VoteView | None:
    """Record one vote on a locked proposal and decide or reject it when the vote reaches the quorum;
    the maintainer's earlier vote on it that this one replaces, if any. ``checks``: the
    decomposition checks of a bulk review, shared by its decisions."""
    session = ctx.session
    _may_vote(ctx, proposal)
    now = ctx.now()
    vote = session.scalars(select(Vote).where(Vote.proposal_id == proposal.id, Vote.voter == ctx.actor)).first()
    before = replaced = None
    if vote is None:
        vote = Vote(proposal_id=proposal.id, voter=ctx.actor, approve=approve, comment=comment, at=now)
        session.add(vote)
    else:  # the earlier vote stays in the log (this event's `before`, and its own event)
        replaced = VoteView(voter=vote.voter, approve=vote.approve, comment=vote.comment, at=vote.at)
        before = {"approve": vote.approve, "comment": vote.comment, "at": replaced.at.isoformat()}
        vote.approve, vote.comment, vote.at = approve, comment, now
    session.flush()
    session.refresh(proposal)
    log_event(ctx, "proposal.vote", proposal.operator.qualname, before=before,
              after={"proposal": proposal.id, "approve": approve}, reason=comment)
    quorum = get_int_setting(session, "quorum")
    approvals = [v for v in proposal.votes if v.approve]
    rejections = [v for v in proposal.votes if not v.approve]
    if len(approvals) >= quorum:
        _decide(ctx, proposal, approvals, checks)
    elif len(rejections) >= quorum:
        proposal.status, proposal.closed_at = "rejected", now
        log_event(ctx, "proposal.rejected", proposal.operator.qualname,
                  after={"proposal": proposal.id, "rejected_by": [v.voter for v in rejections]})
    session.flush()
    return replaced


def _decide(ctx: Ctx, proposal: Proposal, approvals: list[Vote], checks: BreakChecks | None = None) -> None:
    session, now = ctx.session, ctx.now()
    # lock the operator and read it afresh: what we write back is derived from what we read
    op = session.scalars(select(Operator).where(Operator.id == proposal.operator_id).with_for_update()
                         .execution_options(populate_existing=True)).one()
    category = KIND_TO_CATEGORY[proposal.kind]
    # the rules or categories may have changed since the proposal was made
    changes, what = _changes(op, proposal.kind, list(proposal.targets)), f"deciding proposal {proposal.id}"
    if checks is None:
        refuse_if_breaks(session, changes, what=what)
    else:
        checks.refuse(changes, what)
    before = {"category": op.category, "category_source": op.category_source, "needs_review": op.needs_review,
              "review_reason": op.review_reason}
    op.category, op.category_source, op.needs_review, op.review_reason = category, "decision", False, None
    proposal.status, proposal.closed_at = "approved", now
    votes = [{"voter": v.voter, "approve": v.approve, "comment": v.comment} for v in proposal.votes]
    session.add(Decision(operator_id=op.id, proposal_id=proposal.id, category=category, targets=list(proposal.targets),
                         rationale=proposal.rationale, decided_at=now, decided_by=[v.voter for v in approvals],
                         votes=votes, imported=False, source=f"proposal {proposal.id}"))
    _set_rule(ctx, op.qualname, proposal.kind, list(proposal.targets), f"proposal {proposal.id}")
    if checks is not None:
        checks.record(op.qualname, category, list(proposal.targets) if proposal.kind == "decompose" else None)
    log_event(ctx, "category.decided", op.qualname, before=before,
              after={"category": category, "targets": list(proposal.targets), "proposal": proposal.id,
                     "decided_by": [v.voter for v in approvals]},
              reason=proposal.rationale)


def _set_rule(ctx: Ctx, qualname: str, kind: str, targets: list[str], detail: str) -> None:
    """A decomposition decision records its rule; leaving "decomposable" drops the rule."""
    session = ctx.session
    rule = session.scalars(select(DecompRule).where(DecompRule.operator == qualname)).first()
    if kind == "decompose":
        if rule is None:
            session.add(DecompRule(operator=qualname, targets=targets, source="decision", source_detail=detail,
                                   created_at=ctx.now(), created_by=ctx.actor))
        else:
            rule.targets, rule.source, rule.source_detail = targets, "decision", detail
            rule.created_at, rule.created_by = ctx.now(), ctx.actor
    elif rule is not None and kind in ("core", "custom"):
        session.delete(rule)


def withdraw(ctx: Ctx, proposal_id: int) -> ProposalView:
    session = ctx.session
    proposal = find_proposal(session, proposal_id, lock=True)
    require(ctx, "withdraw", "withdraw proposals")
    role = role_of(session, ctx.actor)
    if role != "maintainer" and not single_user_mode(session) and proposal.proposer != ctx.actor:
        raise PolicyRefusal(f"{ctx.actor} may withdraw only their own proposals (proposal {proposal.id} is "
                            f"{proposal.proposer}'s)")
    if proposal.status != "open":
        raise PolicyRefusal(f"proposal {proposal.id} is {proposal.status}, not open")
    proposal.status, proposal.closed_at = "withdrawn", ctx.now()
    log_event(ctx, "proposal.withdrawn", proposal.operator.qualname, after={"proposal": proposal.id})
    return proposal_views(ctx, [proposal])[0]


def list_proposals(ctx: Ctx, *, open: bool = False) -> list[ProposalView]:  # noqa: A002 - the API's name
    """Every proposal (``open``: only open ones), with votes."""
    query = select(Proposal).order_by(Proposal.id)
    if open:
        query = query.where(Proposal.status == "open")
    return proposal_views(ctx, list(ctx.session.scalars(query)))


def show_proposal(ctx: Ctx, proposal_id: int) -> ProposalView:
    """One proposal with its votes, and its decision once approved."""
    return proposal_views(ctx, [find_proposal(ctx.session, proposal_id)])[0]


# --- historical decisions -------------------------------------------------------------------------


def load_decisions(ctx: Ctx, file: str | Content, *, shown_as: str | None = None) -> DecisionsLoaded:
    """Record a file of historical decisions (dated, marked as imported) in one go. ``file``: a
    path, or an upload as :class:`~opgov.formats.files.Content`, named in messages and the result
    as the client named it. A decision on an operator the database does not know (an older
    release's registry lacks it, or a target of it) is skipped and named in ``skipped``, never
    the whole file: loading the file again once a snapshot holds it records it."""
    from opgov.formats.decisions import parse_decisions, read_decisions_file

    require(ctx, "decisions", "load decisions")
    if isinstance(file, Content):
        records, shown = parse_decisions(file.data, file.name), file.name
    else:
        records, shown = read_decisions_file(file), file
    shown = shown_as or shown
    session = ctx.session
    serialize(ctx, "import", shared=True)  # categories are read, then written back
    ops, absent = _decided_operators(session, records, shown)
    records = [r for r in records if r.op not in absent]
    # lock the operators whose categories are about to be written, in the order tick locks them
    session.scalars(select(Operator).where(Operator.id.in_({op.id for op in ops.values()}))
                    .order_by(Operator.qualname).with_for_update().execution_options(populate_existing=True)).all()
    latest = latest_snapshot(session)
    loaded, superseded = 0, []
    for record in records:
        op = ops[record.op]
        existing = session.scalars(select(Decision).where(Decision.operator_id == op.id, Decision.imported,
                                                          Decision.source == record.source)).first()
        if existing is not None:
            continue  # loading the same file twice records nothing new
        if _record_decision(ctx, record, op, latest) is not None:
            superseded.append(op.qualname)
        loaded += 1
    return DecisionsLoaded(file=shown, decisions=len(records) + len(absent), recorded=loaded,
                           already_recorded=len(records) - loaded, superseded=superseded,
                           decomposition_errors=_decomposition_errors(session, records), skipped=absent)


def _decided_operators(session, records, shown: str) -> tuple[dict[str, Operator], dict[str, str]]:
    """Every record checked before anything is written: (each decided operator's row, the
    decisions skipped because the database does not know their operator or a target, with why).
    A name opgov cannot read refuses the file."""
    ops = {}
    absent: dict[str, str] = {}
    for record in records:
        missing = []
        for name in (record.op, *record.into):
            try:
                found = find_operator(session, name)
            except NotFound as err:  # not in this database (yet): the decision is skipped, with why
                missing.append(err.message if name == record.op else f"its target: {err.message}")
            except BadInput as err:  # a name opgov cannot read: the file is wrong
                raise BadInput(err.message if name == record.op else f"target of {record.op}: {err.message}",
                               file=shown, line=record.line) from None
            else:
                if name == record.op:
                    ops[record.op] = found
        if missing:
            ops.pop(record.op, None)
            absent[record.op] = f"{shown}:{record.line}: {'; '.join(missing)}"
    return ops, absent


def _record_decision(ctx: Ctx, record, op: Operator, latest) -> str | None:
    """One historical decision on record, its rule and its event; the operator takes its category
    unless a newer snapshot overturned it (then the note that says so is returned)."""
    session = ctx.session
    before = {"category": op.category, "category_source": op.category_source, "needs_review": op.needs_review}
    targets = [str(find_operator(session, t).qualname) for t in record.into]
    # A historical decision to take an operator out of core, older than a snapshot that still
    # tags it core, was overturned later (PyTorch tagged it core after the decision): it goes
    # on record, and the category stays what the newer registry says.
    note = None
    if (record.category != "core" and op.present and "core" in op.tags and latest is not None
            and record.decided_at < latest.imported_at and op.category_source != "decision"):
        note = f"superseded: snapshot {latest.label} (newer) tags it core"
    session.add(Decision(operator_id=op.id, proposal_id=None, category=record.category, targets=targets,
                         rationale=record.rationale, decided_at=record.decided_at, decided_by=record.decided_by,
                         votes=[], imported=True, source=record.source, note=note))
    if note is None:
        op.category, op.category_source, op.needs_review, op.review_reason = (record.category, "decision", False,
                                                                              None)
        _set_rule(ctx, op.qualname, "decompose" if record.category == "decomposable" else record.category,
                  targets, record.source)
    log_event(ctx, "category.decided" if note is None else "category.decision_recorded", op.qualname,
              before=before, after={"category": record.category, "targets": targets, "imported": True,
                                    "decided_at": record.decided_at.isoformat(), "note": note,
                                    "decided_by": list(record.decided_by)},
              reason=record.rationale)
    return note


def _decomposition_errors(session, records) -> list[str]:
    """Historical decisions are facts: their rules are recorded even when they end in non-core
    operators (the 2023 review decomposes mish into softplus, which is not core). Say so now,
    rather than leave it for check-decomps to find."""
    from opgov.core.decomps import check
    from opgov.reads.registry import current_rules, implicit_operators, registry_state

    session.flush()
    ruled = {r.op for r in records if r.category == "decomposable"}
    categories, lifecycle, _ = registry_state(session)
    return [v.message for v in check(current_rules(session), categories, lifecycle,
                                     implicit=implicit_operators(session))
            if v.severity == "error" and v.operator in ruled]


def record_decisions(ctx: Ctx, decisions: Content | None = None, shipped: str | None = None) -> DecisionsLoaded:
    """:func:`load_decisions` of one of a decisions file (``decisions``, as the client named it) or
    the name of a file opgov ships (``shipped``: opgov.resources.SHIPPED_DATA): what `opgov
    decisions load` asks, in-process and of a server alike. The role is checked before anything."""
    from opgov.resources import SHIPPED_DECISIONS, shipped_data

    require(ctx, "decisions", "load decisions")  # before reading what a member without the role sent
    if (decisions is None) == (shipped is None):
        raise BadInput("give one of `decisions` (a decisions file) and `shipped` (the name of a shipped one)")
    if decisions is not None:
        return load_decisions(ctx, decisions)
    path = shipped_data(shipped) if shipped in SHIPPED_DECISIONS else None
    if path is None:
        raise BadInput(f"shipped: no shipped decisions file {shipped!r} (there are: {', '.join(SHIPPED_DECISIONS)})")
    return load_decisions(ctx, str(path), shown_as=shipped)
