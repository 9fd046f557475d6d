"""sync-yaml and tags.yaml (issue 10): without --tags-yaml the tags.yaml beside
native_functions.yaml is used (torchgen reads that one); a write that could leave a tag undeclared
is refused; --check never says "in sync" about a file torchgen would reject. On 2.13.0."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone

import pytest

from conftest import bad

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


@pytest.fixture
def deprecating(make_cli, tmp_path, pytorch_release):
    """2.13.0 imported, aten::_cast_Byte deprecating; a copy of both files in tmp_path/with."""
    release = pytorch_release("2.13.0")
    cli = make_cli(f"sqlite:///{tmp_path / 'opgov.db'}", simulation=True)
    cli.ok("import", release / "native_functions.yaml", "--tags-yaml", release / "tags.yaml", "--label", "2.13.0",
           now=at(0))
    cli.ok("deprecate", "aten::_cast_Byte", "--reason", "retired", now=at(1))
    folder = tmp_path / "with"
    folder.mkdir()
    for name in ("native_functions.yaml", "tags.yaml"):
        shutil.copyfile(release / name, folder / name)
    return cli, folder


def test_the_tags_yaml_beside_is_used(deprecating, torch_mod):
    cli, folder = deprecating
    nf, tags = folder / "native_functions.yaml", folder / "tags.yaml"
    assert "deprecating" not in tags.read_text()
    written = cli.ok("sync-yaml", nf, "--write", "--json", now=at(1)).json()
    assert written["tags_file"] == str(tags) and written["tags_declared"] == ["deprecating"]
    assert "- tag: deprecating" in tags.read_text()
    from torchgen.gen import parse_native_yaml  # noqa: PLC0415

    parsed = parse_native_yaml(str(nf), str(tags))
    assert "deprecating" in {str(f.func.name): f.tags for f in parsed.native_functions}["_cast_Byte"]
    assert "is in sync" in cli.ok("sync-yaml", nf, "--check", now=at(1)).out


def test_a_write_without_any_tags_yaml_is_refused(deprecating, tmp_path):
    cli, folder = deprecating
    alone = tmp_path / "alone"
    alone.mkdir()
    nf = alone / "native_functions.yaml"
    shutil.copyfile(folder / "native_functions.yaml", nf)
    before = nf.read_bytes()
    result = bad(cli, "sync-yaml", nf, "--write", now=at(1),
                 words=["no tags.yaml beside", "deprecating", "--tags-yaml"])
    assert result.err.count("\n") == 1 and nf.read_bytes() == before
    # --check says what it could not check
    checked = cli("sync-yaml", nf, "--check", now=at(1))
    assert checked.code == 1 and "_cast_Byte" in checked.out


def test_check_is_not_in_sync_when_torchgen_would_reject_the_file(deprecating):
    cli, folder = deprecating
    nf, tags = folder / "native_functions.yaml", folder / "tags.yaml"
    # the file as a write without tags.yaml left it: `deprecating` used, not declared
    text = nf.read_text()
    entry = "- func: _cast_Byte(Tensor self, bool non_blocking=False) -> Tensor\n"
    assert entry in text
    nf.write_text(text.replace(entry, entry + "  tags: deprecating\n", 1))
    result = cli("sync-yaml", nf, "--check", "--json", now=at(1))
    assert result.code == 1
    report = result.json()
    assert report["in_sync"] is False and report["tags_declared"] == ["deprecating"]
    assert report["changes"] == []  # the entry itself is right; the declaration is missing
    assert "is in sync" not in report["summary"]
    # a tag opgov does not govern, undeclared: bad input naming the entry
    nf.write_text(text.replace(entry, entry + "  tags: fast\n", 1))
    line = text[:text.index(entry)].count("\n") + 1
    bad(cli, "sync-yaml", nf, "--check", now=at(1), words=[f"{nf}:{line}:", "tag 'fast'", "not declared"])
