"""The sync bot's text editor: byte-preserving governance edits of native_functions.yaml."""

from __future__ import annotations

import difflib
import functools
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from opgov.core.errors import BadInput
from opgov.core.yamlsync import (
    GOVERNED,
    Desired,
    desired_from_file,
    plan,
    scan,
    unified_diff,
)
from opgov.formats.tags import declared_tags, ensure_tags_declared

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# A small registry in the file's format, covering each tags spelling, autogen and comments.
SAMPLE = """\
# Operators of a sample registry.

# Section: unary operators.

# Absolute value, elementwise.
- func: absval(Tensor self) -> Tensor
  device_check: NoCheck   # elementwise
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: absval
  tags: [core, pointwise]

- func: absval_(Tensor(a!) self) -> Tensor(a!)
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: absval_
  tags: pointwise

- func: rect(Tensor self) -> Tensor
  variants: function, method
  tags: core

- func: nonzero_idx(Tensor self) -> Tensor
  tags: data_shape  # result size depends on the data

- func: rminus.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  variants: function
  dispatch:
    CompositeExplicitAutograd: rminus
  autogen: rminus.Scalar_out

- func: fill_pair(Tensor self, Scalar value) -> Tensor
  dispatch:
    CompositeExplicitAutograd: fill_pair
  autogen: fill_pair.out, fill_pair.other_out

- func: mpower(Tensor self, int n) -> Tensor
  variants: function, method
"""


def current(text: str = SAMPLE) -> dict[str, Desired]:
    return desired_from_file(text)


def want(state: dict[str, Desired], name: str, *tags: str, delete: bool = False) -> None:
    """Set one operator's governed tags (or mark it deleted) in a desired state."""
    old = state[name]
    state[name] = Desired(name, old.schema, frozenset(tags), delete)


def load_by_func(text: str) -> dict[str, dict]:
    return {e["func"].split("(")[0]: e for e in yaml.load(text, Loader=LOADER)}


def tags_of(entry: dict) -> list[str]:
    tags = entry.get("tags", [])
    return [tags] if isinstance(tags, str) else list(tags)


def diff_lines(old: str, new: str) -> tuple[Counter, Counter]:
    """(removed lines, added lines) as multisets, from a line diff."""
    removed: Counter = Counter()
    added: Counter = Counter()
    a, b = old.splitlines(), new.splitlines()
    sm = difflib.SequenceMatcher(None, a, b)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op != "equal":
            removed.update(a[i1:i2])
            added.update(b[j1:j2])
    return removed, added


# ------------------------------------------------------------------------------- scanning


def test_scan_reads_every_tags_spelling_autogen_and_lines():
    entries = {e.name: e for e in scan(SAMPLE)}
    assert list(entries) == ["absval", "absval_", "rect", "nonzero_idx", "rminus.Scalar",
                             "fill_pair", "mpower"]
    absval = entries["absval"]
    assert absval.func == "absval(Tensor self) -> Tensor"
    assert (absval.line, absval.tags_line, absval.end_line, absval.span) == (6, 11, 11, (6, 12))
    assert absval.tags == ("core", "pointwise")
    assert entries["absval_"].tags == ("pointwise",)
    assert entries["nonzero_idx"].tags == ("data_shape",)
    assert entries["rminus.Scalar"].autogen == ("rminus.Scalar_out",)
    assert entries["fill_pair"].autogen == ("fill_pair.out", "fill_pair.other_out")
    mpower = entries["mpower"]
    assert (mpower.tags, mpower.tags_line, mpower.end_line) == ((), None, 38)
    assert mpower.span == (37, 38)


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("- func: a(Tensor x) -> Tensor\n- variants: function\n", 2, "'- func:'"),
        ("- func: a(Tensor x) -> Tensor\n\n- func: a(Tensor y) -> Tensor\n", 3,
         "duplicate operator a"),
        ("- func: a(Tensor x) -> Tensor\n  tags:\n  - core\n", 2, "cannot read tags"),
        ("- func: a(Tensor x) -> Tensor\n  tags: \"core\"\n", 2, "cannot read tags"),
        ("- func: a(Tensor x) -> Tensor\n  tags: [core, 'x y']\n", 2, "cannot read tags"),
        ("- func: a(Tensor x) -> Tensor\n  autogen: [a.out]\n", 2, "cannot read autogen"),
        ("- func: a(Tensor x) -> Tensor\n  tags: core\n  tags: core\n", 3, "second tags"),
        ("# c\nfoo: bar\n", 2, "expected '- func:'"),
        ("- func: nothing here\n", 1, "operator name"),
        ("  tags: core\n- func: a(Tensor x) -> Tensor\n", 1, "before the first entry"),
    ],
)
def test_scan_rejects_what_it_cannot_read_naming_file_and_line(text, line, says):
    with pytest.raises(BadInput) as err:
        scan(text, path="nf.yaml")
    assert str(err.value).startswith(f"nf.yaml:{line}: ")
    assert says in str(err.value)


