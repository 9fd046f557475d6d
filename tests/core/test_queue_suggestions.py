"""The workbench's evidence and suggestion (opgov.core.queue), pure: each suggestion follows from
its evidence, in the words a committee member reads."""

from __future__ import annotations

from opgov.core.opset import TorchFacts
from opgov.core.queue import (CompositeFact, Evidence, FamilyFact, ModelsFact, Relative, RuntimeFact, RuntimesFact,
                              WaitFact, kind_fact, reach, suggest, torch_fact)

CORE = {"aten::mul.Tensor", "aten::add.Tensor", "aten::exp", "aten::where.self"}
# the shape of torch's facts: ``default`` is torch.export's default table (CompositeImplicitAutograd
# operators it can preserve included), ``forced`` what export decomposes whatever the table says,
# ``targets`` every traced decomposition, those export does not apply by default too
FACTS = TorchFacts(version="2.13.0",
                   default=frozenset({"aten::foo", "aten::chain", "aten::kept_in_default", "aten::cia",
                                      "aten::sym_size.int", "aten::broken"}),
                   targets={"aten::foo": ("aten::mul.Tensor", "aten::add.Tensor"),
                            "aten::chain": ("aten::foo", "aten::exp"),
                            "aten::prim": ("prims::div",), "aten::kept_in_default": ("prims::div",),
                            "aten::elu_like": ("aten::exp", "aten::where.self"),
                            "aten::cia": ("aten::reshape",), "aten::reshape": ("aten::view",),
                            "aten::numel": (), "aten::sym_size.int": (),
                            "aten::broken": None},
                   reasons={"aten::broken": "no example input worked"},
                   forced={"aten::reshape": "CompositeImplicitAutograd, and it aliases an input",
                           "aten::numel": "a metadata function: functionalization answers it"},
                   preservable=frozenset({"aten::cia", "aten::sym_size.int"}))
GRAPH = {"aten::sym_size.int": "a symbolic size: the runtime answers it without a kernel"}


def evidence(op="aten::new_op", schema="new_op(Tensor self) -> Tensor", *, implicit=False, torch=True,
             runtimes=(), registered=("executorch@1.3.0",), used=(), corpora="/models", family=()) -> Evidence:
    core = (CORE | {"aten::view"}).__contains__
    return Evidence(
        kind=kind_fact(op, "functional", schema, GRAPH.get(op)),
        family=FamilyFact(relatives=tuple(family), decided=tuple(sorted({r.category for r in family if r.decided})),
                          source="yaml"),
        composite=CompositeFact(composite_implicit=implicit, source="yaml"),
        torch=torch_fact(op, FACTS, core, GRAPH.__contains__) if torch else None,
        runtimes=RuntimesFact(registered=registered, implemented_by=tuple(
            RuntimeFact(runtime="executorch", since=r, latest="executorch@1.3.0") for r in runtimes), source="db"),
        models=ModelsFact(corpora=corpora, models=3, used_by=tuple(used), source="corpus"),
        waiting=WaitFact(since="2.6.0", reasons=("undecided",), detail="new in 2.6.0", source="db"))


def test_reach_follows_traced_targets_to_core_and_names_what_is_not():
    assert reach("aten::chain", FACTS.targets, CORE.__contains__) == (
        True, ("aten::add.Tensor", "aten::exp", "aten::mul.Tensor"), ())
    assert reach("aten::prim", FACTS.targets, CORE.__contains__) == (False, ("prims::div",), ("prims::div",))


def test_reach_as_export_follows_what_export_decomposes_and_functionalizes_targets():
    """With ``expands``, a target is followed when export decomposes it (a core one too); one export
    decomposes but whose decomposition was not traced is an end that is not core; ``functional``
    renames a target as functionalization does."""
    targets = {"aten::a": ("aten::b", "aten::c_"), "aten::b": ("aten::exp",), "aten::d": ("aten::e",), "aten::e": None}
    expands = {"aten::b", "aten::e"}.__contains__
    assert reach("aten::a", targets, {"aten::b", "aten::exp", "aten::c"}.__contains__, expands,
                 functional=lambda t: t.rstrip("_")) == (True, ("aten::c", "aten::exp"), ())
    assert reach("aten::d", targets, CORE.__contains__, expands) == (False, ("aten::e",), ("aten::e",))


def test_the_kind_comes_from_the_schema():
    fact = kind_fact("aten::_foo_backward", "functional", "_foo_backward(Tensor grad) -> Tensor")
    assert (fact.kind, fact.backward, fact.internal) == ("functional", True, True)
    assert kind_fact("aten::add_.Tensor", "inplace", "add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"
                     ).kind == "inplace"
    assert kind_fact("aten::__and__.Tensor", "functional", "__and__.Tensor(Tensor self, Tensor other) -> Tensor"
                     ).internal is False


def test_export_decomposing_into_core_suggests_decompose_into_what_the_graph_holds():
    advice = suggest(evidence("aten::chain", "chain(Tensor self) -> Tensor", runtimes=("executorch@0.2.0",)))
    assert advice.suggestion == "decompose" and advice.targets == ("aten::add.Tensor", "aten::exp", "aten::mul.Tensor")
    assert advice.because == ("torch.export (torch 2.13.0) decomposes it (its default decomposition table) into core "
                              "ops: aten::add.Tensor, aten::exp, aten::mul.Tensor")
    # tagged core in the yaml: the evidence disagrees, never core
    assert suggest(evidence("aten::foo", "foo(Tensor self) -> Tensor"), tagged_core=True).suggestion == "human"


