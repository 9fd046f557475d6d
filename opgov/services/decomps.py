"""Decomposition rules in the database, their checks, the opset builder, and the model checks the
runtime use cases ask (opgov.services.runtimes).

The logic is pure (:mod:`opgov.core.decomps`, :mod:`opgov.core.opset`, :mod:`opgov.core.corpus`); this module
feeds it from the database and records rule changes. Every query goes through the Core tables of
:mod:`opgov.db.tables`, so these use cases run on an ORM ``Session`` (inside governance use cases)
and on a plain Core ``Connection`` alike; the read-only commands (``opset build``,
``check-model``, ``check-decomps``) never import ``sqlalchemy.orm``.

Where a rule comes from decides which one wins when two sources give one operator a rule:
a committee **decision** outranks a rules **file**, which outranks **torch**'s decomposition
table (:data:`PRECEDENCE`). Between two files the later load wins.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import json

from sqlalchemy import delete, insert, select, update

from opgov.db.tables import decomp_rules, operators, settings
from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.formats.files import Content
from opgov.reads.common import Ctx, get_int_setting
from opgov.reads.models import corpora_dir, load_corpora
from opgov.reads.registry import current_rules, implicit_operators, out_variants, registry_state
from opgov.reads.torch import TORCH_FACTS_KEY, opset_facts, torch_facts
from opgov.services.common import log_event, require

if TYPE_CHECKING:
    from opgov.formats.torch_decomps import TorchTable
    from opgov.results.decomps import OpsetReport, ViolationsReport
    from opgov.results.decomps import RuleOutcome, RulesLoaded, RuleView, TorchRulesImported
    from opgov.results.rendered import Rendered

# A rule recorded by a committee decision outranks one from a rules file, which outranks one
# derived from torch's decomposition table.
PRECEDENCE = {"decision": 3, "file": 2, "torch": 1}
PRECEDENCE_TEXT = "decision > file > torch"
# how many broken paths a refusal spells out before "and N more"
_SHOWN = 3


# --- reading the registry ---------------------------------------------------------------------------


def _known_operators(session) -> list[str]:
    return list(session.scalars(select(operators.c.qualname)))


def _unknown(name: str, known: Sequence[str]) -> str:
    if not known:
        return f"unknown operator {name}: the database holds no snapshot yet (run `opgov import`)"
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.75)
    return f"unknown operator {name}" + (f"; did you mean {', '.join(close)}?" if close else "")


# --- torch's facts, per release -----------------------------------------------------------------------


def _save_torch_facts(session, table, *, whole: bool) -> None:
    """Record ``table`` (a :class:`opgov.formats.torch_decomps.TorchTable`) as the facts of its
    torch release, the latest and under the release's own key; a partial import (``--only``) of
    the same release adds to what is recorded."""
    from opgov.formats.torch_decomps import facts_json

    value = json.dumps(facts_json(table, torch_facts(session, table.version), whole=whole), sort_keys=True)
    keys = (TORCH_FACTS_KEY, f"{TORCH_FACTS_KEY}@{table.version}"[:100])
    session.execute(delete(settings).where(settings.c.key.in_(keys)))
    session.execute(insert(settings).values([{"key": key, "value": value} for key in keys]))


# --- refusing changes that break a decomposition ----------------------------------------------------


def refuse_if_breaks(session, changes: list, *, what: str) -> None:
    """Refuse (exit 1) a change that would make a decomposition produce a non-core operator, or
    add a cycle or a dead target. The message spells out the paths (the first few)."""
    from opgov.core.decomps import would_break

    categories, lifecycle, _ = registry_state(session)
    broken = would_break(current_rules(session), categories, changes, lifecycle=lifecycle,
                         implicit=implicit_operators(session))
    _refuse(broken, what)


class BreakChecks:
    """:func:`refuse_if_breaks` for the many changes of one transaction (a bulk triage, a bulk
    review deciding a hundred proposals): the registry's rules and categories are read once, each
    change is checked on the part of the registry it can change
    (:func:`opgov.core.decomps.would_break_near`), and :meth:`record` keeps the copy in step with
    what the caller writes."""

    def __init__(self, session) -> None:
        self.session = session
        self._state: tuple[dict, dict, dict, frozenset] | None = None
        self._callers: dict[str, set[str]] = {}  # target → the operators whose rules name it

    def _read(self) -> tuple[dict, dict, dict, frozenset]:
        from opgov.core.decomps import _callers

        if self._state is None:
            categories, lifecycle, _ = registry_state(self.session)
            rules = dict(current_rules(self.session))
            self._state = (rules, categories, lifecycle, frozenset(implicit_operators(self.session)))
            self._callers = _callers(rules)
        return self._state

    def refuse(self, changes: list, what: str) -> None:
        """Refuse (exit 1) as :func:`refuse_if_breaks` would, in the same words."""
        from opgov.core.decomps import would_break_near

        rules, categories, lifecycle, implicit = self._read()
        _refuse(would_break_near(rules, categories, changes, lifecycle=lifecycle, implicit=implicit,
                                 callers=self._callers), what)

    def record(self, op: str, category: str, rule: Sequence[str] | None) -> None:
        """The caller moved ``op`` to ``category`` and set its rule (None: it has none now)."""
        if self._state is None:
            return  # read afresh when first needed
        rules, categories, _, _ = self._state
        if op in categories:  # the operators present or deleted, as registry_state reads them
            categories[op] = category
        for target in rules.pop(op, ()):
            self._callers[target].discard(op)
        if rule is not None:
            rules[op] = tuple(rule)
            for target in rule:
                self._callers.setdefault(target, set()).add(op)


def _refuse(broken: list, what: str) -> None:
    if broken:
        shown = "; ".join(v.message for v in broken[:_SHOWN])
        more = f"; and {len(broken) - _SHOWN} more" if len(broken) > _SHOWN else ""
        raise PolicyRefusal(f"{what} would break {len(broken)} decomposition(s): {shown}{more}",
                            subject=broken[0].operator)


# --- recording rules --------------------------------------------------------------------------------


def _record(ctx: Ctx, existing: dict[str, Any], op: str, targets: list[str], source: str,
            detail: str) -> RuleOutcome:
    """Record ``op → targets`` unless a rule of higher precedence exists.

    The outcome is added/updated/unchanged/kept; ``previous`` is the source and detail of the
    rule that was there (updated, kept).
    """
    from opgov.results.decomps import PreviousRule, RuleOutcome

    rule = existing.get(op)
    if rule is None:
        ctx.session.execute(insert(decomp_rules).values(operator=op, targets=targets, source=source,
                                                        source_detail=detail, created_at=ctx.now(),
                                                        created_by=ctx.actor))
        return RuleOutcome(operator=op, outcome="added", previous=None)
    previous = PreviousRule(source=rule.source, detail=rule.source_detail, into=list(rule.targets))
    if PRECEDENCE[rule.source] > PRECEDENCE[source]:
        return RuleOutcome(operator=op, outcome="kept", previous=previous)
    if list(rule.targets) == targets and rule.source == source:
        return RuleOutcome(operator=op, outcome="unchanged", previous=previous)
    ctx.session.execute(update(decomp_rules).where(decomp_rules.c.id == rule.id).values(
        targets=targets, source=source, source_detail=detail, created_at=ctx.now(), created_by=ctx.actor))
    return RuleOutcome(operator=op, outcome="updated", previous=previous)


def _existing_rules(session) -> dict[str, Any]:
    return {r.operator: r for r in session.execute(select(decomp_rules))}


def _summary(outcomes: list[RuleOutcome]) -> dict[str, int]:
    counts = {"added": 0, "updated": 0, "unchanged": 0, "kept": 0}
    for o in outcomes:
        counts[o.outcome] += 1
    return counts


def load_rules(ctx: Ctx, file: str | Content) -> RulesLoaded:
    """Record the rules of a rules file (or the 2023 review's facts file) as source ``file``.

    Bad input (exit 2, naming the file and line): a malformed file, an operator the registry
    does not know. Refused (exit 1, nothing written): rules that would make a decomposition
    produce a non-core operator, a cycle or a deprecated target; the message has the paths.
    A rule recorded by a committee decision is kept (decision > file > torch). ``file``: a path,
    or an upload as :class:`~opgov.formats.files.Content`, named in messages, the result and the
    log as the client named it.
    """
    from opgov.core.decomps import RuleChange
    from opgov.formats.rules import load_rules_file, parse_rules

    require(ctx, "decomps", "change decomposition rules")
    if isinstance(file, Content):
        rules_file, shown = parse_rules(file.data, file.name), file.name
    else:
        rules_file, shown = load_rules_file(file), file
    known = _known_operators(ctx.session)
    known_set = set(known)
    for rule in rules_file.rules:
        for op in (rule.op, *rule.into):
            if op not in known_set:
                where = "" if op == rule.op else f" (a target of {rule.op})"
                raise BadInput(_unknown(op, known) + where, file=shown, line=rule.line)
    existing = _existing_rules(ctx.session)
    outranked = {op for op, r in existing.items() if PRECEDENCE[r.source] > PRECEDENCE["file"]}
    changes = [RuleChange(r.op, r.into) for r in rules_file.rules if r.op not in outranked]
    refuse_if_breaks(ctx.session, changes, what=f"loading {shown}")
    detail = f"{rules_file.source} ({shown})"
    outcomes = [_record(ctx, existing, rule.op, list(rule.into), "file", detail) for rule in rules_file.rules]
    counts = _summary(outcomes)
    log_event(ctx, "decomps.load", f"file:{shown}", after={"source": rules_file.source, **counts})
    from opgov.results.decomps import RulesLoaded

    return RulesLoaded(file=shown, source=rules_file.source, rules=len(rules_file.rules), **counts,
                       precedence=PRECEDENCE_TEXT, changes=[o for o in outcomes if o.outcome != "added"])


def load_rules_upload(ctx: Ctx, *, rules: Content) -> RulesLoaded:
    """``opgov decomps load`` (POST /api/v1/decomps): :func:`load_rules` of the file the client
    read (its bytes, named as the user gave it)."""
    return load_rules(ctx, rules)


def _torch_import_selection(ctx: Ctx, only: Sequence[str] | None) -> list[str] | None:
    """What ``import_torch_rules`` would trace (None: the whole table), refused before any tracing
    when the actor may not change rules or ``only`` names an operator the registry does not know."""
    from opgov.core.names import canonical

    require(ctx, "decomps", "change decomposition rules")
    if not only:
        return None
    known = _known_operators(ctx.session)
    known_set = set(known)
    wanted = [canonical(name) for name in only]
    for name in wanted:
        if name not in known_set:
            raise NotFound(_unknown(name, known) + " (--only)")
    return wanted


def import_torch_rules(ctx: Ctx, *, time_budget_s: float = 50.0, only: Sequence[str] | None = None,
                       table: TorchTable | None = None) -> TorchRulesImported:
    """Record the rules observed by tracing torch.export's default decomposition table (source
    ``torch``; see :mod:`opgov.formats.torch_decomps` for what is derived and what is not).

    torch's table is a fact about PyTorch, so its rules are recorded even where
    ``check-decomps`` then finds that they end in non-core operators; the result counts the
    errors the import introduced. Rules from decisions and files are kept. Targets the registry
    does not know are dropped (and listed); operators it does not know get no rule. ``table``:
    one traced already (by ``read_torch_table(only=_torch_import_selection(...))``), so that a
    server does not hold its write transaction while torch traces.
    """
    from opgov.core.decomps import RuleChange, would_break
    from opgov.formats.torch_decomps import read_torch_table

    wanted = _torch_import_selection(ctx, only)
    session = ctx.session
    known = _known_operators(session)
    known_set = set(known)
    if table is None:
        from opgov.resources import shipped_torch_facts

        table = read_torch_table(time_budget_s=time_budget_s, only=wanted, shipped=shipped_torch_facts())
    if table.default:  # a run that read torch's table (not one out of time before it began)
        _save_torch_facts(session, table, whole=wanted is None)
    # the rules torch.export applies by default; the rest of torch._decomp is kept as facts only
    found = tuple(rule for rule in table.rules if rule.in_default or not table.default)
    detail = f"torch {table.version} default decomposition table, traced"
    untraced: list[dict[str, str | None]] = []
    unknown: list[str] = []
    dropped: dict[str, list[str]] = {}
    recordable: list[tuple[str, list[str]]] = []
    for rule in found:
        if rule.op not in known_set:
            unknown.append(rule.op)
        elif rule.into is None:
            untraced.append({"operator": rule.op, "reason": rule.reason})
        else:
            recordable.append((rule.op, [t for t in rule.into if t in known_set]))
            outside = [t for t in rule.into if t not in known_set]
            if outside:
                dropped[rule.op] = outside
    existing = _existing_rules(session)
    categories, lifecycle, _ = registry_state(session)
    applied = [RuleChange(op, tuple(into)) for op, into in recordable
               if op not in existing or PRECEDENCE[existing[op].source] <= PRECEDENCE["torch"]]
    introduced = would_break(current_rules(session), categories, applied, lifecycle=lifecycle,
                             implicit=implicit_operators(session))
    outcomes = [_record(ctx, existing, op, into, "torch", detail) for op, into in recordable]
    counts = _summary(outcomes)
    log_event(ctx, "decomps.import_torch", "torch", after={"table": len(found), **counts,
                                                            "untraced": len(untraced),
                                                            "errors_introduced": len(introduced)})
    from opgov.results.decomps import TorchRulesImported, Untraced

    return TorchRulesImported(
        torch=table.version, table=len(found), not_in_table=sorted({*table.absent, *(r.op for r in table.rules if not r.in_default)}),
        **counts,
        precedence=PRECEDENCE_TEXT, changes=[o for o in outcomes if o.outcome != "added"],
        untraced=[Untraced(**u) for u in untraced], not_in_registry=unknown, dropped_targets=dropped,
        errors_introduced=len(introduced), first_errors=[v.message for v in introduced[:_SHOWN]])


def import_torch(begin: Callable[[], Any], *, budget: float = 50.0,
                 only: Sequence[str] = ()) -> TorchRulesImported:
    """``opgov decomps import-torch``: :func:`import_torch_rules`, torch traced between two write
    transactions (``begin()`` opens one) so that other writes go on meanwhile: the first checks
    the role and the names before any tracing, the second records what was traced."""
    from opgov.formats.torch_decomps import read_torch_table

    with begin() as ctx:
        wanted = _torch_import_selection(ctx, list(only) or None)
    from opgov.resources import shipped_torch_facts

    table = read_torch_table(time_budget_s=budget, only=wanted, shipped=shipped_torch_facts())
    with begin() as ctx:
        return import_torch_rules(ctx, only=wanted, table=table)


def list_rules(ctx: Ctx) -> list[RuleView]:
    """Every rule with where it came from, by operator."""
    from opgov.results.decomps import RuleView

    c = decomp_rules.c
    return [RuleView(operator=r.operator, into=list(r.targets), source=r.source, detail=r.source_detail,
                     recorded_at=r.created_at, by=r.created_by)
            for r in ctx.session.execute(select(decomp_rules).order_by(c.operator))]


# --- checks and the opset builder -------------------------------------------------------------------


def check_decompositions(ctx: Ctx, *, models: str | None = None) -> list:
    """Every finding of :func:`opgov.core.decomps.check` on the database's rules and registry.

    ``models``: a corpus file or folder (see :func:`corpus_files`); its operators feed the
    ``model-op-uncovered`` check."""
    from opgov.core.decomps import check
    from opgov.core.graph_ops import graph_ops_of

    categories, lifecycle, tagged = registry_state(ctx.session)
    c = operators.c
    present: set[str] = set()
    implicit: set[str] = set()
    kinds: dict[str, str] = {}
    no_tensor: set[str] = set()
    pending: dict[str, str] = {}
    schemas: list[tuple[str, str | None]] = []
    for name, kind, composite, schema, waits, why in ctx.session.execute(
            select(c.qualname, c.kind, c.composite_implicit, c.schema, c.needs_review, c.review_reason)
            .where(c.present)):
        present.add(name)
        schemas.append((name, schema))
        kinds[name] = kind
        if waits and why:
            pending[name] = why
        if composite:
            implicit.add(name)
            if schema is not None and "Tensor" not in schema.rpartition("->")[2]:
                no_tensor.add(name)
    yaml_core = {name: name in tagged for name in present}
    used_by: dict[str, list[str]] = {}
    if models:
        for model in load_corpora(models).values():
            for op in {*model.exported_ops, *model.core_aten_ops}:
                used_by.setdefault(op, []).append(model.name)
    return check(current_rules(ctx.session), categories, lifecycle, yaml_core, implicit=implicit, kinds=kinds,
                 used_by={op: sorted(ms) for op, ms in used_by.items()}, no_tensor=no_tensor,
                 torch=torch_facts(ctx.session), pending=pending, graph=graph_ops_of(schemas))


def check_report(ctx: Ctx, *, models: str | None = None) -> ViolationsReport:
    """``opgov check-decomps``: :func:`check_decompositions` as its report (``errors`` > 0 is
    what makes the command exit 1)."""
    from opgov.results.decomps import ViolationsReport

    return ViolationsReport.of(check_decompositions(ctx, models=models))


def build(ctx: Ctx, *, preset: str, decompose: list[str], keep: list[str], models: str | None):
    """(the opset, its coverage of the models or None): see :func:`opgov.core.opset.build_opset`."""
    from opgov.core.opset import OpInfo, build_opset, coverage

    c = operators.c
    rows = ctx.session.execute(select(c.qualname, c.category, c.lifecycle, c.kind, c.schema).where(c.present)).all()
    from opgov.core.graph_ops import graph_ops_of

    graph = graph_ops_of((name, schema) for name, _, _, _, schema in rows)  # from the schemas
    # thousands of operators share a few dozen values: build each once (unpacking rows is also
    # much faster than reading a Row's attributes)
    shared: dict[tuple, OpInfo] = {}
    infos: dict[str, OpInfo] = {}
    for name, category, lifecycle, kind, _ in rows:
        key = (category, lifecycle, kind, graph.get(name))
        infos[name] = shared.get(key) or shared.setdefault(key, OpInfo(category, lifecycle, kind, graph.get(name)))
    if not infos:
        raise BadInput("the database holds no snapshot yet: run `opgov import` first")
    rules = current_rules(ctx.session)
    models_given = load_corpora(models) if models else None  # read before the work: a bad file says so first
    facts = opset_facts(ctx.session)  # an --only import alone is too few decompositions to be exact
    opset = build_opset(operators=infos, rules=rules, preset=preset, decompose=decompose, keep=keep, torch=facts,
                        implicit=implicit_operators(ctx.session) if facts is not None else ())
    cov = None
    if models_given is not None:
        cov = coverage(opset, models_given, rules, known=infos.keys())
    return opset, cov


def opset_report(ctx: Ctx, *, preset: str = "core-aten", decompose: Sequence[str] = (), keep: Sequence[str] = (),
                 format: str = "json", models: str | None = None) -> OpsetReport | Rendered:  # noqa: A002
    """``opgov opset build``: the opset of :func:`build` as its report (``format`` json), or as
    text (text, selective-build, python): what the command prints, the selective-build yaml with the out=
    variants ExecuTorch's kernels implement."""
    from opgov.render.decomps_text import render_opset, render_selective_build
    from opgov.results.rendered import Rendered

    opset, cov = build(ctx, preset=preset, decompose=list(decompose), keep=list(keep), models=models)
    if format == "json":
        from dataclasses import replace

        from opgov.results.decomps import OpsetReport
        from opgov.reads.runtimes import dtypes_by_release

        return replace(OpsetReport.of(opset, cov), runtimes=dtypes_by_release(ctx, opset.operators))
    if format == "selective-build":
        text = render_selective_build(opset, out_variants=out_variants(ctx, opset.operators))
    else:
        text = render_opset(opset, cov, format)
        if format == "text":  # what each registered runtime release runs of it, by dtype
            from opgov.render.runtimes import render_opset_runtimes
            from opgov.reads.runtimes import dtypes_by_release

            text = text.rstrip("\n") + "\n" + render_opset_runtimes(dtypes_by_release(ctx, opset.operators))
    return Rendered(text)