# ------------------------------------------------------------------------------- tag edits


def test_entry_without_tags_gets_a_tags_line_after_its_last_key():
    state = current()
    want(state, "mpower", "core")
    want(state, "rminus.Scalar", "core", "deprecating")
    result = plan(SAMPLE, state)
    assert "  autogen: rminus.Scalar_out\n  tags: [core, deprecating]\n\n" in result.new_text
    assert result.new_text.endswith("  variants: function, method\n  tags: core\n")
    assert [(c.operator, c.action, c.tag) for c in result.changes] == [
        ("rminus.Scalar", "add-tag", "core"), ("rminus.Scalar", "add-tag", "deprecating"),
        ("mpower", "add-tag", "core")]
    assert load_by_func(result.new_text)["mpower"]["tags"] == "core"


def test_adding_then_removing_a_tag_restores_the_original_bytes():
    state = current()
    want(state, "mpower", "deprecated")
    want(state, "rminus.Scalar", "core", "deprecating")
    added = plan(SAMPLE, state).new_text
    assert added != SAMPLE
    assert plan(added, current()).new_text == SAMPLE


def test_existing_tags_lines_keep_their_spelling():
    state = current()
    want(state, "absval")                      # [core, pointwise] -> [pointwise]
    want(state, "absval_", "core")             # scalar + one more -> flow list, appended
    want(state, "rect")                        # the only tag -> line removed
    want(state, "nonzero_idx", "deprecating")  # trailing comment kept
    new = plan(SAMPLE, state).new_text
    removed, added = diff_lines(SAMPLE, new)
    assert removed == Counter(["  tags: [core, pointwise]", "  tags: pointwise", "  tags: core",
                               "  tags: data_shape  # result size depends on the data"])
    assert added == Counter(["  tags: [pointwise]", "  tags: [pointwise, core]",
                             "  tags: [data_shape, deprecating]  # result size depends on the "
                             "data"])


def test_flow_list_spacing_and_order_are_kept():
    text = "- func: a(Tensor x) -> Tensor\n  tags:  [ pointwise,core ]   # note\n"
    state = current(text)
    want(state, "a", "core", "deprecated")
    assert plan(text, state).new_text == (
        "- func: a(Tensor x) -> Tensor\n  tags:  [ pointwise,core,deprecated ]   # note\n")


def test_other_tags_are_never_touched():
    state = current()
    for name in state:
        if state[name].schema is not None:
            want(state, name)  # no governed tags anywhere
    new = plan(SAMPLE, state).new_text
    for before, after in zip(scan(SAMPLE), scan(new)):
        assert [t for t in before.tags if t not in GOVERNED] == list(after.tags)


def test_crlf_files_keep_their_line_endings():
    text = SAMPLE.replace("\n", "\r\n")
    state = current(text)
    want(state, "mpower", "core")
    want(state, "absval_", "core")
    want(state, "rect")
    new = plan(text, state).new_text
    assert "\n" not in new.replace("\r\n", "")
    assert new.replace("\r\n", "\n") == plan(SAMPLE, state).new_text


# ------------------------------------------------------------------------------- deletion