def test_a_decomposition_export_does_not_apply_is_said_so_and_the_operator_judged_as_kept():
    """torch._decomp decomposes it into core operators, but export's default table does not hold it
    (elu, embedding, diagonal): export keeps it, so it is never suggested decompose."""
    used = suggest(evidence("aten::elu_like", "elu_like(Tensor self) -> Tensor", runtimes=("executorch@1.0.0",)))
    assert used.suggestion == "core" and used.targets == ()
    assert used.because.startswith("torch.export (torch 2.13.0) keeps it: its default table does not apply "
                                   "torch._decomp's decomposition (into aten::exp, aten::where.self)")
    tagged = suggest(evidence("aten::elu_like", "elu_like(Tensor self) -> Tensor"), tagged_core=True)
    assert tagged.suggestion == "core" and "tags it core" in tagged.because
    assert suggest(evidence("aten::elu_like", "elu_like(Tensor self) -> Tensor")).suggestion == "custom"


def test_composite_implicit_is_decompose_into_what_export_makes_of_it():
    """A CompositeImplicitAutograd operator of the default table decomposes into what export turns
    its targets into (reshape, which export cannot preserve, becomes view); one that ends in no
    operator decomposes with no targets (its kernel is the decomposition)."""
    advice = suggest(evidence("aten::cia", "cia(Tensor self) -> Tensor", implicit=True, runtimes=("executorch@0.2.0",)))
    assert advice.suggestion == "decompose" and advice.targets == ("aten::view",)
    assert "(CompositeImplicitAutograd, in its default table)" in advice.because
    metadata = suggest(evidence("aten::numel", "numel(Tensor self) -> int", implicit=True))
    assert metadata.suggestion == "decompose" and metadata.targets == ()
    assert "a metadata function: functionalization answers it" in metadata.because
    # without a CompositeImplicitAutograd kernel, a decomposition into nothing cannot be proposed
    assert suggest(evidence("aten::numel", "numel(Tensor self) -> int")).suggestion == "human"


def test_a_graph_operator_follows_the_core_tag_never_decompose():
    tagged = suggest(evidence("aten::sym_size.int", "sym_size.int(Tensor self, int dim) -> SymInt", implicit=True),
                     tagged_core=True)
    assert tagged.suggestion == "core" and tagged.because.startswith("a graph operator (a symbolic size")
    assert "torch.export holds it" in tagged.because and "decomposes" not in tagged.because
    assert suggest(evidence("aten::sym_size.int", "sym_size.int(Tensor self, int dim) -> SymInt",
                            implicit=True)).suggestion == "custom"


def test_no_decomposition_and_a_runtime_or_a_model_suggests_core():
    advice = suggest(evidence(runtimes=("executorch@0.5.0",), used=("torchvision#resnet18",)))
    assert advice.suggestion == "core"
    assert advice.because == ("torch.export (torch 2.13.0) keeps it: torch has no decomposition for it; implemented by "
                              "executorch since 0.5.0; used by 1 model (torchvision#resnet18)")
    kept = suggest(evidence("aten::prim", "prim(Tensor self) -> Tensor", runtimes=("executorch@0.5.0",)))
    assert kept.suggestion == "core" and "does not apply torch._decomp's decomposition" in kept.because


def test_an_unused_backward_or_internal_operator_suggests_custom():
    advice = suggest(evidence("aten::_x_backward", "_x_backward(Tensor grad) -> Tensor"))
    assert advice.suggestion == "custom"
    assert advice.because.startswith("a backward operator: no registered runtime implements it, no model uses it")


def test_missing_or_disagreeing_evidence_needs_a_human():
    assert suggest(evidence(torch=False)).suggestion == "human"
    assert suggest(evidence(registered=(), corpora=None)).suggestion == "human"
    broken = suggest(evidence("aten::broken", "broken(Tensor self) -> Tensor", implicit=True))
    assert broken.suggestion == "human" and "into what was not recorded (no example input worked)" in broken.because
    outside = suggest(evidence("aten::kept_in_default", "kept_in_default(Tensor self) -> Tensor"))
    assert outside.suggestion == "human" and outside.because.endswith("not core: prims::div")
    decided = (Relative(operator="aten::new_op.other", kind="functional", category="decomposable", decided=True),)
    advice = suggest(evidence(family=decided))
    assert advice.suggestion == "human" and "the committee decided its family decomposable" in advice.because


def test_targets_torch_traced_on_real_tensors_say_so():
    """An operator export cannot trace on torch's samples (its data decide: cov, is_nonzero) has the
    targets torch's make_fx traced on real tensors with export's table: the suggestion says so,
    while one export traced says nothing of it."""
    facts = TorchFacts(version="2.13.0", default=frozenset({"aten::foo", "aten::data_bound"}),
                       targets={"aten::foo": ("aten::mul.Tensor",), "aten::data_bound": ("aten::mul.Tensor",)},
                       inputs={"aten::foo": "3 OpInfo",
                               "aten::data_bound": "make_fx on real tensors: 2 OpInfo; torch.export of them: Guard…"})
    core = CORE.__contains__
    traced = torch_fact("aten::data_bound", facts, core)
    exported = torch_fact("aten::foo", facts, core)
    assert traced.export_how == ("its default decomposition table; export cannot trace torch's samples of it, so what "
                                 "it becomes was traced by torch's make_fx on real tensors with export's table")
    assert exported.export_how == "its default decomposition table"
    assert traced.ends_in == exported.ends_in == ("aten::mul.Tensor",)
