"""`opgov sync-yaml` end to end: a database, the real registries, the CLI (and torchgen).

The governance round runs on PyTorch 2.13.0 through the CLI on a simulation database: operators
moved into core (an entry without tags, a scalar tag, a flow list, the tags line with a trailing
comment), out of core (decomposed, custom), deprecating, deprecated, and whole families deleted
the way PyTorch retires them. The operator names are from the release; the test first checks
that each still has the shape it was picked for.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from conftest import REPO, db_fingerprint
from opgov.core import yamlsync
from opgov.formats.atomic import lock_path

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
NF, TAGS = "native_functions.yaml", "tags.yaml"

INTO_CORE = ("cosine_similarity", "angle", "conj_physical", "_ctc_loss")  # no tags, scalar, flow, comment
DECOMPOSED = ("avg_pool1d", "avg_pool2d")  # `tags: core` → no tags line
CUSTOM = "acos"  # `tags: [core, pointwise]` → `tags: [pointwise]`
DEPRECATING = "_cast_Byte"
DEPRECATED = "_cast_Char"
DELETED = ("_cast_Double", "cholesky", "cholesky.out", "qr", "qr.Q")  # a lone op and two families
DELETED_HEADS = ("_cast_Double", "cholesky", "qr")  # the lifecycle moves each family with its head


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def read(path: Path) -> str:
    return path.read_bytes().decode()


# --- running the CLI ------------------------------------------------------------------------


def invoke(url: str, *args, actor: str = "alice", now: str | None = None) -> tuple[int, str, str]:
    """``opgov`` in-process (module fixtures cannot use capsys): exit code, stdout, stderr."""
    from opgov.cli.main import run

    argv = ["--db", url, "--actor", actor] + (["--now", now] if now else []) + [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            run(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return code, out.getvalue(), err.getvalue()


def ok(url: str, *args, **kw) -> str:
    code, out, err = invoke(url, *args, **kw)
    assert code == 0, f"opgov {' '.join(map(str, args))} exited {code}: {err}{out}"
    return out


class Workspace:
    """A copy of the governed database and of the 2.13.0 files, for one test."""

    def __init__(self, db: Path, release: Path, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(db, folder / "opgov.db")
        self.url = f"sqlite:///{folder / 'opgov.db'}"
        self.dir = folder
        self.nf, self.tags = folder / NF, folder / TAGS
        shutil.copyfile(release / NF, self.nf)
        shutil.copyfile(release / TAGS, self.tags)

    def sync(self, *args, actor: str = "syncbot", tags: bool = True) -> tuple[int, str, str]:
        extra = ["--tags-yaml", self.tags] if tags else []
        return invoke(self.url, "sync-yaml", self.nf, *extra, *args, actor=actor)

    def snapshot(self) -> tuple[bytes | None, bytes | None]:
        return tuple(p.read_bytes() if p.exists() else None for p in (self.nf, self.tags))

    def leftovers(self) -> list[str]:
        return sorted(p.name for p in self.dir.iterdir() if p.name.endswith(".lock"))


# --- the governed database --------------------------------------------------------------------


def _check_shapes(text: str) -> None:
    """The operators were picked for these shapes in 2.13.0; say so if the data changes."""
    entries = {e.name: e for e in yamlsync.scan(text)}
    lines = text.splitlines()
    tags_line = {n: lines[e.tags_line - 1] if e.tags_line else None for n, e in entries.items()}
    cos, angle, conj, ctc = (entries[n] for n in INTO_CORE)
    assert cos.tags == () and not cos.autogen
    assert len(angle.tags) == 1 and "[" not in tags_line["angle"] and "core" not in angle.tags
    assert len(conj.tags) >= 2 and "[" in tags_line["conj_physical"] and "core" not in conj.tags
    assert "#" in tags_line["_ctc_loss"] and "core" not in ctc.tags
    assert tags_line["avg_pool1d"] == "  tags: core" and "core" in entries["avg_pool2d"].tags
    assert entries[CUSTOM].tags[0] == "core" and len(entries[CUSTOM].tags) >= 2
    assert "core" not in entries[DEPRECATING].tags + entries[DEPRECATED].tags
    assert lines[entries["_cast_Double"].line - 2].startswith("#")  # a comment right above it


@pytest.fixture(scope="module")
def governed(tmp_path_factory, pytorch_release):
    """A simulation database with 2.13.0 imported and one governance round applied, through the
    CLI; returns (database file, release folder)."""
    release = pytorch_release("2.13.0")
    _check_shapes(read(release / NF))
    folder = tmp_path_factory.mktemp("governed")
    db = folder / "opgov.db"
    url = f"sqlite:///{db}"
    ok(url, "db", "upgrade", "--simulation")
    ok(url, "import", release / NF, "--tags-yaml", release / TAGS, "--label", "2.13.0", now=at(0))
    ok(url, "members", "add", "alice", "--role", "maintainer", now=at(0))
    for name, role in (("bob", "maintainer"), ("carol", "maintainer"), ("dave", "developer"),
                       ("syncbot", "bot")):
        ok(url, "members", "add", name, "--role", role, now=at(0))

    def proposed(kind: str, op: str, *extra: str) -> int:
        return json.loads(ok(url, f"propose-{kind}", f"aten::{op}", *extra, "--rationale", "governance round",
                             "--json", actor="dave", now=at(1)))["id"]

    # every proposal on day 1, every vote on day 2 (a simulation's clock never goes back)
    proposals = [proposed("core", op) for op in INTO_CORE]
    proposals += [proposed("decompose", DECOMPOSED[0], "--into", f"aten::{DECOMPOSED[1]}"),
                  proposed("custom", CUSTOM)]
    for proposal in proposals:
        for voter in ("bob", "carol"):
            ok(url, "review", proposal, "--approve", "--comment", "agreed", actor=voter, now=at(2))
        assert json.loads(ok(url, "proposals", "show", proposal, "--json"))["status"] == "approved"
    for op in (DEPRECATING, DEPRECATED, *DELETED_HEADS):
        ok(url, "deprecate", f"aten::{op}", "--reason", "retired", now=at(3))
    for op in (DEPRECATED, *DELETED_HEADS):
        ok(url, "mark-deprecated", f"aten::{op}", now=at(20))
    for op in DELETED_HEADS:
        ok(url, "delete", f"aten::{op}", now=at(210))
    for op in DELETED:  # cholesky.out and qr.Q went with their families
        assert json.loads(ok(url, "ops", "show", f"aten::{op}", "--json"))["lifecycle"] == "deleted", op
    return db, release


@pytest.fixture
def ws(governed, tmp_path) -> Workspace:
    db, release = governed
    return Workspace(db, release, tmp_path / "ws")


def expected_changes() -> set[tuple[str, str, str | None]]:
    changes = {(f"aten::{op}", "add-tag", "core") for op in INTO_CORE}
    changes |= {(f"aten::{DECOMPOSED[0]}", "remove-tag", "core"), (f"aten::{CUSTOM}", "remove-tag", "core"),
                (f"aten::{DEPRECATING}", "add-tag", "deprecating"), (f"aten::{DEPRECATED}", "add-tag", "deprecated")}
    return changes | {(f"aten::{op}", "delete-entry", None) for op in DELETED}


def expected_tags(old: yamlsync.Entry, name: str) -> tuple[str, ...]:
    """The tags an edited entry ends with: its own, minus what left, plus what came (at the end)."""
    removed = {"core"} if name in (DECOMPOSED[0], CUSTOM) else set()
    added = ("core",) if name in INTO_CORE else ("deprecating",) if name == DEPRECATING else (
        ("deprecated",) if name == DEPRECATED else ())
    return tuple(t for t in old.tags if t not in removed) + added


def by_func(text: str) -> dict[str, dict]:
    return {e["func"].split("(", 1)[0]: e for e in yaml.load(text, Loader=LOADER)}


def diff_lines(diff: str) -> tuple[Counter, Counter]:
    removed, added = Counter(), Counter()
    for line in diff.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("-"):
            removed[line[1:]] += 1
        elif line.startswith("+"):
            added[line[1:]] += 1
    return removed, added


# --- every release: importing and syncing changes no byte ------------------------------------


def test_every_release_imported_and_synced_stays_byte_identical(make_cli, tmp_path, pytorch_versions,
                                                                pytorch_release):
    for version in pytorch_versions:
        release, work = pytorch_release(version), tmp_path / version
        work.mkdir()
        nf, tags = work / NF, work / TAGS
        shutil.copyfile(release / NF, nf)
        shutil.copyfile(release / TAGS, tags)
        cli = make_cli(f"sqlite:///{tmp_path / (version + '.db')}")
        cli.ok("import", nf, "--tags-yaml", tags, "--label", version)
        check = cli("sync-yaml", nf, "--tags-yaml", tags, "--check")
        assert check.code == 0 and "in sync" in check.out, (version, check)
        assert cli.ok("sync-yaml", nf, "--tags-yaml", tags, "--diff").out == ""
        written = cli.ok("sync-yaml", nf, "--tags-yaml", tags, "--write", "--json").json()
        assert written["changes"] == [] and written["conflicts"] == [] and written["written"] is False
        assert nf.read_bytes() == (release / NF).read_bytes(), version
        assert tags.read_bytes() == (release / TAGS).read_bytes(), version
        assert sorted(os.listdir(work)) == [NF, TAGS]


# --- the governance round ---------------------------------------------------------------------


def test_governance_round_check_diff_write_and_idempotence(ws, governed, tmp_path):
    old_nf, old_tags = ws.snapshot()
    old_text = old_nf.decode()
    old_entries = {e.name: e for e in yamlsync.scan(old_text)}
    old_lines = old_text.splitlines()

    # --check: exit 1 and the list, as text and as JSON; nothing written
    code, out, err = ws.sync("--check", actor="dave")
    assert code == 1 and err == ""
    assert "out of sync" in out
    for op, _, _ in expected_changes():
        assert f"`{op}`" in out, op
    code, out, _ = ws.sync("--check", "--json")
    report = json.loads(out)
    assert code == 1 and report["in_sync"] is False and report["conflicts"] == []
    assert {(c["operator"], c["action"], c["tag"]) for c in report["changes"]} == expected_changes()
    assert sorted(report["tags_declared"]) == ["deprecated", "deprecating"]
    assert ws.snapshot() == (old_nf, old_tags)

    # --diff: only the governed lines, and exactly what --write will write
    code, diff, err = ws.sync("--diff", actor="dave")
    assert code == 0 and err == ""
    assert ws.snapshot() == (old_nf, old_tags)
    removed, added = diff_lines(diff.split(f"--- a/{str(ws.tags).lstrip('/')}")[0])
    expect_removed: Counter = Counter()
    edited = [*INTO_CORE, DECOMPOSED[0], CUSTOM, DEPRECATING, DEPRECATED]
    for name in edited:
        if old_entries[name].tags_line:
            expect_removed[old_lines[old_entries[name].tags_line - 1]] += 1
    for name in DELETED:
        e = old_entries[name]
        start = e.line - 1
        while old_lines[start - 1].startswith("#"):  # the comment block right above goes too
            start -= 1
        expect_removed.update(old_lines[start:e.end_line])
    blank = removed.pop("", 0)
    assert blank <= len(DELETED)  # the blank line after each deleted entry, at most
    expect_removed.pop("", None)
    assert removed == expect_removed
    assert all(line.startswith("  tags: ") for line in added)
    assert sum(added.values()) == sum(1 for name in edited if expected_tags(old_entries[name], name))

    # --write by the bot: atomically, with a summary for the pull request
    code, summary, err = ws.sync("--write")
    assert code == 0 and err == "", err
    assert ws.leftovers() == []
    new_text, new_tags_text = read(ws.nf), read(ws.tags)
    assert diff == (yamlsync.unified_diff(old_text, new_text, str(ws.nf))
                    + yamlsync.unified_diff(old_tags.decode(), new_tags_text, str(ws.tags)))
    assert summary.startswith(f"opgov sync: wrote {len(expected_changes())} changes to `{ws.nf}`")
    for heading in ("Moved into core", "Moved out of core", "Deprecating", "Deprecated", "Deleted",
                    "Tags declared"):
        assert f"**{heading}" in summary, heading
    mentioned = {word.strip("`") for word in summary.split() if word.startswith("`aten::")}
    assert mentioned == {op for op, _, _ in expected_changes()}

    # the new file: the edited entries differ only in tags, deleted ones are gone, the rest is equal
    before, after = by_func(old_text), by_func(new_text)
    assert set(before) - set(after) == set(DELETED) and set(after) <= set(before)
    for name, entry in after.items():
        if name in edited:
            tags = entry.get("tags", [])
            assert tuple([tags] if isinstance(tags, str) else tags) == expected_tags(old_entries[name], name)
            assert {k: v for k, v in entry.items() if k != "tags"} == {
                k: v for k, v in before[name].items() if k != "tags"}, name
        else:
            assert entry == before[name], name
    new_entries = {e.name: e for e in yamlsync.scan(new_text)}
    new_lines = new_text.splitlines()
    # the spelling of each tags line is kept; a new tags line follows the file's style
    ctc_old = old_lines[old_entries["_ctc_loss"].tags_line - 1]
    tag = old_entries["_ctc_loss"].tags[0]
    assert new_lines[new_entries["_ctc_loss"].tags_line - 1] == ctc_old.replace(f"tags: {tag}", f"tags: [{tag}, core]")
    assert new_lines[new_entries["cosine_similarity"].tags_line - 1] == "  tags: core"
    assert new_entries["avg_pool1d"].tags_line is None
    assert new_lines[new_entries[DEPRECATED].tags_line - 1] == "  tags: deprecated"
    # deleting an entry takes the comment block directly above it, and no other
    assert new_text.count("# DEPRECATED. DO NOT USE") == old_text.count("# DEPRECATED. DO NOT USE") - 1
    assert "\n\n\n" not in new_text or "\n\n\n" in old_text

    # tags.yaml: the two lifecycle tags declared with a description, appended in the file's style
    assert new_tags_text.startswith(old_tags.decode())
    declared = {item["tag"]: item["desc"] for item in yaml.load(new_tags_text, Loader=LOADER)}
    assert {"deprecating", "deprecated"} <= set(declared)
    assert all(declared[t].strip() for t in ("deprecating", "deprecated", "core"))
    added_block = new_tags_text[len(old_tags):]
    assert "- tag: deprecating\n  desc: |\n" in added_block

    # the log says who synced what
    events = [e for e in json.loads(ok(ws.url, "log", "--json", "--limit", "0")) if e["action"] == "yaml.sync"]
    assert [(e["actor"], e["after"]["changes"]) for e in events] == [("syncbot", len(expected_changes()))]

    # a second --write changes nothing; --check now passes
    code, again, _ = ws.sync("--write")
    assert code == 0 and "already in sync" in again
    assert (read(ws.nf), read(ws.tags)) == (new_text, new_tags_text)
    code, out, _ = ws.sync("--check", actor="dave")
    assert code == 0 and "is in sync" in out

    # --write --json on another copy: the same edit, machine-readable
    other = Workspace(governed[0], governed[1], tmp_path / "other")
    code, out, _ = other.sync("--write", "--json")
    written = json.loads(out)
    assert code == 0 and written["written"] is True and written["in_sync"] is False
    assert {(c["operator"], c["action"], c["tag"]) for c in written["changes"]} == expected_changes()
    assert written["summary"].replace(str(other.nf), str(ws.nf)).replace(str(other.tags), str(ws.tags)) \
        == summary.rstrip("\n")
    assert (read(other.nf), read(other.tags)) == (new_text, new_tags_text)


def test_writing_is_for_bots_and_maintainers_reading_is_for_anyone(ws):
    before_files, before_db = ws.snapshot(), db_fingerprint(ws.url)
    for who in ("dave", "mallory"):  # a developer, and someone who is not a member
        code, out, err = ws.sync("--write", actor=who)
        assert code == 1 and out == ""
        assert err.startswith("opgov: refused: ") and "may not write native_functions.yaml" in err
        assert ws.snapshot() == before_files and ws.leftovers() == []
        assert db_fingerprint(ws.url) == before_db
        assert ws.sync("--check", actor=who)[0] == 1  # out of sync, not refused
        code, diff, err = ws.sync("--diff", actor=who)
        assert code == 0 and diff.startswith("--- a/") and err == ""
    assert ws.snapshot() == before_files
    code, _, err = ws.sync("--write", actor="alice")  # a maintainer
    assert code == 0 and err == "" and ws.snapshot() != before_files


# --- families: never write a file torchgen rejects -----------------------------------------------

SPLITS = ("logit", "acos.out", "sinc")  # the functional alone; the out= a functional delegates to


def _split_families(ws: Workspace) -> None:
    """Delete, besides the round, single members of three families whose other members stay, as
    an older opgov could (today the lifecycle moves a family together, so the database is edited
    directly): the sync bot's check is the safety net for such databases."""
    from sqlalchemy import create_engine, update

    from opgov.db.tables import operators

    engine = create_engine(ws.url)
    with engine.begin() as conn:
        conn.execute(update(operators).where(operators.c.qualname.in_([f"aten::{op}" for op in SPLITS]))
                     .values(lifecycle="deleted", lifecycle_since=T0 + timedelta(days=510)))
    engine.dispose()