# --- model checks -----------------------------------------------------------------------------------


def check_model(ctx: Ctx, spec: str | Sequence[str], *, runtime: str | None = None):
    """Check the operators a model uses (one spec or several, their union: see
    :func:`opgov.formats.oplists.read_model_specs`) against the registry and, with ``runtime``,
    against the operators of that snapshot."""
    from opgov.formats.oplists import read_model_specs, union

    return check_model_ops(ctx, list(union(read_model_specs(spec, corpora_dir=corpora_dir()))), runtime=runtime)


def check_model_ops(ctx: Ctx, ops: list[str], *, runtime: str | None = None):
    """:func:`check_model` of a list of operator names (canonical)."""
    from opgov.core.corpus import OpState, check_model as check

    session = ctx.session
    c = operators.c
    used = set(ops)
    known: list[str] = []
    state: dict[str, OpState] = {}
    schemas: list[tuple[str, str | None]] = []
    for name, category, lifecycle, since, replacement, schema, present in session.execute(
            select(c.qualname, c.category, c.lifecycle, c.lifecycle_since, c.replacement, c.schema, c.present)):
        known.append(name)
        if present:
            schemas.append((name, schema))
        if name in used:
            state[name] = OpState(category, lifecycle, since if lifecycle == "deprecating" else None, replacement)
    from opgov.db.entries import snapshots_holding

    # which snapshots hold each operator the model uses: from the runs, not one query per snapshot
    history = snapshots_holding(session, used)
    if runtime is not None and runtime not in {label for label, _ in history}:
        known_labels = ", ".join(label for label, _ in history) or "none"
        raise NotFound(f"unknown snapshot {runtime!r} (known: {known_labels})")
    runtime_ops = next(have for label, have in history if label == runtime) if runtime is not None else None
    from opgov.core.graph_ops import graph_ops_of

    return check(ops, state=state, runtime_ops=runtime_ops, known=known, graph=graph_ops_of(schemas),
                 deprecating_period_days=get_int_setting(session, "deprecating_days"), snapshots=history,
                 runtime_label=f"snapshot {runtime}" if runtime else "the runtime")
