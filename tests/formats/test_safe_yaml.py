"""Issue 17 point 4: no YAML reader expands an alias (a 500-byte file must not become gigabytes),
and none lets a duplicate key or a merge key pass silently. Every reader of every YAML format goes
through :mod:`opgov.formats.safeyaml`; each case here is tried against each of them."""

from __future__ import annotations

import os
import time

import pytest

from opgov.core.errors import BadInput

from conftest import REPO, bad


def _registry(path):
    from opgov.formats.registry import read_registry

    return read_registry(path)


def _tags(path):
    from opgov.formats.registry import read_tags_yaml

    return read_tags_yaml(path)


def _tags_for_sync(path):
    from opgov.formats.tags import ensure_tags_declared

    return ensure_tags_declared(open(path, encoding="utf-8").read(), ["core"], path=str(path))


def _decisions(path):
    from opgov.formats.decisions import read_decisions_file

    return read_decisions_file(str(path))


def _rules(path):
    from opgov.formats.rules import load_rules_file

    return load_rules_file(path)


# Per reader: a valid file whose line 3 holds the value VALUE, line 4 the key KEY (both at the
# indentation of a key of one entry).
VALID = {
    "native_functions.yaml": (_registry, "- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: VALUE\n"
                                         "  KEY\n- func: bar(Tensor self) -> Tensor\n"),
    "tags.yaml (import)": (_tags, "- tag: core\n  desc: x\n  extra: VALUE\n  KEY\n- tag: other\n  desc: y\n"),
    "tags.yaml (sync-yaml)": (_tags_for_sync, "- tag: core\n  desc: x\n  extra: VALUE\n  KEY\n"),
    "decisions": (_decisions, "decided_at: 2023-08-24\ndecisions:\n  - {op: aten::ceil, category: core, rationale: VALUE,\n"
                              "     KEY}\n"),
    "decomposition rules": (_rules, "format: 1\nsource: test\nrules: [{op: aten::addmm, note: VALUE,\n"
                                    "  KEY}]\n"),
}
FILLER = {"native_functions.yaml": "tags: core", "tags.yaml (import)": "more: z", "tags.yaml (sync-yaml)": "more: z",
          "decisions": "decided_by: alice", "decomposition rules": "into: [aten::mm]"}
READERS = sorted(VALID)


def _file(tmp_path, reader: str, value: str, key: str):
    path = tmp_path / "input.yaml"
    path.write_text(VALID[reader][1].replace("VALUE", value).replace("KEY", key), encoding="utf-8")
    return path


def _refused(tmp_path, reader: str, value: str, key: str, line: int, *words: str) -> BadInput:
    path = _file(tmp_path, reader, value, key)
    with pytest.raises(BadInput) as info:
        VALID[reader][0](path)
    err = info.value
    assert (err.file, err.line) == (str(path), line), str(err)
    for word in words:
        assert word in err.message, str(err)
    assert "\n" not in str(err)
    return err


@pytest.mark.parametrize("reader", READERS)
def test_the_valid_files_read(tmp_path, reader):
    # the control: the same files with a plain value and a harmless key read without complaint
    VALID[reader][0](_file(tmp_path, reader, "plain", FILLER[reader]))


@pytest.mark.parametrize("reader", READERS)
def test_an_alias_is_refused_with_its_line(tmp_path, reader):
    _refused(tmp_path, reader, "&anchor text", "more: *anchor", 4, "alias")


@pytest.mark.parametrize("reader", READERS)
def test_a_merge_key_is_refused(tmp_path, reader):
    _refused(tmp_path, reader, "x", "<<: {tags: core}", 4, "merge key")


@pytest.mark.parametrize("reader", READERS)
def test_a_duplicate_key_is_refused(tmp_path, reader):
    # the key of line 4 repeats the key of line 3: the second one names the first
    key = {"decisions": "rationale: again", "decomposition rules": "note: again"}.get(
        reader, "CPU: again" if reader == "native_functions.yaml" else "extra: again")
    if reader == "native_functions.yaml":  # the nested mapping: line 3 is inside dispatch
        path = tmp_path / "input.yaml"
        path.write_text("- func: foo(Tensor self) -> Tensor\n  dispatch:\n    CPU: foo\n    CPU: foo2\n", encoding="utf-8")
        with pytest.raises(BadInput) as info:
            _registry(path)
        assert info.value.line == 4 and "duplicate key 'CPU' (first at line 3)" in info.value.message
        return
    _refused(tmp_path, reader, "x", key, 4, "duplicate key", "first at line 3")


def test_a_second_func_in_one_entry_no_longer_wins_silently(tmp_path):
    path = tmp_path / "native_functions.yaml"
    path.write_text("- func: foo(Tensor self) -> Tensor\n  variants: function\n  func: bar(Tensor self) -> Tensor\n",
                    encoding="utf-8")
    with pytest.raises(BadInput) as info:
        _registry(path)
    assert str(info.value) == f"{path}:3: duplicate key 'func' (first at line 1)"


