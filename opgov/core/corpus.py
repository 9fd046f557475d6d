"""Which operators models use, and whether a registry (and a runtime) can run them.

A corpus (``../shared/models/torchvision_ops.json``) holds, per model, the operators of the
program torch.export produced (``exported_ops``) and the same after ``run_decompositions()``
(``core_aten_ops``); :mod:`opgov.formats.corpus` reads corpus files and the other ways of naming
what a model uses. This module holds the pure part: the models, and :func:`check_model`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from opgov.core.budget import spend
from opgov.core.errors import BadInput
from opgov.core.graph_ops import graph_op_reason
from opgov.core.names import SUGGESTED_NAMES, name_index

STAGES = ("exported", "core-aten")


@dataclass(frozen=True)
class ModelOps:
    """One model of a corpus. ``key`` (``corpus#name``) names it across corpora."""

    name: str
    family: str
    exported_ops: tuple[str, ...]
    core_aten_ops: tuple[str, ...]
    corpus: str = ""

    @property
    def key(self) -> str:
        return f"{self.corpus}#{self.name}" if self.corpus else self.name

    def ops(self, stage: str = "exported") -> tuple[str, ...]:
        return self.exported_ops if stage == "exported" else self.core_aten_ops


@dataclass(frozen=True)
class Corpus:
    name: str
    source: str
    path: str
    models: Mapping[str, ModelOps] = field(compare=False)


def merge_models(corpora: Sequence[Corpus]) -> dict[str, ModelOps]:
    """Every model of ``corpora`` keyed ``corpus#model``, in file order."""
    return {m.key: m for c in corpora for m in c.models.values()}


# --------------------------------------------------------------------------------------------
# check-model


@dataclass(frozen=True)
class OpState:
    """What the registry knows about one operator (``deprecating_since`` is UTC)."""

    category: str | None
    lifecycle: str = "active"
    deprecating_since: datetime | None = None
    replacement: str | None = None


@dataclass(frozen=True)
class Finding:
    """One line of a model check. ``date``: when a deprecating operator becomes deprecated."""

    rule: str
    op: str
    message: str
    replacement: str | None = None
    date: datetime | None = None


@dataclass(frozen=True)
class ModelCheck:
    ops: tuple[str, ...]
    errors: tuple[Finding, ...]
    warnings: tuple[Finding, ...]
    notes: tuple[Finding, ...]
    earliest_snapshot: str | None
    snapshots_checked: int

    @property
    def ok(self) -> bool:
        return not self.errors


# the distinct operators one model check reads: a real model uses a few hundred, PyTorch declares
# some 3,700 in all; a list of more is not a model's, and its findings would cost tens of times its size
MAX_MODEL_OPERATORS = 10_000


def check_operator_count(count: int) -> None:
    """Refuse a model of more than :data:`MAX_MODEL_OPERATORS` distinct operators, before any is checked."""
    if count > MAX_MODEL_OPERATORS:
        raise BadInput(f"the model uses {count:,} distinct operators: more than {MAX_MODEL_OPERATORS:,} (PyTorch "
                       "declares about 3,700 in all); not a model's operator list")


def check_model(ops: Sequence[str], *, state: Mapping[str, OpState], runtime_ops: set[str] | None = None,
                deprecating_period_days: int = 14,
                snapshots: Sequence[tuple[str, set[str] | frozenset[str]]] = (),
                runtime_label: str = "the runtime", known: Sequence[str] | None = None,
                graph: Mapping[str, str] | None = None) -> ModelCheck:
    """Check the operators a model uses against the registry state and a runtime's operators.

    Errors: ``unknown-operator`` (not in ``state``), ``operator-deleted``, ``operator-deprecated``,
    ``runtime-missing`` (not in ``runtime_ops``, when given). Warnings: ``operator-deprecating``
    with the replacement and the UTC date it becomes deprecated (deprecating_since + period);
    ``operator-removed``: not in the latest of ``snapshots`` although never deleted.
    Notes: ``not-core`` (an edge runtime implements core operators), ``graph-operator`` (an
    assertion or symbolic size: no kernel needed, never ``runtime-missing``). ``earliest_snapshot``: the
    label of the first of ``snapshots`` (ordered oldest first) that has every operator.
    ``known``: every operator name of the registry, for "did you mean" hints on unknown ones
    (default: the keys of ``state``). ``graph``: the snapshot's graph operators
    (:func:`opgov.core.graph_ops.graph_ops_of`; default: the hand list).
    """
    ops = tuple(dict.fromkeys(ops))
    check_operator_count(len(ops))
    errors: list[Finding] = []
    warnings: list[Finding] = []
    notes: list[Finding] = []
    period = timedelta(days=deprecating_period_days)
    unknown = 0
    for op in ops:
        spend()
        st = state.get(op)
        if st is None:
            unknown += 1  # suggestions for the first few only, from the registry's index
            close = name_index(known if known is not None else state).close(op) if unknown <= SUGGESTED_NAMES else []
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            errors.append(Finding("unknown-operator", op, f"{op} is not in the registry{hint}"))
        elif st.lifecycle == "deleted":
            errors.append(Finding("operator-deleted", op, f"{op} has been deleted" + _instead(st),
                                  replacement=st.replacement))
        elif st.lifecycle == "deprecated":
            errors.append(Finding("operator-deprecated", op, f"{op} is deprecated" + _instead(st),
                                  replacement=st.replacement))
        elif st.lifecycle == "deprecating":
            date = _utc(st.deprecating_since) + period if st.deprecating_since else None
            when = f" on {date.date().isoformat()} (UTC)" if date else ""
            warnings.append(Finding("operator-deprecating", op,
                                    f"{op} is being deprecated and becomes deprecated{when}" + _instead(st),
                                    replacement=st.replacement, date=date))
        if st is not None and st.lifecycle != "deleted" and snapshots and op not in snapshots[-1][1]:
            last = next((label for label, have in reversed(snapshots) if op in have), None)
            warnings.append(Finding("operator-removed", op, f"{op} is not in the latest snapshot "
                                    f"({snapshots[-1][0]})" + (f"; last in {last}" if last else "")))
        graph_reason = graph_op_reason(op, graph)
        if graph_reason is not None:  # needs no kernel: neither "not core" nor missing from a runtime
            notes.append(Finding("graph-operator", op, f"{op} needs no kernel: {graph_reason}"))
            continue
        if st is not None and st.category != "core" and st.lifecycle != "deleted":
            notes.append(Finding("not-core", op, f"{op} is not core ({st.category or 'uncategorized'}): "
                                                 "an edge runtime implementing core ATen may lack it"))
        if runtime_ops is not None and op not in runtime_ops:
            errors.append(Finding("runtime-missing", op, f"{runtime_label} lacks {op}"))
    needed = set(ops)
    earliest = next((label for label, have in snapshots if needed <= have), None)
    return ModelCheck(ops=ops, errors=tuple(errors), warnings=tuple(warnings), notes=tuple(notes),
                      earliest_snapshot=earliest, snapshots_checked=len(snapshots))


def _instead(st: OpState) -> str:
    return f"; use {st.replacement} instead" if st.replacement else ""


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
