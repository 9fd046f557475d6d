"""The registered runtimes as the runtime use cases read them (:mod:`opgov.services.runtimes`), and
what each release runs per operator and dtype (:func:`dtypes_by_release`, which ``opset build``
asks too: a module of its own, so that :mod:`opgov.services.decomps` can ask it without an import
cycle)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sqlalchemy import select

from opgov.core.runtimes import FamilyIndex, RegistryOp, RuntimeId, family_index, release_order, runtime_operators
from opgov.db.tables import operators, runtimes, snapshots
from opgov.results.kernel_dtypes import RuntimeDtypes
from opgov.services.common import Ctx

SERVED = "served by the runtime (prim op)"  # what gives an operator a runtime serves outside its kernels


# --- reading the registry -----------------------------------------------------------------------


class _Registry:
    """What the latest snapshot says, loaded once per command."""

    def __init__(self, session) -> None:
        c = operators.c
        self.session = session
        rows = session.execute(select(c.qualname, c.schema, c.kind, c.autogen_of, c.category, c.present)).all()
        self.present = [RegistryOp(r.qualname, r.schema, r.kind, r.autogen_of) for r in rows if r.present]
        self.present_names = {r.qualname for r in rows if r.present}
        self.categories = {r.qualname: r.category for r in rows}
        from opgov.core.graph_ops import graph_ops_of

        # the graph operators, from the snapshot's schemas: assertions and symbolic values need no kernel
        self.graph = graph_ops_of((r.qualname, r.schema) for r in rows if r.present)
        # the core operators a runtime implements as kernels: the symbolic sizes tagged core
        # (aten::sym_size.int, aten::sym_is_contiguous …) are answered by the runtime itself
        self.core = sorted(r.qualname for r in rows if r.present and r.category == "core" and r.qualname not in self.graph)
        from opgov.services.common import latest_snapshot_id

        latest_id = latest_snapshot_id(session)  # not a release stored with import --historical
        self.snapshot = None if latest_id is None else session.scalar(
            select(snapshots.c.label).where(snapshots.c.id == latest_id))
        self._index: FamilyIndex | None = None

    def schemas(self) -> dict[str, str]:
        """Each present operator's schema (those only an ``autogen:`` line declares have none)."""
        if getattr(self, "_schemas", None) is None:
            self._schemas = {op.qualname: op.schema for op in self.present if op.schema is not None}
        return self._schemas

    def index(self, kernels) -> FamilyIndex:
        if self._index is None:
            self._index = family_index(self.present, kernels)
        return self._index


class _Runtime:
    def dtypes(self, op: str) -> list[str] | None:
        """The dtypes this runtime runs ``op`` in (:func:`opgov.core.kernels.operator_dtypes`); None
        when it lacks it, serves it without a kernel, or records nothing about the kernel."""
        from opgov.core.kernels import operator_dtypes

        kernel = self.has.get(op)
        recorded = self.row.kernel_facts
        if kernel is None or kernel == SERVED or recorded is None:
            return None
        found = operator_dtypes(recorded.get("kernels", {}).get(kernel), recorded.get("edge", {}).get(op))
        return None if found is None else list(found)

    def __init__(self, row) -> None:
        self.id = RuntimeId(row.name, row.version)
        self.row = row
        self.kernels: list[str] = list(row.kernels)
        self.released: date | None = row.released
        self.served: list[str] = list(row.served or [])  # outside its kernel registries (prim ops)
        self.torch: str | None = row.torch_release
        self.has: dict[str, str] = {}


def _runtimes(ctx: Ctx, registry: _Registry) -> list[_Runtime]:
    """Every registered runtime, by name and version (oldest first), with the operators it has."""
    found = [_Runtime(row) for row in ctx.session.execute(select(runtimes))]
    found.sort(key=lambda r: release_order(r.id))
    index = registry.index([k for r in found for k in r.kernels])
    for r in found:
        r.has = runtime_operators(r.kernels, index)
        for op in r.served:  # served by the runtime itself (ExecuTorch's prim ops): no kernel entry
            r.has.setdefault(op, SERVED)
    return found


def _dtypes_by_release(found: Sequence[_Runtime], ops: Sequence[str]) -> list[RuntimeDtypes]:
    """For each runtime release (oldest first), the dtypes it runs each of ``ops`` in and what that
    gained and lost over the previous release of the same runtime (:func:`opgov.core.kernels.dtype_changes`)."""
    from opgov.core.kernels import dtype_changes

    out: list[RuntimeDtypes] = []
    previous: dict[str, RuntimeDtypes] = {}
    for r in found:
        dtypes = {op: r.dtypes(op) for op in ops}
        before = previous.get(r.id.name)
        gained, lost = dtype_changes(ops, dtypes, before.dtypes) if before is not None else ({}, {})
        row = RuntimeDtypes(runtime=str(r.id), previous=before.runtime if before else None,
                            checked=r.row.kernel_facts is not None, have=sum(op in r.has for op in ops),
                            total=len(ops), missing=[op for op in ops if op not in r.has], dtypes=dtypes, dtypes_gained=gained, dtypes_lost=lost)
        previous[r.id.name] = row
        out.append(row)
    return out


def dtypes_by_release(ctx: Ctx, ops: Sequence[str]) -> list[RuntimeDtypes]:
    """Each registered runtime release's dtypes for ``ops`` (an opset's operators), and how they
    changed release to release: what ``opset build`` shows of the runtimes (the coverage matrix
    does the same for the core operators)."""
    registry = _Registry(ctx.session)
    return _dtypes_by_release(_runtimes(ctx, registry), list(ops))