@pytest.mark.parametrize("reader", READERS)
def test_a_list_as_key_is_refused(tmp_path, reader):
    _refused(tmp_path, reader, "x", "? [a, b]\n  : c" if reader in ("native_functions.yaml",) or "tags" in reader
             else "[a, b]: c", 4, "key")


def _bomb(levels: int = 9) -> str:
    """The billion laughs: level n holds nine references to level n-1 (9**levels strings)."""
    lines = ['l0: &l0 "lol lol lol lol lol lol lol lol lol"']
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ",".join([f"*l{n - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_the_billion_laughs_decisions_file_is_refused_at_once(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb() + "decided_at: 2023-08-24\ndecisions:\n"
                    "  - {op: aten::ceil, category: core, rationale: *l8}\n", encoding="utf-8")
    assert os.path.getsize(path) < 700
    started = time.process_time()
    with pytest.raises(BadInput) as info:
        _decisions(path)
    # 9**8 * 39 bytes would be 1.6 GB of rationale; refusing it costs next to nothing
    assert time.process_time() - started < 5
    assert info.value.line == 2 and "alias" in info.value.message


@pytest.mark.parametrize("reader", READERS)
def test_the_billion_laughs_is_refused_by_every_reader(tmp_path, reader):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb(), encoding="utf-8")
    with pytest.raises(BadInput) as info:
        VALID[reader][0](path)
    assert "alias" in info.value.message or "expected" in info.value.message, info.value


def test_decisions_load_of_a_bomb_is_bad_input_and_writes_nothing(cli, tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb() + "decided_at: 2023-08-24\ndecisions:\n"
                    "  - {op: aten::ceil, category: core, rationale: *l8}\n", encoding="utf-8")
    size = os.path.getsize(cli.url.removeprefix("sqlite:///"))
    result = bad(cli, "decisions", "load", path, words=(f"{path}:2:", "alias"))
    assert len(result.err.strip().splitlines()) == 1 and "Traceback" not in result.err
    assert os.path.getsize(cli.url.removeprefix("sqlite:///")) == size


def test_anchors_without_aliases_are_harmless(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("decided_at: 2023-08-24\ndecisions:\n  - {op: aten::ceil, category: core, rationale: &r fine}\n",
                    encoding="utf-8")
    assert _decisions(path)[0].rationale == "fine"


@pytest.mark.parametrize(("value", "words"), [
    ("decided_by: 5", "must be a name or a list of names, got 5"),
    ("decided_by: [alice, 5]", "decided_by"),
    ("decided_by: {a: b}", "decided_by"),
    ("into: 5", "'into' of aten::ceil must be a list"),
    ("rationale: [a, b]", "must be a single value"),
    ("op: [aten::ceil]", "op must be a single value"),
    ("category: [core]", "category of"),
    ("decided_at: yesterday", "decided_at must be a date"),
])
def test_wrong_value_types_in_a_decisions_file(tmp_path, value, words):
    key = value.split(":")[0]
    fields = {"op": "aten::ceil", "category": "core", "rationale": "why", "decided_by": "alice"}
    fields.pop(key, None)
    body = ", ".join(f"{k}: {v}" for k, v in fields.items())
    path = tmp_path / "d.yaml"
    path.write_text(f"decided_at: 2023-08-24\ndecisions:\n  - {{{body}, {value}}}\n", encoding="utf-8")
    if key == "into":
        path.write_text(path.read_text().replace("category: core", "category: decomposable"))
    with pytest.raises(BadInput) as info:
        _decisions(path)
    assert info.value.line == 3 and words in info.value.message, str(info.value)


def test_decisions_load_with_a_number_as_decider_is_bad_input(cli, tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("decided_at: 2023-08-24\ndecided_by: 5\ndecisions:\n"
                    "  - {op: aten::ceil, category: core, rationale: why}\n", encoding="utf-8")
    bad(cli, "decisions", "load", path, words=(f"{path}:2: decided_by must be a name or a list of names, got 5",))


def test_the_real_files_have_no_aliases_or_duplicates(pytorch_versions, pytorch_release, decisions_2023):
    from opgov.formats.rules import load_rules_file
    from opgov.formats.decisions import read_decisions_file
    from opgov.formats.registry import read_registry

    for version in pytorch_versions:
        folder = pytorch_release(version)
        assert len(read_registry(folder / "native_functions.yaml", tags_yaml=folder / "tags.yaml").ops) > 2000
    assert load_rules_file(decisions_2023).rules
    assert load_rules_file(REPO / "data" / "decomps" / "export-composites.yaml").rules
    assert read_decisions_file(str(REPO / "data" / "decisions" / "core-aten-review-2023.yaml"))