def test_deleting_part_of_a_family_is_reported_not_written(ws):
    old_text = read(ws.nf)
    entries = {e.name: e for e in yamlsync.scan(old_text)}
    assert {"logit_", "logit.out", "acos_", "acos", "sinc.out"} <= set(entries)
    _split_families(ws)
    code, out, _ = ws.sync("--check", "--json")
    report = json.loads(out)
    assert code == 1
    assert {(c["operator"], c["kind"]) for c in report["conflicts"]} == {(f"aten::{op}", "family-split")
                                                                          for op in SPLITS}
    reasons = {c["operator"]: c["reason"] for c in report["conflicts"]}
    assert "logit.out" in reasons["aten::logit"] and "structured_delegate" in reasons["aten::acos.out"]
    assert {(c["operator"], c["action"], c["tag"]) for c in report["changes"]} == expected_changes()

    code, diff, err = ws.sync("--diff")
    assert code == 1 and "family-split" in err and "aten::logit" in err
    assert "logit" not in diff and "sinc" not in diff

    code, summary, _ = ws.sync("--write")
    assert code == 1  # the rest is written; the split families are left for a decision
    assert "Not settled" in summary and all(f"`aten::{op}` (family-split)" in summary for op in SPLITS)
    new_text = read(ws.nf)
    lines_old, lines_new = old_text.splitlines(), new_text.splitlines()
    new_entries = {e.name: e for e in yamlsync.scan(new_text)}
    for op in SPLITS:  # the entries stay, byte for byte
        old, new = entries[op], new_entries[op]
        assert lines_old[old.line - 1:old.span_end] == lines_new[new.line - 1:new.span_end]
    assert not set(DELETED) & set(new_entries)


