"""The data of the web pages that no other use case returns whole (:mod:`opgov.services.pages`):
the opset builder's policy and one operator's page. Each is the JSON twin of its page
(``/api/v1/pages/…``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from opgov.results.ops import OperatorDetail
from opgov.results.plain import about as _about
from opgov.results.runtimes import OperatorRuntime

__all__ = ["EligibleStep", "ModelEntry", "OperatorPage", "OpsetData", "OpsetPage", "OpsetView", "PresetRule", "RuleInfo"]


@dataclass(frozen=True, kw_only=True)
class ModelEntry:
    """One model of the corpus: what it exports, and what PyTorch's default decompositions leave."""

    key: str = field(metadata=_about("corpus#model, e.g. torchvision#resnet18"))
    family: str
    exported_ops: list[str]
    core_aten_ops: list[str]


@dataclass(frozen=True, kw_only=True)
class PresetRule:
    """What a preset means (:data:`opgov.core.opset.PRESET_POLICY`)."""

    decomposes: str | None = field(metadata=_about(
        "the flag of the operators it decomposes (none: decomposes nothing)"))
    candidate: str = field(metadata=_about("the flag of the operators its opset is built from"))
    drift: bool = field(metadata=_about("names core operators that are not functional in a note"))
    from_empty: bool = field(metadata=_about("its code starts from an empty table, not torch's default one"))
    beyond_core: bool = field(metadata=_about(
        "its code also adds torch's decompositions of the core operators it decomposes"))
    start: str = field(metadata=_about("what a model needs, before decomposition: exported or core-aten operators"))


@dataclass(frozen=True, kw_only=True)
class OpsetData:
    """The build-your-own-opset page's data: what ``opset build`` decides about each operator
    (:func:`opgov.core.opset.opset_policy`), the texts and code templates it writes, and the model
    corpus: ``/api/v1/pages/opset``. The page itself shows :class:`OpsetView`s, computed by
    ``opset build``."""

    presets: dict[str, PresetRule]
    operators: dict[str, tuple[str | None, str, str]] = field(metadata=_about(
        "every operator a choice may name → [category, lifecycle, flags (see `flags`)]"))
    flags: dict[str, str] = field(metadata=_about("what each letter of an operator's flags means"))
    rules: dict[str, list[str]] = field(metadata=_about("operator → its decomposition targets"))
    into: dict[str, list[str]] = field(metadata=_about(
        "operator → the targets torch's decomposition of it was traced to call (with torch's facts)"))
    outside: list[str] = field(metadata=_about("the targets outside ATen (torch's decomposition leaves ATen)"))
    reasons: dict[str, str] = field(metadata=_about("operator → why torch's decomposition of it could not be traced"))
    ranks: dict[str, int] = field(metadata=_about("why an operator is kept → rank (the lowest wins)"))
    texts: dict[str, str] = field(metadata=_about("the messages, with @placeholders@"))
    code: dict[str, str] = field(metadata=_about("preset → the Python snippet, with @choice@, @keep@, @decompose@"))
    python_list: dict[str, str] = field(metadata=_about("how the snippet lists names"))
    selective_build: dict[str, str] = field(metadata=_about("the pieces of the selected-operators YAML"))
    out_variants: dict[str, str] = field(metadata=_about("functional operator → its out= variant (selective build)"))
    models: list[ModelEntry] = field(metadata=_about("the model corpus, in file order; empty when none is configured"))
    models_source: str | None = field(metadata=_about("where the corpus was read from"))
    torch: str | None = field(default=None, metadata=_about(
        "the torch release whose facts `decomps import-torch` recorded: the page, like `opgov opset build`, is exact "
        "for it"))
    graph_ops: dict[str, str] = field(metadata=_about(
        "graph operators (assertions, symbolic sizes): never in an opset, never missing; operator → why it needs no "
        "kernel"))
    functional_forms: dict[str, str] = field(default_factory=dict, metadata=_about(
        "a mutable or in-place operator → what functionalization makes of it in an exported graph (its "
        "`_functional` sibling, its functional form), where the registry has it: a decomposition's target is "
        "listed as that"))
    removed: dict[str, str] = field(default_factory=dict, metadata=_about(
        "with torch's facts: the registry's operators torch.export decomposes whatever the table says → why "
        "(never listed, never needed: what they become is)"))
    torch_facts: str | None = field(default=None, metadata=_about(
        "which torch release's facts and from where: recorded by `decomps import-torch`, or opgov's shipped ones"))


