"""Issue 42: an unknown operator name cost a close-match search over every registry name (~14 ms
each: 2,000 names, 29 s of a worker). Suggestions now come from an index built once per registry
(opgov.core.names.NameIndex), for the first SUGGESTED_NAMES unknown names only, and a request's
loops spend from its processing budget (opgov.core.budget)."""

from __future__ import annotations

import difflib
import random
import re

import pytest

from opgov.core import names
from opgov.core.budget import Budget, budgeted, spend
from opgov.core.corpus import check_model
from opgov.core.errors import TooCostly


@pytest.fixture(scope="module")
def registry(pytorch_release) -> list[str]:
    text = (pytorch_release("2.13.0") / "native_functions.yaml").read_text()
    found = re.findall(r"(?m)^- func: ([A-Za-z0-9_]+)(?:\.([A-Za-z0-9_]+))?\(", text)
    return [f"aten::{name}" + (f".{overload}" if overload else "") for name, overload in found]


def test_the_index_suggests_what_a_full_search_suggests(registry):
    """A typo (a character left out) of 100 real names: the index's first suggestion is difflib's over
    the whole registry for all but a few very short names."""
    rng = random.Random(42)
    index = names.name_index(registry)
    agree = 0
    for name in rng.sample(registry, 100):
        cut = rng.randrange(6, len(name))
        typo = name[:cut] + name[cut + 1:]
        agree += index.close(typo)[:1] == difflib.get_close_matches(typo, registry, n=3, cutoff=0.8)[:1]
    assert agree >= 95, agree
    assert index.close("aten::ad.Tensor")[0] == "aten::add.Tensor"
    assert names.name_index(list(registry)) is index  # built once per registry


def test_only_the_first_few_unknown_names_get_a_suggestion(registry):
    unknown = [f"aten::ad.Tensor{i}" for i in range(2_000)]  # each close to aten::add.Tensor
    check = check_model(unknown, state={}, known=registry)
    assert len(check.errors) == 2_000 and {f.rule for f in check.errors} == {"unknown-operator"}
    hinted = [f for f in check.errors if "did you mean" in f.message]
    assert hinted == list(check.errors[:names.SUGGESTED_NAMES]) and names.SUGGESTED_NAMES == 10
    assert check.errors[10].message == "aten::ad.Tensor10 is not in the registry"


def test_a_check_past_its_budget_is_refused_in_words():
    spend()  # outside a request: no budget, nothing to refuse
    with budgeted(Budget(0.0)), pytest.raises(TooCostly) as refused:  # spent the moment it starts
        check_model([f"aten::op_{i}" for i in range(100)], state={}, known=["aten::add.Tensor"])
    assert str(refused.value).startswith("this request needs more than its 0 s of processing time")
    spend()  # and the budget ends with its block

