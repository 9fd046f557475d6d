"""Issue 17 point 6: no traceback from any file reader. Whatever a file holds, every reader gives a
result or one :class:`BadInput` (exit 2) naming the file, never another exception.

First the inputs seen to crash readers before (binary, non-UTF-8, a directory, a symlink loop,
nesting deep enough to crash libyaml, merge keys, wrong value types), against every reader; then
property-based fuzzing with hypothesis: random bytes, random text, and real files cut, spliced and
sprinkled with YAML's special characters. The fuzzing is derandomized (the same examples on
every run, no example database), so CI is deterministic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opgov.core.errors import BadInput, SchemaParseError

from conftest import REPO, SAMPLE

SAMPLES = {
    "registry": SAMPLE / "native_functions.v1.yaml",
    "tags": SAMPLE / "tags.yaml",
    "decisions": REPO / "data" / "decisions" / "core-aten-review-2023.yaml",
    "rules": REPO / "data" / "decomps" / "export-composites.yaml",
}


def _registry(path):
    from opgov.formats.registry import read_registry

    return read_registry(path)


def _registry_for_check_bc(path):
    from opgov.formats.registry import read_registry

    return read_registry(path, buildable=False)


def _registry_with_tags(path):
    from opgov.formats.registry import read_registry

    return read_registry(SAMPLES["registry"], tags_yaml=path)


def _tags(path):
    from opgov.formats.registry import read_tags_yaml

    return read_tags_yaml(path)


def _sync_scan(path):
    from opgov.core import yamlsync
    from opgov.formats.files import read_text

    text = read_text(str(path), exact=True)
    entries = yamlsync.scan(text, path=str(path))
    return yamlsync.plan(text, yamlsync.desired_from_file(text, path=str(path)), path=str(path)), entries


def _sync_tags(path):
    from opgov.formats.files import read_text
    from opgov.formats.tags import ensure_tags_declared

    return ensure_tags_declared(read_text(str(path), exact=True), ["core", "deprecated"], path=str(path))


def _decisions(path):
    from opgov.formats.decisions import read_decisions_file

    return read_decisions_file(str(path))


def _rules(path):
    from opgov.formats.rules import load_rules_file

    return load_rules_file(path)


def _corpus(path):
    from opgov.formats.corpus import load_corpus

    return load_corpus(path)


def _model_ops(path):
    from opgov.formats.corpus import resolve_model_ops

    return resolve_model_ops(str(path))


READERS = {
    "native_functions.yaml (import)": (_registry, "registry"),
    "native_functions.yaml (check-bc)": (_registry_for_check_bc, "registry"),
    "native_functions.yaml (sync-yaml)": (_sync_scan, "registry"),
    "tags.yaml (import)": (_registry_with_tags, "tags"),
    "tags.yaml (read)": (_tags, "tags"),
    "tags.yaml (sync-yaml)": (_sync_tags, "tags"),
    "decisions": (_decisions, "decisions"),
    "decomposition rules": (_rules, "rules"),
    "model corpus": (_corpus, None),
    "operator list": (_model_ops, None),
}
NAMES = sorted(READERS)


def _read(name: str, path: Path):
    """Run a reader: its result, or the BadInput it raised (checked to be one line naming the file)."""
    try:
        return READERS[name][0](path)
    except BadInput as err:
        assert "\n" not in str(err), str(err)
        assert path.name in str(err), str(err)  # it names the file
        return err


# --- inputs that crashed readers -------------------------------------------------------------------


def _bad_inputs(folder: Path) -> dict[str, Path]:
    made = {}

    def put(name: str, data: bytes) -> None:
        (folder / name).write_bytes(data)
        made[name] = folder / name

    put("binary", bytes(range(256)) * 4)
    put("latin-1", "decisions:\n  - op: caf\xe9\n".encode("latin-1"))
    put("nul", b"- func: abs(Tensor self) -> Tensor\x00\n")
    put("nested-flow", b"[" * 100_000 + b"]" * 100_000)  # libyaml's composer crashed the interpreter
    put("nested-block", b"- " * 100_000 + b"x\n")
    put("nested-json", b'{"source": "x", "models": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    put("merge-key", b"base: &b {op: aten::abs}\ndecisions:\n  - <<: *b\n    category: core\n")
    put("two-documents", b"- tag: core\n  desc: x\n---\n- tag: other\n")
    put("wrong-types", b"decided_by: 5\ndecided_at: 2023-02-30\ndecisions: {op: 1}\nrules: 7\n- func: 5\n")
    put("bad-date", b"decided_at: 2023-02-30\ndecisions:\n  - {op: aten::abs, category: core, rationale: x}\n")
    put("huge-int", b"format: 1" + b"0" * 5000 + b"\nsource: x\nrules: []\n")
    put("bom-and-crlf", "\ufeff- func: abs(Tensor self) -> Tensor\r\n  tags: core\r\n".encode())
    put("empty", b"")
    (folder / "a-directory").mkdir()
    made["a-directory"] = folder / "a-directory"
    os.symlink(folder / "loop-b", folder / "loop-a")
    os.symlink(folder / "loop-a", folder / "loop-b")
    made["symlink-loop"] = folder / "loop-a"
    return made


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory):
    return _bad_inputs(tmp_path_factory.mktemp("bad-inputs"))


BAD = ["binary", "latin-1", "nul", "nested-flow", "nested-block", "nested-json", "merge-key", "two-documents",
       "wrong-types", "bad-date", "huge-int", "bom-and-crlf", "empty", "a-directory", "symlink-loop"]
ALWAYS_BAD = {"binary", "latin-1", "nested-flow", "nested-block", "a-directory", "symlink-loop", "merge-key"}


@pytest.mark.parametrize("reader", NAMES)
@pytest.mark.parametrize("case", BAD)
def test_what_crashed_readers_is_bad_input(bad_inputs, reader, case):
    result = _read(reader, bad_inputs[case])
    if case in ALWAYS_BAD:
        assert isinstance(result, BadInput), f"{reader} accepted {case}: {result!r}"
    if case == "symlink-loop":
        assert "symbolic links" in result.message or "neither a file" in result.message


# What the CLI shows for these (exit 2, one line naming the file, no traceback, nothing written) is
# tests/cli/test_bad_file_arguments.py's, for every file argument of every command.


# --- property-based fuzzing ----------------------------------------------------------------------------

FUZZ = settings(max_examples=40, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
YAML_BITS = ["\n", "  ", "- ", ": ", "&a ", "*a", "<<: ", "? ", "[", "]", "{", "}", ",", "'", '"', "#", "!!str ",
             "!!python/object ", "|", ">", "---\n", "...\n", "\t", "\x00", "\x1b", "\ufeff", "~", "%YAML 1.1\n",
             "func: ", "tag: ", "op: ", "into: ", "decisions:", "rules:", "dispatch:", "structured_delegate: ",
             "autogen: ", "tags: ", "Tensor(a!) ", "(", ")", "->", "*, ", "9" * 30]


@st.composite
def mutated(draw, original: bytes):
    """A real file with a few slices cut, duplicated, or replaced by YAML's special characters."""
    data = bytearray(original[: draw(st.integers(min_value=0, max_value=6000))])
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        if not data:
            break
        at = draw(st.integers(min_value=0, max_value=len(data)))
        end = min(len(data), at + draw(st.integers(min_value=0, max_value=40)))
        action = draw(st.sampled_from(["cut", "insert", "copy"]))
        if action == "cut":
            del data[at:end]
        elif action == "insert":
            data[at:at] = draw(st.sampled_from(YAML_BITS)).encode()
        else:
            data[at:at] = data[at:end]
    return bytes(data)


