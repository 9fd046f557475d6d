"""`opgov check-pr`, end to end: PyTorch 2.13.0's real registry committed in a throwaway git
repository, edited the way a pull request would, and checked with no database, as CI runs it: in
this process (the verdicts are the point; the installed `opgov` script gives the same, as the
first test shows). Each case asserts the exit code, the rule id, the file:line and the reviewers
requested."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import PYTORCH_DATA, opgov_in_process

OPGOV = str(Path(sys.executable).parent / "opgov")
NF = "native_functions.yaml"
CUMSUM = "- func: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor\n"
CUMSUM_LINE = 1972
CONFIG = """\
# the repository's policy
registry = "native_functions.yaml"
rules_file = "decomp_rules.yaml"

[reviewers]
core_maintainers = ["alice", "bob"]
committee = ["pytorch/core-aten-committee"]
"""
RULES = """\
format: 1
source: this-repository
rules:
  - op: aten::relu6
    into: [aten::clamp]
  - op: aten::hardswish
    into: [aten::clamp, aten::add.Tensor, aten::mul.Tensor, aten::div.Tensor]
"""
MAINTAINERS = ["alice", "bob"]
COMMITTEE = ["pytorch/core-aten-committee"]


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", *args], cwd=repo,
                          capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path, pytorch_versions) -> Path:
    """A git repository on branch main holding 2.13.0's native_functions.yaml, .opgov.toml and a
    rules file, committed; the tests then edit the working tree as a PR would."""
    root = tmp_path / "pytorch"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / NF).write_text((PYTORCH_DATA / "2.13.0" / NF).read_text(encoding="utf-8"), encoding="utf-8")
    (root / ".opgov.toml").write_text(CONFIG, encoding="utf-8")
    (root / "decomp_rules.yaml").write_text(RULES, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "2.13.0")
    return root


def _environ(repo: Path, env: dict | None) -> dict[str, str]:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("OPGOV_DATABASE_URL", "GITHUB_STEP_SUMMARY", "XDG_DATA_HOME")}
    environ["HOME"] = str(repo.parent)
    environ.update(env or {})
    return environ


def run(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``opgov check-pr ARGS`` in ``repo``, in this process."""
    return opgov_in_process(["check-pr", *args], cwd=repo, env=_environ(repo, env))


