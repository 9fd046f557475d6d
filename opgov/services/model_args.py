"""A model's calls argument by argument against the torch release a runtime follows: part of
``opgov check-model`` (:func:`opgov.services.runtimes.check_model`), against a registered runtime
(the release it was registered with) or a snapshot given as the runtime (that release).

The decision is pure (:func:`opgov.core.model_args.check_calls`); the archives are found by
:func:`opgov.formats.oplists.read_archives` and read by :mod:`opgov.formats.pt2`; both releases' schemas come from the snapshots that stand for them, and
the upgraders on record from :mod:`opgov.reads.upgraders`.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from opgov.core.errors import BadInput
from opgov.db.tables import snapshots
from opgov.formats.files import Content
from opgov.results.model_args import ArgumentProblem, ModelArguments, OperatorDtypes


class _Schemas:
    """Each snapshot's schemas, read once per check."""

    def __init__(self, session) -> None:
        self.session = session
        self.labels = list(session.scalars(select(snapshots.c.label).order_by(snapshots.c.position)))
        self._read: dict[str, dict[str, str]] = {}

    def of(self, label: str) -> dict[str, str]:
        if label not in self._read:
            from opgov.services.compat import snapshot_by_label

            self._read[label] = dict(snapshot_by_label(self.session, label).schemas)
        return self._read[label]


def model_arguments(ctx, models: Sequence[str | Content], *, runtime: str, release: str | None,
                    archives: list | None = None, skip: frozenset[str] | set[str] = frozenset()) -> list[ModelArguments]:
    """Each .pt2 archive of ``models`` checked call by call against torch ``release`` (the torch
    release ``runtime`` follows: a snapshot label or a release such as ``2.12``; None when the
    runtime was registered without one). ``archives``: :func:`opgov.formats.oplists.read_archives`
    of ``models``, when read already; ``skip``: operators whose calls are not checked (graph
    operators, which lowering removes: they are never loaded by the runtime)."""
    from opgov.formats.oplists import read_archives

    archives = read_archives(models) if archives is None else archives
    if not archives:
        return []
    check = _Checker(ctx, runtime, release)
    return [check(name, version, [c for c in calls if c.op not in skip])
            for name, programs in archives for version, calls in programs]


def program_arguments(ctx, calls: Sequence, *, torch_version: str | None, runtime: str,
                      release: str | None) -> ModelArguments:
    """An in-memory program's calls (the export-time check: each with ``node``, ``op``, ``args`` of
    ``name``, ``keyword`` and ``arg`` as torch.export's serializer writes it, and ``dtypes``), written
    by torch ``torch_version``, checked as :func:`model_arguments` checks an archive's."""
    from opgov.core.model_args import Call, CallArg
    from opgov.core.names import canonical
    from opgov.formats.pt2 import argument_value

    read = []
    for call in calls:
        try:
            op = canonical(call.op)
        except BadInput as err:
            raise BadInput(f"calls: {err}") from None
        args = []
        for arg in call.args:
            value, text = argument_value(arg.arg)
            args.append(CallArg(arg.name, arg.keyword, value, text))
        read.append(Call(call.node, op, tuple(args), tuple(sorted(call.dtypes))))
    return _Checker(ctx, runtime, release)("the exported program", torch_version, read)


class _Checker:
    """One program's calls against torch ``release`` (the release ``runtime`` follows)."""

    def __init__(self, ctx, runtime: str, release: str | None) -> None:
        from opgov.core.model_args import snapshot_for

        self.ctx, self.runtime, self.release = ctx, runtime, release
        self.schemas = _Schemas(ctx.session)
        self.runtime_label = snapshot_for(release, self.schemas.labels) if release is not None else None
        self.upgraders = None

    def __call__(self, name: str, version: str | None, calls: Sequence) -> ModelArguments:
        from opgov.core.model_args import check_calls, dtypes_by_operator, release_of, snapshot_for

        schemas, runtime, release, runtime_label = self.schemas, self.runtime, self.release, self.runtime_label
        dtypes = [OperatorDtypes(op=op, dtypes=list(types)) for op, types in dtypes_by_operator(calls).items()]
        base = dict(model=name, torch_version=version, calls=len(calls), dtypes=dtypes)
        if release is None:
            return ModelArguments(**base, model_release=None, runtime_release=None, checked=False, runs=True,
                                  note=f"{runtime} is registered without the torch release its kernels "
                                       "follow (opgov runtimes add --torch): the arguments are not checked")
        if runtime_label is None:
            return ModelArguments(**base, model_release=None, runtime_release=None, checked=False, runs=True,
                                  note=f"no snapshot holds torch {release}, which {runtime} follows (import "
                                       "its native_functions.yaml): the arguments are not checked")
        model_label = None
        note = None
        if version is None:
            note = "the archive does not say which torch wrote it: defaults and schema changes are not compared"
        else:
            try:
                model_label = snapshot_for(release_of(version), schemas.labels)
            except BadInput:
                model_label = None
            if model_label is None:
                note = (f"no snapshot holds torch {version}, which wrote the archive: defaults and schema "
                        "changes are not compared")
        if self.upgraders is None:
            from opgov.reads.upgraders import bumps_of, recorded_upgraders

            self.upgraders = [u for u, _ in recorded_upgraders(self.ctx.session, bumps_of(self.ctx.session))]
        problems = check_calls(calls, model_release=model_label or (version or "unknown"),
                               runtime_release=runtime_label,
                               model_schemas=schemas.of(model_label) if model_label else None,
                               runtime_schemas=schemas.of(runtime_label), upgraders=self.upgraders)
        return ModelArguments(
            **base, model_release=model_label, runtime_release=runtime_label, checked=True,
            runs=not any(p.severity == "error" for p in problems), note=note,
            problems=[ArgumentProblem(rule=p.rule, severity=p.severity, call=p.call, op=p.op, argument=p.argument,
                                      model_release=p.model_release, runtime_release=p.runtime_release,
                                      message=p.message, upgrader=p.upgrader, calls=p.calls) for p in problems])
