"""Issue 17 point 8: a native_functions.yaml PyTorch cannot build is bad input, with the line.

Each case is judged twice: by opgov (``read_registry``, which ``opgov import`` uses) and by
torchgen itself (``torchgen.gen.parse_native_yaml`` on the same file, with the release's
tags.yaml). The refusals must agree, and so must the acceptances of the controls."""

from __future__ import annotations

import itertools

import pytest

from opgov.core.errors import BadInput
from opgov.formats.registry import read_registry

from conftest import RELEASES, SAMPLE

_COUNTER = itertools.count()
CPU = "  dispatch:\n    CPU: kernel\n"

# (id, file text, line opgov names, words of its message)
REFUSED = [
    ("inplace-without-mutable-self", "- func: add_(Tensor self, Tensor other) -> Tensor\n" + CPU, 1,
     "in-place add_ must take a mutable self (Tensor(a!) self)"),
    ("inplace-returning-nothing", "- func: foo_(Tensor(a!) self) -> ()\n" + CPU, 1, "in-place foo_ must return self"),
    ("mutable-returning-nothing", "- func: foo.mut(Tensor self, Tensor(a!) buf) -> ()\n" + CPU, 1,
     "mutable operator foo.mut returns no tensor and has no out= variant"),
    ("unknown-dispatch-key", "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: k\n    NoSuchKey: k\n", 4,
     "dispatch key 'NoSuchKey' of foo is not one torchgen supports"),
    ("unknown-dispatch-key-in-a-list", "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU, Cpu: k\n", 3,
     "dispatch key 'Cpu'"),
    ("unknown-top-level-key", "- func: foo(Tensor self) -> Tensor\n  colour: blue\n" + CPU, 2, "unknown key 'colour'"),
    ("missing-delegate-target", "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n", 2,
     "foo has structured_delegate: foo.out, and there is no foo.out"),
    ("duplicate-func", "- func: foo(Tensor self) -> Tensor\n  func: bar(Tensor self) -> Tensor\n" + CPU, 2,
     "duplicate key 'func' (first at line 1)"),
    ("out-return-not-aliased", "- func: foo(Tensor self) -> Tensor\n" + CPU
     + "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor\n" + CPU, 4, "return 1 must alias the out argument out"),
    ("mixed-returns", "- func: foo_(Tensor(a!) self) -> (Tensor(a!), Tensor)\n" + CPU, 1,
     "returns both mutated and new values"),
    ("mutable-positional-returned", "- func: foo(Tensor self, Tensor(a!) buf) -> Tensor(a!)\n" + CPU, 1,
     "returns its mutable positional argument buf"),
    ("functional-overload-name", "- func: foo.functional(Tensor(a!) self, Tensor(b!) x) -> ()\n" + CPU, 1,
     "the overload name 'functional' is reserved"),
    ("illegal-variant", "- func: foo(Tensor self) -> Tensor\n  variants: functoin\n" + CPU, 2, "'functoin'"),
    ("structured-not-a-bool", "- func: foo(Tensor self) -> Tensor\n  structured: maybe\n" + CPU, 2,
     "structured of foo must be True or False"),
    ("illegal-device-check", "- func: foo(Tensor self) -> Tensor\n  device_check: Maybe\n" + CPU, 2, "device_check of foo"),
    ("two-composite-kernels", "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CompositeExplicitAutograd: a\n"
     "    CompositeImplicitAutograd: b\n", 2, "more than one of"),
    ("delegate-and-cpu-kernel", "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
     + CPU + "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n" + CPU, 8,
     "foo has structured_delegate and a CPU kernel"),
    ("dispatch-not-a-mapping", "- func: foo(Tensor self) -> Tensor\n  dispatch: kernel\n", 2,
     "dispatch of foo must be a mapping"),
]

ACCEPTED = [
    ("functional", "- func: foo(Tensor self) -> Tensor\n" + CPU),
    ("family", "- func: foo(Tensor self) -> Tensor\n  structured_delegate: foo.out\n"
               "- func: foo_(Tensor(a!) self) -> Tensor(a!)\n  structured_delegate: foo.out\n"
               "- func: foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n" + CPU),
    ("mutable-returning-a-tensor", "- func: foo.mut(Tensor self, Tensor(a!) buf) -> Tensor\n" + CPU),
    ("list-self-inplace", "- func: foo_(Tensor(a!)[] self) -> ()\n" + CPU),
    ("method-and-function", "- func: foo(Tensor self) -> Tensor\n  variants: function, method\n  device_check: NoCheck\n"
                            + CPU),
]


def _write(tmp_path, text: str):
    path = tmp_path / f"native_functions_{next(_COUNTER)}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def torchgen_verdict(torch_mod, pytorch_versions, pytorch_release):
    """``verdict(path)``: None when torchgen builds the file, else its complaint."""
    from torchgen.gen import parse_native_yaml

    tags = str(pytorch_release(RELEASES[-1]) / "tags.yaml")

    def verdict(path) -> str | None:
        try:
            parse_native_yaml(str(path), tags)
        except Exception as err:  # noqa: BLE001 - torchgen raises AssertionError and others
            return f"{type(err).__name__}: {err}"
        return None

    return verdict


@pytest.mark.parametrize(("text", "line", "words"), [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_what_torchgen_refuses_opgov_refuses_with_the_line(tmp_path, torchgen_verdict, text, line, words):
    path = _write(tmp_path, text)
    assert torchgen_verdict(path) is not None, "torchgen builds this file: the case shows nothing"
    with pytest.raises(BadInput) as info:
        read_registry(path)
    assert (info.value.file, info.value.line) == (str(path), line), str(info.value)
    assert words in info.value.message, str(info.value)


@pytest.mark.parametrize("text", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_what_torchgen_builds_opgov_reads(tmp_path, torchgen_verdict, text):
    path = _write(tmp_path, text)
    assert torchgen_verdict(path) is None
    assert read_registry(path).ops


def test_import_of_an_unbuildable_file_is_bad_input_and_writes_nothing(cli, tmp_path):
    from conftest import bad

    path = _write(tmp_path, "- func: abs(Tensor self) -> Tensor\n" + CPU
                  + "- func: add_(Tensor self, Tensor other) -> Tensor\n" + CPU)
    result = bad(cli, "import", path, "--label", "broken", words=(f"{path}:4: in-place add_ must take a mutable self",))
    assert len(result.err.strip().splitlines()) == 1


def test_every_real_release_and_the_sample_still_import(pytorch_versions, pytorch_release):
    for version in pytorch_versions:
        folder = pytorch_release(version)
        assert len(read_registry(folder / "native_functions.yaml", tags_yaml=folder / "tags.yaml").ops) > 2900
    for name in ("native_functions.v1.yaml", "native_functions.v2.yaml"):
        assert len(read_registry(SAMPLE / name, tags_yaml=SAMPLE / "tags.yaml").ops) > 200


def test_check_bc_compares_files_torchgen_would_not_build(tmp_path):
    """check-bc's compatibility rules are tried on small made-up schemas: it reads without them."""
    path = _write(tmp_path, "- func: add_(Tensor self, Tensor other) -> Tensor\n")
    with pytest.raises(BadInput):
        read_registry(path)
    assert list(read_registry(path, buildable=False).ops) == ["aten::add_"]
