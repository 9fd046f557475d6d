"""The registered runtimes as the runtime use cases, ``opset build`` and the pages read them: what
each release has per operator (:func:`runtimes_by_name`, :func:`runtimes_of_operator`) and runs per
dtype (:func:`dtypes_by_release`), and the ExecuTorch releases opgov ships data of
(:func:`shipped_release`, :func:`shipped_kernel_facts`, :func:`known_releases`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from sqlalchemy import select

from opgov.core.runtimes import FamilyIndex, RegistryOp, RuntimeId, family_index, release_order, runtime_operators
from opgov.db.tables import operators, runtimes, snapshots
from opgov.reads.common import Ctx, latest_snapshot_id
from opgov.results.kernel_dtypes import RuntimeDtypes
from opgov.results.runtimes import OperatorRuntime

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


def runtimes_by_name(ctx: Ctx) -> dict[str, list[_Runtime]]:
    """Every registered runtime by name, its versions oldest first, each with what it has: read
    once for any number of :func:`runtimes_of_operator` calls (a site's operator pages)."""
    by_name: dict[str, list[_Runtime]] = {}
    for r in _runtimes(ctx, _Registry(ctx.session)):
        by_name.setdefault(r.id.name, []).append(r)
    return dict(sorted(by_name.items()))


def runtimes_of_operator(op: str, by_name: dict[str, list[_Runtime]]) -> list[OperatorRuntime]:
    """For each registered runtime (``by_name``: :func:`runtimes_by_name`) that has ever
    implemented ``op``: since which version."""
    out = []
    for name, versions in by_name.items():
        having = [r for r in versions if op in r.has]
        if not having:
            continue
        newest = versions[-1]
        since = None
        for r in reversed(versions):  # back from the newest while it has it
            if op not in r.has:
                break
            since = str(r.id)
        out.append(OperatorRuntime(runtime=name, latest=str(newest.id), kernel=newest.has.get(op), since=since,
                                   versions=[str(r.id) for r in having],
                                   dtypes={str(r.id): r.dtypes(op) for r in having}))
    return out


def shipped_release(rid: RuntimeId) -> dict | None:
    """What opgov ships about this runtime release (``{"torch": "2.12", "served": [...]}``), else None."""
    import json

    from opgov.resources import shipped_runtimes

    path = shipped_runtimes(rid.name)
    if path is None:
        return None
    return json.loads(path.read_text(encoding="utf-8"))["releases"].get(rid.version)


def shipped_kernel_facts(rid: RuntimeId) -> dict | None:
    """What opgov ships about each kernel of this runtime release (``{"kernels": {...},
    "optimized_kernels": {...}}``), else None."""
    import json

    from opgov.resources import shipped_runtime_release

    path = shipped_runtime_release(rid.name, rid.version)
    return None if path is None else json.loads(path.read_text(encoding="utf-8"))


def pre_release_of(name: str, version: str) -> dict | None:
    """Where opgov read a release that had no tag in the sources it read (``{"ref": "main",
    "commit": …, "date": …}``), else None."""
    shipped = shipped_release(RuntimeId(name, version))
    return None if shipped is None else shipped.get("pre_release")


def known_releases(name: str) -> list[str]:
    """The releases of the runtime ``name`` opgov ships data about, oldest first."""
    import json

    from opgov.resources import shipped_runtimes

    path = shipped_runtimes(name)
    if path is None:
        return []
    return sorted(json.loads(path.read_text(encoding="utf-8"))["releases"], key=lambda v: release_order(RuntimeId(name, v)))