def test_torchgen_accepts_the_written_files(torch_mod, ws):
    from torchgen.gen import parse_native_yaml  # noqa: PLC0415

    _split_families(ws)
    assert ws.sync("--write")[0] == 1  # the split families are reported
    parsed = parse_native_yaml(str(ws.nf), str(ws.tags))
    tags = {str(f.func.name): f.tags for f in parsed.native_functions}
    assert not set(DELETED) & set(tags)
    assert set(SPLITS) <= set(tags)
    for op in INTO_CORE:
        assert "core" in tags[op], op
    assert "core" not in tags[DECOMPOSED[0]] and "core" not in tags[CUSTOM]
    assert "deprecating" in tags[DEPRECATING] and "deprecated" in tags[DEPRECATED]


# --- disagreements ------------------------------------------------------------------------------


def test_disagreements_are_reported_and_left_untouched(ws):
    text = read(ws.nf)
    entries = {e.name: e for e in yamlsync.scan(text)}
    lines = text.split("\n")
    gone, changed = entries["angle"], entries["conj_physical"]  # both are to become core
    changed_line = lines[changed.line - 1].replace(") -> Tensor", ", bool extra=False) -> Tensor")
    lines[changed.line - 1] = changed_line
    del lines[gone.line - 1:gone.span_end]
    lines[-1:-1] = ["", "- func: opgov_new_op(Tensor self) -> Tensor", "  variants: function"]
    ws.nf.write_text("\n".join(lines))
    edited = read(ws.nf)
    span = edited.split(changed_line)[1].split("\n- func:")[0]

    expect = {("aten::angle", "missing-in-file"), ("aten::conj_physical", "schema-differs"),
              ("aten::opgov_new_op", "missing-in-database")}
    code, out, _ = ws.sync("--check")
    assert code == 1 and "Not settled" in out
    for op, kind in expect:
        assert f"`{op}` ({kind})" in out
    code, out, _ = ws.sync("--write", "--json")
    report = json.loads(out)
    assert code == 1 and report["written"] is True
    assert {(c["operator"], c["kind"]) for c in report["conflicts"]} == expect
    assert {c["operator"] for c in report["changes"]} == {op for op, _, _ in expected_changes()} - {
        "aten::angle", "aten::conj_physical"}
    new_text = read(ws.nf)
    assert changed_line + span in new_text  # its schema and tags as they were
    assert "- func: opgov_new_op(Tensor self) -> Tensor\n  variants: function" in new_text
    assert "- func: angle(" not in new_text
    assert ws.sync("--write")[0] == 1  # still reported, nothing more to write
    assert read(ws.nf) == new_text


