"""What a runtime release runs per operator and dtype: a part of the runtime results
(:mod:`opgov.results.runtimes`) and of ``opset build``'s (:mod:`opgov.results.decomps`), in a
module of its own so that neither area's results load the other's."""

from __future__ import annotations

from dataclasses import dataclass, field

from opgov.results.plain import about as _about


@dataclass(frozen=True, kw_only=True)
class RuntimeDtypes:
    """One runtime release against a set of operators (an opset's): how many it has, the dtypes it
    runs each in, and what changed since the previous release of the same runtime."""

    runtime: str
    previous: str | None
    checked: bool = field(metadata=_about("whether the release records what its kernels accept (dtypes, argument "
                                          "checks); false: every dtype below is null"))
    have: int
    total: int
    missing: list[str] = field(metadata=_about("the operators of the set it has no kernel for"))
    dtypes: dict[str, list[str] | None] = field(metadata=_about(
        "operator → the dtypes its kernel runs it in (all tensors of one dtype, after to_edge's dtype table); "
        "null: the release lacks the operator, or what its kernel takes is unknown or not recorded"))
    dtypes_gained: dict[str, list[str]] = field(default_factory=dict, metadata=_about(
        "operator → the dtypes this release runs it in that the previous one did not",
        json_schema_extra={"default": {}}))
    dtypes_lost: dict[str, list[str]] = field(default_factory=dict, metadata=_about(
        "operator → the dtypes the previous release ran it in that this one does not",
        json_schema_extra={"default": {}}))
