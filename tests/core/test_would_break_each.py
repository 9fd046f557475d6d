"""The bulk triage's decomposition check (`would_break_near`) refuses exactly what one proposal
after the other would: for registries of random rules, categories and lifecycles, and batches of
changes each naming one operator (a proposal's category, with a rule when it decomposes), every
change set gets the same violations, in the same order, as `would_break` gives it alone."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from opgov.core.decomps import CategoryChange, RuleChange, _callers, would_break, would_break_near

OPS = [f"aten::op{i}" for i in range(9)]
CATEGORIES = ["core", "decomposable", "custom"]


@st.composite
def registries(draw):
    known = draw(st.lists(st.sampled_from(OPS), unique=True, min_size=4))
    categories = {op: c for op in known if (c := draw(st.sampled_from([*CATEGORIES, None]))) is not None}
    lifecycle = {op: draw(st.sampled_from(["active", "active", "deprecating", "deprecated", "deleted"]))
                 for op in known}
    rules = {op: tuple(draw(st.lists(st.sampled_from(OPS), unique=True, min_size=1, max_size=3)))
             for op in draw(st.lists(st.sampled_from(OPS), unique=True, max_size=6))}
    implicit = set(draw(st.lists(st.sampled_from(OPS), unique=True, max_size=3)))
    batch = []
    for op in draw(st.lists(st.sampled_from(OPS), unique=True, min_size=1, max_size=5)):
        category = draw(st.sampled_from(CATEGORIES))
        changes = [CategoryChange(op, category)]
        if category == "decomposable":
            changes.append(RuleChange(op, tuple(draw(st.lists(st.sampled_from(OPS), unique=True, min_size=1,
                                                              max_size=3)))))
        batch.append(changes)
    return rules, categories, lifecycle, implicit, batch


@settings(max_examples=400, deadline=None)
@given(registries())
def test_each_change_set_is_refused_as_it_would_be_alone(registry):
    rules, categories, lifecycle, implicit, batch = registry
    alone = [would_break(rules, categories, changes, lifecycle=lifecycle, implicit=implicit) for changes in batch]
    callers = _callers(rules)  # one map for the whole batch, as BreakChecks keeps it
    together = [would_break_near(rules, categories, changes, lifecycle=lifecycle, implicit=implicit, callers=callers)
                for changes in batch]
    assert [[(v.key, v.message) for v in found] for found in together] == \
        [[(v.key, v.message) for v in found] for found in alone]
