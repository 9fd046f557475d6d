"""The workbench's evidence and suggestion (opgov.core.queue), pure: each suggestion follows from
its evidence, in the words a committee member reads."""

from __future__ import annotations

from opgov.core.opset import TorchFacts
from opgov.core.queue import (CompositeFact, Evidence, FamilyFact, ModelsFact, Relative, RuntimeFact, RuntimesFact,
                              WaitFact, kind_fact, reach, suggest, torch_fact)

CORE = {"aten::mul.Tensor", "aten::add.Tensor", "aten::exp"}
FACTS = TorchFacts(version="2.13.0", default=frozenset({"aten::foo", "aten::chain", "aten::kept_in_default"}),
                   targets={"aten::foo": ("aten::mul.Tensor", "aten::add.Tensor"),
                            "aten::chain": ("aten::foo", "aten::exp"),
                            "aten::prim": ("prims::div",), "aten::kept_in_default": ("prims::div",),
                            "aten::broken": None},
                   reasons={"aten::broken": "no example input worked"})


def evidence(op="aten::new_op", schema="new_op(Tensor self) -> Tensor", *, implicit=False, torch=True,
             runtimes=(), registered=("executorch@1.3.0",), used=(), corpora="/models", family=()) -> Evidence:
    return Evidence(
        kind=kind_fact(op, "functional", schema),
        family=FamilyFact(relatives=tuple(family), decided=tuple(sorted({r.category for r in family if r.decided})),
                          source="yaml"),
        composite=CompositeFact(composite_implicit=implicit, source="yaml"),
        torch=torch_fact(op, FACTS, CORE.__contains__) if torch else None,
        runtimes=RuntimesFact(registered=registered, implemented_by=tuple(
            RuntimeFact(runtime="executorch", since=r, latest="executorch@1.3.0") for r in runtimes), source="db"),
        models=ModelsFact(corpora=corpora, models=3, used_by=tuple(used), source="corpus"),
        waiting=WaitFact(since="2.6.0", reasons=("undecided",), detail="new in 2.6.0", source="db"))


def test_reach_follows_traced_targets_to_core_and_names_what_is_not():
    assert reach("aten::chain", FACTS.targets, CORE.__contains__) == (
        True, ("aten::add.Tensor", "aten::exp", "aten::mul.Tensor"), ())
    assert reach("aten::prim", FACTS.targets, CORE.__contains__) == (False, ("prims::div",), ("prims::div",))


def test_the_kind_comes_from_the_schema():
    fact = kind_fact("aten::_foo_backward", "functional", "_foo_backward(Tensor grad) -> Tensor")
    assert (fact.kind, fact.backward, fact.internal) == ("functional", True, True)
    assert kind_fact("aten::add_.Tensor", "inplace", "add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"
                     ).kind == "inplace"
    assert kind_fact("aten::__and__.Tensor", "functional", "__and__.Tensor(Tensor self, Tensor other) -> Tensor"
                     ).internal is False


def test_torch_decomposing_into_core_suggests_decompose_with_the_targets():
    advice = suggest(evidence("aten::foo", "foo(Tensor self) -> Tensor", runtimes=("executorch@0.2.0",)))
    assert advice.suggestion == "decompose" and advice.targets == ("aten::mul.Tensor", "aten::add.Tensor")
    assert advice.because == "torch 2.13.0 decomposes it into core ops: aten::mul.Tensor, aten::add.Tensor"
    # tagged core in the yaml: the evidence disagrees, never core
    assert suggest(evidence("aten::foo", "foo(Tensor self) -> Tensor"), tagged_core=True).suggestion == "human"


def test_composite_implicit_is_always_decompose():
    advice = suggest(evidence(implicit=True, runtimes=("executorch@0.2.0",)), tagged_core=True)
    assert advice.suggestion == "decompose" and advice.because.startswith(
        "CompositeImplicitAutograd: export never holds it")
    assert suggest(evidence(implicit=True), rule=("aten::exp",)).targets == ("aten::exp",)


def test_no_decomposition_and_a_runtime_or_a_model_suggests_core():
    advice = suggest(evidence(runtimes=("executorch@0.5.0",), used=("torchvision#resnet18",)))
    assert advice.suggestion == "core"
    assert advice.because == ("no decomposition in torch 2.13.0; implemented by executorch since 0.5.0; used by 1 "
                              "model (torchvision#resnet18)")
    kept = suggest(evidence("aten::prim", "prim(Tensor self) -> Tensor", runtimes=("executorch@0.5.0",)))
    assert kept.suggestion == "core" and "default table keeps it" in kept.because


def test_an_unused_backward_or_internal_operator_suggests_custom():
    advice = suggest(evidence("aten::_x_backward", "_x_backward(Tensor grad) -> Tensor"))
    assert advice.suggestion == "custom"
    assert advice.because.startswith("a backward operator: no registered runtime implements it, no model uses it")


def test_missing_or_disagreeing_evidence_needs_a_human():
    assert suggest(evidence(torch=False)).suggestion == "human"
    assert suggest(evidence(registered=(), corpora=None)).suggestion == "human"
    assert suggest(evidence("aten::broken", "broken(Tensor self) -> Tensor")).suggestion == "human"
    assert suggest(evidence("aten::kept_in_default", "kept_in_default(Tensor self) -> Tensor")).suggestion == "human"
    decided = (Relative(operator="aten::new_op.other", kind="functional", category="decomposable", decided=True),)
    advice = suggest(evidence(family=decided))
    assert advice.suggestion == "human" and "the committee decided its family decomposable" in advice.because