# --- bad input ------------------------------------------------------------------------------------


def _bad(ws: Workspace, *args, where: str, says: str, tags: bool = True) -> None:
    before_files, before_db = ws.snapshot(), db_fingerprint(ws.url)
    code, out, err = ws.sync(*args, tags=tags)
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and err.startswith(f"opgov: error: {where}") and says in err, err
    assert ws.snapshot() == before_files and ws.leftovers() == []
    assert db_fingerprint(ws.url) == before_db


@pytest.mark.parametrize("mode", ["--check", "--write"])
def test_bad_input_names_the_file_and_line_and_writes_nothing(ws, mode):
    text = read(ws.nf)
    ws.nf.unlink()
    _bad(ws, mode, where=f"{ws.nf}: ", says="no such file")
    ws.nf.write_text(text)
    ws.tags.rename(ws.dir / "elsewhere.yaml")
    _bad(ws, mode, where=f"{ws.tags}: ", says="no such file")
    (ws.dir / "elsewhere.yaml").rename(ws.tags)

    lines = text.split("\n")
    lines.insert(99, "oops: not an entry")
    ws.nf.write_text("\n".join(lines))
    _bad(ws, mode, where=f"{ws.nf}:100: ", says="expected '- func:'")
    entry = next(e for e in yamlsync.scan(text) if e.tags_line)
    lines = text.split("\n")
    lines[entry.tags_line - 1] = "  tags: {core: true}"
    ws.nf.write_text("\n".join(lines))
    _bad(ws, mode, where=f"{ws.nf}:{entry.tags_line}: ", says="tags value")
    ws.nf.write_text(text)

    tags_text = read(ws.tags)
    ws.tags.write_text(tags_text + "- tag: [unclosed\n")
    _bad(ws, mode, where=f"{ws.tags}:", says="malformed YAML")
    ws.tags.write_text(tags_text)


