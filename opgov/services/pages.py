"""The data of the web pages that no other use case returns whole: the opset builder's policy
(what :mod:`opgov.core.opset` decides about each operator, so that the page's small evaluator,
``opgov/web/static/pages.js``, shows any choice in the browser as ``opgov opset build`` does)
and one operator's page (its story, its decomposition rule, the models that use it, the dates its
next lifecycle step becomes possible).

Each is a typed result and the JSON twin of its page (``/api/v1/pages/…``).
"""

from __future__ import annotations

from opgov.reads.common import Ctx
from opgov.reads.models import load_models, models_location
from opgov.results.pages import EligibleStep, ModelEntry, OperatorPage, OpsetData, PresetRule, RuleInfo


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