def test_deleting_an_entry_takes_its_attached_comment_and_keeps_spacing_tidy():
    state = current()
    want(state, "absval", delete=True)
    result = plan(SAMPLE, state)
    assert [(c.operator, c.action, c.line) for c in result.changes] == [
        ("absval", "delete-entry", 6)]
    assert result.new_text.startswith(
        "# Operators of a sample registry.\n\n# Section: unary operators.\n\n"
        "- func: absval_(Tensor(a!) self)")
    assert "\n\n\n" not in result.new_text


def test_deleting_the_last_entry_leaves_no_trailing_blank_line():
    state = current()
    want(state, "mpower", delete=True)
    new = plan(SAMPLE, state).new_text
    assert new.endswith("  autogen: fill_pair.out, fill_pair.other_out\n")


def test_deleting_adjacent_entries_leaves_one_blank_line_between_survivors():
    state = current()
    for name in ("absval_", "rect", "nonzero_idx"):
        want(state, name, delete=True)
    new = plan(SAMPLE, state).new_text
    assert "  tags: [core, pointwise]\n\n- func: rminus.Scalar(" in new
    assert "\n\n\n" not in new


def test_a_comment_block_inside_a_body_after_a_blank_line_survives_deletion():
    # the shape found in the real files: a note about the next entry, then a stray key line
    text = ("- func: a(Tensor x) -> Tensor\n  variants: function\n\n- func: b(Tensor x) -> Tensor\n"
            "  variants: function\n\n# About c.\n# More about c.\n  tags: pointwise\n"
            "- func: c(Tensor x) -> Tensor\n")
    state = current(text)
    want(state, "b", delete=True)
    assert plan(text, state).new_text == (
        "- func: a(Tensor x) -> Tensor\n  variants: function\n\n# About c.\n# More about c.\n"
        "- func: c(Tensor x) -> Tensor\n")


def test_deleting_an_autogen_operator_edits_the_declaring_entry():
    state = current()
    want(state, "rminus.Scalar_out", delete=True)
    want(state, "fill_pair.out", delete=True)
    result = plan(SAMPLE, state)
    removed, added = diff_lines(SAMPLE, result.new_text)
    assert removed == Counter(["  autogen: rminus.Scalar_out",
                               "  autogen: fill_pair.out, fill_pair.other_out"])
    assert added == Counter(["  autogen: fill_pair.other_out"])
    assert {(c.operator, c.action, c.entry) for c in result.changes} == {
        ("rminus.Scalar_out", "remove-autogen", "rminus.Scalar"),
        ("fill_pair.out", "remove-autogen", "fill_pair")}


def test_tags_and_autogen_edits_on_the_same_last_line_combine():
    state = current()
    want(state, "rminus.Scalar", "core")
    want(state, "rminus.Scalar_out", delete=True)
    new = plan(SAMPLE, state).new_text
    assert ("    CompositeExplicitAutograd: rminus\n  tags: core\n\n- func: fill_pair(") in new
    assert plan(new, state).new_text == new


def test_deleting_an_entry_whose_autogen_operators_stay_is_a_conflict():
    state = current()
    want(state, "fill_pair", delete=True)
    want(state, "fill_pair.out", delete=True)  # fill_pair.other_out is not deleted
    result = plan(SAMPLE, state)
    assert result.new_text == SAMPLE
    # fill_pair is untouched, so fill_pair.out cannot leave its autogen: list either
    assert [(c.operator, c.kind) for c in result.conflicts] == [
        ("fill_pair", "autogen-blocked"), ("fill_pair.out", "autogen-blocked")]
    want(state, "fill_pair.other_out", delete=True)
    result = plan(SAMPLE, state)
    assert not result.conflicts
    assert "fill_pair" not in result.new_text


# ------------------------------------------------------------------------------- conflicts


def test_conflicts_are_reported_and_leave_the_operator_untouched():
    state = current()
    state["ghost.Tensor"] = Desired("ghost.Tensor", "ghost.Tensor(Tensor x) -> Tensor",
                                    frozenset({"core"}))
    state["rect"] = Desired("rect", "rect(Tensor self, *, bool fast=False) -> Tensor", frozenset())
    del state["absval_"]
    want(state, "mpower", "core")  # not conflicted: still applied
    result = plan(SAMPLE, state)
    assert {(c.operator, c.kind) for c in result.conflicts} == {
        ("ghost.Tensor", "missing-in-file"), ("rect", "schema-differs"),
        ("absval_", "missing-in-database")}
    assert [c.operator for c in result.changes] == ["mpower"]
    new = {e.name: e for e in scan(result.new_text)}
    assert new["rect"].tags == ("core",)
    assert new["absval_"].tags == ("pointwise",)