def test_exactly_one_mode_and_a_snapshot_are_needed(ws, cli, tmp_path):
    _bad(ws, where="", says="exactly one of --check, --diff or --write")
    _bad(ws, "--check", "--write", where="", says="exactly one of")
    nf = tmp_path / NF
    shutil.copyfile(ws.nf, nf)
    result = cli("sync-yaml", nf, "--check")
    assert result.code == 2 and "no snapshot" in result.err and result.err.count("\n") == 1


# --- processes: killed writers, and what --check loads ------------------------------------------

SLOW = """\
import os, sys, time

pause, target = sys.argv[1], sys.argv[2]   # where the writer stalls, and in which temporary file
real_open, real_write, real_replace = os.open, os.write, os.replace
stalling = set()

def open_(path, *args, **kw):
    fd = real_open(path, *args, **kw)
    if os.path.basename(path).startswith(target):
        stalling.add(fd)
    return fd

def write(fd, data):
    if pause == "write" and fd in stalling:
        real_write(fd, bytes(data[: len(data) // 2]))
        time.sleep(60)
    return real_write(fd, data)

def replace(src, dst):
    if pause == "rename" and os.path.basename(src).startswith(target):
        time.sleep(60)
    return real_replace(src, dst)

os.open, os.write, os.replace = open_, write, replace
from opgov.cli.main import run
run(sys.argv[3:])
"""


