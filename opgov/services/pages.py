"""The data of the web pages that no other use case returns whole: the opset builder's policy
(what :mod:`opgov.core.opset` decides about each operator, so that the page's small evaluator,
``opgov/web/static/pages.js``, shows any choice in the browser as ``opgov opset build`` does)
and one operator's page (its story, its decomposition rule, the models that use it, the dates its
next lifecycle step becomes possible).

Each is a typed result and the JSON twin of its page (``/api/v1/pages/…``).
"""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from opgov.services.common import Ctx
from opgov.results.models import OperatorDetail, Result
from opgov.results.runtimes import OperatorRuntime


class ModelEntry(Result):
    """One model of the corpus: what it exports, and what PyTorch's default decompositions leave."""

    key: str = Field(description="corpus#model, e.g. torchvision#resnet18")
    family: str
    exported_ops: list[str]
    core_aten_ops: list[str]


class PresetRule(Result):
    """What a preset means (:data:`opgov.core.opset.PRESET_POLICY`)."""

    decomposes: str | None = Field(description="the flag of the operators it decomposes (none: decomposes nothing)")
    candidate: str = Field(description="the flag of the operators its opset is built from")
    drift: bool = Field(description="names core operators that are not functional in a note")
    from_empty: bool = Field(description="its code starts from an empty table, not torch's default one")
    beyond_core: bool = Field(description="its code also adds torch's decompositions of the core operators "
                                          "it decomposes")
    start: str = Field(description="what a model needs, before decomposition: exported or core-aten operators")


class OpsetData(Result):
    """The build-your-own-opset page's data: what ``opset build`` decides about each operator
    (:func:`opgov.core.opset.opset_policy`), the texts and code templates it writes, and the model
    corpus. The page's evaluator (``opgov/web/static/pages.js``) follows this policy for the
    user's choice; it knows no rule of its own."""

    presets: dict[str, PresetRule]
    operators: dict[str, tuple[str | None, str, str]] = Field(
        description="every operator a choice may name → [category, lifecycle, flags (see `flags`)]")
    flags: dict[str, str] = Field(description="what each letter of an operator's flags means")
    rules: dict[str, list[str]] = Field(description="operator → its decomposition targets")
    into: dict[str, list[str]] = Field(description="operator → the targets torch's decomposition of it was traced to "
                                                   "call (with torch's facts)")
    outside: list[str] = Field(description="the targets outside ATen (torch's decomposition leaves ATen)")
    reasons: dict[str, str] = Field(description="operator → why torch's decomposition of it could not be traced")
    ranks: dict[str, int] = Field(description="why an operator is kept → rank (the lowest wins)")
    texts: dict[str, str] = Field(description="the messages, with @placeholders@")
    code: dict[str, str] = Field(description="preset → the Python snippet, with @choice@, @keep@, @decompose@")
    python_list: dict[str, str] = Field(description="how the snippet lists names")
    selective_build: dict[str, str] = Field(description="the pieces of the selected-operators YAML")
    out_variants: dict[str, str] = Field(description="functional operator → its out= variant (selective build)")
    models: list[ModelEntry] = Field(description="the model corpus, in file order; empty when none is configured")
    models_source: str | None = Field(description="where the corpus was read from")
    torch: str | None = Field(default=None, description=(
        "the torch release whose facts `decomps import-torch` recorded: the page, like `opgov opset build`, "
        "is exact for it"))
    graph_ops: dict[str, str] = Field(description="graph operators (assertions, symbolic sizes): never in an opset, "
                                                  "never missing; operator → why it needs no kernel")


class RuleInfo(Result):
    targets: list[str]
    source: str = Field(description="decision, file or torch")
    detail: str | None = None


class EligibleStep(Result):
    to: str
    possible_from: AwareDatetime


class OperatorPage(Result):
    """One operator's page: :class:`OperatorDetail` and what the page adds to it."""

    operator: OperatorDetail
    rule: RuleInfo | None = Field(description="its decomposition rule, if any")
    decomposed_by: list[str] = Field(description="operators whose rules produce it")
    models: list[str] = Field(description="models of the corpus that use it (exported or after decomposition)")
    next_step: EligibleStep | None = Field(description="the next timed lifecycle step and when it becomes possible")
    deprecating_days: int
    deprecated_days: int
    runtimes: list[OperatorRuntime] = Field(default_factory=list, description=(
        "the registered runtimes that implement it (an out= kernel of its family), since which version"))


