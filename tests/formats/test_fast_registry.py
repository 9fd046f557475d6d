"""Issue 16: native_functions.yaml read with rapidyaml gives exactly what libyaml gives.

``OPGOV_YAML=libyaml`` makes :func:`read_registry` take the libyaml path only; each case reads the
same file both ways and compares every entry (name, schema, kind, tags, line, autogen owner,
decomposition flag) or, for a bad file, the error (message, file and line)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opgov.core.errors import BadInput
from opgov.formats import fastyaml
from opgov.formats.files import read_text
from opgov.formats.registry import read_registry
from opgov.formats.safeyaml import MAX_DEPTH

from conftest import REPO, SAMPLE

pytestmark = pytest.mark.skipif(not fastyaml.available(), reason="rapidyaml is not installed")


def _both(monkeypatch, path: Path, **kw):
    """(rapidyaml-or-fallback result, libyaml result); each an ordered list of ops or a BadInput."""
    def one():
        try:
            return list(read_registry(path, **kw).ops.values())
        except BadInput as err:
            return ("bad", err.message, err.file, err.line)

    monkeypatch.delenv("OPGOV_YAML", raising=False)
    fast = one()
    monkeypatch.setenv("OPGOV_YAML", "libyaml")
    slow = one()
    monkeypatch.delenv("OPGOV_YAML")
    return fast, slow


def test_every_real_release_reads_the_same_both_ways(monkeypatch, pytorch_versions, pytorch_release):
    for version in pytorch_versions:
        folder = pytorch_release(version)
        path = folder / "native_functions.yaml"
        # the fast path reads it (it does not give up on a real release)
        assert fastyaml.entries(read_text(path), MAX_DEPTH) is not None, version
        for kw in ({"tags_yaml": folder / "tags.yaml"}, {"buildable": False}):
            fast, slow = _both(monkeypatch, path, **kw)
            assert isinstance(fast, list) and len(fast) > 2900, version
            assert len(fast) == len(slow)
            for a, b in zip(fast, slow):
                assert a == b, (version, a, b)


def test_plain_bytes_read_as_their_text_does(pytorch_versions, pytorch_release):
    """An upload of plain ASCII is read from its bytes (no decoded copy): the same registry, the
    same content hash, as the decoded text gives."""
    from opgov.formats.registry import parse_registry

    for version in pytorch_versions:
        data = (pytorch_release(version) / "native_functions.yaml").read_bytes()
        from_bytes = parse_registry(data, "up.yaml", buildable=False)
        from_text = parse_registry(data.decode(), "up.yaml", buildable=False)
        assert from_bytes.content_hash == from_text.content_hash, version
        assert list(from_bytes.ops.values()) == list(from_text.ops.values()), version
    # a bad file read from bytes is worded as the text is, with its line
    bad = b"- func: a(Tensor x) -> Tensor\n- func: a(Tensor x) -> Tensor\n"
    with pytest.raises(BadInput) as from_bytes:
        parse_registry(bad, "up.yaml", buildable=False)
    with pytest.raises(BadInput) as from_text:
        parse_registry(bad.decode(), "up.yaml", buildable=False)
    assert (from_bytes.value.message, from_bytes.value.line) == (from_text.value.message, from_text.value.line) != (None, None)


def test_the_samples_read_the_same_both_ways(monkeypatch):
    for path in sorted(SAMPLE.glob("native_functions*.yaml")):
        fast, slow = _both(monkeypatch, path, buildable=False)
        assert fast == slow, path.name


ENTRY = "- func: abs(Tensor self) -> Tensor\n  variants: function, method\n"
CASES = {
    # what the fast path must leave to libyaml (refused or worded there, with the line)
    "alias": ENTRY + "- func: &f neg(Tensor self) -> Tensor\n- func: *f\n",
    "anchor only": ENTRY + "- func: &f neg(Tensor self) -> Tensor\n",
    "merge key": ENTRY + "- <<: {func: neg(Tensor self) -> Tensor}\n",
    "duplicate key": ENTRY + "- func: neg(Tensor self) -> Tensor\n  func: exp(Tensor self) -> Tensor\n",
    "duplicate dispatch key": ENTRY + "- func: neg(Tensor self) -> Tensor\n  dispatch:\n    CPU: a\n    CPU: b\n",
    "explicit tag": ENTRY + "- func: !!str neg(Tensor self) -> Tensor\n",
    "two documents": ENTRY + "---\n" + ENTRY,
    "unclosed flow": ENTRY + "- func: neg(Tensor self) -> Tensor\n  tags: [core\n",
    "tab indent": ENTRY + "- func: neg(Tensor self) -> Tensor\n\ttags: core\n",
    "list as func": ENTRY + "- func: [a, b]\n",
    "map as tags": ENTRY + "- func: neg(Tensor self) -> Tensor\n  tags: {a: 1}\n",
    "scalar entry": ENTRY + "- neg\n",
    "no func": ENTRY + "- tags: core\n",
    "bad schema": ENTRY + "- func: neg(Tensor self -> Tensor\n",
    "duplicate operator": ENTRY + ENTRY,
    "dispatch a list": ENTRY + "- func: neg(Tensor self) -> Tensor\n  dispatch: [CPU]\n",
    "unknown dispatch key": ENTRY + "- func: neg(Tensor self) -> Tensor\n  dispatch:\n    NoSuchKey: neg\n",
    "dash alone on its line": ENTRY + "-\n  func: neg(Tensor self) -> Tensor\n",
    "indented list": "  " + ENTRY.replace("\n  ", "\n    "),
    "NEL line break": ENTRY + "- func: neg(Tensor self) -> Tensor\x85  tags: core\n",
    # what it reads itself
    "flow entry": ENTRY + "- {func: neg(Tensor self) -> Tensor, tags: [core, pointwise]}\n",
    "quoted values": ENTRY + "- func: 'neg(Tensor self) -> Tensor'\n  tags: \"core\"\n",
    "null values": ENTRY + "- func: neg(Tensor self) -> Tensor\n  tags: ~\n  dispatch: null\n  autogen:\n",
    "quoted null tag": ENTRY + "- func: neg(Tensor self) -> Tensor\n  tags: 'null'\n",
    "tags list": ENTRY + "- func: neg(Tensor self) -> Tensor\n  tags:\n  - core\n  - ~\n  - pointwise\n",
    "comments": "# head\n" + ENTRY + "# between\n\n- func: neg(Tensor self) -> Tensor  # trailing\n",
    "nested values": ENTRY + "- func: neg(Tensor self) -> Tensor\n  precomputed:\n  - a: {b: [1, {c: 2}]}\n",
    "autogen": ENTRY + "- func: neg(Tensor self) -> Tensor\n  autogen: neg.out, neg.other_out\n",
    "block scalar": ENTRY + "- func: |-\n    neg(Tensor self) -> Tensor\n",
    "empty": "",
    "comment only": "# nothing\n",
}
LEFT_TO_LIBYAML = {"alias", "anchor only", "merge key", "duplicate key", "duplicate dispatch key", "explicit tag",
                   "two documents", "unclosed flow", "tab indent", "dash alone on its line", "indented list",
                   "NEL line break", "empty", "comment only"}


@pytest.mark.parametrize("buildable", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_layout_reads_the_same_both_ways(monkeypatch, tmp_path, case, buildable):
    path = tmp_path / "native_functions.yaml"
    path.write_text(CASES[case], encoding="utf-8")
    fast, slow = _both(monkeypatch, path, buildable=buildable)
    assert fast == slow
    if case in LEFT_TO_LIBYAML:
        assert fastyaml.entries(path.read_text(encoding="utf-8"), MAX_DEPTH) is None
    refused_at = {"alias": 4, "merge key": 3, "duplicate key": 4, "duplicate dispatch key": 6}
    if case in refused_at:
        assert fast[0] == "bad" and fast[3] == refused_at[case], fast  # refused, with the line


FUZZ = settings(max_examples=150, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])
BITS = ["\n", "  ", "- ", ": ", "&a ", "*a", "<<: ", "? ", "[", "]", "{", "}", ",", "'", '"', "#", "!!str ", "|",
        ">", "---\n", "\t", "~", "null", "func: ", "dispatch:\n    CPU: x\n", "tags: core\n", "autogen: a.out\n",
        "structured_delegate: abs.out\n", "\n- func: f(Tensor x) -> Tensor\n", "\\", "\x85", "\u2028"]


@st.composite
def mutated(draw):
    data = (SAMPLE / "native_functions.v1.yaml").read_text(encoding="utf-8")[:4000]
    for _ in range(draw(st.integers(min_value=1, max_value=5))):
        at = draw(st.integers(min_value=0, max_value=len(data)))
        end = min(len(data), at + draw(st.integers(min_value=0, max_value=30)))
        action = draw(st.sampled_from(["cut", "insert", "copy"]))
        if action == "cut":
            data = data[:at] + data[end:]
        elif action == "insert":
            data = data[:at] + draw(st.sampled_from(BITS)) + data[at:]
        else:
            data = data[:at] + data[at:end] + data[at:]
    return data


def test_mutated_files_read_the_same_both_ways(monkeypatch, tmp_path):
    path = tmp_path / "native_functions.yaml"

    @FUZZ
    @given(mutated())
    def check(text: str) -> None:
        path.write_text(text, encoding="utf-8")
        for buildable in (True, False):
            fast, slow = _both(monkeypatch, path, buildable=buildable)
            assert fast == slow

    check()


def test_without_rapidyaml_libyaml_reads_it(tmp_path):
    """A real process in which ``import ryml`` fails reads the sample the same way."""
    path = SAMPLE / "native_functions.v1.yaml"
    code = ("import sys; sys.modules['ryml'] = None\n"
            "from opgov.formats import fastyaml\n"
            "from opgov.formats.registry import read_registry\n"
            "assert not fastyaml.available()\n"
            f"print(len(read_registry({str(path)!r}, buildable=False).ops))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(read_registry(path, buildable=False).ops) > 100


SPANNING = {  # values that run over a line with a "-" in the first column: a cut there must not misread them
    "quoted": ENTRY + "- func: 'neg(Tensor self)\n- -> Tensor'\n",
    "double quoted": ENTRY + "- func: neg(Tensor self) -> Tensor\n  python_module: \"a\n- b\"\n",
    "flow list": ENTRY + "- func: neg(Tensor self) -> Tensor\n  tags: [core,\n- pointwise]\n",
    "flow map": ENTRY + "- {func: neg(Tensor self) -> Tensor,\n- tags: core}\n",
    "plain multi-line": ENTRY + "- func: neg(Tensor self)\n- -> Tensor\n",
}


def test_a_file_read_a_piece_at_a_time_reads_as_whole(monkeypatch, tmp_path):
    """rapidyaml parses a large file a piece of entries at a time; with every entry its own piece,
    each layout, each fuzzed file and each value spanning a cut reads as libyaml reads it whole."""
    monkeypatch.setattr(fastyaml, "CHUNK_CHARS", 1)
    path = tmp_path / "native_functions.yaml"
    for name, text in sorted({**CASES, **SPANNING}.items()):
        path.write_text(text, encoding="utf-8")
        for buildable in (True, False):
            fast, slow = _both(monkeypatch, path, buildable=buildable)
            assert fast == slow, name

    @FUZZ
    @given(mutated())
    def check(text: str) -> None:
        path.write_text(text, encoding="utf-8")
        fast, slow = _both(monkeypatch, path, buildable=False)
        assert fast == slow

    check()
    # the samples, read in pieces, give every entry
    fast, slow = _both(monkeypatch, SAMPLE / "native_functions.v1.yaml", buildable=False)
    assert isinstance(fast, list) and len(fast) > 50 and fast == slow