def _writer(ws: Workspace, *, pause: str | None = None, target: str = "") -> subprocess.Popen:
    argv = ["--db", ws.url, "--actor", "syncbot", "sync-yaml", str(ws.nf), "--tags-yaml", str(ws.tags), "--write"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("OPGOV_NOW", None)
    cmd = [sys.executable, "-m", "opgov", *argv] if pause is None else [sys.executable, "-c", SLOW, pause, target,
                                                                       *argv]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ws.dir)


def _wait_for_temp(ws: Workspace, proc: subprocess.Popen, prefix: str, *, partial: bool = False,
                   timeout: float = 30) -> bool:
    """Poll for a temporary file of ``prefix`` (with some but not all bytes when ``partial``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        for name in os.listdir(ws.dir):
            try:  # a lock the writer releases (and takes again) may be gone by the time it is looked at
                if name.startswith(prefix) and (not partial or os.path.getsize(ws.dir / name) > 0):
                    return True
            except FileNotFoundError:
                continue
    return False


def test_a_killed_writer_leaves_the_old_or_the_new_file(governed, tmp_path):
    db, release = governed
    ref = Workspace(db, release, tmp_path / "ref")
    old = ref.snapshot()
    start = time.monotonic()
    proc = _writer(ref)
    assert proc.wait(60) == 0, proc.stderr.read()
    took = time.monotonic() - start
    new = ref.snapshot()
    assert new[0] != old[0] and new[1] != old[1]

    def outcome(ws: Workspace) -> str:
        nf, tags = ws.snapshot()
        assert nf in (old[0], new[0]) and tags in (old[1], new[1])
        assert not (nf == new[0] and tags == old[1])  # tags are declared before they are used
        return {(True, True): "old", (False, False): "new", (True, False): "tags only"}[(nf == old[0], tags == old[1])]

    # killed at moments spread over a normal run, and as soon as a temporary file appears
    runs = [("delay", 0.5), ("delay", 1.2), ("temp", TAGS), ("temp", NF)]
    for i, (how, what) in enumerate(runs):
        ws = Workspace(db, release, tmp_path / f"kill{i}")
        proc = _writer(ws)
        if how == "delay":
            time.sleep(took * what)
        else:
            _wait_for_temp(ws, proc, lock_path(ws.dir / what).name)
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        outcome(ws)

    # stalled mid-write (half the bytes in the lock file) and just before the rename: both files
    # are prepared before either is replaced, so only a kill between the two renames leaves one new
    for i, (pause, what, expect) in enumerate((("write", TAGS, "old"), ("write", NF, "old"),
                                               ("rename", NF, "tags only"))):
        ws = Workspace(db, release, tmp_path / f"stall{i}")
        proc = _writer(ws, pause=pause, target=lock_path(ws.dir / what).name)
        assert _wait_for_temp(ws, proc, lock_path(ws.dir / what).name, partial=True), proc.stderr.read()
        if pause == "rename":
            time.sleep(0.3)  # let it write and fsync the whole temporary file
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)
        assert outcome(ws) == expect, (pause, what)
        assert ws.leftovers()  # a killed writer cannot clean up, but the targets are whole
    # the next run is refused while a lock remains (never removed silently) and changes nothing
    before = ws.snapshot()
    code, out, err = ws.sync("--write")
    assert code == 2 and "locked by" in err and ".lock" in err and len(err.strip().splitlines()) == 1, err
    assert ws.snapshot() == before and ws.leftovers()
    for name in ws.leftovers():  # a person who knows no writer runs removes the locks
        (ws.dir / name).unlink()
    code, _, err = ws.sync("--write")  # and the next run completes the job
    assert code == 0, err
    assert ws.snapshot() == new


def test_check_loads_neither_the_yaml_nor_rich_alembic_or_the_orm(ws, tmp_path):
    probe = tmp_path / "modules.json"
    script = (
        "import json, sys\n"
        "from opgov.cli.main import run\n"
        "try:\n    run(sys.argv[2:])\nexcept SystemExit as exc:\n    code = exc.code\n"
        "json.dump({'code': code, 'modules': sorted(sys.modules)}, open(sys.argv[1], 'w'))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", script, str(probe), "--db", ws.url, "sync-yaml", str(ws.nf), "--check"],
                   check=True, capture_output=True, env=env)
    seen = json.loads(probe.read_text())
    assert seen["code"] == 1  # out of sync: the whole comparison ran
    tops = {m.split(".")[0] for m in seen["modules"]}
    assert not {"yaml", "rich", "alembic", "torch"} & tops
    assert "sqlalchemy.orm" not in seen["modules"]


def test_a_synced_registry_imported_again_stays_in_sync_on_every_database(make_cli, any_db_url, tmp_path):
    """The bot's pull request merged, the next import reads it: still in sync (SQLite, PostgreSQL)."""
    from conftest import SAMPLE

    cli = make_cli(any_db_url, simulation=True)
    nf, tags = tmp_path / NF, tmp_path / TAGS
    shutil.copyfile(SAMPLE / "native_functions.v1.yaml", nf)
    shutil.copyfile(SAMPLE / "tags.yaml", tags)
    old = nf.read_bytes()
    cli.ok("import", nf, "--tags-yaml", tags, "--label", "v1", now=at(0))
    assert cli("sync-yaml", nf, "--check").code == 0
    for op in ("hardswish", "roll"):  # roll.out, which only roll's autogen: declares, moves with it
        cli.ok("deprecate", f"aten::{op}", "--reason", "retired", now=at(1))
    cli.ok("mark-deprecated", "aten::roll", now=at(20))
    cli.ok("delete", "aten::roll", now=at(210))
    assert cli.ok("ops", "show", "aten::roll.out", "--json").json()["lifecycle"] == "deleted"
    written = cli.ok("sync-yaml", nf, "--tags-yaml", tags, "--write", "--json", now=at(210)).json()
    assert {(c["operator"], c["action"]) for c in written["changes"]} == {
        ("aten::hardswish", "add-tag"), ("aten::roll", "delete-entry")}
    before, after = by_func(old.decode()), by_func(nf.read_text())
    assert set(before) - set(after) == {"roll"} and "roll.out" not in nf.read_text()
    assert after["hardswish"].pop("tags") == "deprecating"
    assert after == {name: entry for name, entry in before.items() if name != "roll"}
    cli.ok("import", nf, "--tags-yaml", tags, "--label", "v1-synced", now=at(211))
    result = cli("sync-yaml", nf, "--tags-yaml", tags, "--check")
    assert result.code == 0 and "is in sync" in result.out
    assert cli.ok("ops", "show", "aten::hardswish", "--json").json()["lifecycle"] == "deprecating"


