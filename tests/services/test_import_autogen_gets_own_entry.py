"""An operator another entry's `autogen:` declared, that later gets its own entry, is one story:
the import summary, the stored finding and check-bc all say it now has its own entry (it is not
new, and its schema did not change)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Result, by_key, check_json, registry

WORDS = "Now has its own entry (was autogen of aten::foo); not a new operator."


def _sides(tmp_path):
    old = tmp_path / "old.yaml"
    old.write_text("- func: foo(Tensor self) -> Tensor\n  autogen: foo.out\n", encoding="utf-8")
    new = registry(tmp_path / "new.yaml", "foo(Tensor self) -> Tensor",
                   "foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")
    return old, new


def test_import_and_findings_tell_one_story(cli, tmp_path):
    old, new = _sides(tmp_path)
    cli.ok("import", old, "--label", "one")
    imported = cli.ok("import", new, "--label", "two", "--json").json()
    assert imported["own_entry"] == {"aten::foo.out": "aten::foo"}
    assert imported["changed"] == [] and imported["added"] == []
    text = cli.ok("ops", "show", "aten::foo.out", "--json").json()
    assert [(f["kind"], f["rule"], f["message"]) for f in text["findings"]] == [("new", "operator-own-entry", WORDS)]
    # the text summary of a further import says the same
    cli.ok("import", old, "--label", "three")
    summary = cli.ok("import", new, "--label", "four").out
    assert "1 now with their own entry" in summary
    assert "now has its own entry: aten::foo.out (was autogen of aten::foo)" in summary
    assert "changed: aten::foo.out" not in summary
    assert by_key(check_json(cli, "one", "two", code=0))[("aten::foo.out", "new")]["message"] == WORDS


def test_check_bc_of_two_files_says_the_same(nodb, tmp_path):
    old, new = _sides(tmp_path)
    finding = by_key(check_json(nodb, old, new, code=0))[("aten::foo.out", "new")]
    assert (finding["rule"], finding["severity"], finding["message"]) == ("operator-own-entry", "info", WORDS)


def test_real_releases(cli, pytorch_release):
    first, second = pytorch_release("2.0.0"), pytorch_release("2.6.0")
    cli.ok("import", first / "native_functions.yaml", "--label", "2.0.0")
    imported = cli.ok("import", second / "native_functions.yaml", "--label", "2.6.0", "--json").json()
    assert imported["own_entry"]["aten::searchsorted.Scalar_out"] == "aten::searchsorted.Scalar"
    assert "aten::searchsorted.Scalar_out" not in imported["changed"]
    report = check_json(cli, "2.0.0", "2.6.0", code=1)
    for name, declared_by in imported["own_entry"].items():
        finding = by_key(report)[(name, "new")]
        assert finding["rule"] == "operator-own-entry"
        assert finding["message"] == f"Now has its own entry (was autogen of {declared_by}); not a new operator."
    stored = cli.ok("ops", "show", "aten::searchsorted.Scalar_out", "--json").json()["findings"]
    assert [f["rule"] for f in stored] == ["operator-own-entry"]