def _contents(sample: str | None):
    choices = [st.binary(max_size=300), st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass"))]
    if sample is not None:
        choices.append(mutated(SAMPLES[sample].read_bytes()))
    else:
        choices.append(st.builds(lambda ops: ("[" + ", ".join(ops) + "]").encode(),
                                 st.lists(st.sampled_from(['"aten::add.Tensor"', "1", "null", '"x::"', "[]", "{}"]))))
    return st.one_of(choices)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("reader", NAMES)
def test_any_file_gives_a_result_or_bad_input(fuzz_dir, reader):
    path = fuzz_dir / f"{reader.split()[0]}.input"

    @FUZZ
    @given(_contents(READERS[reader][1]))
    def check(content: bytes) -> None:
        path.write_bytes(content)
        _read(reader, path)  # any other exception fails the test, with the input that caused it

    check()


SCHEMAS = [line.split("func: ", 1)[1] for line in SAMPLES["registry"].read_text().splitlines()
           if line.startswith("- func: ")]
SCHEMA_BITS = ["(", ")", "[", "]", "?", "!", "a!", "|", "*", ", ", " -> ", "->", "=", "Tensor", "int[2]", "self",
               ".", "::", "'", '"', "\\", "None", "-1", "1e5", "True", " ", "\n", "\x00", "out", "_"]


@st.composite
def schema_texts(draw):
    text = draw(st.sampled_from(SCHEMAS))
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        at = draw(st.integers(min_value=0, max_value=len(text)))
        end = min(len(text), at + draw(st.integers(min_value=0, max_value=8)))
        text = text[:at] + draw(st.sampled_from(SCHEMA_BITS + [""])) + text[end:]
    return text


@FUZZ
@given(st.one_of(schema_texts(), st.text(max_size=120)))
def test_the_schema_parser_gives_a_schema_or_a_schema_parse_error(text):
    from opgov.core.schema import FunctionSchema

    try:
        schema = FunctionSchema.parse(text)
    except SchemaParseError as err:
        assert "\n" not in err.message  # one line: the schema is quoted with repr
        return
    assert str(schema) == text  # whatever parses prints back exactly
    schema.kind, schema.arguments.out, schema.name.func_name  # and its facts can be computed


@FUZZ
@given(schema_texts())
def test_torchgen_rules_never_crash_on_what_parses(text):
    from opgov.core.registry_rules import EntryFacts, check_entries
    from opgov.core.schema import FunctionSchema

    try:
        schema = FunctionSchema.parse(text)
    except SchemaParseError:
        return
    check_entries([EntryFacts(line=1, schema=schema, keys={"func": 1, "structured_delegate": 2},
                              scalars={"structured_delegate": schema.func_name}, dispatch=(("CPU", 3),))])