def models_location(models: str | None = None) -> str | None:
    """The model corpus: ``models`` if given, else ``OPGOV_MODELS_DIR`` (as ``check-model`` finds
    bare corpus names)."""
    from opgov.services.decompositions import corpora_dir

    if models:
        return models
    found = corpora_dir()
    return str(found) if found else None


def load_models(models: str | None) -> list[ModelEntry]:
    if not models:
        return []
    from opgov.services.decompositions import load_corpora

    merged = load_corpora(models)
    return [ModelEntry(key=key, family=m.family, exported_ops=list(m.exported_ops),
                       core_aten_ops=list(m.core_aten_ops)) for key, m in merged.items()]


def opset_data(ctx: Ctx, *, models: str | None = None) -> OpsetData:
    """The policy of :func:`opgov.services.decompositions.build` for every choice at once."""
    from sqlalchemy import select

    from opgov.core.errors import BadInput
    from opgov.core.graph_ops import GRAPH_OPS
    from opgov.core.opset import POLICY_FLAGS, OpInfo, opset_policy
    from opgov.db.tables import operators
    from opgov.render.decomps_text import PYTHON_LIST, SELECTIVE_BUILD, python_template
    from opgov.services.decompositions import current_rules, implicit_operators, out_variants, torch_facts

    c = operators.c
    rows = ctx.session.execute(select(c.qualname, c.category, c.lifecycle, c.kind).where(c.present)
                               .order_by(c.qualname)).all()
    if not rows:
        raise BadInput("the database holds no snapshot yet: run `opgov import` first")
    infos = {name: OpInfo(category, lifecycle, kind) for name, category, lifecycle, kind in rows}
    facts = torch_facts(ctx.session)
    if facts is not None and not facts.complete:
        facts = None  # an --only import: too few decompositions traced to be exact (as `opset build`)
    policy = opset_policy(operators=infos, rules=current_rules(ctx.session), torch=facts,
                          implicit=implicit_operators(ctx.session) if facts is not None else ())
    location = models_location(models)
    return OpsetData(**policy, flags=POLICY_FLAGS,
                     code={p: python_template(p, policy["torch"]) for p in policy["presets"]},
                     python_list=PYTHON_LIST, selective_build=SELECTIVE_BUILD,
                     out_variants=dict(sorted(out_variants(ctx, infos).items())),
                     models=load_models(location), models_source=location, graph_ops=dict(GRAPH_OPS))


def operator_page(ctx: Ctx, name: str, *, models: list[ModelEntry] | None = None, runtimes=None) -> OperatorPage:
    """One operator's page; ``models``: the corpus (:func:`opset_data`'s), if any; ``runtimes``:
    :func:`opgov.services.runtimes.runtimes_by_name`, read here when not given (once per site)."""
    from sqlalchemy import select

    from opgov.core.lifecycle import next_timed_step
    from opgov.db.tables import decomp_rules
    from opgov.services.lifecycle import periods
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
    used = [m.key for m in models or () if op in m.exported_ops or op in m.core_aten_ops]
    from opgov.services.runtimes import runtimes_by_name, runtimes_of_operator

    implemented = runtimes_of_operator(op, runtimes if runtimes is not None else runtimes_by_name(ctx))
    return OperatorPage(operator=detail, rule=rule, decomposed_by=by, models=used, runtimes=implemented,
                        next_step=EligibleStep(to=due.to_state, possible_from=due.due_at) if due else None,
                        deprecating_days=policy.deprecating_days, deprecated_days=policy.deprecated_days)


def home_counts(ctx: Ctx) -> dict[str, int]:
    """The home page's three numbers: present operators, core ones, open proposals."""
    from sqlalchemy import func, select

    from opgov.db.tables import operators, proposals

    c = operators.c
    present = ctx.session.execute(select(func.count()).where(c.present)).scalar_one()
    core = ctx.session.execute(select(func.count()).where(c.present, c.category == "core")).scalar_one()
    open_ = ctx.session.execute(select(func.count()).select_from(proposals)
                                .where(proposals.c.status == "open")).scalar_one()
    return {"operators": present, "core": core, "open_proposals": open_}
