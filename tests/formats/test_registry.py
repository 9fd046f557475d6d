"""Reading native_functions.yaml: entries, autogen operators, categories, and bad input."""

from __future__ import annotations

import pytest

from opgov.core.errors import BadInput
from opgov.formats.registry import read_registry

from conftest import SAMPLE


def test_sample_registry_reads_entries_and_autogen_operators():
    registry = read_registry(SAMPLE / "native_functions.v1.yaml", tags_yaml=SAMPLE / "tags.yaml")
    ops = registry.ops
    assert ops["aten::add.Tensor"].schema == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert ops["aten::add.Tensor"].kind == "functional"
    assert ops["aten::add_.Tensor"].kind == "inplace"
    assert ops["aten::add.out"].kind == "out"
    # autogen: declared by its entry, no schema text of its own
    generated = ops["aten::_adaptive_avg_pool3d.out"]
    assert generated.schema is None and generated.autogen_of == "aten::_adaptive_avg_pool3d"
    assert generated.kind == "out"


def test_first_categories_follow_tags_and_kernels():
    ops = read_registry(SAMPLE / "native_functions.v1.yaml").ops
    assert ops["aten::add.Tensor"].suggested_category == "core"  # tagged core
    assert ops["aten::layer_norm"].suggested_category == "decomposable"  # CompositeImplicitAutograd
    assert ops["aten::baddbmm"].suggested_category == "custom"  # explicit kernels, not tagged core


def _write(tmp_path, text: str):
    path = tmp_path / "native_functions.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, line, words", [
    ("- func: a(Tensor self) -> Tensor\n  variants: [function\n", 3, "malformed YAML"),
    ("- func: a(Tensor self) -> Tensor\n\n- variants: function\n", 3, "no 'func:'"),
    ("- func: a(Tensor self) -> Tensor\n- func: a(Tensor other) -> Tensor\n", 2, "duplicate operator a"),
    ("- func: a(Tensor self) -> Tensor\n- func: b(Tensor self -> Tensor\n", 2, "b(Tensor self -> Tensor"),
])
def test_bad_input_names_file_and_line(tmp_path, text, line, words):
    path = _write(tmp_path, text)
    with pytest.raises(BadInput) as err:
        read_registry(path)
    assert err.value.file == str(path)
    assert err.value.line == line
    assert words in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_undeclared_tag_is_refused(tmp_path):
    path = _write(tmp_path, "- func: a(Tensor self) -> Tensor\n\n- func: b(Tensor self) -> Tensor\n  tags: [core, shiny]\n")
    with pytest.raises(BadInput) as err:
        read_registry(path, tags_yaml=SAMPLE / "tags.yaml")
    assert err.value.line == 3 and "'shiny'" in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(BadInput, match="no such file"):
        read_registry(tmp_path / "nope.yaml")


def test_real_releases_read_with_autogen(pytorch_versions, pytorch_release):
    for version in pytorch_versions:
        path = pytorch_release(version) / "native_functions.yaml"
        registry = read_registry(path, tags_yaml=pytorch_release(version) / "tags.yaml")
        entries = [op for op in registry.ops.values() if op.autogen_of is None]
        assert len(entries) == path.read_text().count("\n- func:") + path.read_text().startswith("- func:")
        assert any(op.autogen_of for op in registry.ops.values())


def test_the_registry_builds_the_same_ops_as_the_dataclass():
    # the reader builds RegistryOp without its frozen __init__ (faster): the same objects
    from dataclasses import fields

    from opgov.formats.registry import RegistryOp, _op

    for args in (("aten::add.Tensor", "add.Tensor(Tensor self) -> Tensor", "functional", ("core",), 7, None, True),
                 ("aten::x.out", None, "out", (), 9, "aten::x")):
        fast, slow = _op(*args), RegistryOp(*args)
        assert fast.func_name == args[0].removeprefix("aten::")
        assert (fast == slow, hash(fast) == hash(slow), repr(fast) == repr(slow)) == (True, True, True)
        assert [getattr(fast, f.name) for f in fields(RegistryOp)] == [getattr(slow, f.name) for f in fields(RegistryOp)]