def installed(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The same, by the installed ``opgov`` script, as CI runs it."""
    return subprocess.run([OPGOV, "check-pr", *args], cwd=repo, capture_output=True, text=True,
                          env=_environ(repo, env), timeout=120)


def report(repo: Path, *args: str, env: dict | None = None) -> tuple[int, dict]:
    done = run(repo, "--format", "json", *args, env=env)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def edit(repo: Path, old: str, new: str, name: str = NF) -> None:
    path = repo / name
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def append(repo: Path, text: str, name: str = NF) -> int:
    """Append entries; returns the line the first one starts on."""
    path = repo / name
    before = path.read_text(encoding="utf-8")
    path.write_text(before + text, encoding="utf-8")
    return before.count("\n") + 1


def only(findings: list[dict], rule: str) -> dict:
    matching = [f for f in findings if f["rule"] == rule]
    assert len(matching) == 1, (rule, [(f["rule"], f["operator"]) for f in findings])
    return matching[0]


def line_of(repo: Path, name: str, line: int) -> str:
    return (repo / name).read_text(encoding="utf-8").splitlines()[line - 1]


# --- the cases of the issue -------------------------------------------------------------------


def test_the_installed_script_gives_what_the_cases_read(repo):
    """A breaking change, a malformed policy: the installed script prints and exits as the
    in-process runs of the cases below do."""
    edit(repo, CUMSUM, "- func: cumsum(Tensor self, int dim) -> Tensor\n")
    for args in (("--format", "json"), ("--format", "github"), ()):
        script, here = installed(repo, *args), run(repo, *args)
        assert script.returncode == 1, script.stderr
        assert (script.returncode, script.stdout, script.stderr) == (here.returncode, here.stdout, here.stderr)
    append(repo, "\n[reviewers\n", name=".opgov.toml")
    script, here = installed(repo), run(repo)
    assert script.returncode == 2 and (script.stdout, script.stderr) == (here.stdout, here.stderr)


def test_unchanged_tree_passes(repo):
    code, data = report(repo)
    assert code == 0
    assert data["findings"] == [] and data["reviewers"] == []


def test_new_native_function_is_category_3_and_asks_for_a_decomposition(repo):
    line = append(repo, "\n- func: fused_gizmo(Tensor self, float eps=1e-05) -> Tensor\n  dispatch:\n"
                        "    CPU: fused_gizmo_cpu\n")
    code, data = report(repo)
    assert code == 0  # a warning: the committee reviews it
    f = only(data["findings"], "native-function-added")
    assert (f["severity"], f["operator"], f["file"], f["line"]) == ("warning", "aten::fused_gizmo", NF, line + 1)
    assert "category 3 (custom)" in f["message"] and "CompositeImplicitAutograd" in f["message"]
    assert "decomp_rules.yaml" in f["message"]
    assert only(data["findings"], "operator-added")["severity"] == "info"  # check-bc's finding too
    assert data["reviewers"] == COMMITTEE
    assert "opgov: new operator" in data["labels"]


def test_new_native_function_with_a_composite_kernel_is_information(repo):
    line = append(repo, "\n- func: gizmo_sum(Tensor self) -> Tensor\n  dispatch:\n"
                        "    CompositeImplicitAutograd: gizmo_sum\n")
    code, data = report(repo)
    assert code == 0
    f = only(data["findings"], "native-function-added")
    assert (f["severity"], f["line"]) == ("info", line + 1)
    assert "decomposes through a CompositeImplicitAutograd kernel" in f["message"]


def test_new_core_operator_without_a_decision_is_an_error(repo):
    line = append(repo, "\n- func: fused_gizmo(Tensor self) -> Tensor\n  tags: core\n")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "core-tag-added")
    assert (f["severity"], f["operator"], f["file"], f["line"]) == ("error", "aten::fused_gizmo", NF, line + 1)
    assert "without a committee decision on record" in f["message"] and "@alice, @bob" in f["message"]
    assert data["reviewers"][:2] == MAINTAINERS and set(COMMITTEE) <= set(data["reviewers"])


def test_new_core_operator_with_a_decision_on_record_passes(repo):
    append(repo, "\n- func: fused_gizmo(Tensor self) -> Tensor\n  tags: core\n")
    append(repo, '\n[[decision]]\nop = "aten::fused_gizmo"\ncategory = "core"\n'
                 'link = "https://github.com/pytorch/pytorch/issues/1"\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 0
    f = only(data["findings"], "core-tag-added")
    assert f["severity"] == "info" and ".opgov.toml:" in f["message"]


def test_core_tag_removed_from_cumsum(repo):
    edit(repo, CUMSUM + "  structured_delegate: cumsum.out\n  device_check: NoCheck   # TensorIterator\n"
               "  variants: function, method\n  tags: core\n",
         CUMSUM + "  structured_delegate: cumsum.out\n  device_check: NoCheck   # TensorIterator\n"
               "  variants: function, method\n")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "core-tag-removed")
    assert (f["operator"], f["file"], f["line"]) == ("aten::cumsum", NF, CUMSUM_LINE)
    assert line_of(repo, NF, f["line"]) == CUMSUM.rstrip("\n")
    assert data["reviewers"][:2] == MAINTAINERS


def test_core_tag_removed_with_the_decision_in_an_exported_decisions_file(repo):
    edit(repo, "  variants: function, method\n  tags: core\n\n- func: cumsum_(",
         "  variants: function, method\n\n- func: cumsum_(")
    (repo / "decisions.yaml").write_text(
        "source: core ATen committee\ndecided_at: 2026-01-05\ndecisions:\n"
        "  - op: aten::cumsum\n    category: decomposable\n    into: [aten::add.Tensor]\n"
        "    rationale: a scan of adds\n", encoding="utf-8")
    edit(repo, 'rules_file = "decomp_rules.yaml"\n',
         'rules_file = "decomp_rules.yaml"\ndecisions_file = "decisions.yaml"\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 0
    assert only(data["findings"], "core-tag-removed")["severity"] == "info"


def test_hand_added_deprecation_tag(repo):
    edit(repo, "- func: _logcumsumexp(Tensor self, int dim) -> Tensor\n",
         "- func: _logcumsumexp(Tensor self, int dim) -> Tensor\n  tags: deprecated\n")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "lifecycle-tag-edited")
    assert (f["operator"], f["file"], f["line"]) == ("aten::_logcumsumexp", NF, 3689)
    assert "added `deprecated`" in f["message"] and "lifecycle" in f["message"]
    assert data["reviewers"] == COMMITTEE


def test_compatible_core_change_requests_the_core_maintainers(repo):
    edit(repo, CUMSUM, CUMSUM.replace("dtype=None)", "dtype=None, bool reverse=False)"))
    code, data = report(repo)
    assert code == 0
    f = only(data["findings"], "core-schema-changed")
    assert (f["severity"], f["operator"], f["file"], f["line"]) == ("warning", "aten::cumsum", NF, CUMSUM_LINE)
    assert "bool reverse=False" in f["new_schema"]
    assert not [g for g in data["findings"] if g["kind"] in ("bc", "fc")]  # PyTorch: compatible both ways
    assert data["reviewers"] == MAINTAINERS and data["labels"] == ["opgov: core change"]


def test_core_bc_break_is_an_error_no_configuration_can_waive(repo):
    edit(repo, CUMSUM, CUMSUM.replace("int dim", "int axis"))
    append(repo, '\n[rules.severity]\nargument-renamed = "off"\n\n[[allow]]\noperator = "aten::cumsum"\n'
                 'reason = "trying"\nowner = "mallory"\nexpires = 2099-01-01\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "argument-renamed")
    assert (f["severity"], f["kind"], f["operator"], f["line"]) == ("error", "bc", "aten::cumsum", CUMSUM_LINE)
    assert "never allowed" in f["message"] and "add a new overload" in f["message"]
    assert "@alice, @bob" in f["message"]
    assert set(MAINTAINERS) <= set(data["reviewers"])


NONCORE = ("- func: _logcumsumexp(Tensor self, int dim) -> Tensor\n  dispatch:\n    CPU: _logcumsumexp_cpu\n"
           "    CUDA: _logcumsumexp_cuda\n    MPS: _logcumsumexp_mps\n\n")


def test_non_core_removal_without_an_allow_list_entry(repo):
    edit(repo, NONCORE, "")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "operator-removed")
    assert (f["operator"], f["file"], f["line"]) == ("aten::_logcumsumexp", NF, 3689)
    assert line_of(repo, NF, 3689).startswith("- func: _logcumsumexp.out(")  # a line of the head file
    assert "allow-list entry" in f["message"] and "@pytorch/core-aten-committee" in f["message"]
    assert "opgov exceptions add" not in f["message"]  # nothing a PR author can run
    assert data["reviewers"] == COMMITTEE


def test_non_core_removal_with_an_allow_list_entry(repo):
    edit(repo, NONCORE, "")
    append(repo, '\n[[allow]]\nregex = "aten::_logcumsumexp\\\\("\nreason = "internal helper"\n'
                 'owner = "carol"\nlink = "https://github.com/pytorch/pytorch/issues/9"\nexpires = 2099-12-31\n',
           name=".opgov.toml")
    code, data = report(repo)
    assert code == 0
    f = only(data["findings"], "operator-removed")
    assert (f["severity"], f["line"]) == ("waived", 3689)
    assert "carol: internal helper" in f["message"] and "issues/9" in f["message"]
    assert data["reviewers"] == []


def test_expired_allow_list_entry_is_an_error_naming_it(repo):
    edit(repo, NONCORE, "")
    line = append(repo, '\n[[allow]]\noperator = "aten::_logcumsumexp"\nreason = "internal helper"\n'
                        'owner = "carol"\nexpires = 2024-06-30\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "allowlist-entry-expired")
    assert (f["file"], f["line"]) == (".opgov.toml", line + 1)
    assert line_of(repo, ".opgov.toml", line + 1) == "[[allow]]"
    assert f".opgov.toml:{line + 1} (aten::_logcumsumexp)" in f["message"] and "2024-06-30" in f["message"]
    removed = only(data["findings"], "operator-removed")
    assert removed["severity"] == "error" and "expired on 2024-06-30" in removed["message"]
    assert data["reviewers"] == COMMITTEE


def test_schema_regex_narrows_an_allow_list_entry(repo):
    edit(repo, "- func: _logcumsumexp(Tensor self, int dim) -> Tensor\n",
         "- func: _logcumsumexp(Tensor self, str dim) -> Tensor\n")
    append(repo, '\n[[allow]]\noperator = "aten::_logcumsumexp"\nschema = "int dim, bool flag"\n'
                 'reason = "r"\nowner = "carol"\nexpires = 2099-12-31\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 1 and only(data["findings"], "argument-type-narrowed")["severity"] == "error"
    edit(repo, 'schema = "int dim, bool flag"', 'schema = "str dim"', name=".opgov.toml")
    code, data = report(repo)
    assert code == 0 and only(data["findings"], "argument-type-narrowed")["severity"] == "waived"


def test_rules_change_leaving_core(repo):
    edit(repo, "  - op: aten::relu6\n    into: [aten::clamp]\n", "  - op: aten::relu6\n    into: [aten::mish]\n",
         name="decomp_rules.yaml")
    code, data = report(repo)
    assert code == 1
    f = only(data["findings"], "decomp-leaves-core")
    assert (f["operator"], f["file"], f["line"]) == ("aten::relu6", "decomp_rules.yaml", 4)
    assert "aten::mish" in f["message"] and "aten::relu6 → aten::mish" in f["message"]
    assert data["reviewers"] == MAINTAINERS


def test_committed_pr_against_the_merge_base(repo):
    """A PR branch with commits: the default base is the merge base with main, the head a ref."""
    git(repo, "checkout", "-q", "-b", "feature")
    edit(repo, CUMSUM, CUMSUM.replace("dtype=None)", "dtype=None, bool reverse=False)"))
    git(repo, "commit", "-q", "-am", "reverse cumsum")
    code, data = report(repo)
    assert code == 0 and only(data["findings"], "core-schema-changed")["line"] == CUMSUM_LINE
    code, data = report(repo, "--base", "main", "--head", "feature")
    assert code == 0 and only(data["findings"], "core-schema-changed")["line"] == CUMSUM_LINE


def test_ignore_only_and_severity_overrides(repo):
    append(repo, "\n- func: fused_gizmo(Tensor self) -> Tensor\n  dispatch:\n    CPU: fused_gizmo\n"
                 "\n- func: _foreach_gizmo(Tensor[] self) -> Tensor[]\n  dispatch:\n    CPU: foreach_gizmo\n")
    append(repo, '\n[rules]\nexcept = ["operator-added"]\n[rules.severity]\nnative-function-added = "error"\n'
                 '[rules.ignore_only]\nnative-function-added = ["aten::_foreach_*"]\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 1
    assert [(f["rule"], f["operator"], f["severity"]) for f in data["findings"]] == [
        ("native-function-added", "aten::fused_gizmo", "error")]


# --- outputs -------------------------------------------------------------------------------------


def test_github_annotations_stay_within_the_limits(repo):
    append(repo, "".join(f"\n- func: gizmo_{i}(Tensor self) -> Tensor\n  tags: core\n" for i in range(14)))
    edit(repo, NONCORE, "")
    done = run(repo, "--format", "github")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    errors = [line for line in lines if line.startswith("::error ")]
    assert len(errors) == 10  # 9 findings and one annotation grouping the other 6
    assert "6 more error findings" in errors[-1]
    assert all(re.search(r"file=native_functions.yaml,line=\d+", line) for line in lines)
    removal = next(line for line in errors if "operator-removed" in line)
    assert "line=3689," in removal
    assert len([line for line in lines if line.startswith("::notice ")]) <= 10


def test_step_summary_sarif_junit_and_requests(repo, tmp_path):
    edit(repo, CUMSUM, CUMSUM.replace("int dim", "int axis"))
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    sarif, junit, requests = tmp_path / "out.sarif", tmp_path / "junit.xml", tmp_path / "requests.json"
    done = run(repo, "--sarif", str(sarif), "--junit", str(junit), "--requests", str(requests),
               env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 1
    assert "native_functions.yaml:1972: [argument-renamed] aten::cumsum" in done.stdout

    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## opgov check-pr: ❌")
    assert "| error | `argument-renamed` | native_functions.yaml:1972 | aten::cumsum |" in text
    assert "**Reviewers requested:** @alice, @bob" in text

    log = json.loads(sarif.read_text(encoding="utf-8"))
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = log["runs"]
    rule_ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    assert len(rule_ids) == len(set(rule_ids)) and "decomp-leaves-core" in rule_ids
    for result in run_["results"]:
        assert result["level"] in ("error", "warning", "note", "none")
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        assert result["message"]["text"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert isinstance(region["startLine"], int) and region["startLine"] >= 1
    broken = next(r for r in run_["results"] if r["ruleId"] == "argument-renamed")
    assert broken["level"] == "error"
    assert broken["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == NF
    assert broken["locations"][0]["physicalLocation"]["region"]["startLine"] == CUMSUM_LINE

    suites = ET.parse(junit).getroot()
    assert suites.tag == "testsuites" and suites.get("failures") == "1"
    failing = [c for c in suites.iter("testcase") if c.find("failure") is not None]
    assert len(failing) == 1 and failing[0].get("line") == str(CUMSUM_LINE)
    assert failing[0].find("failure").get("type") == "argument-renamed"

    asked = json.loads(requests.read_text(encoding="utf-8"))
    assert asked["reviewers"] == MAINTAINERS
    assert "opgov: bc-breaking" in asked["labels"]
    assert asked["gh_pr_edit_args"][:4] == ["--add-reviewer", "alice", "--add-reviewer", "bob"]


def test_same_verdicts_as_check_bc_on_real_releases(repo, tmp_path):
    old, new = PYTORCH_DATA / "2.12.0" / NF, PYTORCH_DATA / "2.13.0" / NF
    code, pr = report(repo, "--base", str(old), "--head", str(new))
    bc = subprocess.run([OPGOV, "check-bc", str(old), str(new), "--format", "json"], capture_output=True, text=True,
                        env={**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg")})
    assert code == bc.returncode == 1
    theirs = {(f["operator"], f["rule"], f["severity"]) for f in json.loads(bc.stdout)["findings"]}
    ours = {(f["operator"], f["rule"], f["severity"]) for f in pr["findings"] if f["kind"] in ("bc", "fc", "new")}
    assert ours == theirs and len(theirs) > 100


# --- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("addition", "expected"), [
    ("\n[reviewers\n", r"\.opgov\.toml:9: malformed TOML"),
    ('\n[[allow]]\noperator = "aten::x"\nreason = "r"\nowner = "o"\nexpires = "soon"\n',
     r"\.opgov\.toml:13: expires must be a date"),
    ('\n[[allow]]\nregex = "aten::(("\nreason = "r"\nowner = "o"\nexpires = 2099-01-01\n',
     r"\.opgov\.toml:10: regex 'aten::\(\(' is not a regular expression"),
    ('\n[rules.severity]\nno-such-rule = "error"\n', r"\.opgov\.toml:10: unknown rule id 'no-such-rule'"),
    ('\nsurprise = 1\n', r"\.opgov\.toml:9: unknown key 'surprise'"),
])
def test_malformed_config_exits_2_with_file_and_line(repo, addition, expected):
    append(repo, addition, name=".opgov.toml")
    done = run(repo)
    assert done.returncode == 2, done.stdout
    assert re.search(expected, done.stderr), done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_bad_revision_and_malformed_registry_exit_2(repo):
    done = run(repo, "--base", "no-such-ref")
    assert done.returncode == 2 and "no-such-ref: no such file, and not a git revision" in done.stderr
    append(repo, "- func: broken(Tensor self -> Tensor\n")
    done = run(repo)
    assert done.returncode == 2 and re.search(r"native_functions\.yaml:\d+: ", done.stderr)
    assert "Traceback" not in done.stderr


# --- a database's decisions, exported or live ---------------------------------------------------

PIXEL_SHUFFLE = "- func: pixel_shuffle(Tensor self, int upscale_factor) -> Tensor\n"


def opgov(tmp_path: Path, *args: str) -> str:
    done = subprocess.run([OPGOV, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "xdg")})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def review_db(tmp_path, pytorch_versions) -> Path:
    """A database holding 2.13.0 and the 2023 review, which decided pixel_shuffle is core (2.13.0
    does not tag it)."""
    db = tmp_path / "opgov.db"
    opgov(tmp_path, "--db", str(db), "db", "upgrade")
    opgov(tmp_path, "--db", str(db), "import", str(PYTORCH_DATA / "2.13.0" / NF), "--label", "2.13.0")
    opgov(tmp_path, "--db", str(db), "--actor", "admin", "decisions", "load",
          str(Path(__file__).resolve().parents[2] / "data" / "decisions" / "core-aten-review-2023.yaml"))
    return db


def test_decisions_from_a_database_and_from_its_export(repo, review_db, tmp_path):
    edit(repo, PIXEL_SHUFFLE, PIXEL_SHUFFLE + "  tags: core\n")
    code, data = report(repo)  # no database: nothing on record
    assert code == 1 and only(data["findings"], "core-tag-added")["line"] == 4517

    code, data = report(repo, env={"OPGOV_DATABASE_URL": str(review_db)})
    assert code == 0
    f = only(data["findings"], "core-tag-added")
    assert f["severity"] == "info" and "the database" in f["message"]

    exported = repo / "opgov-decisions.yaml"
    assert "wrote 82 decisions" in opgov(tmp_path, "--db", str(review_db), "decisions", "export", str(exported))
    edit(repo, 'rules_file = "decomp_rules.yaml"\n',
         'rules_file = "decomp_rules.yaml"\ndecisions_file = "opgov-decisions.yaml"\n', name=".opgov.toml")
    code, data = report(repo)
    assert code == 0
    f = only(data["findings"], "core-tag-added")
    assert f["severity"] == "info" and "opgov-decisions.yaml:" in f["message"]


# --- PyTorch's ALLOW_LIST -----------------------------------------------------------------------

# The shape of PyTorch's check_forward_backward_compatibility.py: comments above groups, dates as
# datetime.date(...), an optional third element, a duplicate, entries long expired.
TORCH_FILE = '''\
import datetime
import re

# Allowlist item format: (name regex, date, optional argument regex)
ALLOW_LIST = [
    ("c10_experimental", datetime.date(2222, 1, 1)),
    # Internal
    ("static", datetime.date(9999, 1, 1)),
    ("aten::_logcumsumexp", datetime.date(9999, 1, 1)),
    ("aten::_logcumsumexp", datetime.date(2022, 1, 1)),
    ("aten::split_with_sizes", datetime.date(2099, 9, 1), "SymInt\\\\[\\\\] split_sizes"),

    ("aten::_foreach.*", datetime.date(2022, 8, 1)),
]

ALLOW_LIST_COMPILED = [(re.compile(item[0]), item[1]) for item in ALLOW_LIST]
'''


def test_allowlist_convert_then_check_pr_uses_the_entries(repo, tmp_path):
    torch_file = tmp_path / "check_forward_backward_compatibility.py"
    torch_file.write_text(TORCH_FILE, encoding="utf-8")
    printed = subprocess.run([OPGOV, "allowlist", "convert", str(torch_file)], cwd=repo, capture_output=True,
                             text=True)
    assert printed.returncode == 0, printed.stderr
    assert "6 ALLOW_LIST entries: 4 converted, 1 duplicates merged, 1 expired left out" in printed.stderr
    assert printed.stdout.count("[[allow]]") == 4
    assert 'schema = "SymInt\\\\[\\\\] split_sizes"' in printed.stdout
    assert 'reason = "PyTorch ALLOW_LIST (check_forward_backward_compatibility.py:8): Internal"' in printed.stdout
    assert "aten::_foreach" not in printed.stdout

    before = (repo / ".opgov.toml").read_text(encoding="utf-8")
    wrote = subprocess.run([OPGOV, "allowlist", "convert", str(torch_file), "--write", "--owner", "carol"],
                           cwd=repo, capture_output=True, text=True)
    assert wrote.returncode == 0, wrote.stderr
    after = (repo / ".opgov.toml").read_text(encoding="utf-8")
    assert after.startswith(before) and after.count("[[allow]]") == 4
    again = subprocess.run([OPGOV, "allowlist", "convert", str(torch_file), "--write"], cwd=repo,
                           capture_output=True, text=True)
    assert "0 converted" in again.stdout and "4 already in .opgov.toml" in again.stdout
    assert (repo / ".opgov.toml").read_text(encoding="utf-8") == after

    edit(repo, NONCORE, "")
    code, data = report(repo)
    assert code == 0
    f = only(data["findings"], "operator-removed")
    assert f["severity"] == "waived" and "carol" in f["message"]


def test_allowlist_convert_refuses_what_it_cannot_read(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("ALLOW_LIST = [\n    ('aten::x', datetime.date(2022, 13, 1)),\n]\n", encoding="utf-8")
    done = subprocess.run([OPGOV, "allowlist", "convert", str(bad)], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and f"{bad}:2: not a valid date" in done.stderr
    bad.write_text("ALLOW_LIST = [\n  ('aten::x',\n", encoding="utf-8")
    done = subprocess.run([OPGOV, "allowlist", "convert", str(bad)], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and f"{bad}:" in done.stderr and "not Python" in done.stderr
    assert not (tmp_path / ".opgov.toml").exists()


# --- the action, the pre-commit hook and the example workflow -------------------------------------


def test_action_hook_and_example_workflow_use_real_options():
    import click
    import typer
    import yaml

    import opgov.cli.main  # noqa: F401
    from opgov.cli.app import app

    root = Path(__file__).resolve().parents[2]
    command = typer.main.get_command(app).commands["check-pr"]
    options = {opt for param in command.params for opt in getattr(param, "opts", [])}
    action = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    script = next(step["run"] for step in action["runs"]["steps"] if step.get("id") == "check")
    used = set(re.findall(r"(--[a-z-]+)", script.split("opgov check-pr", 1)[1]))
    assert used and used <= options, used - options
    hooks = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["entry"] for h in hooks] == ["opgov check-pr"] and hooks[0]["pass_filenames"] is False
    workflow = yaml.safe_load((root / "docs" / "examples" / "opgov-pr.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["check-pr"]["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    assert not (root / ".github" / "workflows" / "opgov-pr.yml").exists()
    assert isinstance(command, click.Command)


def test_unchanged_rule_whose_target_leaves_core(repo):
    """relu6 → clamp and hardswish → clamp, … are unchanged, but the PR takes clamp out of core: the
    tag change and the rules it breaks are reported, and the new hardtanh → relu6 reaches clamp too."""
    edit(repo, "  - op: aten::hardswish\n",
         "  - op: aten::hardtanh\n    into: [aten::relu6]\n  - op: aten::hardswish\n", name="decomp_rules.yaml")
    clamp = "- func: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor\n"
    text = (repo / NF).read_text(encoding="utf-8")
    start = text.index(clamp)
    tags = text.index("  tags: [core, pointwise]\n", start)
    assert text.count("\n", start, tags) <= 8  # clamp's own entry
    (repo / NF).write_text(text[:tags] + "  tags: pointwise\n" + text[tags + len("  tags: [core, pointwise]\n"):],
                           encoding="utf-8")
    code, data = report(repo)
    assert code == 1
    assert only(data["findings"], "core-tag-removed")["operator"] == "aten::clamp"
    leaving = [f for f in data["findings"] if f["rule"] == "decomp-leaves-core"]
    assert [(f["operator"], f["file"], f["line"]) for f in leaving] == [
        ("aten::relu6", "decomp_rules.yaml", 4), ("aten::hardtanh", "decomp_rules.yaml", 6),
        ("aten::hardswish", "decomp_rules.yaml", 8)]
    assert "which this PR takes out of core" in leaving[0]["message"]
    assert "now reaches aten::clamp" in leaving[1]["message"] and "aten::hardtanh → aten::relu6 → aten::clamp" in \
        leaving[1]["message"]


def test_a_database_exception_waives_a_non_core_removal_but_never_a_core_break(repo, review_db, tmp_path):
    opgov(tmp_path, "--db", str(review_db), "exceptions", "add", "aten::_logcumsumexp", "--reason",
          "helper retired", "--expires", "2099-06-30")
    opgov(tmp_path, "--db", str(review_db), "exceptions", "add", "aten::cumsum", "--reason", "attempt",
          "--expires", "2099-06-30")
    edit(repo, NONCORE, "")
    edit(repo, CUMSUM, CUMSUM.replace("int dim", "int axis"))
    code, data = report(repo, env={"OPGOV_DATABASE_URL": str(review_db)})
    assert code == 1
    removed = only(data["findings"], "operator-removed")
    assert removed["severity"] == "waived" and "database's exception 'aten::_logcumsumexp'" in removed["message"]
    (broken,) = [f for f in data["findings"] if f["rule"] == "argument-renamed" and f["kind"] == "bc"]
    assert broken["severity"] == "error" and "never allowed" in broken["message"]
    code, data = report(repo)  # the same PR without the database: nothing waives the removal
    assert code == 1 and only(data["findings"], "operator-removed")["severity"] == "error"


def test_outside_a_git_repository_two_files_are_needed(tmp_path, pytorch_versions):
    plain = tmp_path / "plain"
    plain.mkdir()
    done = run(plain)
    assert done.returncode == 2 and "not in a git repository: give --base FILE" in done.stderr
    old, new = PYTORCH_DATA / "2.12.0" / NF, PYTORCH_DATA / "2.13.0" / NF
    done = run(plain, "--base", str(old), "--head", str(new), "--format", "junit")
    assert done.returncode == 1
    suites = ET.fromstring(done.stdout.split("\n", 1)[1])
    assert int(suites.get("failures")) == len([c for c in suites.iter("testcase") if c.find("failure") is not None])