# --- files that cannot be written (issue 17, points 6 and 7) -------------------------------------


def test_a_failed_write_leaves_tags_yaml_unchanged(ws):
    """tags.yaml needs new declarations and native_functions.yaml cannot be replaced: neither changes."""
    ws.nf.chmod(0o444)
    _bad(ws, "--write", where=f"{ws.nf}: ", says="read-only")


def test_a_lock_is_reported_and_never_removed(ws):
    lock = ws.dir / "tags.yaml.lock"
    lock.write_text("left by a killed writer")
    before, before_db = ws.snapshot(), db_fingerprint(ws.url)
    code, out, err = ws.sync("--write")
    assert code == 2 and err.count("\n") == 1, err
    assert err.startswith(f"opgov: error: {ws.tags}: locked by {lock} ") and "remove tags.yaml.lock" in err, err
    assert ws.snapshot() == before and db_fingerprint(ws.url) == before_db
    assert ws.leftovers() == ["tags.yaml.lock"] and lock.read_text() == "left by a killed writer"


def test_a_symlink_out_of_the_folder_is_not_written_through(ws, tmp_path):
    outside = tmp_path / "outside-tags.yaml"
    shutil.copyfile(ws.tags, outside)
    ws.tags.unlink()
    ws.tags.symlink_to(outside)
    before = outside.read_bytes()
    _bad(ws, "--write", where=f"{ws.tags}: ", says="outside its directory")
    assert outside.read_bytes() == before


@pytest.fixture
def small_fs(tmp_path):
    """A tmpfs holding the two files with 64 KiB to spare (needs root and leave to mount)."""
    def mount(size: int):
        where = tmp_path / "fs"
        where.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(where)
        return where

    mounted: list[Path] = []
    yield mount
    for where in mounted:
        subprocess.run(["umount", "-l", str(where)], check=True)


def _move_files_to(ws: Workspace, small_fs) -> Path:
    where = small_fs(ws.nf.stat().st_size + ws.tags.stat().st_size + (64 << 10))
    for name in (NF, TAGS):
        shutil.move(ws.dir / name, where / name)
    ws.nf, ws.tags, ws.dir = where / NF, where / TAGS, where
    return where


def test_a_full_disk_changes_neither_file(ws, small_fs):
    _move_files_to(ws, small_fs)
    _bad(ws, "--write", where=f"{ws.nf}: ", says="No space left on device")


def test_a_read_only_folder_changes_neither_file(ws, small_fs):
    where = _move_files_to(ws, small_fs)
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
    _bad(ws, "--write", where=f"{ws.tags}.lock: ", says="Read-only file system")
