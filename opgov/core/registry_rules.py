"""What PyTorch's code generator (torchgen) demands of a native_functions.yaml, as pure checks.

A registry PyTorch cannot build is bad input: ``opgov import`` must not store an in-place ``add_``
whose ``self`` is not ``Tensor(a!)``, a dispatch key no backend has, a key torchgen does not know,
a ``structured_delegate:`` naming nothing, a mutable operator returning ``()``.

The rules follow torchgen's ``model.py`` (``FunctionSchema.__post_init__``,
``NativeFunction.from_yaml``), ``gen.py`` (``error_check_native_functions``) and
``native_function_generation.py`` (``add_generated_native_functions``); they are written here
over opgov's own schema model, one small function per rule, so any YAML parser can feed them.
Where torchgen keeps a list of historical exceptions to a rule, the same names are exempt here.
Not checked: an out= operator with no other variant of its signature (torchgen's exemptions for
it change from release to release, and opgov's sample v2 changes ``glu``'s default without its
``glu.out``, as a compatibility example).
Rules that depend on backend code (kernel names, ufunc loops, precomputed arguments) are left
to torchgen, and so are rules newer torchgen added that older releases break (Python keywords as
argument names: 2.0.0's ``can_cast(ScalarType from, ...)``): every real release must import.

Standard library only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

from opgov.core.schema import FunctionSchema, SchemaKind, family_key

#: The keys torchgen reads from an entry; any other key is an error there ("leftover entries").
ENTRY_KEYS = frozenset({
    "func", "use_const_ref_for_mutable_tensors", "variants", "manual_kernel_registration",
    "manual_cpp_binding", "device_guard", "device_check", "structured", "structured_delegate",
    "structured_inherits", "python_module", "category_override", "precomputed", "tags", "dispatch",
    "autogen", "ufunc_inner_loop", "cpp_no_default_args",
})
BOOL_KEYS = ("use_const_ref_for_mutable_tensors", "manual_kernel_registration", "manual_cpp_binding",
             "device_guard", "structured")
DEVICE_CHECKS = frozenset({"ExactSame", "NoCheck"})
VARIANTS = frozenset({"function", "method"})

#: The dispatch keys a native_functions.yaml may name (torchgen's ``dispatch_keys``). A backend
#: PyTorch adds later needs adding here.
DISPATCH_KEYS = frozenset({
    "CPU", "CUDA", "MPS", "MTIA", "XPU", "Meta", "MkldnnCPU", "ZeroTensor",
    "SparseCPU", "SparseCUDA", "SparseMPS", "SparseMeta", "SparseXPU",
    "SparseCsrCPU", "SparseCsrCUDA", "SparseCsrMPS", "SparseCsrMeta", "SparseCsrXPU",
    "QuantizedCPU", "QuantizedCUDA", "QuantizedMeta",
    "NestedTensorCPU", "NestedTensorCUDA", "NestedTensorHPU", "NestedTensorMeta", "NestedTensorXPU",
    "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor",
    "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
})
STRUCTURED_KEYS = frozenset({"CPU", "CUDA", "MPS", "XPU", "MTIA"})
_COMPOSITES = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
               "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor")
_YAML_TRUE = frozenset({"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
_YAML_FALSE = frozenset({"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})

# torchgen's own lists of operators that break a rule and are let through
_UNGROUPED_INPLACE = frozenset({"polygamma_"})
_MUTABLE_NO_OUT_EXEMPT = frozenset({"_cummax_helper", "_cummin_helper"})


@dataclass(frozen=True)
class EntryFacts:
    """What the rules need of one entry, whatever parsed it."""

    line: int
    schema: FunctionSchema
    keys: Mapping[str, int]  # every top-level key → its line
    scalars: Mapping[str, str] = field(default_factory=dict)  # top-level keys with a single value → it
    dispatch: tuple[tuple[str, int], ...] = ()  # each dispatch key (comma lists split) and its line
    tags: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.schema.func_name

    def flag(self, key: str) -> bool:
        return self.scalars.get(key) in _YAML_TRUE

    @property
    def composite_implicit(self) -> bool:
        """Its kernel is CompositeImplicitAutograd: said so, or implied by having no dispatch table."""
        if self.dispatch or "dispatch" in self.keys:
            return any(k == "CompositeImplicitAutograd" for k, _ in self.dispatch)
        return not self.flag("structured") and "structured_delegate" not in self.scalars


@dataclass(frozen=True)
class Problem:
    rule: str
    message: str
    line: int


Rule = Callable[[EntryFacts], "tuple[str, int] | str | None"]
ENTRY_RULES: dict[str, Rule] = {}


def _rule(rule_id: str):
    def register(fn: Rule) -> Rule:
        ENTRY_RULES[rule_id] = fn
        return fn
    return register


# --- one entry: its keys ------------------------------------------------------------------------


@_rule("unknown-key")
def unknown_key(e: EntryFacts):
    for key, line in e.keys.items():
        if key not in ENTRY_KEYS:
            return f"unknown key {key!r} in the entry of {e.name} (torchgen reads only: {', '.join(sorted(ENTRY_KEYS))})", line
    return None


@_rule("not-a-bool")
def not_a_bool(e: EntryFacts):
    for key in BOOL_KEYS:
        if key in e.keys and e.scalars.get(key) not in _YAML_TRUE | _YAML_FALSE:
            return f"{key} of {e.name} must be True or False", e.keys[key]
    return None


@_rule("unknown-variant")
def unknown_variant(e: EntryFacts):
    if "variants" in e.keys:
        for v in (e.scalars.get("variants") or "").split(", "):
            if v not in VARIANTS:
                return f"variants of {e.name}: {v!r} is neither 'function' nor 'method' (write 'function, method')", \
                    e.keys["variants"]
    return None


@_rule("unknown-device-check")
def unknown_device_check(e: EntryFacts):
    if "device_check" in e.keys and e.scalars.get("device_check") not in DEVICE_CHECKS:
        return f"device_check of {e.name} must be one of {', '.join(sorted(DEVICE_CHECKS))}", e.keys["device_check"]
    return None


@_rule("unknown-dispatch-key")
def unknown_dispatch_key(e: EntryFacts):
    for key, line in e.dispatch:
        if key not in DISPATCH_KEYS:
            return f"dispatch key {key!r} of {e.name} is not one torchgen supports", line
    return None


@_rule("several-composite-kernels")
def several_composite_kernels(e: EntryFacts):
    if not e.dispatch:
        return None
    keys = {d for d, _ in e.dispatch}
    found = [k for k in _COMPOSITES if k in keys]
    if len(found) <= 1 or (len(found) == 2 and "CompositeImplicitAutogradNestedTensor" in found
                           and "CompositeExplicitAutogradNonFunctional" not in found):
        return None
    return f"{e.name} names more than one of {', '.join(found)}; each subsumes the other", e.keys.get("dispatch", e.line)


@_rule("delegate-with-backend-kernel")
def delegate_with_backend_kernel(e: EntryFacts):
    if "structured_delegate" in e.keys:
        for key, line in e.dispatch:
            if key in STRUCTURED_KEYS:
                return f"{e.name} has structured_delegate and a {key} kernel (the kernel is delegated)", line
    return None


# --- one entry: its schema (torchgen's FunctionSchema invariants) ------------------------------------


def _tensor_like(ty) -> bool:
    return ty.base.name == "Tensor"


@_rule("out-return-not-aliased")
def out_return_not_aliased(e: EntryFacts):
    out = e.schema.arguments.out
    for i, (arg, ret) in enumerate(zip(out, e.schema.returns), start=1):
        if arg.annotation != ret.annotation:
            return f"{e.name}: return {i} must alias the out argument {arg.name} ({arg.type_text})"
    return None


@_rule("mutable-positional-returned")
def mutable_positional_returned(e: EntryFacts):
    written = [a for a in e.schema.arguments.post_self_positional if a.annotation is not None and a.annotation.is_write]
    if not written:
        return None
    returned = {r.annotation for r in e.schema.returns}
    for a in written:
        if a.annotation in returned:
            return f"{e.name} returns its mutable positional argument {a.name}; such arguments are not returned"
    return None


@_rule("mixed-returns")
def mixed_returns(e: EntryFacts):
    writes = [r.annotation is not None and r.annotation.is_write for r in e.schema.returns]
    if any(writes) and not all(writes):
        return f"{e.name} returns both mutated and new values; return only one kind"
    return None


@_rule("mutable-return-not-aliased")
def mutable_return_not_aliased(e: EntryFacts):
    if not any(r.annotation is not None and r.annotation.is_write for r in e.schema.returns):
        return None
    args = e.schema.arguments
    allowed = {a.annotation for a in args.out} | {a.annotation for a in args.positional if a.name == "self"}
    for r in e.schema.returns:
        if r.annotation is not None and r.annotation.is_write and r.annotation not in allowed:
            return f"{e.name}: a mutable return must alias a keyword-only out argument or self"
    return None


@_rule("out-return-count")
def out_return_count(e: EntryFacts):
    out = e.schema.arguments.out
    if not out:
        return None
    returns = e.schema.returns
    if any(str(a.type) != "Tensor" for a in out):
        if returns:
            return f"{e.name} takes a tensor list (or optional) out argument and must return ()"
    else:
        outs = [a for a in out if not a.name.startswith("_scratch_")]
        if len(outs) != len(returns):
            return f"{e.name} must return its {len(outs)} out argument{'s' if len(outs) != 1 else ''}, " \
                   f"not {len(returns)} value{'s' if len(returns) != 1 else ''}"
    return None


@_rule("inplace-self-not-mutable")
def inplace_self_not_mutable(e: EntryFacts):
    s = e.schema
    if s.name.inplace:
        self_arg = s.arguments.self_arg
        if self_arg is None or self_arg.annotation is None or not self_arg.annotation.is_write:
            return f"in-place {e.name} must take a mutable self (Tensor(a!) self)"
    return None


@_rule("inplace-return")
def inplace_return(e: EntryFacts):
    s = e.schema
    self_arg = s.arguments.self_arg
    if not s.name.inplace or self_arg is None or self_arg.annotation is None:
        return None
    if str(self_arg.type) == "Tensor":
        if len(s.returns) != 1 or s.returns[0].annotation != self_arg.annotation:
            return f"in-place {e.name} must return self ({self_arg.type_text} self → {self_arg.type_text})"
    elif s.returns:
        return f"in-place {e.name} with a non-Tensor self must return ()"
    return None


@_rule("functional-overload-not-functional")
def functional_overload_not_functional(e: EntryFacts):
    if "functional" in e.schema.name.overload and e.schema.kind != SchemaKind.functional:
        return f"{e.name}: the overload name 'functional' is reserved for functional operators"
    return None


# --- the whole file ------------------------------------------------------------------------------


def _is_view(e: EntryFacts) -> bool:
    s = e.schema
    if any(r.annotation is not None and not r.annotation.is_write for r in s.returns):
        return True
    if "inplace_view" in e.tags and e.name not in ("resize_", "resize_as_"):
        return True
    return any(a.annotation is not None and "*" in a.annotation.alias_set_after for a in s.arguments)


# what the family rule needs of one entry, as bits (its schema and tables dropped once it is read)
_MANUAL, _VIEW, _IMPLICIT, _CORE, _RETURNS_TENSOR = 1, 2, 4, 8, 16


class Checker:
    """:func:`check_entries` an entry at a time: each entry's own rules as it is added, and of it
    only what the rules across entries need (its name, delegate, family), so a registry of
    thousands of entries is checked without holding every entry's schema and tables."""

    def __init__(self, named: Callable[[str], bool] | None = None) -> None:
        """``named``: whether an entry of that name (``add.out``) was added, when the caller keeps
        the entries' names itself (a registry: its operators); else they are kept here."""
        self._named = named
        self._problems: list[Problem] = []
        self._duplicates: list[Problem] = []  # (reported after the delegates, as torchgen's order has it)
        self._names: set[str] = set()
        self._delegates: list[tuple[str, str, int]] = []  # (entry, its structured_delegate, line)
        # torchgen pairs the functional, in-place, out= and mutable variants of one signature, and
        # generates the missing ones; a family it cannot complete is an error there
        self._groups: dict[bytes, list[tuple[SchemaKind, str, int, int]]] = {}  # (kind, name, line, bits)

    def add(self, e: EntryFacts) -> None:
        for rule_id, rule in ENTRY_RULES.items():
            found = rule(e)
            if found is not None:
                message, line = found if isinstance(found, tuple) else (found, e.line)
                self._problems.append(Problem(rule_id, message, line))
        if self._named is None:
            self._names.add(e.name)
        target = e.scalars.get("structured_delegate")
        if target not in (None, "", "~", "null", "Null", "NULL"):  # torchgen reads an empty value as none
            self._delegates.append((e.name, target, e.keys["structured_delegate"]))
        kind = e.schema.kind
        # the family's key as a 16-byte digest: a registry of thousands of families holds these, not
        # each family's tuple of argument names, types and defaults
        key = hashlib.blake2b(repr(family_key(e.schema, keep=False)).encode(), digest_size=16).digest()
        group = self._groups.setdefault(key, [])
        first = next((member for member in group if member[0] == kind), None)
        if first is not None:
            self._duplicates.append(Problem("duplicate-variant", f"{e.name} and {first[1]} are both the "
                                                                 f"{kind} variant of one signature", e.line))
            return
        bits = ((_MANUAL if e.flag("manual_cpp_binding") else 0)
                | (_VIEW if _is_view(e) and e.schema.name.base != "set" else 0)
                | (_IMPLICIT if e.composite_implicit else 0) | (_CORE if "core" in e.tags else 0)
                | (_RETURNS_TENSOR if any(_tensor_like(r.type) for r in e.schema.returns) else 0))
        group.append((kind, e.name, e.line, bits))

    def problems(self) -> list[Problem]:
        """Every problem of the entries added, in line order."""
        problems = list(self._problems)
        for name, target, line in self._delegates:
            if not (self._named(target) if self._named is not None else target in self._names):
                problems.append(Problem("delegate-missing",
                                        f"{name} has structured_delegate: {target}, and there is no {target}", line))
            # (torchgen also wants the target marked 'structured: True'; opgov's sample files, cut down
            # from real ones, leave that line out, and nothing opgov does depends on it)
        problems.extend(self._duplicates)
        for group in self._groups.values():
            d = {kind: (name, line, bits) for kind, name, line, bits in group}
            inplace = d.get(SchemaKind.inplace)
            if inplace is not None and inplace[0] in _UNGROUPED_INPLACE:
                continue
            flags = [bits for _, _, bits in d.values()]
            if (all(b & _MANUAL for b in flags) or any(b & _VIEW for b in flags)
                    or (all(b & _IMPLICIT for b in flags) and not any(b & _CORE for b in flags))):
                continue
            out = d.get(SchemaKind.out)
            mutable = d.get(SchemaKind.mutable)
            if (mutable is not None and out is None and mutable[0] not in _MUTABLE_NO_OUT_EXEMPT
                    and not mutable[2] & _RETURNS_TENSOR):
                problems.append(Problem("mutable-without-out", f"mutable operator {mutable[0]} returns no tensor "
                                                               "and has no out= variant, so torchgen cannot generate "
                                                               "one", mutable[1]))
        return sorted(problems, key=lambda p: p.line)


def check_entries(entries: Iterable[EntryFacts]) -> list[Problem]:
    """Every problem torchgen would have with these entries, in line order."""
    checker = Checker()
    for e in entries:
        checker.add(e)
    return checker.problems()
