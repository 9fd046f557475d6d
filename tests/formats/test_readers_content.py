"""Every reader has a form that takes content already in memory (an upload) and the name to give it
in messages. Given a file's bytes and its path as the name, that form answers exactly what the path
form answers for the file: the same result, or the same one-line message naming the same file and
line. This is what lets the service read an upload with no temporary file."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from opgov.core.errors import BadInput

from conftest import REPO, SAMPLE

SAMPLES = {
    "registry": SAMPLE / "native_functions.v1.yaml",
    "tags": SAMPLE / "tags.yaml",
    "decisions": REPO / "data" / "decisions" / "core-aten-review-2023.yaml",
    "rules": REPO / "data" / "decomps" / "export-composites.yaml",
}


def _readers():
    from opgov.formats import corpus, decisions, oplists, policy_config, registry, rules, torch_allowlist
    from opgov.formats.files import Content

    tags = SAMPLES["tags"]
    return {  # name → (the path form, the content form)
        "registry": (registry.read_registry, registry.parse_registry),
        "registry, check-bc": (lambda p: registry.read_registry(p, buildable=False),
                               lambda data, name: registry.parse_registry(data, name, buildable=False)),
        "registry with its tags": (lambda p: registry.read_registry(p, tags_yaml=tags),
                                   lambda data, name: registry.parse_registry(
                                       data, name, tags=Content(tags.read_bytes(), str(tags)))),
        "tags.yaml": (registry.read_tags_yaml, registry.parse_tags_yaml),
        "decisions": (decisions.read_decisions_file, decisions.parse_decisions),
        "rules": (rules.load_rules_file, rules.parse_rules),
        "corpus": (corpus.load_corpus, corpus.parse_corpus),
        "operator list": (lambda p: corpus.resolve_model_ops(str(p)), corpus.list_ops),
        "op file": (oplists.read_op_file, oplists.parse_op_file),
        ".opgov.toml": (lambda p: policy_config.read_policy_config(Path(p)), policy_config.parse_policy_config),
        "torch's allow list": (torch_allowlist.read_torch_allowlist, torch_allowlist.parse_torch_allowlist),
    }


READERS = sorted(_readers())


def _pt2(ops: list[str]) -> bytes:
    nodes = [{"target": f"torch.ops.aten.{op}", "inputs": [], "outputs": []} for op in ops]
    program = {"graph_module": {"graph": {"nodes": nodes, "outputs": []}}, "schema_version": {"major": 8}}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("m/models/m.json", json.dumps(program))
    return buffer.getvalue()


def _inputs() -> dict[str, bytes]:
    found = {name: path.read_bytes() for name, path in SAMPLES.items()}
    found.update({
        "binary": bytes(range(256)) * 4,
        "latin-1": "decisions:\n  - op: caf\xe9\n".encode("latin-1"),
        "nul on line 2": b"- func: abs(Tensor self) -> Tensor\n\x00\n",
        "crlf": SAMPLES["registry"].read_bytes().replace(b"\n", b"\r\n"),
        "bad schema on line 3": b"- func: abs(Tensor self) -> Tensor\n\n- func: abs(Tensor self -> Tensor\n",
        "merge-key": b"base: &b {op: aten::abs}\ndecisions:\n  - <<: *b\n    category: core\n",
        "empty": b"",
        "blank": b" \n\n",
        "ops per line": b"aten::add.Tensor\n# a note\naten::relu\nnot an op!\n",
        "ops as JSON": b'["aten::add.Tensor", "aten::relu"]',
        "kernel yaml": b"- op: add.out\n- func: mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n",
        "selected operators": b"operators:\n  aten::add.Tensor: {}\n  bad name: {}\n",
        "corpus": b'{"source": "x", "models": {"m": {"exported_ops": ["aten::relu.default", "nope"]}}}',
        "pt2": _pt2(["add.Tensor", "relu.default"]),
        "zip without a program": b"PK\x05\x06" + b"\x00" * 18,
        "policy": b'registry = "nf.yaml"\r\n[reviewers]\ncore_maintainers = ["alice"]\n[rules]\nexcept = ["no-such-rule"]\n',
        "policy, fine": b'registry = "nf.yaml"\n[reviewers]\ncommittee = ["pytorch/core"]\n',
        "allow list": b"import datetime\r\nALLOW_LIST = [\n    # named tensors\n    ('aten::_foo', datetime.date(2026, 1, 2)),\n"
                      b"    ('aten::_bar', datetime.date(2026, 13, 2)),\n]\n",
        "allow list, fine": b"import datetime\nALLOW_LIST = [\n    ('aten::_foo', datetime.date(2026, 1, 2), 'int x'),\n]\n",
    })
    return found


INPUTS = _inputs()


def _outcome(read):
    try:
        return "ok", read()
    except BadInput as err:
        return "bad", str(err)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", sorted(INPUTS))
def test_content_is_read_as_the_file_is(tmp_path, reader, case):
    by_path, by_content = _readers()[reader]
    path = tmp_path / f"{case.replace(' ', '-')}.input"
    path.write_bytes(INPUTS[case])
    expected = _outcome(lambda: by_path(path))
    assert _outcome(lambda: by_content(INPUTS[case], str(path))) == expected
    if expected[0] == "bad":
        assert expected[1].startswith(f"{path}:"), expected  # the message names the file it was given


def test_content_is_named_as_given_not_as_any_path(tmp_path):
    """An upload named ``my rules.yaml`` is named so, line included, wherever the bytes came from."""
    from opgov.formats.oplists import parse_op_file
    from opgov.formats.registry import parse_registry
    from opgov.formats.rules import parse_rules

    with pytest.raises(BadInput) as err:
        parse_rules(b"source: x\nrules:\n  - {op: aten::abs, into: [not an op!]}\n", "my rules.yaml")
    assert str(err.value).startswith("my rules.yaml:3: ")
    with pytest.raises(BadInput) as err:
        parse_registry(INPUTS["bad schema on line 3"], "uploaded/native_functions.yaml")
    assert str(err.value).startswith("uploaded/native_functions.yaml:3: ")
    got = parse_op_file(INPUTS["pt2"], "model.pt2")
    assert (got.path, got.format, got.ops) == ("model.pt2", "pt2", ("aten::add.Tensor", "aten::relu"))
    assert parse_rules(SAMPLES["rules"].read_text(), "r.yaml").rules  # text as well as bytes
