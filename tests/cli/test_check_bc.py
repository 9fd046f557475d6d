"""`opgov check-bc`, `opgov exceptions add|list|remove`, and the findings `opgov import` stores:
every source kind (yaml path, snapshot label, git ref), every output format, the core ATen
policy with exceptions and completed deletions, exit codes and bad input, end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from conftest import REPO, SAMPLE, Result, by_key, check, check_json, db_fingerprint, registry

V1, V2 = SAMPLE / "native_functions.v1.yaml", SAMPLE / "native_functions.v2.yaml"
REVIEW_2023 = REPO / "data" / "decisions" / "core-aten-review-2023.yaml"
GIT_PATH = "aten/src/ATen/native/native_functions.yaml"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
FINDING_KEYS = {"operator", "kind", "rule", "severity", "message", "old_schema", "new_schema", "file", "line",
                "upgrader", "suggested_upgrader", "version_map_entry"}
# What data/sample's v2 changes against v1 (documented in the sample's generator and the project notes).
SAMPLE_CHANGES = {
    ("aten::flatten.using_names", "bc"), ("aten::sum.dim_DimnameList", "bc"), ("aten::unbind.Dimname", "bc"),
    ("aten::glu", "bc"), ("aten::glu", "fc"), ("aten::roll", "bc"), ("aten::roll", "fc"),
    ("aten::clamp_max", "fc"), ("aten::fused_rms_norm", "new"),
}
NAMED_TENSOR_REMOVALS = {"aten::flatten.using_names", "aten::sum.dim_DimnameList", "aten::unbind.Dimname"}


def at(days: float) -> str:
    return (T0 + timedelta(days=days)).isoformat()


def pair(tmp_path: Path, old: list, new: list) -> tuple[Path, Path]:
    return registry(tmp_path / "old.yaml", *old), registry(tmp_path / "new.yaml", *new)


def bad_input(result: Result, *words: str) -> None:
    """Exit 2, nothing on stdout, one line on stderr naming the thing."""
    assert result.code == 2, f"expected bad input, got {result.code}: {result.err}{result.out}"
    assert result.out == ""
    assert len(result.err.strip().splitlines()) == 1, result.err
    assert result.err.startswith("opgov: error: ")
    for word in words:
        assert word in result.err, result.err


# --- the seed policy's examples, through the CLI --------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "bc_rule"),
    [
        ("foo(Tensor self, int a) -> int", "foo(Tensor self, int a) -> Scalar", "return-type-changed"),
        ("foo(Tensor self, Scalar a) -> int", "foo(Tensor self, int a) -> int", "argument-type-narrowed"),
        ("foo(Tensor self, int a) -> int", "foo(Tensor self, int a, int b) -> int", "argument-added-without-default"),
    ],
)
def test_seed_bc_breaks_are_errors(nodb, tmp_path, old, new, bc_rule):
    report = check_json(nodb, *pair(tmp_path, [old], [new]), code=1)
    finding = by_key(report)[("aten::foo", "bc")]
    assert (finding["rule"], finding["severity"]) == (bc_rule, "error")
    assert report["summary"]["errors"] == 1


def test_seed_new_last_argument_with_default_is_fine(nodb, tmp_path):
    old, new = pair(tmp_path, ["foo(Tensor self, int a) -> int"], ["foo(Tensor self, int a, int z=100) -> int"])
    assert check_json(nodb, old, new, code=0)["findings"] == []
    assert "0 errors, 0 warnings" in check(nodb, old, new, code=0).out


@pytest.mark.parametrize(
    ("old", "new", "fc_rule", "also_bc"),
    [
        ("foo.out(Tensor self, int a, int b=1, *, Tensor(a!) out) -> Tensor(a!)",
         "foo.out(Tensor self, int a, int c=1, int b=1, *, Tensor(a!) out) -> Tensor(a!)",
         "default-argument-not-before-out", True),
        ("foo.out(Tensor self, *, int a, int b=1, Tensor(a!) out) -> Tensor(a!)",
         "foo.out(Tensor self, *, int a, Tensor(d!) d, int b=1, Tensor(a!) out) -> Tensor(a!)",
         "out-argument-not-at-end", True),
        ("foo(Tensor self, int a, int b=1) -> Tensor", "foo(Tensor self, int a, int b=1, int[2] c=1) -> Tensor",
         "container-default-added", False),
        ("foo(Tensor self, int a, int b=1) -> Tensor", "foo(Tensor self, int a, int c=1) -> Tensor",
         "default-argument-renamed", True),
        ("foo(Tensor self, int a, int b=1) -> Tensor", "foo(Tensor self, int a, int b=4) -> Tensor",
         "default-changed", True),
    ],
)
def test_seed_fc_breaks_are_warnings(nodb, tmp_path, old, new, fc_rule, also_bc):
    """An FC break alone exits 0; the exit code follows the BC verdict."""
    report = check_json(nodb, *pair(tmp_path, [old], [new]), code=1 if also_bc else 0)
    name = "aten::" + old.split("(")[0]
    found = by_key(report)
    assert (found[(name, "fc")]["rule"], found[(name, "fc")]["severity"]) == (fc_rule, "warning")
    assert ((name, "bc") in found) is also_bc


def test_keyword_argument_with_scalar_default_before_outs_is_fine(nodb, tmp_path):
    old, new = pair(tmp_path, ["foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"],
                    ["foo.out(Tensor self, *, int z=1, Tensor(a!) out) -> Tensor(a!)"])
    assert check_json(nodb, old, new, code=0)["findings"] == []


def test_new_operator_is_information_and_exits_0(nodb, tmp_path):
    old, new = pair(tmp_path, ["foo(Tensor self) -> Tensor"], ["foo(Tensor self) -> Tensor", "bar(Tensor self) -> Tensor"])
    report = check_json(nodb, old, new, code=0)
    [finding] = report["findings"]
    assert (finding["operator"], finding["kind"], finding["rule"], finding["severity"]) == (
        "aten::bar", "new", "operator-added", "info")
    assert (finding["file"], finding["line"]) == (str(new), 3)


def test_core_tag_on_the_old_side_makes_a_break_core(nodb, tmp_path):
    old, new = pair(tmp_path, [("foo(Tensor self, int a=1) -> Tensor", "core"), "bar(Tensor self, int a=1) -> Tensor"],
                    ["foo(Tensor self, int a=2) -> Tensor", ("bar(Tensor self, int a=2) -> Tensor", "core")])
    found = by_key(check_json(nodb, old, new, code=1))
    assert "add a new native function" in found[("aten::foo", "bc")]["message"]
    # bar became core only in NEW: core-ness is read from the old side
    assert "core ATen operator" not in found[("aten::bar", "bc")]["message"]
    assert "opgov exceptions add" in found[("aten::bar", "bc")]["message"]


# --- output formats -------------------------------------------------------------------------------------


def _entry_name(path: Path, line: int) -> str:
    """The operator name of the ``- func:`` entry at ``line`` of ``path``."""
    text = path.read_text(encoding="utf-8").splitlines()[line - 1]
    match = re.match(r"- func: ([\w.]+)\(", text)
    assert match, f"{path}:{line} is not a func entry: {text!r}"
    return "aten::" + match.group(1)


def test_json_shape_and_locations(nodb):
    report = check_json(nodb, V1, V2, code=1)
    assert {"findings", "summary"} <= set(report)
    assert all(set(f) == FINDING_KEYS for f in report["findings"])
    keys = [(f["operator"], f["kind"]) for f in report["findings"]]
    assert len(keys) == len(set(keys)), "one finding per operator and kind"
    assert set(keys) == SAMPLE_CHANGES
    for f in report["findings"]:
        removed = f["rule"] == "operator-removed"
        assert f["file"] == str(V1 if removed else V2)
        assert _entry_name(Path(f["file"]), f["line"]) == f["operator"]
        assert (f["new_schema"] is None) is removed and (f["old_schema"] is None) is (f["kind"] == "new")
    summary = report["summary"]
    assert summary["errors"] == sum(f["severity"] == "error" for f in report["findings"]) == 5
    assert summary["warnings"] == 3 and summary["infos"] == 1


def test_github_workflow_commands(nodb):
    out = check(nodb, V1, V2, "--format", "github", code=1).out
    lines = out.splitlines()
    pattern = re.compile(r"^::(error|warning|notice) file=([^,]+),line=(\d+),title=([^:]+)::(.+)$")
    matches = [pattern.match(line) for line in lines]
    assert all(matches), out
    levels = [m.group(1) for m in matches]
    assert levels == sorted(levels, key=["error", "warning", "notice"].index), "errors first"
    assert levels.count("error") == 5 and levels.count("warning") == 3
    for m in matches:
        file = m.group(2).replace("%3A", ":").replace("%2C", ",").replace("%25", "%")
        assert file in (str(V1), str(V2))
        operator = m.group(4).rsplit(" ", 1)[1].replace("%3A", ":")
        assert _entry_name(Path(file), int(m.group(3))) == operator
    assert any(line.startswith("::error ") and "aten%3A%3Aglu" in line and "default-changed" in line for line in lines)


def test_text_grouped_by_severity_with_a_summary(nodb):
    out = check(nodb, V1, V2, code=1).out
    headings = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert [h.split(" ")[0] for h in headings[:-1]] == ["Errors", "Warnings", "Information"]
    assert headings[-1] == "5 errors, 3 warnings, 0 waived, 1 info (5 BC, 3 FC, 1 new)"
    errors = out[:out.index("Warnings")]
    assert f"{V2}:" in errors and "aten::glu [bc default-changed]" in errors
    assert "\x1b[" not in out  # colour only on a terminal
    assert check(nodb, V1, V1, code=0).out.strip() == "0 errors, 0 warnings, 0 waived, 0 infos (0 BC, 0 FC, 0 new)"


def test_list_rules(nodb):
    from opgov.core.compat import RULES

    result = nodb("check-bc", "--list-rules")
    assert result.code == 0
    listed = {tuple(line.split(None, 2)) for line in result.out.splitlines()}
    assert listed == {(r.id, r.kind, r.purpose) for r in RULES}
    assert {r.id for r in RULES} >= {"operator-removed", "operator-added", "default-changed", "return-type-changed"}


# --- bad input ------------------------------------------------------------------------------------------


def test_bad_input_exits_2_naming_the_file_and_line(nodb, tmp_path):
    good = registry(tmp_path / "good.yaml", "foo(Tensor self) -> Tensor")
    bad_input(check(nodb, tmp_path / "missing.yaml", good, code=2), "missing.yaml", "no such file")
    bad_input(check(nodb, good, tmp_path / "missing.yaml", code=2), "missing.yaml")
    broken = tmp_path / "broken.yaml"
    broken.write_text("- func: foo(Tensor self) -> Tensor\n\n- func: [bar\n", encoding="utf-8")
    bad_input(check(nodb, good, broken, code=2), f"{broken}:", "YAML")
    bad_schema = registry(tmp_path / "schema.yaml", "foo(Tensor self) -> Tensor", "bar(Tensor self")
    bad_input(check(nodb, bad_schema, good, code=2), f"{bad_schema}:3", "bar(Tensor self")
    bad_input(check(nodb, good, code=2), "OLD and NEW")


# --- git refs -------------------------------------------------------------------------------------------


@pytest.fixture
def git_repo(tmp_path, monkeypatch):
    """A throwaway repository with two commits of aten/src/ATen/native/native_functions.yaml."""
    repo = tmp_path / "pytorch"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    subprocess.run([*git, "init", "-q"], cwd=repo, check=True)
    nf = repo / GIT_PATH
    registry(nf, ("foo(Tensor self, int a=1) -> Tensor", "core"), "bar(Tensor self) -> Tensor", "gone(Tensor self) -> Tensor")
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], cwd=repo, check=True)
    registry(nf, "foo(Tensor self, int a=2) -> Tensor", "bar(Tensor self, int b=0) -> Tensor", "new_op(Tensor self) -> Tensor")
    subprocess.run([*git, "commit", "-q", "-am", "two"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    return repo


def test_git_refs(nodb, git_repo):
    report = check_json(nodb, "git:HEAD~1", GIT_PATH, code=1)
    found = by_key(report)
    assert set(found) == {("aten::foo", "bc"), ("aten::foo", "fc"), ("aten::gone", "bc"), ("aten::new_op", "new")}
    assert "add a new native function" in found[("aten::foo", "bc")]["message"]  # core in the old commit
    assert (found[("aten::foo", "bc")]["file"], found[("aten::foo", "bc")]["line"]) == (GIT_PATH, 1)
    assert found[("aten::gone", "bc")]["rule"] == "operator-removed"
    # a removal seen at another revision names the file (which GitHub can annotate), not an old line
    assert (found[("aten::gone", "bc")]["file"], found[("aten::gone", "bc")]["line"]) == (GIT_PATH, None)
    # the default PATH, an explicit PATH, and a git ref on both sides give the same findings
    for args in (("git:HEAD~1", "git:HEAD"), (f"git:HEAD~1:{GIT_PATH}", f"git:HEAD:{GIT_PATH}")):
        again = check_json(nodb, *args, code=1)
        assert [(f["operator"], f["kind"], f["rule"]) for f in again["findings"]] == [
            (f["operator"], f["kind"], f["rule"]) for f in report["findings"]]
    assert check_json(nodb, "git:HEAD", GIT_PATH, code=0)["findings"] == []


def test_git_bad_refs_are_bad_input(nodb, git_repo, tmp_path, monkeypatch):
    bad_input(check(nodb, "git:no-such-ref", GIT_PATH, code=2), "git:no-such-ref")
    bad_input(check(nodb, "git:HEAD:no/such.yaml", GIT_PATH, code=2), "no/such.yaml")
    bad_input(check(nodb, "git:", GIT_PATH, code=2), "git:REF")
    elsewhere = tmp_path / "not-a-repo"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    bad_input(check(nodb, "git:HEAD", V2, code=2), "git:HEAD")


def test_a_ref_that_looks_like_an_option_writes_nothing(nodb, git_repo, tmp_path):
    """``git:--output=FILE:x`` once made ``git show`` write FILE: a ref beginning with '-' is
    refused, and git is told where its options end."""
    target = tmp_path / "written-by-git"
    for spec in (f"git:--output={target}:x", f"git:--output={target}", "git:-p", f"git:--output={target}:{GIT_PATH}"):
        bad_input(check(nodb, spec, GIT_PATH, code=2), "cannot begin with '-'")
        bad_input(check(nodb, GIT_PATH, spec, code=2), "cannot begin with '-'")
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "pytorch"]


# --- no database at all, as a separate process ------------------------------------------------------------


def test_runs_without_any_database(tmp_path):
    """PyTorch CI runs check-bc on two files with no database; the output is the same in every
    process (no dependence on hash seeds)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_") and k != "XDG_DATA_HOME"}
    env["HOME"] = str(home)
    outputs = []
    for seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-m", "opgov", "check-bc", str(V1), str(V2), "--format", "json"],
                              capture_output=True, text=True, env={**env, "PYTHONHASHSEED": seed}, cwd=tmp_path,
                              timeout=60)
        assert proc.returncode == 1, proc.stderr
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]
    assert {(f["operator"], f["kind"]) for f in json.loads(outputs[0])["findings"]} == SAMPLE_CHANGES
    assert not (home / ".local").exists(), "check-bc must not create a database"
    proc = subprocess.run([sys.executable, "-m", "opgov", "check-bc", "v1", str(V2)],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 2 and "v1: no such file" in proc.stderr


@pytest.mark.parametrize("args", [[], ["--format", "json"], ["--format", "github"]])
def test_two_files_load_neither_pydantic_nor_a_database_layer(tmp_path, args):
    # the report is a dataclass (opgov.results.compat) printed with the standard library's json
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPGOV_") and k != "XDG_DATA_HOME"}
    env["HOME"] = str(tmp_path)
    probe = ("import json, sys\nfrom opgov.cli.main import run\n"
             f"try:\n    run({['check-bc', str(V1), str(V2), *args]!r})\nexcept SystemExit:\n    pass\n"
             "sys.stderr.write(json.dumps(sorted({m.partition('.')[0] for m in sys.modules})))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path,
                          timeout=60)
    assert "aten::glu" in proc.stdout
    loaded = set(json.loads(proc.stderr.strip().splitlines()[-1]))
    assert loaded & {"pydantic", "pydantic_core", "sqlalchemy", "fastapi"} == set()


# --- snapshot labels and the database's policy --------------------------------------------------------------


def test_snapshot_labels(cli):
    cli.ok("import", V1, "--label", "v1", now=at(0))
    cli.ok("import", V2, "--label", "v2", now=at(1))
    by_label = check_json(cli, "v1", "v2", code=1)
    assert set(by_key(by_label)) == SAMPLE_CHANGES
    by_path = check_json(cli, V1, V2, code=1)
    strip = [{k: f[k] for k in ("operator", "kind", "rule", "severity", "line")} for f in by_path["findings"]]
    assert [{k: f[k] for k in ("operator", "kind", "rule", "severity", "line")} for f in by_label["findings"]] == strip
    mixed = check_json(cli, "v1", V2, code=1)
    assert set(by_key(mixed)) == SAMPLE_CHANGES
    bad_input(check(cli, "v1", "v3", code=2), "v3", "known: v1, v2")


def test_exceptions_story(cli):
    cli.ok("import", V1, "--label", "v1", now=at(0))
    cli.ok("members", "add", "alice", "--role", "maintainer", actor="alice", now=at(0))
    cli.ok("members", "add", "dave", "--role", "developer", actor="alice", now=at(0))
    assert cli.ok("exceptions", "list", now=at(0)).out.strip() == "no exceptions"

    def refused(*args):
        before = db_fingerprint(cli.url)
        result = cli(*args, actor="dave", now=at(1))
        assert result.code == 1 and "dave (developer) may not" in result.err, result.err
        assert db_fingerprint(cli.url) == before

    def bad(*args, words=()):
        before = db_fingerprint(cli.url)
        result = cli(*args, actor="alice", now=at(1))
        bad_input(result, *words)
        assert db_fingerprint(cli.url) == before

    refused("exceptions", "add", "aten::glu*", "--reason", "planned", "--expires", "2027-01-01")
    bad("exceptions", "add", "aten::glu*", "--reason", "planned", "--expires", "2025-12-31", words=["--expires"])
    bad("exceptions", "add", "aten::glu*", "--reason", "planned", "--expires", "soon", words=["soon"])
    bad("exceptions", "add", "aten::glu*", "--reason", " ", "--expires", "2027-01-01", words=["reason"])
    bad("exceptions", "remove", "7", words=["unknown exception 7"])

    added = cli.ok("exceptions", "add", "aten::glu*", "--reason", "dim default realigned", "--expires", "2026-03-01",
                   "--json", actor="alice", now=at(1)).json()
    assert (added["pattern"], added["created_by"], added["expires_on"], added["matches"]) == (
        "aten::glu*", "alice", "2026-03-01", 2)  # glu and glu.out
    refused("exceptions", "remove", str(added["id"]))

    found = by_key(check_json(cli, V1, V2, code=1, now=at(2)))
    glu = found[("aten::glu", "bc")]
    assert glu["severity"] == "waived" and "aten::glu*" in glu["message"] and "dim default realigned" in glu["message"]
    assert found[("aten::roll", "bc")]["severity"] == "error"
    assert found[("aten::glu", "fc")]["severity"] == "warning"  # exceptions are about BC only

    # roll is not core by its yaml tags: an exception lets the whole upgrade through
    cli.ok("exceptions", "add", "roll", "--reason", "dims now required", "--expires", "2026-03-01",
           actor="alice", now=at(1))
    for name in sorted(NAMED_TENSOR_REMOVALS):
        cli.ok("exceptions", "add", name, "--reason", "named tensors retired", "--expires", "2026-03-01",
               actor="alice", now=at(1))
    passing = check_json(cli, V1, V2, code=0, now=at(2))
    assert passing["summary"]["errors"] == 0 and passing["summary"]["waived"] == 5
    assert "Waived (5)" in check(cli, V1, V2, code=0, now=at(2)).out

    # the expiry date is the last day an exception applies
    assert check(cli, V1, V2, code=0, now="2026-03-01T23:00:00+00:00").code == 0
    listed = cli.ok("exceptions", "list", now="2026-03-02").out
    assert listed.count("EXPIRED") == 5 and "no longer apply" in listed
    assert [v["expired"] for v in cli.ok("exceptions", "list", "--json", now="2026-03-02").json()] == [True] * 5
    after = check(cli, V1, V2, code=1, now="2026-03-02")
    assert "Expired exceptions (5)" in after.out and "aten::glu*: last day 2026-03-01" in after.out
    expired_json = check_json(cli, V1, V2, code=1, now="2026-03-02")
    assert "expired on 2026-03-01" in by_key(expired_json)[("aten::glu", "bc")]["message"]
    assert len(expired_json["expired_exceptions"]) == 5
    github = check(cli, V1, V2, "--format", "github", code=1, now="2026-03-02").out
    assert github.count("title=expired BC exception") == 5

    # removal keeps the record but the exception stops applying at once
    removed = cli.ok("exceptions", "remove", str(added["id"]), actor="alice", now=at(3))
    assert "removed exception" in removed.out
    assert by_key(check_json(cli, V1, V2, code=1, now=at(3)))[("aten::glu", "bc")]["severity"] == "error"
    again = cli("exceptions", "remove", str(added["id"]), actor="alice", now=at(3))  # a refusal by its state: 1
    assert again.code == 1 and "already removed" in again.err and len(again.err.strip().splitlines()) == 1
    assert "aten::glu*" not in cli.ok("exceptions", "list", now=at(3)).out
    everything = cli.ok("exceptions", "list", "--all", "--json", now=at(3)).json()
    assert [v["removed"] for v in everything if v["pattern"] == "aten::glu*"] == [True]
    actions = [e["action"] for e in cli.ok("log", "--json").json()]
    assert actions.count("exception.add") == 5 and actions.count("exception.remove") == 1


def test_core_breaks_are_never_waived(cli):
    """roll becomes core by the committee's 2023 decision: no exception lets its break through."""
    cli.ok("import", V1, "--label", "v1", now=at(0))
    cli.ok("decisions", "load", REVIEW_2023, now=at(0))
    added = cli.ok("exceptions", "add", "aten::*", "--reason", "release crunch", "--expires", "2027-01-01",
                   now=at(1))
    assert "of them core (BC breaks of core operators are never waived)" in added.out
    found = by_key(check_json(cli, V1, V2, code=1, now=at(2)))
    roll = found[("aten::roll", "bc")]
    assert roll["severity"] == "error"
    assert "core ATen operator" in roll["message"] and "add a new native function" in roll["message"]
    assert found[("aten::glu", "bc")]["severity"] == "waived"  # glu is not core
    assert [k for k, f in found.items() if f["severity"] == "error"] == [("aten::roll", "bc")]


def test_completed_deletions_are_not_errors(cli):
    """Removing operators that went through deprecate → mark-deprecated → delete is not a BC error,
    neither in check-bc nor in the findings the import stores."""
    cli.ok("import", V1, "--label", "v1", now=at(0))
    not_yet = by_key(check_json(cli, V1, V2, code=1, now=at(0)))
    assert all(not_yet[(name, "bc")]["severity"] == "error" for name in NAMED_TENSOR_REMOVALS)
    for name in sorted(NAMED_TENSOR_REMOVALS):  # a simulation's clock only goes forward: each step for all
        cli.ok("deprecate", name, "--reason", "named tensors are retired", now=at(1))
    for name in sorted(NAMED_TENSOR_REMOVALS):
        cli.ok("mark-deprecated", name, now=at(15))
    for name in sorted(NAMED_TENSOR_REMOVALS):
        cli.ok("delete", name, now=at(200))
    found = by_key(check_json(cli, V1, V2, code=1, now=at(201)))
    for name in NAMED_TENSOR_REMOVALS:
        assert found[(name, "bc")]["severity"] == "info"
        assert "deprecation lifecycle" in found[(name, "bc")]["message"]
    assert sorted(k for k, f in found.items() if f["severity"] == "error") == [("aten::glu", "bc"), ("aten::roll", "bc")]

    cli.ok("import", V2, "--label", "v2", now=at(201))
    shown = cli.ok("ops", "show", "aten::unbind.Dimname", "--json").json()
    assert [(f["kind"], f["rule"], f["severity"]) for f in shown["findings"]] == [("bc", "operator-removed", "info")]


def test_import_stores_findings(cli):
    cli.ok("import", V1, "--label", "v1", now=at(0))
    cli.ok("decisions", "load", REVIEW_2023, now=at(0))  # makes aten::roll core by decision
    imported = cli.ok("import", V2, "--label", "v2", "--json", now=at(1)).json()
    assert imported["findings"] == {"error": 5, "warning": 3, "info": 1}

    def findings(op):
        return [(f["snapshot"], f["kind"], f["rule"], f["severity"])
                for f in cli.ok("ops", "show", op, "--json").json()["findings"]]

    assert findings("aten::roll") == [("v2", "bc", "default-removed", "error"), ("v2", "fc", "default-removed", "warning")]
    roll = cli.ok("ops", "show", "aten::roll", "--json").json()["findings"][0]
    assert "add a new native function" in roll["message"]
    assert roll["old_schema"].endswith("dims=[]) -> Tensor") and roll["new_schema"].endswith("dims) -> Tensor")
    assert findings("aten::clamp_max") == [("v2", "fc", "container-default-added", "warning")]
    assert findings("aten::fused_rms_norm") == [("v2", "new", "operator-added", "info")]
    assert findings("aten::add.Tensor") == []
    assert "default-removed" in cli.ok("ops", "show", "aten::roll").out
    # check-bc over the stored snapshots agrees with what the import stored
    stored = {(f["operator"], f["kind"]): f["severity"] for f in check_json(cli, "v1", "v2", code=1, now=at(1))["findings"]}
    assert stored[("aten::roll", "bc")] == "error" and len(stored) == len(SAMPLE_CHANGES)


def test_import_without_decisions_roll_is_not_core(cli):
    cli.ok("import", V1, "--label", "v1", now=at(0))
    cli.ok("import", V2, "--label", "v2", now=at(1))
    [bc, _fc] = cli.ok("ops", "show", "aten::roll", "--json").json()["findings"]
    assert bc["severity"] == "error" and "core ATen operator" not in bc["message"]
    assert "opgov exceptions add" in bc["message"]


# --- the real releases --------------------------------------------------------------------------------------


def test_real_2_12_to_2_13(nodb, pytorch_release):
    """Documented fact: 2.12.0 → 2.13.0 removed 108 named-tensor overloads and added one."""
    from opgov.formats.registry import read_registry

    old, new = pytorch_release("2.12.0") / "native_functions.yaml", pytorch_release("2.13.0") / "native_functions.yaml"
    report = check_json(nodb, old, new, code=1)
    removed_all = {f["operator"] for f in report["findings"] if f["rule"] == "operator-removed"}
    def entries(path):  # `- func:` entries (autogen-only names have no schema of their own)
        return {name for name, op in read_registry(str(path)).ops.items() if op.schema}

    removed = removed_all & entries(old)
    assert len(removed) == 108
    assert removed == entries(old) - entries(new)
    # the operators those entries' autogen: generated are removed too: one story with the report
    generated = removed_all - removed
    assert generated == set(read_registry(str(old)).ops) - set(read_registry(str(new)).ops) - removed
    assert len(generated) == 8 and all("autogen" in f["message"] for f in report["findings"]
                                       if f["operator"] in generated)
    assert all(f["severity"] == "error" and f["kind"] == "bc" for f in report["findings"] if f["operator"] in removed)
    assert all(f["file"] == str(old) and _entry_name(old, f["line"]) == f["operator"]
               for f in report["findings"] if f["operator"] in removed)
    assert report["summary"]["new"] == 1


def test_the_default_database_file_is_the_engines(monkeypatch, tmp_path):
    # check-bc decides whether a database is configured without importing SQLAlchemy
    from opgov.cli.commands_compat import default_database_file
    from opgov.db.engine import default_url

    for xdg in (None, str(tmp_path)):
        if xdg is None:
            monkeypatch.delenv("XDG_DATA_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_DATA_HOME", xdg)
        assert f"sqlite:///{default_database_file()}" == default_url()
