"""The data of the web pages that no other use case returns whole: the opset builder's policy
(what :mod:`opgov.core.opset` decides about each operator), what /opset shows for a choice
(:func:`opset_view`: ``opgov opset build``'s answer, worded for the page; /opset embeds each
preset's, :func:`opgov.web.data.opset_page`), and one operator's page (its story, its
decomposition rule, the models that use it, the dates its next lifecycle step becomes possible).

Each is a typed result, the service of a use case of :mod:`opgov.usecases.pages` and the JSON twin
of its page (``/api/v1/pages/…``).
"""

from __future__ import annotations

from opgov.reads.common import Ctx
from opgov.reads.models import load_models, models_location
from opgov.results.pages import (EligibleStep, ModelEntry, OperatorPage, OpsetData, OpsetView, PresetRule,
                                 RuleInfo)


def opset_data(ctx: Ctx, *, models: str | None = None) -> OpsetData:
    """The policy of :func:`opgov.services.decomps.build` for every choice at once."""
    from sqlalchemy import select

    from opgov.core.errors import BadInput
    from opgov.core.graph_ops import graph_ops_of
    from opgov.core.opset import POLICY_FLAGS, OpInfo, functional_form, opset_policy
    from opgov.db.tables import operators
    from opgov.render.decomps_text import PYTHON_LIST, SELECTIVE_BUILD, python_template
    from opgov.reads.models import corpus_label
    from opgov.reads.registry import current_rules, implicit_operators, out_variants
    from opgov.reads.torch import opset_facts

    c = operators.c
    rows = ctx.session.execute(select(c.qualname, c.category, c.lifecycle, c.kind, c.schema).where(c.present)
                               .order_by(c.qualname)).all()
    if not rows:
        raise BadInput("the database holds no snapshot yet: run `opgov import` first")
    graph = graph_ops_of((name, schema) for name, _, _, _, schema in rows)  # from the schemas, and the hand list
    infos = {name: OpInfo(category, lifecycle, kind, graph.get(name)) for name, category, lifecycle, kind, _ in rows}
    facts = opset_facts(ctx.session)  # as `opset build`
    policy = opset_policy(operators=infos, rules=current_rules(ctx.session), torch=facts,
                          implicit=implicit_operators(ctx.session) if facts is not None else ())
    location = models_location(models)
    policy["presets"] = {name: PresetRule(**rule) for name, rule in policy["presets"].items()}
    policy["operators"] = {name: tuple(entry) for name, entry in policy["operators"].items()}
    return OpsetData(**policy, flags=POLICY_FLAGS,
                     code={p: python_template(p, policy["torch_facts"]) for p in policy["presets"]},
                     python_list=PYTHON_LIST, selective_build=SELECTIVE_BUILD,
                     out_variants=dict(sorted(out_variants(ctx, infos).items())),
                     models=load_models(location), models_source=corpus_label(location) if location else None,
                     graph_ops=graph,
                     functional_forms={op: form for op in infos if (form := functional_form(op, infos)) != op})