def test_tags_on_an_operator_only_autogen_declares_are_a_conflict():
    state = current()
    want(state, "rminus.Scalar_out", "core")
    result = plan(SAMPLE, state)
    assert [(c.operator, c.kind) for c in result.conflicts] == [
        ("rminus.Scalar_out", "autogen-tags")]
    assert result.new_text == SAMPLE


def test_an_operator_already_deleted_is_in_sync():
    state = current()
    state["gone"] = Desired("gone", "gone(Tensor x) -> Tensor", delete=True)
    result = plan(SAMPLE, state)
    assert result.new_text is SAMPLE and not result.changes and not result.conflicts


def test_desired_state_accepts_only_governed_tags():
    with pytest.raises(BadInput, match="not governed"):
        Desired("absval", None, frozenset({"pointwise"}))


def test_planning_twice_changes_nothing_the_second_time():
    state = current()
    want(state, "absval")
    want(state, "mpower", "core", "deprecating")
    want(state, "absval_", "deprecated")
    want(state, "rect", delete=True)
    want(state, "rminus.Scalar_out", delete=True)
    first = plan(SAMPLE, state)
    second = plan(first.new_text, state)
    assert second.new_text == first.new_text and not second.changes and not second.conflicts


# ------------------------------------------------------------------------------- diff, tags.yaml


def test_unified_diff_shows_only_the_changed_lines():
    state = current()
    want(state, "rect")
    diff = unified_diff(SAMPLE, plan(SAMPLE, state).new_text, "aten/native_functions.yaml")
    assert diff.startswith("--- a/aten/native_functions.yaml\n+++ b/aten/native_functions.yaml\n")
    assert [l for l in diff.splitlines() if l[:1] in "+-" and l[:3] not in ("---", "+++")] == [
        "-  tags: core"]
    assert unified_diff(SAMPLE, SAMPLE, "x") == ""
    assert "\\ No newline at end of file" in unified_diff("a\n", "a\nb", "x")


TAGS_SAMPLE = """\
# Tags a registry entry may carry.

- tag: pointwise
  desc: |
          Elementwise operators.
- tag: core
  desc: |
          Core operators.
"""


def test_ensure_tags_declared_appends_missing_tags_in_the_file_style():
    new, added = ensure_tags_declared(TAGS_SAMPLE, ["core", "deprecating", "deprecated", "core"],
                                      {"deprecated": "Removed soon.\nDo not use."})
    assert added == ["deprecating", "deprecated"]
    assert new.startswith(TAGS_SAMPLE)
    tail = new[len(TAGS_SAMPLE):].splitlines()
    assert tail[:2] == ["- tag: deprecating", "  desc: |"]
    assert all(l.startswith(" " * 10) for l in tail[2:tail.index("- tag: deprecated")])
    assert tail[-4:] == ["- tag: deprecated", "  desc: |", "          Removed soon.",
                         "          Do not use."]
    assert declared_tags(new) == {"pointwise", "core", "deprecating", "deprecated"}
    assert ensure_tags_declared(new, ["deprecating"]) == (new, [])


def test_ensure_tags_declared_refuses_what_it_cannot_describe():
    with pytest.raises(BadInput, match="no description .* shiny"):
        ensure_tags_declared(TAGS_SAMPLE, ["shiny"])
    with pytest.raises(BadInput, match="declared without a description"):
        ensure_tags_declared("- tag: core\n  desc: ''\n", ["core"])
    with pytest.raises(BadInput) as err:
        declared_tags("- tag: core\n  desc: [\n", path="t.yaml")
    assert str(err.value).startswith("t.yaml:")


# ------------------------------------------------------------------------------- real registries


@functools.cache
def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


@functools.cache
def load(path: Path) -> list[dict]:
    return yaml.load(read(path), Loader=LOADER)


