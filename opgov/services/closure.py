"""``opgov decomps closure``: the closure proof of a torch release's default decomposition table
(:mod:`opgov.core.closure`) from the facts ``decomps import-torch`` recorded (else those opgov
ships), against the core
operators of a snapshot (the operators its ``native_functions.yaml`` tags ``core``)."""

from __future__ import annotations

from sqlalchemy import select

from opgov.core.closure import functional_form, public_version
from opgov.core.errors import BadInput, NotFound
from opgov.db.entries import _at
from opgov.db.tables import entry_runs, operators, snapshots
from opgov.results.closure import ClosureDiff, ClosureOp, ClosureReport
from opgov.reads.common import Ctx
from opgov.reads.torch import shipped_facts, opset_facts, torch_facts, torch_releases


def facts_of(session, release: str | None):
    """The facts of ``release`` (``2.13.0`` names ``2.13.0+cpu`` too) that ``decomps import-torch``
    recorded, else those opgov ships for it; ``release`` None: the latest release recorded, else
    :func:`opgov.reads.torch.opset_facts` (the shipped facts of the latest snapshot's
    release, or of the nearest release opgov ships). ``TorchFacts.describe`` says which. One line
    naming the releases held and shipped when there are none or not that one."""
    from opgov.resources import shipped_torch_facts

    held = torch_releases(session)
    shipped = shipped_torch_facts()
    if release is None:
        facts = torch_facts(session) if held else opset_facts(session)
        if facts is None:
            raise BadInput("opgov holds no torch release's facts and ships none for the latest snapshot's label: "
                           "run `opgov decomps import-torch` (torch installed)")
        return facts
    matches = [v for v in held if v == release] or [v for v in held if public_version(v) == release]
    if matches:
        return torch_facts(session, matches[-1])
    if public_version(release) in shipped:
        return shipped_facts(str(shipped[public_version(release)]), None)
    raise NotFound(f"no facts of torch {release} (opgov holds: {', '.join(held) or 'none'}; ships: "
                   f"{', '.join(shipped) or 'none'}; `opgov decomps import-torch` records the installed one)")


def _core_at(session, label: str | None, version: str) -> tuple[str | None, set[str]]:
    """(the snapshot's label, the operators it tags ``core``). ``label`` None: the snapshot labelled
    as the torch release (``2.13.0``), else the latest."""
    s = snapshots.c
    if label is not None:
        row = session.execute(select(s.label, s.position).where(s.label == label)).first()
        if row is None:
            known = session.scalars(select(s.label).order_by(s.position)).all()
            raise NotFound(f"{label}: no snapshot of that label (known: {', '.join(known) or 'none'})")
    else:
        row = (session.execute(select(s.label, s.position).where(s.label == public_version(version))).first()
               or session.execute(select(s.label, s.position).order_by(s.position.desc()).limit(1)).first())
    if row is None:
        return None, set()
    r, o = entry_runs.c, operators.c
    core = {name for name, tags in session.execute(
        select(o.qualname, r.tags).join(operators, o.id == r.operator_id).where(_at(row.position)))
        if tags and "core" in tags}
    return row.label, core


def compute(session, release: str | None = None, snapshot: str | None = None):
    """(the facts, the core snapshot's label, :class:`opgov.core.closure.Closure`)."""
    from opgov.core.closure import closure

    from opgov.core.graph_ops import graph_ops_of

    facts = facts_of(session, release)
    label, core = _core_at(session, snapshot, facts.version)
    o = operators.c
    rows = session.execute(select(o.qualname, o.kind, o.schema, o.present)).all()
    kinds = {r.qualname: r.kind for r in rows}
    graph = graph_ops_of((r.qualname, r.schema) for r in rows if r.present)
    # functionalization: an exported graph holds a mutable target's ``_functional`` sibling
    # (``_native_batch_norm_legit`` → ``_native_batch_norm_legit_functional``), an in-place one's functional form
    targets = {op: tuple(functional_form(t, kinds) for t in into) if into is not None else None
               for op, into in facts.targets.items()}
    # an in-place key is functionalized before it is decomposed: ``foo_`` is ``foo``, which the trace
    # leaves out as the key itself; follow it (the table may decompose ``foo`` further)
    for op in facts.default:
        functional = _functional_of(op)
        if targets.get(op) is not None and functional is not None and functional in kinds:
            targets[op] = tuple(sorted({*targets[op], functional}))
    result = closure(version=facts.version, default=facts.default, targets=targets, reasons=facts.reasons,
                     core=core, snapshot=label, kind=lambda op: kinds.get(op) or _kind(op), forced=facts.forced,
                     graph=graph)
    return facts, label, result, kinds


def _functional_of(op: str) -> str | None:
    """``aten::mul_.Tensor`` → ``aten::mul.Tensor``; None for a name that is not in-place."""
    namespace, _, rest = op.partition("::")
    base, dot, overload = rest.partition(".")
    if _kind(op) != "inplace":
        return None
    return f"{namespace}::{base[:-1]}{dot}{overload}"


def _kind(op: str) -> str:
    base, _, overload = op.partition("::")[2].partition(".")
    if overload == "out" or overload.endswith("_out"):
        return "out"
    return "inplace" if base.endswith("_") and not base.endswith("__") else "functional"


def closure_report(ctx: Ctx, *, release: str | None = None, snapshot: str | None = None,
                   against: str | None = None) -> ClosureReport:
    """``opgov decomps closure``: every operator of ``release``'s default table (the latest release
    opgov holds facts of when None) closed or not, against the core tags of ``snapshot`` (the
    snapshot of the release's label, else the latest). ``against``: the closure to compare with —
    another torch release whose facts opgov holds (against its own snapshot), else a snapshot's
    label (this release's table against that snapshot's core tags)."""
    from opgov.core.closure import compare

    session = ctx.session
    facts, label, result, kinds = compute(session, release, snapshot)
    diff = None
    if against is not None:
        from opgov.resources import shipped_torch_facts

        held = torch_releases(session)
        if against in held or against in {public_version(v) for v in held} or against in shipped_torch_facts():
            other_facts, other_label, other, _ = compute(session, against, None)
        else:
            known = set(session.scalars(select(snapshots.c.label)))
            if against not in known:
                raise NotFound(f"--against {against}: neither a torch release opgov holds facts of "
                               f"({', '.join(held)}) nor a snapshot")
            other_facts, other_label, other, _ = compute(session, facts.version, against)
        change = compare(other, result)
        diff = ClosureDiff(other=other_facts.version, other_snapshot=other_label, stopped_closing=list(change.stopped),
                           started_closing=list(change.started), joined=list(change.added), left=list(change.removed),
                           ends_changed=list(change.ends_changed))
    items = [ClosureOp(op=i.op, kind=kinds.get(i.op) or _kind(i.op), closed=i.closed, ends_in=list(i.ends_in),
                       why=i.why, not_core=list(i.not_core), path=list(i.path) if not i.closed else [])
             for i in result.items]
    return ClosureReport(torch=facts.version, facts=facts.describe(), snapshot=label, core=result.core,
                         complete=facts.complete,
                         operators=len(items), closed=result.closed, not_closed=len(items) - result.closed,
                         items=items, releases=torch_releases(session), against=diff)


