"""The results of the runtime use cases (:mod:`opgov.services.runtimes`): registered runtimes,
the coverage matrix, whether a runtime runs a model, and the export-time check."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import Field

from opgov.results.model_args import ModelArguments
from opgov.results.models import Result

__all__ = ["CoverageMatrix", "ExportCheck", "LifecycleNote", "MatrixModel", "MatrixOperator", "MatrixRuntime",
           "MissingOperator", "OperatorRuntime", "OpsSource", "RuntimeAdded", "RuntimeDetail", "RuntimeFit",
           "RuntimeList", "RuntimeModelCheck", "RuntimeSummary"]


# --- registered runtimes ---------------------------------------------------------------------------


class OpsSource(Result):
    """One file a runtime's operators (or a model's) were read from."""

    path: str
    format: str
    entries: int
    sha256: str | None = None


class RuntimeSummary(Result):
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


class RuntimeAdded(Result):
    outcome: str  # added | replaced | unchanged
    runtime: RuntimeSummary
    sources: list[OpsSource]
    not_in_registry: list[str]  # kernel entries the latest snapshot does not hold


class RuntimeList(Result):
    snapshot: str | None
    runtimes: list[RuntimeSummary]


class RuntimeDetail(Result):
    runtime: RuntimeSummary
    sources: list[OpsSource]
    added_at: datetime
    added_by: str
    kernels: list[str]
    gives: dict[str, str]  # functional operator → the out= kernel that gives it
    core_missing: list[str]
    not_in_registry: list[str]
    served: list[str] = []  # the operators it serves outside its kernel registries (prim ops)


class OperatorRuntime(Result):
    """A registered runtime that implements an operator: its newest version that does, the
    kernel there, and since which registered version it has."""

    runtime: str = Field(description="the runtime's name, e.g. executorch")
    latest: str = Field(description="its newest registered version, NAME@VERSION")
    kernel: str | None = Field(description="the kernel that gives the operator in the newest version (None: it "
                                           "lacks it there)")
    since: str | None = Field(description="the first registered version of the uninterrupted run that has it up "
                                          "to the newest (None: the newest lacks it)")
    versions: list[str] = Field(description="every registered version that has it, oldest first")


# --- can it run a model? ---------------------------------------------------------------------------


class MissingOperator(Result):
    op: str
    category: str | None  # None: not in the registry
    lowers: bool
    steps: list[str]  # each rule applied: "aten::x → aten::a, aten::b"
    into: list[str]  # what it ends in, all of which the runtime has
    blocked: list[str]  # operators on the way that the runtime lacks and no rule decomposes


class LifecycleNote(Result):
    op: str
    state: str  # deprecating | deprecated | deleted
    since: datetime | None
    next_step: str | None  # deprecated | deleted
    next_step_on: datetime | None  # the earliest the next step may happen
    replacement: str | None


class RuntimeModelCheck(Result):
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
    graph_ops: dict[str, str] = {}
    lifecycle: list[LifecycleNote]
    earliest_snapshot: str | None
    earliest_version: str | None  # the first registered version of this runtime that runs it
    earliest_version_after_lowering: str | None  # ... that runs it once lowered by the rules on record
    runtimes_running: list[str]  # every registered runtime that runs it
    # each .pt2 archive's calls, argument by argument, against the torch release the runtime follows
    arguments: list[ModelArguments] = []


# --- the coverage matrix ---------------------------------------------------------------------------


class MatrixRuntime(Result):
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


class MatrixOperator(Result):
    op: str
    kernels: dict[str, str | None]  # runtime → the kernel that gives it (None: lacks it)


class MatrixModel(Result):
    model: str
    missing: dict[str, list[str]]  # runtime → the operators it lacks for this model (empty: runs)
    graph_ops: list[str] = []  # operators of the model that need no kernel (never missing)


class CoverageMatrix(Result):
    snapshot: str | None
    stage: str
    runtimes: list[MatrixRuntime]
    operators: list[MatrixOperator]
    models: list[MatrixModel]


# --- the export-time check -------------------------------------------------------------------------


class RuntimeFit(Result):
    runtime: str = Field(description="a registered runtime, NAME@VERSION")
    runs: bool = Field(description="it has a kernel for every operator that needs one")
    missing: list[str] = Field(description="the operators it lacks")


class ExportCheck(Result):
    """What `torch.export` users are told about an exported program (opgov.export_check): the
    deprecating operators it uses (a warning), the deprecated or deleted ones (an error), each with
    its dates and replacement, and which registered runtimes run it."""

    operators: list[str] = Field(description="the program's operators, canonical, in first-use order")
    graph_ops: dict[str, str] = Field(description="operators that need no kernel (assertions, symbolic sizes) → why")
    unknown: list[str] = Field(description="operators the registry does not hold")
    lifecycle: list[LifecycleNote] = Field(description="the program's operators that are not active, with dates")
    runtimes: list[RuntimeFit] = Field(description="every registered runtime, by name and version")