def test_scan_agrees_with_a_yaml_load_for_every_release(pytorch_versions, pytorch_release):
    for version in pytorch_versions:
        path = pytorch_release(version) / "native_functions.yaml"
        text = read(path)
        entries = scan(text, path=str(path))
        assert len(entries) == sum(1 for l in text.splitlines() if l.startswith("- func:"))
        loaded = load(path)
        assert [e.func for e in entries] == [d["func"] for d in loaded]
        assert [list(e.tags) for e in entries] == [tags_of(d) for d in loaded]
        assert [list(e.autogen) for e in entries] == [
            [a.strip() for a in d["autogen"].split(",")] if "autogen" in d else [] for d in loaded]


def test_syncing_the_current_state_changes_no_byte_for_every_release(pytorch_versions,
                                                                     pytorch_release):
    for version in pytorch_versions:
        folder = pytorch_release(version)
        text = read(folder / "native_functions.yaml")
        result = plan(text, desired_from_file(text))
        assert result.new_text == text
        assert not result.changes and not result.conflicts
        tags_text = read(folder / "tags.yaml")
        assert GOVERNED & declared_tags(tags_text) == {"core"}
        new_tags, added = ensure_tags_declared(tags_text, declared_tags(tags_text))
        assert (new_tags, added) == (tags_text, [])


def _pick_realistic_edits(text: str) -> tuple[dict[str, Desired], dict[str, list[str]], set[str]]:
    """A governance round on a real file, chosen by the shapes the brief names.

    Returns the desired state, the expected tags of each edited operator, and the deleted ones.
    """
    entries = scan(text)
    lines = text.splitlines()
    state = desired_from_file(text)
    expect: dict[str, list[str]] = {}
    used: set[str] = set()
    autogen_names = {a for e in entries for a in e.autogen}

    def first(pred):
        e = next(e for e in entries if e.name not in used and pred(e))
        used.add(e.name)
        return e

    def set_tags(e, *tags, result):
        state[e.name] = Desired(e.name, e.func, frozenset(tags))
        expect[e.name] = result

    untagged = first(lambda e: not e.tags)
    set_tags(untagged, "core", result=["core"])
    scalar = first(lambda e: len(e.tags) == 1 and not GOVERNED & set(e.tags)
                   and "[" not in lines[e.tags_line - 1])
    set_tags(scalar, "core", result=[*scalar.tags, "core"])
    flow = first(lambda e: len(e.tags) >= 2 and not GOVERNED & set(e.tags))
    set_tags(flow, "core", result=[*flow.tags, "core"])
    commented = first(lambda e: e.tags_line is not None and "#" in lines[e.tags_line - 1])
    set_tags(commented, "core", result=[*commented.tags, "core"])
    only_core = first(lambda e: e.tags == ("core",))
    set_tags(only_core, result=[])
    core_pointwise = first(lambda e: e.tags == ("core", "pointwise"))
    set_tags(core_pointwise, result=["pointwise"])
    deprecating = first(lambda e: e.tags == ("core",))
    set_tags(deprecating, "core", "deprecating", result=["core", "deprecating"])
    deprecated = first(lambda e: not e.tags)
    set_tags(deprecated, "deprecated", result=["deprecated"])
    doomed = first(lambda e: lines[e.line - 2].startswith("#") and not e.autogen
                   and e.name not in autogen_names)
    state[doomed.name] = Desired(doomed.name, doomed.func, delete=True)
    return state, expect, {doomed.name}


