"""A model's calls against a runtime's kernels, down to each kernel's dtypes and argument checks. Pure.

A kernel's facts (:mod:`opgov.formats.et_sources`, as JSON: ``params``, ``dtypes``, ``common``,
``compute``, ``ranks``, ``same_dtype``, ``unattributed``, ``unknown``, ``any_dtype``, ``int_as_float``) name its C++
parameters; those are the out= overload's arguments in order, so ``schema_args`` (the kernel
operator's argument names, from the registry) turns them into the names a call uses. A call gives
the dtype and rank of each tensor it passes (by argument name) and of each it returns (the out=
overload's out arguments, in order).

Per call, one verdict (the first finding; all are kept):

``runs``            every check the kernel makes passes
``no kernel``       the runtime has no kernel for the operator (:mod:`opgov.core.runtimes` says which)
``dtype``           an argument's dtype is not among those the kernel switches on
``argument``        an argument check refuses the call (a rank, dtypes that must match)
``unknown``         a check could not be read from the sources, and the call is outside what was read

"unknown" is never "runs": a model with an unknown call is not said to run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RUNS, NO_KERNEL, DTYPE, ARGUMENT, UNKNOWN = "runs", "no kernel", "dtype", "argument", "unknown"
SEVERITY = {RUNS: 0, UNKNOWN: 1, ARGUMENT: 2, DTYPE: 2, NO_KERNEL: 3}
OUTPUT = "<output>"  # a call's returned tensors are named "<output>0", "<output>1", …


@dataclass(frozen=True)
class TensorUse:
    """A tensor a call passes (``argument``: the schema's name; a list argument gives one per
    element) or returns (``<output>0``), with its dtype and rank as the archive records them."""

    argument: str
    dtype: str | None
    rank: int | None


@dataclass(frozen=True)
class KernelFinding:
    status: str
    op: str
    kernel: str | None
    argument: str | None
    dtype: str | None
    message: str


# --- torch's type promotion, for the common dtype of a call ------------------------------------------

_KIND = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1,
         "float16": 2, "bfloat16": 2, "float32": 2, "float64": 2}
_INT_ORDER = ["uint8", "int8", "int16", "int32", "int64"]
_FLOAT_ORDER = ["float16", "bfloat16", "float32", "float64"]


def promote(a: str, b: str) -> str | None:
    """torch.promote_types for the real dtypes (None for others)."""
    if a == b:
        return a
    if a not in _KIND or b not in _KIND:
        return None
    ka, kb = _KIND[a], _KIND[b]
    if ka != kb:
        return a if ka > kb else b
    if ka == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return max(a, b, key=_FLOAT_ORDER.index)
    if {a, b} == {"uint8", "int8"}:
        return "int16"
    if "uint8" in (a, b):
        return b if a == "uint8" else a
    return max(a, b, key=_INT_ORDER.index)


def common_dtype(dtypes: Sequence[str]) -> str | None:
    out: str | None = None
    for d in dtypes:
        out = d if out is None else promote(out, d)
        if out is None:
            return None
    return out


# --- the check -----------------------------------------------------------------------------------------


def _names(params: Sequence[str], schema_args: Sequence[str], out_args: Sequence[str]) -> dict[str, str]:
    """C++ parameter → the name a call uses (an input's schema name, or ``<output>i``)."""
    names: dict[str, str] = {}
    outs = list(out_args)
    for i, p in enumerate(params):
        if i >= len(schema_args):
            break
        arg = schema_args[i]
        names[p] = f"{OUTPUT}{outs.index(arg)}" if arg in outs else arg
    return names


def _shown(name: str, out_args: Sequence[str]) -> str:
    if name.startswith(OUTPUT):
        i = int(name[len(OUTPUT):])
        return f"its result ({out_args[i]})" if i < len(out_args) else "its result"
    return name


def _ranks_text(ranks: Sequence[int]) -> str:
    return " or ".join(f"{r}-D" for r in ranks)


def check_kernel_call(op: str, kernel: str, facts: Mapping | None, tensors: Sequence[TensorUse],
                      schema_args: Sequence[str], out_args: Sequence[str]) -> list[KernelFinding]:
    """Every finding of one call of ``op`` on ``kernel`` (``facts``: the kernel's, None when the
    runtime has none for it); empty when it runs."""
    found: list[KernelFinding] = []
    if facts is None:
        return [KernelFinding(UNKNOWN, op, kernel, None, None,
                              f"{op}: the runtime records nothing about what {kernel} accepts")]
    names = _names(facts.get("params", ()), schema_args, out_args)
    by_arg: dict[str, list[TensorUse]] = {}
    for t in tensors:
        by_arg.setdefault(t.argument, []).append(t)

    def uses(param: str) -> list[TensorUse]:
        return by_arg.get(names.get(param, ""), [])

    for param, accepted in (facts.get("dtypes") or {}).items():
        for t in uses(param):
            if t.dtype is not None and t.dtype not in accepted:
                arg = _shown(t.argument, out_args)
                found.append(KernelFinding(DTYPE, op, kernel, arg, t.dtype,
                                           f"{kernel} has no {t.dtype} kernel for {arg} "
                                           f"(it takes {', '.join(accepted)})"))
    inputs = [t.dtype for t in tensors if not t.argument.startswith(OUTPUT) and t.dtype is not None]
    for key, upcast in (("common", False), ("compute", True)):
        allowed = facts.get(key)
        if allowed is None or not inputs:
            continue
        common = common_dtype(inputs)
        if common is None:
            continue
        if facts.get("int_as_float") and _KIND.get(common) != 2:
            common = "float32"  # true division: integers and bools divide in float32
        computed = {"float16": "float32", "bfloat16": "float32"}.get(common, common) if upcast else common
        if computed not in allowed:
            arg = next((t.argument for t in tensors if t.dtype == common), None)
            found.append(KernelFinding(DTYPE, op, kernel, arg, common,
                                       f"{kernel} has no {common} kernel (it computes in "
                                       f"{', '.join(allowed)})"))
    for param, ranks in (facts.get("ranks") or {}).items():
        for t in uses(param):
            if t.rank is not None and t.rank not in ranks:
                arg = _shown(t.argument, out_args)
                found.append(KernelFinding(ARGUMENT, op, kernel, arg, t.dtype,
                                           f"{kernel} refuses {arg} of rank {t.rank} "
                                           f"(it takes {_ranks_text(ranks)})"))
    for group in facts.get("same_dtype") or ():
        seen = [(p, t) for p in group for t in uses(p) if t.dtype is not None]
        if len({t.dtype for _, t in seen}) > 1:
            first = seen[0][1]
            odd = next(t for _, t in seen if t.dtype != first.dtype)
            shown = [_shown(names.get(p, p), out_args) for p in group]
            found.append(KernelFinding(ARGUMENT, op, kernel, _shown(odd.argument, out_args), odd.dtype,
                                       f"{kernel} requires {', '.join(shown)} of one dtype; the call mixes "
                                       f"{first.dtype} and {odd.dtype}"))
    if not found:
        call_dtypes = {t.dtype for t in tensors if t.dtype is not None}
        if facts.get("unknown"):
            found.append(KernelFinding(UNKNOWN, op, kernel, None, None,
                                       f"{kernel}: {facts['unknown']} (which dtypes it takes is unknown)"))
        for allowed in facts.get("unattributed") or ():
            outside = sorted(call_dtypes - set(allowed)) if "?" not in allowed else sorted(call_dtypes)
            if outside:
                found.append(KernelFinding(UNKNOWN, op, kernel, None, outside[0],
                                           f"{kernel} switches on a dtype opgov could not tie to an argument; "
                                           f"{outside[0]} is not among its cases, so whether it runs is unknown"))
                break
    found.sort(key=lambda f: -SEVERITY[f.status])
    return found


def check_edge_call(op: str, entry: Mapping | None, tensors: Sequence[TensorUse]) -> KernelFinding | None:
    """What ``to_edge``'s verifier says of one call of ``op`` (``entry``: the edge dialect's dtype
    constraints of the operator, :func:`opgov.formats.et_sources.edge_constraints`; None: it has
    none, so it checks nothing): a finding when no constraint holds, naming the first argument that
    breaks the closest one. As the verifier does, a list argument counts its first tensor, and an
    alias stands for the dtype the first argument bound to it has."""
    if not entry:
        return None
    types: dict[str, str] = {}
    for t in tensors:
        name = t.argument
        if name.startswith(OUTPUT):
            name = f"__ret_{name[len(OUTPUT):]}"
        if t.dtype is not None:
            types.setdefault(name, t.dtype)
    alias_sets = entry["alias"]
    best: tuple[int, str, str] | None = None
    for constraint in entry["constraints"]:
        if any(name not in constraint for name in types):
            continue
        bound: dict[str, str] = {}
        broke = None
        for i, (name, dtype) in enumerate(types.items()):
            alias = constraint[name]
            if alias in bound:
                ok = bound[alias] == dtype
            else:
                ok = dtype in alias_sets.get(alias, ())
                if ok:
                    bound[alias] = dtype
            if not ok:
                broke = (i, name, dtype)
                break
        if broke is None:
            return None
        if best is None or broke[0] > best[0]:
            best = broke
    if best is None:
        return None  # the call names tensors the constraints do not: the verifier's own business
    _, name, dtype = best
    shown = "its result" if name.startswith("__ret_") else name
    combos = sorted({dtype for c in entry["constraints"] for a in [c.get(name)] if a
                     for dtype in alias_sets.get(a, ())})
    others = ", ".join(f"{'its result' if n.startswith('__ret_') else n} {d}" for n, d in types.items() if n != name)
    return KernelFinding(DTYPE, op, None, shown, dtype,
                         f"to_edge refuses {op} with {shown} {dtype}"
                         + (f" beside {others}" if others else "")
                         + f": the edge dialect allows no such dtype combination ({shown} takes "
                           f"{', '.join(combos)})")


def coerce_mixed_types(op: str, tensors: Sequence[TensorUse],
                       mixed_ops: Sequence[str]) -> tuple[list[TensorUse], list[TensorUse]]:
    """What ``to_edge`` makes of a call of one of ``mixed_ops`` (its ``RemoveMixedTypeOperators``
    pass: add, mul, sub, div, minimum by release) whose tensors' dtypes differ from its result's:
    each is cast to the result's dtype (the promoted one) before the call. The call's tensors as
    the kernel receives them, and those cast (as the call passed them)."""
    if op not in mixed_ops:
        return list(tensors), []
    result = next((t.dtype for t in tensors if t.argument == f"{OUTPUT}0"), None)
    if result is None:
        return list(tensors), []
    cast = [t for t in tensors if not t.argument.startswith(OUTPUT) and t.dtype is not None and t.dtype != result]
    return [TensorUse(t.argument, result, t.rank) if t in cast else t for t in tensors], cast


def check_cast(op: str, tensor: TensorUse, coerced: Sequence[TensorUse], kernel: str,
               facts: Mapping | None) -> KernelFinding | None:
    """The cast ``to_edge`` puts before a mixed-dtype call of ``op`` (:func:`coerce_mixed_types`),
    on the runtime's cast kernel (``facts``: its; None: not recorded, nothing is checked)."""
    if facts is None:
        return None
    target = next(t.dtype for t in coerced if t.argument == tensor.argument)
    params = list(facts.get("params") or ())
    if not params:
        return None
    uses = [TensorUse(params[0], tensor.dtype, tensor.rank), TensorUse(f"{OUTPUT}0", target, tensor.rank)]
    for f in check_kernel_call(op, kernel, facts, uses, params, params[-1:]):
        if f.status in (DTYPE, ARGUMENT):
            return KernelFinding(f.status, op, kernel, tensor.argument, f.dtype,
                                 f"to_edge casts {op}'s {tensor.argument} from {tensor.dtype} to {target} (the call "
                                 f"mixes dtypes), and {f.message}")
    return None


def status_of(findings: Sequence[KernelFinding]) -> str:
    return max((f.status for f in findings), key=SEVERITY.__getitem__, default=RUNS)


# --- what an operator runs in, per dtype ------------------------------------------------------------

REAL_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")


def operator_dtypes(facts: Mapping | None, edge: Mapping | None) -> tuple[str, ...] | None:
    """The dtypes in which a call whose tensors all share one dtype runs on this kernel (``facts``)
    after ``to_edge`` (``edge``: the operator's edge dialect entry, None when it has none): the
    kernel's dtypes for its first argument, within its common and compute dtypes, and those the edge
    dialect allows its first tensor argument. None: what the kernel takes is unknown."""
    if facts is None or facts.get("unknown"):
        return None
    params = facts.get("params") or ()
    dtypes = facts.get("dtypes") or {}
    # the first input's dtypes (a comparison's result is bool whatever its inputs)
    first = params[0] if params and params[0] in dtypes else next(
        (p for p in params if p in dtypes and not p.startswith("out")), next((p for p in params if p in dtypes), None))
    if facts.get("any_dtype"):
        found = set(REAL_DTYPES)
    elif first is not None:
        found = set(dtypes[first]) & set(REAL_DTYPES)
    elif facts.get("compute") is None and facts.get("common") is None:
        return None
    else:
        found = set(REAL_DTYPES)
    def as_common(d: str) -> str:
        return "float32" if facts.get("int_as_float") and _KIND.get(d) != 2 else d

    if facts.get("common") is not None:
        found = {d for d in found if as_common(d) in facts["common"]}
    if facts.get("compute") is not None:
        found = {d for d in found if {"float16": "float32", "bfloat16": "float32"}.get(as_common(d), as_common(d))
                 in facts["compute"]}
    for allowed in facts.get("unattributed") or ():
        if "?" in allowed:
            return None
        found &= set(allowed)
    if edge:
        names = [n for n in edge["constraints"][0] if not n.startswith("__ret_")]
        first_tensor = "self" if "self" in names else next(iter(names), None)
        allowed_edge = {d for c in edge["constraints"] for d in edge["alias"].get(c.get(first_tensor), ())}
        found &= allowed_edge
    return tuple(d for d in REAL_DTYPES if d in found)


def dtype_changes(ops: Sequence[str], now: Mapping[str, Sequence[str] | None],
                  then: Mapping[str, Sequence[str] | None]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """What each of ``ops`` gained and lost in dtypes from one release (``then``: operator → the dtypes
    it runs in, None when it lacks it or they are unknown) to the next (``now``). An operator
    gained or lost whole, or unknown in either, is not a dtype change."""
    gained: dict[str, list[str]] = {}
    lost: dict[str, list[str]] = {}
    for op in ops:
        a, b = then.get(op), now.get(op)
        if a is None or b is None:
            continue
        if set(b) - set(a):
            gained[op] = [d for d in b if d not in a]
        if set(a) - set(b):
            lost[op] = [d for d in a if d not in b]
    return gained, lost
