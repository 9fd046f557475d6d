"""The results of the decomposition use cases (:mod:`opgov.services.decomps`): the rules, loading
and importing them, ``opgov check-decomps`` and ``opgov opset build`` (these two built from core's
answer by their ``of``).

Frozen standard-library dataclasses, kept apart from :mod:`opgov.core.decomps`,
:mod:`opgov.core.opset` and :mod:`opgov.core.corpus`, which know nothing of the JSON shapes. The
text, GitHub, selective-build and Python renderings are in :mod:`opgov.render.decomps_text`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from opgov.core.decomps import Violation
from opgov.core.graph_ops import graph_op_reason
from opgov.core.opset import Coverage, Opset
from opgov.results.plain import about as _about
from opgov.results.kernel_dtypes import RuntimeDtypes

__all__ = [
    "CoverageOut", "EntryOut", "ModelCoverageOut", "OpsetReport", "PreviousRule", "RuleOutcome", "RuleView",
    "RulesLoaded", "SuggestionOut", "TorchRulesImported", "Untraced", "ViolationOut", "ViolationsReport",
]


# --- check-decomps ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ViolationOut:
    rule: str
    severity: str
    operator: str
    message: str
    path: list[str]


@dataclass(frozen=True, kw_only=True)
class ViolationsReport:
    """JSON shape of ``opgov check-decomps --format json``."""

    errors: int
    warnings: int
    violations: list[ViolationOut]

    @classmethod
    def of(cls, violations: Sequence[Violation]) -> "ViolationsReport":
        errors = sum(v.severity == "error" for v in violations)
        return cls(errors=errors, warnings=len(violations) - errors,
                   violations=[ViolationOut(rule=v.rule, severity=v.severity, operator=v.operator,
                                            message=v.message, path=list(v.path)) for v in violations])


# --- opset build ----------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class EntryOut:
    op: str
    category: str | None
    why: str
    produced_by: list[str]
    lifecycle: str


@dataclass(frozen=True, kw_only=True)
class ModelCoverageOut:
    model: str
    family: str
    covered: bool
    needed: list[str]
    missing: list[str]


@dataclass(frozen=True, kw_only=True)
class SuggestionOut:
    op: str
    newly_covered: list[str]
    needed_by: int
    covered_after: int
    share_after: float


@dataclass(frozen=True, kw_only=True)
class CoverageOut:
    start: str
    models: int
    covered: int
    share: float
    per_model: list[ModelCoverageOut]
    missing_ops: dict[str, int]
    suggestions: list[SuggestionOut]
    not_in_registry: list[str] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})


@dataclass(frozen=True, kw_only=True)
class TorchRemovedOut:
    """An operator torch.export decomposes whatever the table says."""

    why: str
    into: list[str] | None = field(metadata=_about(
        "what torch turns it into (traced); null when it could not be traced"))


@dataclass(frozen=True, kw_only=True)
class OpsetReport:
    """JSON shape of ``opgov opset build --format json``."""

    preset: str
    decompose: list[str]
    keep: list[str]
    count: int
    operators: list[EntryOut]
    without_rule: list[str]
    decomposed: list[str]
    notes: list[str]
    not_functional: list[str] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})
    graph_ops: dict[str, str] = field(default_factory=dict, metadata=_about(
        "graph operators an exported program may hold (assertions, symbolic sizes): no kernel implements them, so "
        "they are not in `operators` and never missing; operator → why"))
    torch: str | None = field(default=None, metadata=_about(
        "the torch release the opset is exact for (the facts `opgov decomps import-torch` recorded); null when "
        "torch's table was never imported"))
    code_keep: list[str] = field(default_factory=list, metadata=_about(
        "with torch: operators the generated code removes from torch's default table"))
    code_decompose: list[str] = field(default_factory=list, metadata=_about(
        "with torch: operators the generated code adds torch's own decomposition for"))
    torch_removes: dict[str, TorchRemovedOut] = field(default_factory=dict, metadata=_about(
        "with torch: the registry's operators torch.export decomposes by itself, whatever the table says "
        "(CompositeImplicitAutograd ones it cannot preserve, e.g. batch_norm, reshape); never in `operators` "
        "nor needed by a model: what they become is. Operator → why and into what"))
    torch_facts: str | None = field(default=None, metadata=_about(
        "which torch release's facts the opset follows and where they come from: recorded by `opgov decomps "
        "import-torch` from the user's torch, or opgov's shipped facts (for the snapshot's release, else the "
        "nearest one it ships); null without torch facts"))
    coverage: CoverageOut | None = None
    runtimes: list[RuntimeDtypes] = field(default_factory=list, metadata=_about(
        "each registered runtime release, oldest first per runtime: how many of the opset's operators it has, "
        "the dtypes it runs each in, and what it gained and lost over the previous release",
        json_schema_extra={"default": []}))

    @classmethod
    def of(cls, opset: Opset, cov: Coverage | None = None) -> "OpsetReport":
        c = None
        if cov is not None:
            c = CoverageOut(
                start=cov.start, models=len(cov.models), covered=cov.covered, share=cov.share,
                per_model=[ModelCoverageOut(model=m.model, family=m.family, covered=m.covered,
                                            needed=list(m.needed), missing=list(m.missing)) for m in cov.models],
                missing_ops=cov.missing_ops,
                suggestions=[SuggestionOut(op=s.op, newly_covered=list(s.newly_covered), needed_by=s.needed_by,
                                           covered_after=s.covered_after, share_after=s.share_after)
                             for s in cov.suggestions],
                not_in_registry=list(cov.not_in_registry))
        return cls(preset=opset.choice.preset, decompose=list(opset.choice.decompose), keep=list(opset.choice.keep),
                   count=len(opset.entries),
                   operators=[EntryOut(op=e.op, category=e.category, why=e.why, produced_by=list(e.produced_by),
                                       lifecycle=e.lifecycle) for e in opset.entries],
                   without_rule=list(opset.without_rule), decomposed=list(opset.decomposed),
                   notes=list(opset.notes), not_functional=list(opset.not_functional),
                   graph_ops={op: opset.graph_reasons.get(op) or graph_op_reason(op) for op in opset.graph_ops},
                   torch=opset.torch_version, code_keep=list(opset.code_keep),
                   code_decompose=list(opset.code_decompose),
                   torch_removes={op: TorchRemovedOut(why=why, into=list(opset.rules[op]) if op in opset.rules else None)
                                  for op, why in opset.torch_removes},
                   torch_facts=opset.torch_facts, coverage=c)


# --- the rules: loaded from a file, imported from torch, listed ---------------------------------


@dataclass(frozen=True, kw_only=True)
class PreviousRule:
    source: str
    detail: str | None
    into: list[str]


@dataclass(frozen=True, kw_only=True)
class RuleOutcome:
    operator: str
    outcome: Literal["added", "updated", "unchanged", "kept"]
    previous: PreviousRule | None


@dataclass(frozen=True, kw_only=True)
class RulesLoaded:
    """``opgov decomps load``."""

    file: str
    source: str
    rules: int
    added: int
    updated: int
    unchanged: int
    kept: int
    precedence: str
    changes: list[RuleOutcome] = field(metadata=_about("every rule not simply added"))


@dataclass(frozen=True, kw_only=True)
class Untraced:
    operator: str
    reason: str | None


@dataclass(frozen=True, kw_only=True)
class TorchRulesImported:
    """``opgov decomps import-torch``."""

    torch: str
    table: int
    not_in_table: list[str]
    added: int
    updated: int
    unchanged: int
    kept: int
    precedence: str
    changes: list[RuleOutcome]
    untraced: list[Untraced]
    not_in_registry: list[str]
    dropped_targets: dict[str, list[str]]
    errors_introduced: int
    first_errors: list[str]


@dataclass(frozen=True, kw_only=True)
class RuleView:
    """A decomposition rule and where it came from."""

    operator: str
    into: list[str]
    source: str = field(metadata=_about("decision, file or torch"))
    detail: str | None
    recorded_at: datetime
    by: str