def opset_view(ctx: Ctx, *, preset: str = "core-aten", decompose: list[str] | tuple[str, ...] = (),
               keep: list[str] | tuple[str, ...] = (), models: str | None = None) -> OpsetView:
    """What /opset shows for one choice: `opgov opset build`'s opset, coverage, Python snippet and
    selective-build yaml (:func:`opgov.services.decomps.build`), worded for the page; or why opset
    build refuses the choice (what the page shows then: an answer, not an error of the page)."""
    from opgov.core.errors import BadInput, PolicyRefusal
    from opgov.core.opset import TEXTS, OpsetChoice, fill
    from opgov.render.decomps_text import describe_choice, render_python, selective_build_selection
    from opgov.reads.registry import out_variants
    from opgov.services.decomps import build

    try:
        opset, cov = build(ctx, preset=preset, decompose=list(decompose), keep=list(keep),
                           models=models_location(models))
    except (BadInput, PolicyRefusal) as refusal:
        return OpsetView(choice=describe_choice(OpsetChoice(preset, tuple(decompose), tuple(keep))),
                         refused=refusal.message)

    def why(e) -> str:
        by = e.produced_by
        return e.why + (f" ← {', '.join(by[:3])}{' …' if len(by) > 3 else ''}" if by else "")

    def sentence(text: str) -> str:
        return text[:1].upper() + text[1:] + "."

    lines = []
    if opset.without_rule:
        lines.append(sentence(fill(TEXTS["without_rule"], n=len(opset.without_rule))))
    if opset.graph_ops:
        lines.append(sentence(fill(TEXTS["graph_ops"], n=len(opset.graph_ops), ops=", ".join(opset.graph_ops))))
    if opset.torch_removes:
        by_reason: dict[str, list[str]] = {}
        for op, reason in sorted(opset.torch_removes):
            by_reason.setdefault(reason, []).append(op)
        lines.append("Not listed: " + fill(TEXTS["torch_removes"], n=len(opset.torch_removes),
                                           version=opset.torch_version,
                                           ops="; ".join(f"{', '.join(ops)} ({reason})" for reason, ops in by_reason.items())))
    label, selected = selective_build_selection(opset, out_variants=out_variants(ctx, opset.operators))
    view = OpsetView(choice=describe_choice(opset.choice), count=len(opset.entries),
                     rows=[[e.op, e.category or "—", e.lifecycle, why(e)] for e in opset.entries],
                     lines=lines, notes=list(opset.notes), python=render_python(opset), yaml_label=label,
                     yaml_items=[[op, why] for op, why in selected])
    if cov is None or not cov.models:
        return view
    from dataclasses import replace

    n = len(cov.models)
    return replace(view, covered=cov.covered, share=f"{round(cov.share * 100)}%",
                   models=[[m.model, m.family, ", ".join(m.missing) or "covered"] for m in cov.models],
                   suggestions=[[s.op, f" +{len(s.newly_covered)} model(s) → {s.covered_after}/{n} "
                                       f"({round(s.share_after * 100)}%); used by {s.needed_by}"]
                                for s in cov.suggestions])


def operator_page(ctx: Ctx, name: str, *, models: str | None = None, corpus: list[ModelEntry] | None = None,
                  runtimes=None) -> OperatorPage:
    """One operator's page (the use case ``pages operator``); ``models``: where the corpus is
    (:func:`opgov.reads.models.models_location`), or ``corpus``: its models already read (a site's,
    :func:`opset_data`'s); ``runtimes``: :func:`opgov.reads.runtimes.runtimes_by_name`, read here when
    not given (a site reads both once for all its operator pages)."""
    if corpus is None:
        corpus = load_models(models_location(models))
    from sqlalchemy import select

    from opgov.core.lifecycle import next_timed_step
    from opgov.db.tables import decomp_rules
    from opgov.reads.common import periods
    from opgov.services.ops import show_op

    detail = show_op(ctx, name)
    op = detail.name
    r = decomp_rules.c
    rule = None
    by: list[str] = []
    for operator, targets, source, detail_text in ctx.session.execute(
            select(r.operator, r.targets, r.source, r.source_detail).order_by(r.operator)):
        if operator == op:
            rule = RuleInfo(targets=list(targets), source=source, detail=detail_text)
        elif op in targets:
            by.append(operator)
    policy = periods(ctx)
    due = next_timed_step(detail.lifecycle, detail.lifecycle_since, policy)
    used = [m.key for m in corpus if op in m.exported_ops or op in m.core_aten_ops]
    from opgov.reads.runtimes import runtimes_by_name, runtimes_of_operator

    implemented = runtimes_of_operator(op, runtimes if runtimes is not None else runtimes_by_name(ctx))
    return OperatorPage(operator=detail, rule=rule, decomposed_by=by, models=used, runtimes=implemented,
                        next_step=EligibleStep(to=due.to_state, possible_from=due.due_at) if due else None,
                        deprecating_days=policy.deprecating_days, deprecated_days=policy.deprecated_days,
                        corpus_models=len(corpus))


