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


def test_a_big_registry_is_never_read_whole_by_libyaml(monkeypatch):
    """libyaml, which words the fast reader's findings exactly and reads what it cannot (a registry
    with a form feed, U+2028…), builds the whole tree at once, some 25 times the text: only of a small file."""
    assert registry.LIBYAML_MAX_BYTES == 4 << 20
    monkeypatch.setattr(registry, "LIBYAML_MAX_BYTES", 2_000)  # the same rule, at a size a test reads fast
    entries = "".join(f"- func: f{i}(Tensor self) -> Tensor\n" for i in range(100))
    unusual = ("# a line separator: \u2028\n" + entries).encode()
    with pytest.raises(BadInput) as refused:  # libyaml would read it
        registry.parse_registry(unusual, "unusual.yaml")
    assert str(refused.value) == ("unusual.yaml: 3,512 bytes in a form opgov reads only whole (control or unusual "
                                  "characters such as a form feed or U+2028, or a layout its piecewise reader cannot "
                                  "read exactly): at most 2,000 bytes of such a registry")
    small = unusual[:unusual.index(b"- func: f40(")]
    assert len(registry.parse_registry(small, "small.yaml").ops) > 10  # a small one is read as before
    with pytest.raises(BadInput) as refused:  # a problem the fast reader found: in its words, not read again
        registry.parse_registry((entries + "- func: bad(Tensor self -> Tensor\n").encode(), "bad.yaml")
    assert str(refused.value).startswith("bad.yaml:101: "), refused.value
