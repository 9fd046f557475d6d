"""A runtime's prim ops source and PyTorch pin, read from ExecuTorch's real files."""

from __future__ import annotations

import pytest

from conftest import SHARED
from opgov.core.errors import BadInput
from opgov.formats.runtime_files import looks_like_prim_ops, prim_ops, pytorch_pin

EXECUTORCH = SHARED / "executorch"
# ../shared/executorch/README.md: the names each release registers, and the pins
COUNTS = {"0.2.0": 16, "0.5.0": 23, "1.0.0": 25, "1.3.0": 25}
PINS = {"0.2.0": "2.3", "0.5.0": "2.6", "1.0.0": "2.9", "1.3.0": "2.12"}


@pytest.mark.parametrize("version", sorted(COUNTS))
def test_executorch_releases(version, shared_dir):
    cpp = EXECUTORCH / version / "register_prim_ops.cpp"
    if not cpp.is_file():
        pytest.skip("ExecuTorch sources not available")
    text = cpp.read_text()
    assert looks_like_prim_ops(text)
    names = prim_ops(text, str(cpp))
    assert len(names) == COUNTS[version]
    assert {"aten::sym_size.int", "aten::_local_scalar_dense", "aten::sym_numel"} <= set(names)
    pin = EXECUTORCH / version / "pytorch-pin.txt"
    assert pytorch_pin(pin.read_text(), str(pin)) == PINS[version]


def test_bad_files_say_where():
    with pytest.raises(BadInput, match="prim.cpp: registers no operator"):
        prim_ops("// nothing here\n", "prim.cpp")
    with pytest.raises(BadInput, match="pin.txt:1: .*names no PyTorch release"):
        pytorch_pin("3f2a9c1\n", "pin.txt")
    assert pytorch_pin("v2.6.0\n", "pin.txt") == "2.6.0"
    assert not looks_like_prim_ops("aten::add.Tensor\n")
