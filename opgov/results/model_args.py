"""The result of checking a model's calls argument by argument against the torch release a runtime
follows (:mod:`opgov.core.model_args`), part of `check-model`'s answer: frozen standard-library
dataclasses (FastAPI serves and documents them as they are)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ArgumentProblem", "ModelArguments", "OperatorDtypes"]


@dataclass(frozen=True)
class ArgumentProblem:
    """One problem of a call on the runtime's release, as torch.export.load of that release meets it."""

    rule: str  # operator-missing | argument-unknown | argument-refused | default-changed | schema-bc-break
    severity: str  # error (it cannot run as exported) | warning (it runs: silently different, or upgraded)
    call: str  # the first call (graph node) it concerns
    op: str
    argument: str | None
    model_release: str  # the torch release that wrote the archive
    runtime_release: str  # the torch release the runtime follows
    message: str
    upgrader: str | None = None  # the recorded upgrader it runs through (schema-bc-break)
    calls: int = 1  # how many calls of the model share it


@dataclass(frozen=True)
class OperatorDtypes:
    """The dtypes of the tensors an operator's calls take and give (what a per-dtype check needs)."""

    op: str
    dtypes: list[str]


@dataclass(frozen=True)
class ModelArguments:
    """One .pt2 archive's calls against the runtime's torch release."""

    model: str  # the archive, as given
    torch_version: str | None  # as the archive says (2.13.0+cpu)
    model_release: str | None  # the snapshot that stands for it (None: opgov holds none)
    runtime_release: str | None  # the snapshot that stands for the runtime's torch release
    calls: int
    checked: bool  # False: the runtime's release is unknown, or no snapshot holds it (see note)
    runs: bool  # no error among the problems
    problems: list[ArgumentProblem] = field(default_factory=list)
    dtypes: list[OperatorDtypes] = field(default_factory=list)
    note: str | None = None  # what was not compared, and why