@dataclass(frozen=True, kw_only=True)
class RuleInfo:
    targets: list[str]
    source: str = field(metadata=_about("decision, file or torch"))
    detail: str | None = None


@dataclass(frozen=True, kw_only=True)
class EligibleStep:
    to: str
    possible_from: datetime


@dataclass(frozen=True, kw_only=True)
class OperatorPage:
    """One operator's page: :class:`OperatorDetail` and what the page adds to it."""

    operator: OperatorDetail
    rule: RuleInfo | None = field(metadata=_about("its decomposition rule, if any"))
    decomposed_by: list[str] = field(metadata=_about("operators whose rules produce it"))
    models: list[str] = field(metadata=_about("models of the corpus that use it (exported or after decomposition)"))
    next_step: EligibleStep | None = field(metadata=_about(
        "the next timed lifecycle step and when it becomes possible"))
    deprecating_days: int
    deprecated_days: int
    runtimes: list[OperatorRuntime] = field(default_factory=list, metadata=_about(
        "the registered runtimes that implement it (an out= kernel of its family), since which version"))
    corpus_models: int = field(default=0, metadata=_about(
        "how many models the corpus holds (0: no model corpus configured)"))


@dataclass(frozen=True, kw_only=True)
class OpsetView:
    """What /opset shows for one choice, every text as `opgov opset build` computed and worded it
    (:func:`opgov.services.pages.opset_view`): the page places these texts, it decides nothing."""

    choice: str = field(metadata=_about("the choice, as opset build's outputs describe it"))
    refused: str | None = field(default=None, metadata=_about(
        "why opset build refuses the choice (an unknown operator, one both decomposed and kept, one torch cannot "
        "decompose or keep): then nothing else is given"))
    count: int = field(default=0, metadata=_about("how many operators to implement"))
    rows: list[list[str]] = field(default_factory=list, metadata=_about(
        "the operators to implement: [operator, category (— when none), lifecycle, why (← what produces it)]"))
    lines: list[str] = field(default_factory=list, metadata=_about(
        "the sentences under the table: the operators without a rule, the graph operators, what torch removes"))
    notes: list[str] = field(default_factory=list, metadata=_about("opset build's notes"))
    covered: int | None = field(default=None, metadata=_about("models covered (none: no model corpus)"))
    share: str = field(default="", metadata=_about("the covered share, as a percentage"))
    models: list[list[str]] = field(default_factory=list, metadata=_about(
        "each model: [model, family, missing operators or 'covered']"))
    suggestions: list[list[str]] = field(default_factory=list, metadata=_about(
        "what to add, in order: [operator, what it brings]"))
    python: str = field(default="", metadata=_about("the Python snippet (`opset build --format python`)"))
    yaml_label: str = field(default="", metadata=_about("the selective-build yaml's label of the choice"))
    yaml_items: list[list[str]] = field(default_factory=list, metadata=_about(
        "what the selective-build yaml selects, out= variants included: [operator, why], quoted for the yaml; "
        "written with the page's `selective_build` pieces, it is `opset build --format selective-build`"))


@dataclass(frozen=True, kw_only=True)
class OpsetPage:
    """The data /opset embeds: the toggles it offers, which of them each preset decomposes, and
    the :class:`OpsetView` of each preset (a served page: of the first). Another choice's view is
    asked of ``view_url`` (served), or named as the `opgov opset build` command that gives it (a
    static site opened offline)."""

    presets: list[str]
    groups: list[tuple[str, str, list[tuple[str, str, str]]]] = field(metadata=_about(
        "the toggles by category: [category (none: uncategorized), title, [[operator, its rule's targets or '', "
        "the presets (their indexes in `presets`) that decompose it]]]"))
    views: dict[str, OpsetView] = field(metadata=_about(
        "preset → the view of the preset unchanged (a served page: the first preset's; a static site: each one's)"))
    selective_build: dict[str, str] = field(metadata=_about(
        "the pieces of the selective-build yaml, with @placeholders@ (:data:`opgov.render.decomps_text.SELECTIVE_BUILD`)"))
    view_url: str | None = field(default=None, metadata=_about("where the page asks for another choice's view"))
    models: int = field(default=0, metadata=_about("how many models the corpus holds (0: none configured)"))
    models_source: str | None = field(default=None, metadata=_about("where the corpus was read from"))
    torch_facts: str | None = field(default=None, metadata=_about(
        "which torch release's facts the views are exact for, and from where (none: opgov's rules alone)"))
