"""The data of the web pages that no other use case returns whole (:mod:`opgov.services.pages`):
the opset builder's policy and one operator's page. Each is the JSON twin of its page
(``/api/v1/pages/…``)."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from opgov.results.models import OperatorDetail, Result
from opgov.results.runtimes import OperatorRuntime

__all__ = ["EligibleStep", "ModelEntry", "OperatorPage", "OpsetData", "PresetRule", "RuleInfo"]


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
    removed: dict[str, str] = Field(default_factory=dict, description=(
        "with torch's facts: the registry's operators torch.export decomposes whatever the table says → why "
        "(never listed, never needed: what they become is)"))
    torch_facts: str | None = Field(default=None, description=(
        "which torch release's facts and from where: recorded by `decomps import-torch`, or opgov's shipped ones"))


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
