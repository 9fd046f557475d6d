"""The results of the runtime use cases (:mod:`opgov.services.runtimes`): registered runtimes,
the coverage matrix, whether a runtime runs a model, and the export-time check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

from opgov.core.corpus import Finding, ModelCheck
from opgov.results.model_args import ModelArguments
from opgov.results.plain import about as _about

__all__ = [
    "CoverageMatrix", "ExportCheck", "LifecycleNote", "MatrixModel", "MatrixOperator", "MatrixRuntime",
    "MissingOperator", "ModelCheckReport", "ModelFinding", "OperatorRuntime", "OpsSource", "RuntimeAdded",
    "RuntimeDetail", "RuntimeFit", "RuntimeList", "RuntimeModelCheck", "RuntimeSummary",
]


# --- registered runtimes ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OpsSource:
    """One file a runtime's operators (or a model's) were read from."""

    path: str
    format: str
    entries: int
    sha256: str | None = None


@dataclass(frozen=True, kw_only=True)
class RuntimeSummary:
    runtime: str
    name: str
    version: str
    released: date | None
    kernels: int
    operators: int  # kernels plus the functional operators their out= variants give
    core_have: int
    core_total: int
    core_share: float
    previous: str | None  # the previous registered version of the same runtime
    core_gained: list[str]  # core operators this version has and the previous one lacked
    core_lost: list[str]
    served: int = 0  # operators it serves outside its kernel registries (ExecuTorch's prim ops)
    torch: str | None = None  # the PyTorch release its kernels follow (ExecuTorch's PyTorch pin)


@dataclass(frozen=True, kw_only=True)
class RuntimeAdded:
    outcome: str  # added | replaced | unchanged
    runtime: RuntimeSummary
    sources: list[OpsSource]
    not_in_registry: list[str]  # kernel entries the latest snapshot does not hold
    note: str | None = None  # how the release's data was read, when it is not its tagged tree


@dataclass(frozen=True, kw_only=True)
class RuntimeList:
    snapshot: str | None
    runtimes: list[RuntimeSummary]


@dataclass(frozen=True, kw_only=True)
class RuntimeDetail:
    runtime: RuntimeSummary
    sources: list[OpsSource]
    added_at: datetime
    added_by: str
    kernels: list[str]
    gives: dict[str, str]  # functional operator → the out= kernel that gives it
    core_missing: list[str]
    not_in_registry: list[str]
    served: list[str] = field(default_factory=list)  # the operators it serves outside its kernel registries (prim ops)


@dataclass(frozen=True, kw_only=True)
class OperatorRuntime:
    """A registered runtime that implements an operator: its newest version that does, the
    kernel there, and since which registered version it has."""

    runtime: str = field(metadata=_about("the runtime's name, e.g. executorch"))
    latest: str = field(metadata=_about("its newest registered version, NAME@VERSION"))
    kernel: str | None = field(metadata=_about(
        "the kernel that gives the operator in the newest version (None: it lacks it there)"))
    since: str | None = field(metadata=_about(
        "the first registered version of the uninterrupted run that has it up to the newest (None: the newest lacks "
        "it)"))
    versions: list[str] = field(metadata=_about("every registered version that has it, oldest first"))
    dtypes: dict[str, list[str] | None] = field(default_factory=dict, metadata=_about(
        "each version that has it → the dtypes its kernel runs the operator in (None: unknown or not recorded)"))


# --- can it run a model? ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MissingOperator:
    op: str
    category: str | None  # None: not in the registry
    lowers: bool
    steps: list[str]  # each rule applied: "aten::x → aten::a, aten::b"
    into: list[str]  # what it ends in, all of which the runtime has
    blocked: list[str]  # operators on the way that the runtime lacks and no rule decomposes


@dataclass(frozen=True, kw_only=True)
class LifecycleNote:
    op: str
    state: str  # deprecating | deprecated | deleted
    since: datetime | None
    next_step: str | None  # deprecated | deleted
    next_step_on: datetime | None  # the earliest the next step may happen
    replacement: str | None


@dataclass(frozen=True, kw_only=True)
class KernelProblem:
    """A call the runtime's kernel refuses (or may refuse): what its sources say it accepts against the
    dtype and rank of each tensor of the call (opgov.core.kernels)."""

    status: str  # dtype | argument | unknown
    op: str  # the operator the model calls
    kernel: str  # the kernel entry that runs it (aten::gelu.out)
    argument: str | None  # the argument it refuses (the schema's name; "its result (out)" for an output)
    dtype: str | None  # the dtype it refuses, or the call's dtype of that argument
    message: str
    call: str  # the first call (the graph node's name)
    calls: int = 1  # how many calls share it


@dataclass(frozen=True, kw_only=True)
class RuntimeModelCheck:
    """Can this runtime run these models?"""

    runtime: str
    released: date | None
    snapshot: str | None
    models: list[OpsSource]
    operators: list[str]
    runs: bool
    runs_after_lowering: bool  # every missing operator lowers by the rules on record
    provided: dict[str, str]  # operator → the kernel that gives it
    missing: list[MissingOperator]
    # operators of the program that need no kernel (assertions, symbolic sizes; opgov.core.graph_ops),
    # each with why: never missing
    graph_ops: dict[str, str] = field(default_factory=dict, metadata={"json_schema_extra": {"default": {}}})
    lifecycle: list[LifecycleNote]
    earliest_snapshot: str | None
    earliest_version: str | None  # the first registered version of this runtime that runs it
    earliest_version_after_lowering: str | None  # ... that runs it once lowered by the rules on record
    runtimes_running: list[str]  # every registered runtime that runs it
    # each .pt2 archive's calls, argument by argument, against the torch release the runtime follows
    arguments: list[ModelArguments] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})
    # each call's tensors (dtype, rank) against what the runtime's kernels accept; kernels_checked is
    # False when the runtime was registered without what its kernels accept (its calls are not checked)
    kernel_problems: list[KernelProblem] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})
    kernels_checked: bool = False
    # runs | does not run | unknown (a call outside what opgov could read of a kernel: never "runs")
    verdict: str = "runs"
    # why the registered version just before earliest_version does not run it
    before_earliest: str | None = None
    # the runtime's kernels the latest snapshot does not hold (runtimes add's caveat): the functional
    # operators they would give cannot be placed, so a "missing" operator may be one of theirs
    unplaced_kernels: list[str] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})


# --- the coverage matrix ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MatrixRuntime:
    runtime: str
    released: date | None
    kernels: int
    core_have: int
    core_total: int
    core_share: float
    previous: str | None
    core_gained: list[str]
    core_lost: list[str]
    models_run: list[str]
    models_total: int
    # core operator → the dtypes this version runs it in that the previous version of the runtime did not
    # (and lost): how the dtype coverage changed release to release
    dtypes_gained: dict[str, list[str]] = field(default_factory=dict, metadata={"json_schema_extra": {"default": {}}})
    dtypes_lost: dict[str, list[str]] = field(default_factory=dict, metadata={"json_schema_extra": {"default": {}}})


@dataclass(frozen=True, kw_only=True)
class MatrixOperator:
    op: str
    kernels: dict[str, str | None]  # runtime → the kernel that gives it (None: lacks it)
    # runtime → the dtypes its kernel runs the operator in (all tensors of one dtype; after to_edge's
    # dtype table); None: it lacks the operator, or what its kernel takes is unknown or not recorded
    dtypes: dict[str, list[str] | None] = field(default_factory=dict, metadata={"json_schema_extra": {"default": {}}})


@dataclass(frozen=True, kw_only=True)
class MatrixModel:
    model: str
    missing: dict[str, list[str]]  # runtime → the operators it lacks for this model (empty: runs)
    # operators of the model that need no kernel (never missing)
    graph_ops: list[str] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})


@dataclass(frozen=True, kw_only=True)
class CoverageMatrix:
    snapshot: str | None
    stage: str
    runtimes: list[MatrixRuntime]
    operators: list[MatrixOperator]
    models: list[MatrixModel]


# --- the export-time check -------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RuntimeFit:
    runtime: str = field(metadata=_about("a registered runtime, NAME@VERSION"))
    runs: bool = field(metadata=_about("it has a kernel for every operator that needs one"))
    missing: list[str] = field(metadata=_about("the operators it lacks"))


@dataclass(frozen=True, kw_only=True)
class ExportCheck:
    """What `torch.export` users are told about an exported program (opgov.export_check): the
    deprecating operators it uses (a warning), the deprecated or deleted ones (an error), each with
    its dates and replacement, and which registered runtimes run it."""

    operators: list[str] = field(metadata=_about("the program's operators, canonical, in first-use order"))
    graph_ops: dict[str, str] = field(metadata=_about(
        "operators that need no kernel (assertions, symbolic sizes) → why"))
    unknown: list[str] = field(metadata=_about("operators the registry does not hold"))
    lifecycle: list[LifecycleNote] = field(metadata=_about("the program's operators that are not active, with dates"))
    runtimes: list[RuntimeFit] = field(metadata=_about("every registered runtime, by name and version"))
    arguments: ModelArguments | None = field(default=None, metadata=_about(
        "with a runtime: the calls checked argument by argument against the torch release it follows"))


@dataclass(frozen=True, kw_only=True)
class ModelFinding:
    """One finding of check-model: an operator of the model, the rule it breaks and what to do."""

    rule: str
    op: str
    message: str
    replacement: str | None = None
    date: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class ModelCheckReport:
    """JSON shape of ``opgov check-model --format json``."""

    ok: bool
    operators: list[str]
    errors: list[ModelFinding]
    warnings: list[ModelFinding]
    notes: list[ModelFinding]
    earliest_snapshot: str | None
    snapshots_checked: int
    # each .pt2 archive's calls, argument by argument, against the snapshot given as the runtime
    arguments: list[ModelArguments] = field(default_factory=list, metadata={"json_schema_extra": {"default": []}})

    @classmethod
    def of(cls, check: ModelCheck) -> "ModelCheckReport":
        def out(fs: Sequence[Finding]) -> list[ModelFinding]:
            return [ModelFinding(rule=f.rule, op=f.op, message=f.message, replacement=f.replacement, date=f.date)
                    for f in fs]

        return cls(ok=check.ok, operators=list(check.ops), errors=out(check.errors),
                   warnings=out(check.warnings), notes=out(check.notes),
                   earliest_snapshot=check.earliest_snapshot, snapshots_checked=check.snapshots_checked)