def test_a_realistic_governance_round_changes_only_the_intended_lines(pytorch_release):
    path = pytorch_release("2.13.0") / "native_functions.yaml"
    text = read(path)
    state, expect, deleted = _pick_realistic_edits(text)
    result = plan(text, state)
    assert not result.conflicts

    before, after = load_by_func(text), load_by_func(result.new_text)
    assert set(before) - set(after) == deleted and set(after) <= set(before)
    for name, entry in after.items():
        if name in expect:
            assert tags_of(entry) == expect[name], name
            assert {k: v for k, v in entry.items() if k != "tags"} == {
                k: v for k, v in before[name].items() if k != "tags"}
        else:
            assert entry == before[name], name

    # the line diff holds only tags lines of edited operators and the deleted entry's lines
    old_entries = {e.name: e for e in scan(text)}
    old_lines = text.splitlines()
    removed, added = diff_lines(text, result.new_text)
    expected_removed: Counter = Counter()
    for name in expect:
        e = old_entries[name]
        if e.tags_line is not None:
            expected_removed[old_lines[e.tags_line - 1]] += 1
    for name in deleted:
        e = old_entries[name]
        start = e.line - 1
        while old_lines[start - 1].startswith("#"):
            start -= 1
        expected_removed.update(old_lines[start:e.end_line])
    blank_removed = removed.pop("", 0)
    assert blank_removed <= 1  # at most the blank line the deletion would have doubled
    expected_removed.pop("", None)
    assert removed == expected_removed
    assert sum(added.values()) == sum(1 for n in expect if expect[n])
    assert all(line.startswith("  tags: ") for line in added)
    assert "\n\n\n" not in result.new_text or "\n\n\n" in text

    again = plan(result.new_text, state)
    assert again.new_text == result.new_text and not again.changes and not again.conflicts


def test_conflicts_on_a_real_registry_leave_those_operators_untouched(pytorch_release):
    text = read(pytorch_release("2.13.0") / "native_functions.yaml")
    entries = scan(text)
    state = desired_from_file(text)
    core_ops = [e for e in entries if "core" in e.tags]
    changed_schema, dropped = core_ops[0], core_ops[1]
    state[changed_schema.name] = Desired(changed_schema.name, changed_schema.func + " ",
                                         frozenset())
    del state[dropped.name]
    state["not_an_op.Tensor"] = Desired("not_an_op.Tensor", "not_an_op.Tensor(Tensor x) -> Tensor",
                                        frozenset({"core"}))
    result = plan(text, state)
    assert {(c.operator, c.kind) for c in result.conflicts} == {
        (changed_schema.name, "schema-differs"), (dropped.name, "missing-in-database"),
        ("not_an_op.Tensor", "missing-in-file")}
    assert result.new_text == text and not result.changes


# ------------------------------------------------------------------------------- torchgen


def _governance_round(text: str) -> dict[str, Desired]:
    """Into and out of core, deprecating, deprecated, and whole families deleted (as PyTorch
    retired cholesky with cholesky.out and qr with qr.Q)."""
    state, _, _ = _pick_realistic_edits(text)
    for name in ("cholesky", "cholesky.out", "qr", "qr.Q"):
        old = state[name]
        state[name] = Desired(name, old.schema, delete=True)
    return state


def test_torchgen_accepts_the_synced_registry(torch_mod, pytorch_release, tmp_path):
    from torchgen.gen import parse_native_yaml  # noqa: PLC0415

    folder = pytorch_release("2.13.0")
    text = read(folder / "native_functions.yaml")
    state = _governance_round(text)
    result = plan(text, state)
    assert not result.conflicts
    tags_text, added = ensure_tags_declared(
        read(folder / "tags.yaml"),
        sorted({t for d in state.values() if not d.delete for t in d.managed_tags}))
    assert sorted(added) == ["deprecated", "deprecating"]

    good = tmp_path / "good"
    good.mkdir()
    (good / "native_functions.yaml").write_bytes(result.new_text.encode())
    (good / "tags.yaml").write_bytes(tags_text.encode())
    parsed = parse_native_yaml(str(good / "native_functions.yaml"), str(good / "tags.yaml"))
    by_name = {str(f.func.name): f for f in parsed.native_functions}
    deleted = {name for name, d in state.items() if d.delete}
    assert {"cholesky", "cholesky.out", "qr", "qr.Q"} < deleted
    assert not deleted & set(by_name)
    for name, d in state.items():
        if name in by_name and not d.delete:
            assert GOVERNED & by_name[name].tags == d.managed_tags, name

    # the same registry against the release's own tags.yaml: torchgen rejects the new tags
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(good / "native_functions.yaml", bad / "native_functions.yaml")
    shutil.copy(folder / "tags.yaml", bad / "tags.yaml")
    with pytest.raises(Exception, match="illegal tag deprecat"):
        parse_native_yaml(str(bad / "native_functions.yaml"), str(bad / "tags.yaml"))
