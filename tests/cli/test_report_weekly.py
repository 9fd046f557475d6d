"""The weekly report end to end: the four PyTorch releases replayed into one simulation database
with a season of governance between them, then ``opgov report weekly`` in md, json and html.

The story (all times UTC; the report is generated as of 2025-09-23, the day after the 2.13.0
import, so its week is (2025-09-16, 2025-09-23]):

- 2.0.0 is imported in January. ``_transformer_decoder_only_layer_fwd`` goes through the whole
  lifecycle (deprecating, deprecated 15 days later, deleted 180 days after that), then 2.6.0,
  imported in July, no longer has it. The 2023 review's decisions are loaded after that import.
- 2.12.0 and 2.13.0 follow a week apart. Proposals are opened, approved, rejected and withdrawn
  around them; four operators are at four points of the lifecycle; BC exceptions expire.
- After the as-of day a proposal is approved, ``tick --apply`` moves the due transitions, and a
  new exception is recorded: the report as of 2025-09-23 must not show any of it.

The database is built once for the module (the four imports take a few seconds).
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from functools import lru_cache

import pytest

from conftest import REPO, Result
from opgov.formats.decisions import read_decisions_file
from opgov.formats.registry import read_registry
from opgov.render.report import GITHUB_BODY_LIMIT
from opgov.results.reports import SECTION_KEYS
from report_pages import md_section, md_tables

REVIEW_2023 = REPO / "data" / "decisions" / "core-aten-review-2023.yaml"
IMPORTED = {
    "2.0.0": "2025-01-06T09:00:00Z",
    "2.6.0": "2025-07-28T09:00:00Z",
    "2.12.0": "2025-09-15T09:00:00Z",
    "2.13.0": "2025-09-22T09:00:00Z",
}
AS_OF = "2025-09-23"  # the day after the 2.13.0 import

FULL_LIFECYCLE = "aten::_transformer_decoder_only_layer_fwd"  # deleted, then gone from 2.6.0
OVERDUE = "aten::_convolution.deprecated"  # deprecating since 2025-08-25: deprecated-able from 09-08
DUE_NOW = "aten::_cast_Float"  # deprecating since 2025-09-04 12:00: deprecated-able from 09-18 12:00
DUE_SOON = "aten::var.dim"  # core, deprecating since 2025-09-12: deprecated-able from 09-26
DEPRECATED = "aten::std.dim"  # deprecated since 2025-08-20: deletable from 2026-02-16


class Runner:
    """``opgov`` in-process on one database; usable outside a test function (module fixtures)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.imports: dict[str, dict] = {}  # label → what `opgov import --json` said

    def __call__(self, *args, actor: str = "alice", now: str | None = None) -> Result:
        from opgov.cli.main import run

        argv = ["--db", self.url, "--actor", actor] + (["--now", now] if now else []) + [str(a) for a in args]
        out, err = io.StringIO(), io.StringIO()
        code = 0
        with redirect_stdout(out), redirect_stderr(err):
            try:
                run(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
        return Result(code, out.getvalue(), err.getvalue())

    def ok(self, *args, **kw) -> Result:
        result = self(*args, **kw)
        assert result.code == 0, f"opgov {' '.join(map(str, args))} exited {result.code}: {result.err}{result.out}"
        return result


@pytest.fixture(scope="module")
def history(tmp_path_factory, pytorch_versions, pytorch_release) -> Runner:
    """The simulation database holding the four releases and their governance history."""
    url = f"sqlite:///{tmp_path_factory.mktemp('weekly') / 'opgov.db'}"
    runner = Runner(url)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OPGOV_NOW", raising=False)
        mp.setenv("COLUMNS", "200")
        _replay(runner, pytorch_release)
    return runner


def _replay(cli: Runner, release) -> None:
    def imp(version: str) -> None:
        folder = release(version)
        cli.imports[version] = cli.ok("import", folder / "native_functions.yaml", "--tags-yaml", folder / "tags.yaml",
                                      "--label", version, "--json", actor="syncbot", now=IMPORTED[version]).json()

    def at(day: str, hour: int = 10) -> str:
        return f"{day}T{hour:02d}:00:00Z"

    cli.ok("db", "upgrade", "--simulation")
    cli.ok("members", "add", "alice", "--role", "maintainer", now=at("2025-01-06", 8))
    for name, role in (("bob", "maintainer"), ("carol", "maintainer"), ("dave", "developer"),
                       ("erin", "developer"), ("syncbot", "bot")):
        cli.ok("members", "add", name, "--role", role, now=at("2025-01-06", 8))
    imp("2.0.0")
    cli.ok("deprecate", FULL_LIFECYCLE, "--reason", "decoder-only fast path superseded by SDPA",
           actor="carol", now=at("2025-01-07"))
    cli.ok("mark-deprecated", FULL_LIFECYCLE, actor="bob", now=at("2025-01-22"))
    cli.ok("delete", FULL_LIFECYCLE, "--reason", "no callers left", now=at("2025-07-22"))
    imp("2.6.0")
    cli.ok("decisions", "load", REVIEW_2023, now=at("2025-07-28"))

    cli.ok("deprecate", DEPRECATED, "--replacement", "aten::std.correction", "--reason", "use the correction= overload",
           actor="carol", now=at("2025-08-01"))
    p1 = _proposal(cli("propose-core", "aten::_int_mm", "--rationale", "int8 matmul is everywhere in quantized LLMs",
                       "--json", actor="dave", now=at("2025-08-04")))
    cli.ok("review", p1, "--approve", "--comment", "yes, no exact decomposition", now=at("2025-08-05"))
    p2 = _proposal(cli("propose-core", "aten::_chunk_cat", "--rationale", "FSDP2 needs it as one kernel", "--json",
                       actor="dave", now=at("2025-08-11")))
    cli.ok("review", p2, "--approve", "--comment", "agreed", now=at("2025-08-12"))
    cli.ok("review", p2, "--approve", "--comment", "agreed", actor="bob", now=at("2025-08-13"))
    cli.ok("mark-deprecated", DEPRECATED, actor="bob", now=at("2025-08-20"))
    cli.ok("deprecate", OVERDUE, "--replacement", "aten::_convolution", "--reason", "the old overload of _convolution",
           actor="carol", now=at("2025-08-25"))
    cli.ok("exceptions", "add", "aten::*.dimname", "--reason", "named tensors are going away",
           "--expires", "2025-09-10", now=at("2025-09-01"))
    cli.ok("exceptions", "add", "aten::stft*", "--reason", "stft rework", "--expires", "2025-12-31",
           now=at("2025-09-02"))
    removed_id = cli.ok("exceptions", "list", "--json").json()[-1]["id"]
    cli.ok("deprecate", DUE_NOW, "--reason", "use aten::_to_copy", actor="bob", now=at("2025-09-04", 12))
    cli.ok("exceptions", "remove", removed_id, now=at("2025-09-05"))  # a simulation's clock only goes forward
    cli.ok("deprecate", DUE_SOON, "--replacement", "aten::var.correction", "--reason", "unbiased= is superseded by "
           "correction=", now=at("2025-09-12"))

    imp("2.12.0")
    cli.ok("exceptions", "add", "aten::_foreach_*", "--reason", "foreach overloads are being reworked",
           "--expires", "2025-09-26", now=at("2025-09-15"))
    p3 = _proposal(cli("propose-decompose", "aten::_fused_rms_norm",
                       "--into", "aten::mul.Tensor,aten::rsqrt,aten::mean.dim,aten::add.Tensor",
                       "--rationale", "RMSNorm is a few pointwise ops and a mean", "--json",
                       actor="dave", now=at("2025-09-16")))
    p4 = _proposal(cli("propose-core", "aten::hash_tensor", "--rationale", "checkpoint hashing on device", "--json",
                       actor="erin", now=at("2025-09-16", 11)))
    p5 = _proposal(cli("propose-core", "aten::mm.dtype", "--rationale", "mixed-precision matmul", "--json",
                       actor="dave", now=at("2025-09-16", 12)))
    cli.ok("review", p3, "--approve", "--comment", "matches the eager kernel", now=at("2025-09-17"))
    cli.ok("review", p4, "--reject", "--comment", "a debugging aid, not a model operator", now=at("2025-09-17"))
    cli.ok("review", p3, "--approve", "--comment", "fine by me", actor="bob", now=at("2025-09-18"))
    cli.ok("review", p4, "--reject", "--comment", "backends need not implement it", actor="carol",
           now=at("2025-09-19"))
    cli.ok("withdraw", p5, actor="dave", now=at("2025-09-19", 11))
    p6 = _proposal(cli("propose-core", "aten::_grouped_mm", "--rationale", "mixture-of-experts layers need it",
                       "--json", actor="dave", now=at("2025-09-20")))
    cli.ok("review", p6, "--approve", "--comment", "yes", now=at("2025-09-21"))
    imp("2.13.0")

    # after the as-of day: none of this may show in the report as of 2025-09-23
    cli.ok("review", p6, "--approve", "--comment", "yes", actor="bob", now=at("2025-09-24"))
    cli.ok("tick", "--apply", actor="syncbot", now=at("2025-09-24", 11))
    cli.ok("exceptions", "add", "aten::_scaled_*", "--reason", "fp8 scaling API churn", "--expires", "2025-10-01",
           now=at("2025-09-24", 12))
    assert [p1, p2, p3, p4, p5, p6] == [1, 2, 3, 4, 5, 6]


def _proposal(result: Result) -> int:
    assert result.code == 0, result.err
    return result.json()["id"]


def weekly(cli: Runner, *args: str, fmt: str = "json"):
    result = cli.ok("report", "weekly", "--format", fmt, *args, now="2025-11-01T00:00:00Z")
    return result.json() if fmt == "json" else result.out


@pytest.fixture(scope="module")
def week(history) -> dict:
    """The JSON report as of the day after the 2.13.0 import."""
    return weekly(history, "--as-of", AS_OF)


@pytest.fixture(scope="module")
def week_md(history) -> str:
    return weekly(history, "--as-of", AS_OF, fmt="md")


def md_rows(section: str) -> list[list[str]]:
    """The body rows of every table in a markdown section (a long table continues folded)."""
    return [row for table in md_tables(section) for row in table[1:]]


@lru_cache(maxsize=None)
def registry_ops(folder) -> dict:
    return read_registry(str(folder / "native_functions.yaml")).ops


def names(rows: list[dict], key: str = "operator") -> list[str]:
    return [r[key] for r in rows]


# ------------------------------------------------------------------------------------------
# The shape and the period
# ------------------------------------------------------------------------------------------


def test_json_has_the_period_and_one_key_per_section(week):
    assert list(week) == ["as_of", "since", "generated_by", "soon_days", "closure_facts", *SECTION_KEYS]
    assert week["as_of"] == "2025-09-23T00:00:00Z" and week["since"] == "2025-09-16T00:00:00Z"
    assert week["generated_by"].startswith("opgov ")


def test_markdown_title_names_the_week_and_the_summary_counts(week, week_md):
    assert week_md.startswith("# Core ATen opset: weekly report, 2025-09-16 to 2025-09-23\n")
    summary = next(line for line in week_md.splitlines() if line.startswith("**This week:**"))
    assert f"{len(week['review_queue']):,} operators awaiting a category decision" in summary
    # autogen-generated operators removed with their entries are BC errors too: one story
    removed = len(week["removed_without_deprecation"])
    assert f"{removed} BC errors" in summary and removed == 116
    assert f"{len(week['removed_without_deprecation'])} operators removed without deprecation" in summary
    headings = [line[3:] for line in week_md.splitlines() if line.startswith("## ")]
    assert headings == [
        "Review queue", "Agenda: the queue with its suggestions", "Open proposals", "Decided proposals", "Lifecycle: overdue", "Lifecycle: due now",
        "Lifecycle: due within 7 days", "Deprecated operators", "Nothing this week", "Core drift",
        "Closure of torch's decomposition table",
        "Compatibility findings", "Removed without deprecation", "Exceptions expired",
        "Exceptions expiring within 7 days",
        "The opset now", "The opset across snapshots"]
    assert "Nothing in: core and lifecycle tags changed." in week_md  # the one section with nothing, folded


def test_a_bad_period_or_output_is_one_line_and_exit_2(history, tmp_path):
    for args, words in ((("--as-of", AS_OF, "--since", "2025-09-30"), ["--since 2025-09-30", "--as-of 2025-09-23"]),
                        (("--as-of", AS_OF, "--since", AS_OF), ["period is empty"]),
                        (("--as-of", "next tuesday"), ["--as-of", "ISO 8601"]),
                        (("--out", tmp_path / "missing" / "weekly.html"), ["--out", "missing"]),
                        (("--out", tmp_path), ["--out", "directory"])):
        result = history("report", "weekly", *args)
        assert result.code == 2, (args, result)
        assert result.err.count("\n") == 1 and result.err.startswith("opgov: error: "), result.err
        assert "Traceback" not in result.err and result.out == ""
        for word in words:
            assert word in result.err, (args, result.err)
    assert not (tmp_path / "missing").exists()


# ------------------------------------------------------------------------------------------
# Review queue
# ------------------------------------------------------------------------------------------


def test_review_queue_holds_new_functional_operators_oldest_first(week, pytorch_release):
    everything = week["review_queue"]
    seen = [item["first_seen"]["imported_at"] for item in everything]
    assert seen == sorted(seen)
    # the first import's functional operators PyTorch does not tag core wait, undecided (a history
    # that starts at any release can be reviewed); its tagged ones wait only when a later release
    # edited their core tag: dropped (core until the committee decides) or added (a core addition
    # needs the committee's review)
    baseline = [i for i in everything if i["first_seen"]["label"] == "2.0.0"]
    first = registry_ops(pytorch_release("2.0.0"))
    tagged_first = {n for n, op in first.items() if "core" in op.tags}
    tagged_last = {n for n, op in registry_ops(pytorch_release("2.13.0")).items() if "core" in op.tags}
    undecided = [i for i in baseline if i["review_reason"] == "new in 2.0.0 (the first snapshot)"]
    assert len(undecided) > 1000 and all(i["operator"] not in tagged_first and first[i["operator"]].kind
                                         == "functional" for i in undecided)
    edited = [i for i in baseline if i not in undecided]
    dropped = [i for i in edited if "dropped the core tag" in (i["review_reason"] or "")]
    assert dropped and all(i["operator"] in tagged_first - tagged_last and i["suggested_category"] == "core"
                           for i in dropped)
    assert all(i in dropped or i["operator"] in tagged_last - tagged_first for i in edited)
    queue = [i for i in everything if i not in baseline]
    labels = [item["first_seen"]["label"] for item in queue]
    assert labels[0] == "2.6.0" and labels[-1] == "2.13.0"
    # the one operator 2.13.0 added that has its own entry is new and functional: it waits
    old, new = registry_ops(pytorch_release("2.12.0")), registry_ops(pytorch_release("2.13.0"))
    added = [n for n, op in new.items() if n not in old and op.kind == "functional"]
    assert [i["operator"] for i in queue if i["first_seen"]["label"] == "2.13.0"] == added
    for item in queue:
        op = new[item["operator"]]
        assert op.kind == "functional"
        if item["generated_from"] is None:
            assert item["schema_text"] == op.schema
        assert item["suggested_category"] == op.suggested_category
    by_name = {i["operator"]: i for i in queue}
    # a report of the latest snapshot suggests what the queue suggests (a graph operator PyTorch tags core)
    assert by_name["aten::sym_is_contiguous"]["suggested_category"] == "core"
    assert by_name["aten::sym_is_contiguous"]["suggestion"] == "core"
    assert by_name["aten::sym_is_contiguous"]["suggestion_reason"].startswith("a graph operator (")
    assert "tags it core" in by_name["aten::sym_is_contiguous"]["suggestion_reason"]
    assert by_name["aten::_fused_adagrad.tensor_lr"]["generated_from"] == "aten::_fused_adagrad_.tensor_lr"
    # decided ones left the queue: by proposal (before and in the week) and by the 2023 review
    for decided in ("aten::_chunk_cat", "aten::_fused_rms_norm", "aten::_native_batch_norm_legit_no_training"):
        assert decided not in by_name
    # still waiting on the as-of day: rejected, withdrawn, open, and approved only later
    for waiting in ("aten::hash_tensor", "aten::mm.dtype", "aten::_int_mm", "aten::_grouped_mm"):
        assert waiting in by_name


def left_out(section: str) -> int:
    """How many rows a markdown table cut to fit a GitHub comment says it leaves out."""
    match = re.search(r"^\*([\d,]+) more rows not shown here, to fit a GitHub comment", section, re.M)
    return int(match.group(1).replace(",", "")) if match else 0


def test_markdown_fits_in_a_github_issue_and_says_what_it_leaves_out(week, week_md):
    assert len(week_md) <= GITHUB_BODY_LIMIT
    for title, key, column in (("Review queue", "review_queue", 0), ("Compatibility findings", "compat_findings", 3),
                               ("Removed without deprecation", "removed_without_deprecation", 1)):
        section = md_section(week_md, title)
        tables = md_tables(section)[1 if key == "compat_findings" else 0:]  # after the overview by rule
        listed = [row[column].strip("`") for table in tables for row in table[1:]]
        assert left_out(section) > 0, title
        assert listed == names(week[key])[:len(listed)], title  # the first rows, in order
        assert len(listed) + left_out(section) == len(week[key]), title


def test_review_queue_in_markdown_oldest_first(week, week_md):
    section = md_section(week_md, "Review queue")
    rows = md_rows(section)
    assert [r[0].strip("`") for r in rows] == names(week["review_queue"])[:len(rows)]
    assert "<details>" in section
    assert {r[2] for r in rows[:1]} <= {"2.0.0 (2025-01-06)", "2.6.0 (2025-07-28)"}  # oldest first
    assert all(r[1] for r in rows)  # a schema, or where a generated operator comes from


# ------------------------------------------------------------------------------------------
# Proposals
# ------------------------------------------------------------------------------------------


def test_open_proposals_as_of_the_day_with_votes_so_far_and_age(week):
    opened = {p["id"]: p for p in week["proposals_open"]}
    assert list(opened) == [1, 6]
    assert opened[1]["operator"] == "aten::_int_mm" and opened[1]["age_days"] == 49
    assert opened[1]["approvals"] == ["alice"] and opened[1]["quorum"] == 2 and opened[1]["proposer"] == "dave"
    # bob approved proposal 6 the day after: as of the 23rd it had alice's vote only
    assert opened[6]["operator"] == "aten::_grouped_mm" and opened[6]["approvals"] == ["alice"]
    assert opened[6]["age_days"] == 2


def test_decided_proposals_of_the_week_with_votes_and_rationale(week, week_md):
    decided = {p["id"]: p for p in week["proposals_decided"]}
    assert list(decided) == [3, 4, 5]  # proposal 2 was decided in August, 6 after the as-of day
    assert decided[3]["outcome"] == "approved" and decided[3]["kind"] == "decompose"
    assert decided[3]["targets"] == ["aten::mul.Tensor", "aten::rsqrt", "aten::mean.dim", "aten::add.Tensor"]
    assert decided[3]["votes"] == [{"voter": "alice", "approve": True, "comment": "matches the eager kernel"},
                                   {"voter": "bob", "approve": True, "comment": "fine by me"}]
    assert decided[3]["rationale"] == "RMSNorm is a few pointwise ops and a mean"
    assert decided[3]["decided_at"] == "2025-09-18T10:00:00Z"
    assert decided[4]["outcome"] == "rejected" and [v["approve"] for v in decided[4]["votes"]] == [False, False]
    assert decided[5]["outcome"] == "withdrawn" and decided[5]["votes"] == []
    rows = md_rows(md_section(week_md, "Decided proposals"))
    assert [r[0] for r in rows] == ["3", "4", "5"]
    assert rows[0][2] == "decompose into `aten::mul.Tensor`, `aten::rsqrt`, `aten::mean.dim`, `aten::add.Tensor`"
    assert "**alice** approve: matches the eager kernel; **bob** approve: fine by me" == rows[0][5]
    assert rows[0][6] == "RMSNorm is a few pointwise ops and a mean"
    assert "**carol** reject: backends need not implement it" in rows[1][5]


# ------------------------------------------------------------------------------------------
# Lifecycle
# ------------------------------------------------------------------------------------------


def test_lifecycle_due_overdue_and_soon_with_dates_and_previous_actor(week):
    def only(key, op):
        # the operator and the rest of its torchgen family (aten::var.out moves with aten::var.dim),
        # all due on the same day
        items = week[key]
        assert items[0]["operator"] == op and len({i["due_on"] for i in items}) == 1, items
        assert all(i["operator"].split("::")[1].split(".")[0].rstrip("_") == op.split("::")[1].split(".")[0]
                   for i in items), items
        return items[0]

    overdue, now, soon = (only("lifecycle_overdue", OVERDUE), only("lifecycle_due_now", DUE_NOW),
                          only("lifecycle_due_soon", DUE_SOON))
    assert (overdue["operator"], overdue["due_on"], overdue["previous_step_actor"]) == (OVERDUE, "2025-09-08", "carol")
    assert overdue["previous_step_at"] == "2025-08-25T10:00:00Z" and overdue["to_state"] == "deprecated"
    assert (now["operator"], now["due_on"], now["previous_step_actor"]) == (DUE_NOW, "2025-09-18", "bob")
    assert now["reason"] == "use aten::_to_copy"
    assert (soon["operator"], soon["due_on"], soon["previous_step_actor"]) == (DUE_SOON, "2025-09-26", "alice")
    # std.dim is deprecated and its deletion is months away: listed below, not due
    deprecated = {d["operator"]: d for d in week["deprecated_ops"]}
    # by the date of their state; each family together (std.out with std.dim, var.out with var.dim)
    assert list(deprecated) == [DEPRECATED, "aten::std.out", OVERDUE, DUE_NOW, DUE_SOON, "aten::var.out"]
    assert deprecated[DEPRECATED]["state"] == "deprecated"
    assert deprecated[DEPRECATED]["replacement"] == "aten::std.correction"
    assert deprecated[DEPRECATED]["reason"] == "use the correction= overload"
    assert deprecated[DUE_SOON]["replacement"] == "aten::var.correction"
    assert deprecated[DUE_NOW]["replacement"] is None
    assert FULL_LIFECYCLE not in deprecated


def test_the_queue_page_lists_the_steps_coming_due_as_the_report_does(history, tmp_path):
    # the /queue page reads only the steps coming due, not the whole report: the static site's queue page
    # lists the operators of its report's three lifecycle lists, in their order
    site = tmp_path / "site"
    history.ok("site", "build", site, "--ops", OVERDUE, now=f"{AS_OF}T12:00:00Z")
    report = json.loads((site / "data" / "report.json").read_text(encoding="utf-8"))
    listed = [d["operator"] for key in ("lifecycle_overdue", "lifecycle_due_now", "lifecycle_due_soon")
              for d in report[key]]
    table = re.search(r'<table id="lifecycle-due">.*?</table>', (site / "queue.html").read_text(encoding="utf-8"),
                      re.S).group(0)
    shown = re.findall(r"<tr><td>(?:<a [^>]*>)?<code>([^<]+)</code>", table)
    assert {OVERDUE, DUE_NOW, DUE_SOON} <= set(listed) and shown == listed


def test_lifecycle_in_markdown(week_md):
    overdue = md_rows(md_section(week_md, "Lifecycle: overdue"))
    assert overdue == [["2025-09-08 (15 days late)", f"`{OVERDUE}`", "deprecating → deprecated",
                        "2025-08-25 10:00 UTC by carol", "the old overload of \\_convolution"]]
    soon = md_rows(md_section(week_md, "Lifecycle: due within 7 days"))
    assert soon[0][:2] == ["2025-09-26 (in 3 days)", f"`{DUE_SOON}`"]
    deprecated = md_rows(md_section(week_md, "Deprecated operators"))
    assert deprecated[0][:4] == [f"`{DEPRECATED}`", "deprecated", "2025-08-20", "`aten::std.correction`"]


# ------------------------------------------------------------------------------------------
# Compatibility
# ------------------------------------------------------------------------------------------


def test_the_named_tensor_overloads_removed_in_2_13_are_removed_without_deprecation(week):
    removed = week["removed_without_deprecation"]
    assert {r["snapshot"] for r in removed} == {"2.13.0"}
    entries = [r for r in removed if r["generated_from"] is None]
    assert len(entries) == 108  # ../shared/pytorch/README.md: 2.13.0 removed 108 named-tensor overloads
    for name in ("aten::all.dimname", "aten::align_to.ellipsis_idx", "aten::unbind.Dimname"):
        assert name in names(entries)
    assert all(r["last_schema"] for r in entries)
    # out= variants generated by autogen: leave with their entry, and say where they came from
    generated = [r for r in removed if r["generated_from"]]
    assert generated and all(r["generated_from"] in names(entries) for r in generated)
    # the same 108 and the operators they generated are the BC errors of the 2.13.0 import
    errors = [f for f in week["compat_findings"] if f["severity"] == "error"]
    assert sorted(names(errors)) == sorted(names(entries) + names(generated))
    assert {(f["kind"], f["rule"], f["snapshot"]) for f in errors} == {("bc", "operator-removed", "2.13.0")}


def test_many_bc_errors_fold_under_an_overview_by_rule(week, week_md):
    section = md_section(week_md, "Compatibility findings")
    visible, _, folded = section.partition("<details>")
    overview, first = md_tables(visible)
    assert overview[1][:5] == ["**error**", "BC", "2.13.0", "`operator-removed`", "116"]  # the 108 entries and the 8 operators their autogen: generated
    assert len(first) == 1 + 10 and "<summary>Show " in folded  # the rest folded away


def test_removed_without_deprecation_in_markdown(week, week_md):
    section = md_section(week_md, "Removed without deprecation")
    generated = sum(1 for r in week["removed_without_deprecation"] if r["generated_from"])
    total = len(week["removed_without_deprecation"])
    assert f"{total} operators removed in 2.13.0 ({generated} of them generated by autogen" in section
    rows = md_rows(section)
    assert len(rows) + left_out(section) == total
    assert ["2.13.0", "`aten::all.dimname`", "`all.dimname(Tensor self, Dimname dim, bool keepdim=False) -> Tensor`"] \
        in rows


def test_a_deleted_operator_leaving_the_yaml_is_not_a_removal(history):
    """The week of the 2.6.0 import: FULL_LIFECYCLE (and the out= variant its entry generated)
    completed the lifecycle before; the other operators 2.6.0 dropped did not."""
    report = weekly(history, "--as-of", "2025-07-29")
    removed = names(report["removed_without_deprecation"])
    assert removed and FULL_LIFECYCLE not in removed and f"{FULL_LIFECYCLE}.out" not in removed
    assert "aten::_nested_tensor_offsets" in removed
    assert report["opset_now"]["lifecycle"]["deleted"] == 2  # with the out= variant its entry generated
    # that week's findings: BC errors first, then FC warnings
    severities = [(f["severity"], f["kind"]) for f in report["compat_findings"]]
    assert ("error", "bc") in severities and ("warning", "fc") in severities
    rank = {"error": 0, "warning": 1, "waived": 2, "info": 3}
    assert severities == sorted(severities, key=lambda s: (rank[s[0]], s[1]))
    # the deletion completed its lifecycle: the import notes it, it is no error
    assert [(f["severity"], f["rule"]) for f in report["compat_findings"] if f["operator"] == FULL_LIFECYCLE] == [
        ("info", "operator-removed")]
    assert {f["snapshot"] for f in report["compat_findings"]} == {"2.6.0"}


def test_compat_findings_in_markdown_errors_first(history):
    md = weekly(history, "--as-of", "2025-07-29", fmt="md")
    section = md_section(md, "Compatibility findings")
    overview, *listing = md_tables(section)
    assert overview[0] == ["Severity", "Kind", "Snapshot", "Rule", "Operators", "For example"]
    by_rule = [r[0] for r in overview[1:]]
    assert by_rule == sorted(by_rule, key=["**error**", "warning", "info"].index)
    rows = [row for table in listing for row in table[1:]]
    assert sum(int(r[4]) for r in overview[1:]) == len(rows) + left_out(section)
    severity = [r[0] for r in rows]
    rank = {"**error**": 0, "warning": 1, "waived": 2, "info": 3}
    assert severity[0] == "**error**" and "warning" in severity
    assert severity == sorted(severity, key=rank.__getitem__)
    kinds = [r[1] for r in rows]
    assert kinds  # the summary line counts every finding, the rows left out to fit a comment too
    errors = sum(int(r[4]) for r in overview[1:] if (r[0], r[1]) == ("**error**", "BC"))
    fc = sum(int(r[4]) for r in overview[1:] if (r[0], r[1]) == ("warning", "FC"))
    assert errors and fc and section.lstrip().startswith(f"{errors} BC errors, {fc} FC warnings, ")
    # the governance tags 2.6.0 dropped or added have a section of their own, with check-pr's rule ids
    tags = md_section(md, "Core and lifecycle tags changed")
    tables = md_tables(tags)
    assert {tuple(t[0]) for t in tables} == {("Snapshot", "Operator", "Edit", "Severity", "Rule", "What the record did")}
    rows = [r[:5] for t in tables for r in t[1:]]
    assert ["2.6.0", "`aten::native_batch_norm`", "**-core**", "warning", "`core-tag-removed`"] in rows
    assert "core-tag-removed" not in section


def test_exceptions_expired_and_expiring(week):
    assert [(e["pattern"], e["expires_on"]) for e in week["exceptions_expired"]] == [("aten::*.dimname", "2025-09-10")]
    assert [(e["pattern"], e["expires_on"], e["created_by"]) for e in week["exceptions_expiring"]] == [
        ("aten::_foreach_*", "2025-09-26", "alice")]
    # the removed exception and the one recorded after the as-of day are not there
    listed = names(week["exceptions_expired"] + week["exceptions_expiring"], "pattern")
    assert "aten::stft*" not in listed and "aten::_scaled_*" not in listed


# ------------------------------------------------------------------------------------------
# The opset at a glance
# ------------------------------------------------------------------------------------------


def expected_core(release_folder, decided: dict[str, str], earlier=()) -> int:
    """Operators core at an import: tagged core in that release, or in an earlier imported one
    (a release that drops the tag leaves the operator core until the committee decides), unless
    the committee decided otherwise, plus those it decided core."""
    ops = registry_ops(release_folder)
    tagged = {n for n, op in ops.items() if "core" in op.tags}
    for folder in earlier:
        tagged |= {n for n, op in registry_ops(folder).items() if "core" in op.tags and n in ops}
    return len({n for n in tagged if decided.get(n, "core") == "core"} | {n for n in ops if decided.get(n) == "core"})


def test_trend_has_one_point_per_import_with_its_core_count(history, week, pytorch_versions, pytorch_release):
    trend = week["opset_trend"]
    assert [p["label"] for p in trend] == pytorch_versions
    assert [p["imported_at"] for p in trend] == [IMPORTED[v] for v in pytorch_versions]
    # no committee decision existed at the first two imports: the core-tagged entries of the
    # release (../shared/pytorch/README.md: 129 and 189), and at 2.6.0 the operators 2.0.0 tagged
    # core whose tag 2.6.0 dropped: they stay core, in the review queue, until the committee decides
    first, second = (pytorch_release(v) for v in pytorch_versions[:2])
    assert [p["categories"]["core"] for p in trend[:2]] == [129, expected_core(second, {}, [first])]
    assert expected_core(second, {}, [first]) > 189
    # later imports count the 2023 review's decisions and proposal 2 (_chunk_cat → core) too
    # (a 2023 decision to take an operator out of core is on record only when 2.6.0, the newest
    # snapshot when the file was loaded, still tags it core: PyTorch overturned it)
    tagged_at_load = {n for n, op in registry_ops(pytorch_release("2.6.0")).items() if "core" in op.tags}
    decided = {d.op: d.category for d in read_decisions_file(str(REVIEW_2023))
               if d.category == "core" or d.op not in tagged_at_load}
    decided["aten::_chunk_cat"] = "core"
    before = [pytorch_release(v) for v in pytorch_versions[:2]]
    assert trend[2]["categories"]["core"] == expected_core(pytorch_release("2.12.0"), decided, before)
    assert trend[3]["categories"]["core"] == expected_core(pytorch_release("2.13.0"), decided,
                                                           [*before, pytorch_release("2.12.0")])
    assert trend[2]["categories"]["core"] != 193  # the decisions show: not just the tag count
    # every operator the import recorded (autogen-generated ones included) is in exactly one category
    for point, version in zip(trend, pytorch_versions):
        assert sum(point["categories"].values()) == history.imports[version]["operators"]


def test_opset_now_is_the_state_on_the_as_of_day(history, week):
    now = week["opset_now"]
    last = week["opset_trend"][-1]["categories"]
    assert now["categories"] == last  # nothing was decided between the 2.13.0 import and the 23rd
    # each family moves together: var.out with var.dim, std.out with std.dim, and the out= variant
    # the fully deleted operator's entry generated
    assert now["lifecycle"] == {"active": sum(last.values()) - 6, "deprecating": 4, "deprecated": 2, "deleted": 2}
    # two days later: proposal 6 made _grouped_mm core, tick moved two operators to deprecated
    later = weekly(history, "--as-of", "2025-09-25")
    assert later["opset_now"]["categories"]["core"] == now["categories"]["core"] + 1
    assert later["opset_now"]["lifecycle"]["deprecated"] == 4
    assert later["lifecycle_overdue"] == [] and later["lifecycle_due_now"] == []
    assert "aten::_grouped_mm" not in names(later["review_queue"])
    assert [p["id"] for p in later["proposals_decided"]] == [3, 4, 5, 6]
    assert "aten::_scaled_*" in names(later["exceptions_expiring"], "pattern")


def test_opset_tables_in_markdown(week, week_md):
    rows = md_rows(md_section(week_md, "The opset across snapshots"))
    assert [r[0] for r in rows] == ["2.0.0", "2.6.0", "2.12.0", "2.13.0"]
    assert [int(r[2].replace(",", "")) for r in rows] == [p["categories"]["core"] for p in week["opset_trend"]]
    now = md_section(week_md, "The opset now")
    assert f"| core | {week['opset_now']['categories']['core']:,} |" in now


# ------------------------------------------------------------------------------------------
# Quiet periods
# ------------------------------------------------------------------------------------------


def test_before_the_first_import_the_report_is_quiet(history):
    md = weekly(history, "--as-of", "2024-12-01", fmt="md")
    quiet = [line for line in md.splitlines() if "Nothing happened" in line]
    assert quiet == ["**Nothing happened between 2024-11-24 and 2024-12-01; nothing is due.**"]
    data = weekly(history, "--as-of", "2024-12-01")
    assert all(data[k] == [] for k in SECTION_KEYS if k not in ("opset_now", "agenda")) and data["agenda"] is None


def test_an_empty_database_says_so_in_every_format(make_cli, tmp_path):
    cli = make_cli(f"sqlite:///{tmp_path / 'empty.db'}")
    md = cli.ok("report", "weekly", "--as-of", "2025-06-08").out
    assert "**Nothing happened between 2025-06-01 and 2025-06-08; nothing is due.**" in md
    assert "Nothing in: review queue; open proposals;" in md and "No snapshots imported yet." in md
    data = cli.ok("report", "weekly", "--as-of", "2025-06-08", "--format", "json").json()
    assert list(data)[5:] == list(SECTION_KEYS)
    html = cli.ok("report", "weekly", "--as-of", "2025-06-08", "--format", "html").out
    assert 'id="quiet"' in html and "Nothing happened between" in html and "<svg" not in html


@pytest.mark.postgres
def test_postgresql_gives_the_same_reports(history, postgres_url, pytorch_release):
    pg = Runner(postgres_url)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("OPGOV_NOW", raising=False)
        _replay(pg, pytorch_release)
    for as_of in (AS_OF, "2025-07-29", "2025-09-25"):
        on_pg, on_sqlite = weekly(pg, "--as-of", as_of), weekly(history, "--as-of", as_of)
        assert on_pg == on_sqlite, as_of


# ------------------------------------------------------------------------------------------
# The HTML page in headless Chromium
# ------------------------------------------------------------------------------------------


@pytest.mark.chromium
def test_html_of_the_real_history_in_headless_chromium(history, week, tmp_path):
    from report_pages import chromium_binary, load_in_chromium, png_size

    binary = chromium_binary()
    page = tmp_path / "weekly.html"
    assert history.ok("report", "weekly", "--as-of", AS_OF, "--format", "html", "--out", page).out.strip() \
        == f"wrote {page}"
    text = page.read_text(encoding="utf-8")
    assert "aten::all.dimname" in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    url = page.as_uri()
    results, _ = load_in_chromium(binary, page, tmp_path)

    for name, (checks, png, requests, problems, exceptions) in results.items():
        viewport = 390 if name == "phone" else 1280
        width, height = png_size(png)
        assert width == viewport and height > 2000, (name, width, height)
        assert [c["id"] for c in checks["charts"]] == ["chart-lifecycle", "chart-core-size", "chart-categories"]
        for element in checks["charts"] + checks["tables"] + checks["sections"]:
            assert element["shown"] and element["width"] > 0 and element["height"] > 0, (name, element)
        assert len(checks["sections"]) == len(SECTION_KEYS)
        assert checks["pageWidth"] <= viewport, (name, checks["pageWidth"])
        assert checks["smallestChartText"] >= 9
        assert checks["resources"] == [] and set(requests) <= {url}, requests


# ------------------------------------------------------------------------------------------
# Counts that agree (issue 10), on the replay of the four releases
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("as_of", [AS_OF, "2025-10-31"])
def test_every_count_agrees(history, as_of):
    report = weekly(history, "--as-of", as_of, "--since", "2025-07-01")
    now, trend = report["opset_now"], report["opset_trend"]
    # the trend ends where the opset is now (decisions since the last import included)
    assert trend[-1]["categories"] == now["categories"]
    # every BC error of a removal is a removal without deprecation, and the other way round
    bc_removed = {(f["snapshot"], f["operator"]) for f in report["compat_findings"]
                  if f["kind"] == "bc" and f["rule"] == "operator-removed" and f["severity"] in ("error", "waived")}
    removed = {(r["snapshot"], r["operator"]) for r in report["removed_without_deprecation"]}
    assert removed == bc_removed and len(removed) > 116
    # the summary line says what the sections hold
    md = weekly(history, "--as-of", as_of, "--since", "2025-07-01", fmt="md")
    summary = next(line for line in md.splitlines() if line.startswith("**This week:**"))
    errors = sum(f["severity"] == "error" and f["kind"] == "bc" for f in report["compat_findings"])
    assert f"{errors} BC errors" in summary
    assert f"{len(report['removed_without_deprecation'])} operators removed without deprecation" in summary


def test_the_report_agrees_with_ops_list(history):
    """As of a day after everything happened, the report's counts are `ops list`'s."""
    report = weekly(history, "--as-of", "2025-10-31")
    listed = history.ok("ops", "list", "--json", now="2025-11-01T00:00:00Z").json()
    for category in ("core", "decomposable", "custom"):
        assert report["opset_now"]["categories"][category] == sum(o["category"] == category for o in listed)
    assert report["opset_trend"][-1]["categories"]["core"] == sum(o["category"] == "core" for o in listed)
    assert sum(report["opset_now"]["categories"].values()) == len(listed)
