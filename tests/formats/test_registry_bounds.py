"""Issue 42: what reading a registry builds is about a kilobyte a function whatever its text, so a
registry of the shortest entries cost thirty times its size (a 31.6 MB upload grew a worker 21
times). A registry declares at most MAX_REGISTRY_FUNCTIONS functions, eight times PyTorch's:
past it, one line naming the file and the line, before the rest is read."""

from __future__ import annotations

import pytest

from opgov.core.errors import BadInput
from opgov.formats import registry


def test_a_registry_of_more_functions_than_any_real_one_is_refused_at_the_bound(monkeypatch):
    assert registry.MAX_REGISTRY_FUNCTIONS == 25_000
    monkeypatch.setattr(registry, "MAX_REGISTRY_FUNCTIONS", 100)  # the same rule, at a size a test reads fast
    text = "".join(f"- func: f{i}(Tensor self) -> Tensor\n" for i in range(101)).encode()
    with pytest.raises(BadInput) as refused:
        registry.parse_registry(text, "big.yaml")
    assert str(refused.value) == ("big.yaml:101: more than 100 functions (PyTorch 2.13.0 declares 3,114): "
                                  "not a registry opgov reads")
    fits = registry.parse_registry(text[:text.index(b"- func: f100(")], "fits.yaml")
    assert len(fits.ops) == 100
    autogen = ("- func: g(Tensor self) -> Tensor\n  autogen: g.out\n"
               + "".join(f"- func: f{i}(Tensor self) -> Tensor\n" for i in range(99))).encode()
    with pytest.raises(BadInput, match="more than 100 functions"):  # autogen variants are functions too
        registry.parse_registry(autogen, "autogen.yaml")
