"""The weekly report's model and its three renderings (markdown, JSON, HTML).

The data is synthetic and built by hand: the database service that fills the model has its own
tests on the real releases. The last test opens the HTML page in headless Chromium (Debian
package ``chromium``), driven over the DevTools protocol on a pipe with the standard library
only (tests/report_pages.py); it skips without Chromium unless ``OPGOV_REQUIRE_CHROMIUM=1``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import date, datetime, timedelta, timezone

import pytest
from pydantic import TypeAdapter
from report_pages import chromium_binary, load_in_chromium, md_section, md_tables, parse_html, png_size

from opgov.render.report import render_html, render_json, render_markdown
from opgov.render.report.layout import NOTHING_KEY, sections_of
from opgov.results.plain import jsonable
from opgov.results.reports import (
    SECTION_KEYS,
    CategoryCounts,
    CompatFinding,
    DecidedProposal,
    DeprecatedOp,
    ExceptionEntry,
    LifecycleCounts,
    LifecycleDue,
    OpenProposal,
    OpsetNow,
    RemovedOp,
    ReviewItem,
    SnapshotRef,
    TrendPoint,
    Vote,
    WeeklyReport,
)

UTC = timezone.utc
AS_OF = datetime(2025, 6, 8, tzinfo=UTC)
SINCE = AS_OF - timedelta(days=7)
MALICIOUS = '<script>alert("pwned")</script> & <img src=x onerror=alert(1)>'
REMOVED_COUNT = 108

SNAPSHOTS = {
    "2.0.0": datetime(2023, 3, 15, 9, 0, tzinfo=UTC),
    "2.6.0": datetime(2025, 1, 29, 9, 0, tzinfo=UTC),
    "2.12.0": datetime(2025, 5, 20, 9, 0, tzinfo=UTC),
    "2.13.0": datetime(2025, 6, 3, 9, 0, tzinfo=UTC),
}


def _snap(label: str) -> SnapshotRef:
    return SnapshotRef(label=label, imported_at=SNAPSHOTS[label])


def busy_report() -> WeeklyReport:
    """A week with something in every section, sections deliberately given out of order."""
    removed = [
        RemovedOp(snapshot="2.13.0", operator=f"aten::named_op_{i:03d}.Dimname",
                  last_schema=f"named_op_{i:03d}.Dimname(Tensor self, Dimname dim, bool keepdim=False) -> Tensor")
        for i in range(REMOVED_COUNT)
    ]
    return WeeklyReport(
        as_of=AS_OF,
        since=SINCE,
        generated_by="opgov 0.1.0",
        review_queue=[
            ReviewItem(operator="aten::_fused_rms_norm", first_seen=_snap("2.13.0"),
                       schema_text="_fused_rms_norm(Tensor input, int[] normalized_shape, Tensor? weight, "
                                   "float? eps) -> (Tensor, Tensor)",
                       suggested_category="custom", suggestion_reason="has a dispatch: entry, no core tag"),
            ReviewItem(operator="aten::_grouped_mm", first_seen=_snap("2.12.0"),
                       schema_text="_grouped_mm(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None, "
                                   "ScalarType? out_dtype=None) -> Tensor",
                       suggested_category="custom", suggestion_reason="has a dispatch: entry, no core tag"),
            ReviewItem(operator="aten::rms_norm", first_seen=_snap("2.6.0"),
                       schema_text="rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
                                   "float? eps=None) -> Tensor",
                       suggested_category="decomposable", suggestion_reason="CompositeImplicitAutograd kernel"),
        ],
        proposals_open=[
            OpenProposal(id=9, operator="aten::rms_norm", kind="decompose",
                         targets=["aten::mul.Tensor", "aten::rsqrt", "aten::mean.dim"], proposer="dana",
                         created_at=AS_OF - timedelta(days=2), age_days=2, approvals=[], rejections=["bob"],
                         quorum=2, rationale="Every backend already lowers it this way."),
            OpenProposal(id=7, operator="aten::_grouped_mm", kind="core", proposer="dana",
                         created_at=AS_OF - timedelta(days=5), age_days=5, approvals=["alice"], quorum=2,
                         rationale="MoE models need it | and export keeps it opaque."),
        ],
        proposals_decided=[
            DecidedProposal(id=5, operator="aten::native_channel_shuffle", kind="core", outcome="rejected",
                            decided_at=AS_OF - timedelta(days=1), rationale=MALICIOUS,
                            votes=[Vote(voter="alice", approve=False, comment="decomposes cleanly"),
                                   Vote(voter="bob", approve=False)]),
            DecidedProposal(id=4, operator="aten::_scaled_mm", kind="core", outcome="approved",
                            decided_at=AS_OF - timedelta(days=3),
                            rationale="Quantized matmul has no decomposition that keeps its numerics.",
                            votes=[Vote(voter="alice", approve=True, comment="agreed"),
                                   Vote(voter="bob", approve=True)]),
        ],
        lifecycle_overdue=[
            LifecycleDue(operator="aten::_old_cast", from_state="deprecating", to_state="deprecated",
                         due_on=date(2025, 5, 30), previous_step_at=datetime(2025, 5, 16, 12, tzinfo=UTC),
                         previous_step_actor="alice", reason="superseded by aten::_to_copy"),
        ],
        lifecycle_due_now=[
            LifecycleDue(operator="aten::_legacy_pad", from_state="deprecated", to_state="deleted",
                         due_on=date(2025, 6, 8), previous_step_at=datetime(2024, 12, 10, 8, tzinfo=UTC),
                         previous_step_actor="bob", reason="no users left"),
        ],
        lifecycle_due_soon=[
            LifecycleDue(operator="aten::_sparse_old_mm", from_state="deprecating", to_state="deprecated",
                         due_on=date(2025, 6, 12), previous_step_at=datetime(2025, 5, 29, 10, tzinfo=UTC),
                         previous_step_actor="alice", reason="sparse API consolidation"),
        ],
        deprecated_ops=[
            DeprecatedOp(operator="aten::_legacy_pad", state="deprecated",
                         since=datetime(2024, 12, 10, 8, tzinfo=UTC), replacement="aten::constant_pad_nd",
                         reason="no users left"),
            DeprecatedOp(operator="aten::_old_cast", state="deprecating",
                         since=datetime(2025, 5, 16, 12, tzinfo=UTC), replacement=None),
        ],
        compat_findings=[
            CompatFinding(snapshot="2.13.0", operator="aten::_fused_rms_norm", kind="new", rule="operator-added",
                          severity="info", message="New operator aten::_fused_rms_norm."),
            CompatFinding(snapshot="2.13.0", operator="aten::linalg_vector_norm", kind="fc", rule="default-changed",
                          severity="warning",
                          message='Default of argument "ord" changed from 2 to 2.0 (old | new readers disagree).'),
            CompatFinding(snapshot="2.13.0", operator="aten::_grouped_mm", kind="bc", rule="argument-removed",
                          severity="error",
                          message='Previously present argument "bias" of aten::_grouped_mm was removed.'),
        ],
        removed_without_deprecation=removed,
        exceptions_expired=[
            ExceptionEntry(pattern="aten::_nested_*", reason="nested tensor rewrite", created_by="bob",
                           expires_on=date(2025, 6, 2)),
        ],
        exceptions_expiring=[
            ExceptionEntry(pattern="aten::_foreach_*", reason="foreach API cleanup", created_by="alice",
                           expires_on=date(2025, 6, 11)),
        ],
        opset_now=OpsetNow(categories=CategoryCounts(core=193, decomposable=612, custom=1779),
                           lifecycle=LifecycleCounts(active=2580, deprecating=2, deprecated=1, deleted=3)),
        opset_trend=[
            TrendPoint(label="2.13.0", imported_at=SNAPSHOTS["2.13.0"],
                       categories=CategoryCounts(core=193, decomposable=612, custom=1779)),
            TrendPoint(label="2.0.0", imported_at=SNAPSHOTS["2.0.0"],
                       categories=CategoryCounts(core=129, decomposable=598, custom=1771)),
            TrendPoint(label="2.6.0", imported_at=SNAPSHOTS["2.6.0"],
                       categories=CategoryCounts(core=189, decomposable=607, custom=1837)),
            TrendPoint(label="2.12.0", imported_at=SNAPSHOTS["2.12.0"],
                       categories=CategoryCounts(core=193, decomposable=611, custom=1887)),
        ],
    )


def quiet_report() -> WeeklyReport:
    """A week in which nothing happened: only the standing picture of the opset."""
    return WeeklyReport(
        as_of=AS_OF, since=SINCE, generated_by="opgov 0.1.0",
        opset_now=OpsetNow(categories=CategoryCounts(core=193, decomposable=612, custom=1779),
                           lifecycle=LifecycleCounts(active=2584)),
        opset_trend=[TrendPoint(label="2.13.0", imported_at=SNAPSHOTS["2.13.0"],
                                categories=CategoryCounts(core=193, decomposable=612, custom=1779))],
    )


@pytest.fixture(scope="module")
def report() -> WeeklyReport:
    return busy_report()


@pytest.fixture(scope="module")
def page(report) -> str:
    return render_html(report)


# ------------------------------------------------------------------------------------------
# The model
# ------------------------------------------------------------------------------------------


def test_json_has_one_key_per_section_and_round_trips(report):
    data = json.loads(render_json(report))
    assert list(data) == ["as_of", "since", "generated_by", "soon_days", "closure_facts", *SECTION_KEYS]
    assert data == jsonable(report)
    assert data["as_of"] == "2025-06-08T00:00:00Z"
    assert data["removed_without_deprecation"][0] == {
        "snapshot": "2.13.0", "operator": "aten::named_op_000.Dimname",
        "last_schema": "named_op_000.Dimname(Tensor self, Dimname dim, bool keepdim=False) -> Tensor",
        "generated_from": None}
    assert set(data["proposals_open"][0]) == {"id", "operator", "kind", "targets", "proposer", "created_at",
                                              "age_days", "approvals", "rejections", "quorum", "rationale"}
    assert TypeAdapter(WeeklyReport).validate_json(render_json(report)) == report  # what a client reads back


def test_empty_report_still_has_every_section_key():
    data = jsonable(quiet_report())
    assert [k for k in SECTION_KEYS if k not in data] == []
    assert data["proposals_open"] == [] and data["compat_findings"] == []


def test_sections_are_kept_in_reading_order(report):
    assert [f.severity for f in report.compat_findings] == ["error", "warning", "info"]
    assert [i.first_seen.label for i in report.review_queue] == ["2.6.0", "2.12.0", "2.13.0"]
    assert [p.id for p in report.proposals_open] == [7, 9]
    assert [p.label for p in report.opset_trend] == ["2.0.0", "2.6.0", "2.12.0", "2.13.0"]


def test_times_must_be_aware_and_the_period_forward():
    with pytest.raises(ValueError, match="no timezone"):
        WeeklyReport(as_of=datetime(2025, 6, 8), since=SINCE, generated_by="t")
    with pytest.raises(ValueError, match="starts"):
        WeeklyReport(as_of=SINCE, since=AS_OF, generated_by="t")
    plus_two = timezone(timedelta(hours=2))
    shifted = WeeklyReport(as_of=datetime(2025, 6, 8, 2, tzinfo=plus_two), since=SINCE, generated_by="t")
    assert shifted.as_of == AS_OF and shifted.as_of.utcoffset() == timedelta(0)


# ------------------------------------------------------------------------------------------
# Markdown
# ------------------------------------------------------------------------------------------


def _shown_keys(report) -> list[str]:
    """SECTION_KEYS in order, the sections with nothing this week folded into one (NOTHING_KEY)."""
    return [s.key for s in sections_of(report)]


def test_markdown_has_title_with_period_and_one_heading_per_section(report):
    md = render_markdown(report)
    assert md.startswith("# Core ATen opset: weekly report, 2025-06-01 to 2025-06-08\n")
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    keys = _shown_keys(report)
    assert len(headings) == len(keys) and [k for k in keys if k != NOTHING_KEY] == [k for k in SECTION_KEYS if k in keys]
    assert headings[:4] == ["Review queue", "Agenda: the queue with its suggestions", "Open proposals", "Decided proposals"]
    assert "Nothing happened" not in md
    summary = next(line for line in md.splitlines() if line.startswith("**This week:**"))
    assert "3 operators awaiting a category decision" in summary
    assert "1 BC error" in summary and "108 operators removed without deprecation" in summary


def test_markdown_tables_are_well_formed_github_tables(report):
    md = render_markdown(report)
    for title in ("Review queue", "Open proposals", "Decided proposals", "Compatibility findings",
                  "Removed without deprecation", "The opset across snapshots"):
        for table in md_tables(md_section(md, title)):
            widths = {len(row) for row in table}
            assert len(widths) == 1, f"{title}: rows with different cell counts {widths}"
    queue = md_tables(md_section(md, "Review queue"))[0]
    assert queue[0] == ["Operator", "Schema", "First seen", "Suggested", "Why"]
    assert [row[0] for row in queue[1:]] == ["`aten::rms_norm`", "`aten::_grouped_mm`", "`aten::_fused_rms_norm`"]
    assert queue[1][1].startswith("`rms_norm(Tensor input, SymInt[] normalized_shape")
    assert queue[1][2] == "2.6.0 (2025-01-29)"
    # a "|" in user text is escaped, so it neither splits the cell nor disappears
    opened = md_tables(md_section(md, "Open proposals"))[0]
    assert opened[1][0] == "7" and opened[1][-1] == "MoE models need it \\| and export keeps it opaque."
    assert opened[1][6] == "1/2: alice"
    assert opened[2][2] == "decompose into `aten::mul.Tensor`, `aten::rsqrt`, `aten::mean.dim`"


def test_markdown_lists_bc_errors_before_warnings(report):
    findings = md_section(render_markdown(report), "Compatibility findings")
    assert findings.strip().splitlines()[0] == "1 BC error, 1 FC warning, 1 new operator."
    rows = md_tables(findings)[0][1:]
    assert [(r[0], r[1]) for r in rows] == [("**error**", "BC"), ("warning", "FC"), ("info", "new")]
    assert rows[0][3] == "`aten::_grouped_mm`" and rows[0][4] == "`argument-removed`"


def test_markdown_decided_proposals_show_votes_and_rationale(report):
    decided = md_tables(md_section(render_markdown(report), "Decided proposals"))[0]
    assert decided[0] == ["#", "Operator", "Proposal", "Outcome", "Decided", "Votes", "Rationale"]
    first = decided[1]
    assert first[:5] == ["4", "`aten::_scaled_mm`", "core", "**approved**", "2025-06-05 00:00 UTC"]
    assert first[5] == "**alice** approve: agreed; **bob** approve"
    # user text never becomes raw HTML in the markdown either
    assert "<script>" not in render_markdown(report)
    assert "&lt;script&gt;" in decided[2][6]


def test_markdown_lifecycle_rows_carry_dates_and_previous_step(report):
    md = render_markdown(report)
    overdue = md_tables(md_section(md, "Lifecycle: overdue"))[0][1]
    assert overdue[0] == "2025-05-30 (9 days late)"
    assert overdue[4] == "superseded by aten::\\_to_copy"  # no stray emphasis from the leading "_"
    assert overdue[2] == "deprecating → deprecated"
    assert overdue[3] == "2025-05-16 12:00 UTC by alice"
    soon = md_tables(md_section(md, "Lifecycle: due within 7 days"))[0][1]
    assert soon[0] == "2025-06-12 (in 4 days)"
    deprecated = md_tables(md_section(md, "Deprecated operators"))[0]
    assert [r[3] for r in deprecated[1:]] == ["`aten::constant_pad_nd`", "none"]


def test_markdown_folds_long_lists_but_keeps_every_row(report):
    removed = md_section(render_markdown(report), "Removed without deprecation")
    assert removed.strip().splitlines()[0] == "108 operators removed in 2.13.0."
    visible, _, folded = removed.partition("<details>")
    assert "<summary>Show 98 more rows</summary>" in folded and "</details>" in folded
    assert len(md_tables(visible)[0]) == 1 + 10
    names = re.findall(r"`aten::(named_op_\d{3})\.Dimname`", removed)
    assert names == [f"named_op_{i:03d}" for i in range(REMOVED_COUNT)]


def test_markdown_never_folds_bc_errors(report):
    errors = [CompatFinding(snapshot="2.13.0", operator=f"aten::op{i}", kind="bc", rule="argument-removed",
                            severity="error", message="removed") for i in range(14)]
    warnings = [CompatFinding(snapshot="2.13.0", operator=f"aten::w{i}", kind="fc", rule="default-changed",
                              severity="warning", message="changed") for i in range(20)]
    md = render_markdown(dataclasses.replace(report, compat_findings=warnings + errors))
    visible = md_section(md, "Compatibility findings").partition("<details>")[0]
    assert sum(row[0] == "**error**" for row in md_tables(visible)[-1]) == 14  # [0] is the overview by rule


def test_markdown_empty_sections_fold_into_one_line():
    """Eight headings over "No …" said less than one line does (issue 43): the sections with
    nothing this week are named in one line, where the first of them stood."""
    md = render_markdown(WeeklyReport(as_of=AS_OF, since=SINCE, generated_by="t",
                                      review_queue=busy_report().review_queue))
    headings = re.findall(r"^## (.+)$", md, flags=re.M)
    assert headings[:3] == ["Review queue", "Agenda: the queue with its suggestions", "Nothing this week"]
    nothing = md_section(md, "Nothing this week").strip()
    assert nothing.startswith("Nothing in: open proposals; decided proposals; lifecycle: overdue;")
    assert "compatibility findings" in nothing and "exceptions expired" in nothing
    assert "No open proposals" not in md and "Open proposals" not in headings
    assert md_section(md, "The opset across snapshots").strip() == "No snapshots imported yet."
    assert "Nothing happened" not in md


def test_the_report_shows_no_escaped_markup():
    """A sentence naming a command (`opgov decomps import-torch`) printed "\\`" in markdown and
    the backticks themselves in HTML (issue 43): it is code in both."""
    report = quiet_report()
    md, page = render_markdown(report), render_html(report)
    assert "\\`" not in md and "`" not in page
    assert "(`opgov decomps import-torch` records them)" in md
    assert "(<code>opgov decomps import-torch</code> records them)" in page


def test_markdown_quiet_period_says_so_near_the_top():
    md = render_markdown(quiet_report())
    top = md.split("\n## ", 1)[0]
    assert "**Nothing happened between 2025-06-01 and 2025-06-08; nothing is due.**" in top
    assert "This week" not in md
    assert md_section(md, "Nothing this week").strip().startswith("Nothing in: review queue; open proposals;")
    assert md_tables(md_section(md, "The opset now"))[0][1] == ["core", "193"]


def test_markdown_code_spans_survive_backticks():
    item = ReviewItem(operator="aten::odd", schema_text="odd(Tensor `x`) -> Tensor", first_seen=_snap("2.0.0"),
                      suggested_category="custom", suggestion_reason="test")
    md = render_markdown(WeeklyReport(as_of=AS_OF, since=SINCE, generated_by="t", review_queue=[item]))
    assert "``odd(Tensor `x`) -> Tensor``" in md


# ------------------------------------------------------------------------------------------
# HTML
# ------------------------------------------------------------------------------------------


def test_html_is_well_formed_with_a_stable_id_per_section(page):
    parsed = parse_html(page)
    assert page.startswith("<!DOCTYPE html>")
    section_ids = [attrs["id"] for tag, attrs, _ in parsed.elements if tag == "section"]
    assert section_ids == [key.replace("_", "-") for key in _shown_keys(busy_report())]
    meta = {attrs.get("name") or attrs.get("http-equiv"): attrs.get("content")
            for tag, attrs, _ in parsed.elements if tag == "meta"}
    assert meta["viewport"] == "width=device-width, initial-scale=1"
    assert "default-src 'none'" in meta["Content-Security-Policy"]


def test_html_is_self_contained(page):
    parsed = parse_html(page)
    assert not re.search(r"(?i)\b(?:https?|ftp):|//[a-z0-9.-]+\.[a-z]{2,}/", page)
    assert not re.search(r"(?i)@import|url\(", page)
    for tag, attrs, _ in parsed.elements:
        assert "src" not in attrs, tag
        assert tag not in {"script", "link", "iframe", "object", "embed", "img"}
        if "href" in attrs:
            assert attrs["href"].startswith("#"), attrs
    targets = {attrs["href"][1:] for tag, attrs, _ in parsed.elements if tag == "a"}
    ids = {attrs["id"] for _, attrs, _ in parsed.elements if "id" in attrs}
    assert targets and targets <= ids


def test_html_escapes_user_text(page):
    assert "<script" not in page and "<img" not in page
    # Jinja2's autoescape writes a double quote as &#34;
    assert "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &amp; &lt;img src=x" in page
    parsed = parse_html(page)
    assert not any(tag == "script" for tag, _, _ in parsed.elements)


def test_html_quiet_and_empty_sections_say_so():
    page = render_html(quiet_report())
    parsed = parse_html(page)
    assert parsed.text_by_id["quiet"] == "Nothing happened between 2025-06-01 and 2025-06-08; nothing is due."
    assert '<p class="empty">Nothing in: review queue; open proposals; decided proposals;' in page
    assert "summary" not in {a.get("id") for _, a, _ in parsed.elements}


def test_html_folds_long_tables_into_details(page):
    parsed = parse_html(page)
    in_details = [a for t, a, stack in parsed.elements if t == "tr" and "details" in stack]
    assert len(in_details) == (REMOVED_COUNT - 10) + 1  # the folded rows plus their header row
    assert "Show 98 more rows" in page


def svg_parts(page: str) -> dict[str, list[tuple[str, dict[str, str | None]]]]:
    """For every ``svg.chart``: its id → the elements inside it."""
    parsed = parse_html(page)
    charts: dict[str, list[tuple[str, dict[str, str | None]]]] = {}
    current = None
    for tag, attrs, stack in parsed.elements:
        if tag == "svg":
            assert attrs.get("class") == "chart" and attrs.get("role") == "img"
            current = attrs["id"]
            charts[current] = []
        elif "svg" in stack and current:
            charts[current].append((tag, attrs))
    return charts


def test_html_has_one_svg_per_chart_with_labelled_values(page):
    charts = svg_parts(page)
    assert set(charts) == {"chart-core-size", "chart-categories", "chart-lifecycle"}
    core = charts["chart-core-size"]
    assert sum(tag == "rect" for tag, _ in core) == 4
    assert sum(tag == "rect" for tag, _ in charts["chart-categories"]) == 3 + 4 * 3  # legend + segments
    assert sum(tag == "rect" for tag, _ in charts["chart-lifecycle"]) == 4
    for chart_id, elements in charts.items():
        tags = [tag for tag, _ in elements]
        assert tags[:2] == ["title", "desc"], chart_id
        assert "text" in tags
    # taller columns for larger core sets, from zero
    heights = [float(a["height"]) for tag, a in core if tag == "rect"]
    assert heights[0] < heights[1] < heights[2] == heights[3]
    # the values are written on the chart, not only implied by shapes
    svg_text = re.search(r'<svg class="chart" id="chart-core-size".*?</svg>', page, flags=re.S).group(0)
    for label, value in [("2.0.0", "129"), ("2.6.0", "189"), ("2.13.0", "193")]:
        assert f">{label}</text>" in svg_text and f">{value}</text>" in svg_text
    funnel = re.search(r'<svg class="chart" id="chart-lifecycle".*?</svg>', page, flags=re.S).group(0)
    assert re.findall(r'font-weight="600">([\d,]+)</text>', funnel) == ["2,580", "2", "1", "3"]


def test_html_charts_keep_many_long_snapshot_labels_inside_the_chart():
    start = datetime(2024, 1, 1, tzinfo=UTC)
    trend = [TrendPoint(label=f"nightly-{(start + timedelta(days=7 * i)).date()}", imported_at=start + timedelta(days=7 * i),
                        categories=CategoryCounts(core=180 + i, decomposable=600, custom=1800 - 3 * i))
             for i in range(20)]
    page = render_html(WeeklyReport(as_of=AS_OF, since=SINCE, generated_by="t", opset_trend=trend))
    charts = svg_parts(page)
    for chart_id in ("chart-core-size", "chart-categories"):
        svg = re.search(rf'<svg class="chart" id="{chart_id}" viewBox="0 0 ([\d.]+) ([\d.]+)"', page)
        width = float(svg.group(1))
        rects = [a for tag, a in charts[chart_id] if tag == "rect"]
        assert all(0 <= float(a["x"]) and float(a["x"]) + float(a["width"]) <= width + 0.05 for a in rects)
    assert sum(tag == "rect" for tag, _ in charts["chart-core-size"]) == 20
    # the stacked bars shorten long labels keeping their distinct end; the table has them in full
    assert ">nigh…024-05-13</text>" in page and "<td>nightly-2024-05-13</td>" in page


def test_html_without_snapshots_has_no_trend_charts():
    charts = svg_parts(render_html(WeeklyReport(as_of=AS_OF, since=SINCE, generated_by="t")))
    assert charts == {}


# ------------------------------------------------------------------------------------------
# Headless Chromium (driven by tests/report_pages.py)
# ------------------------------------------------------------------------------------------


@pytest.mark.chromium
def test_html_in_headless_chromium_on_a_phone_and_a_desktop(page, tmp_path):
    binary = chromium_binary()
    html_file = tmp_path / "weekly.html"
    html_file.write_text(page, encoding="utf-8")
    url = html_file.as_uri()
    results, pdf = load_in_chromium(binary, html_file, tmp_path, pdf=True)

    for name, (checks, png, requests, problems, exceptions) in results.items():
        viewport = 390 if name == "phone" else 1280
        width, height = png_size(png)
        assert width == viewport and height > 1500, (name, width, height)
        assert len(png) > 30_000, f"{name}: the screenshot looks blank"
        assert [c["id"] for c in checks["charts"]] == ["chart-lifecycle", "chart-core-size", "chart-categories"]
        for element in checks["charts"] + checks["tables"] + checks["sections"]:
            assert element["shown"] and element["width"] > 0 and element["height"] > 0, (name, element)
        assert len(checks["tables"]) >= 13
        # nothing overflows the viewport: wide tables scroll inside their own wrapper
        assert checks["pageWidth"] <= viewport, (name, checks["pageWidth"])
        assert all(c["right"] <= viewport for c in checks["charts"] + checks["frames"]), name
        assert checks["smallestChartText"] >= 9, f"{name}: chart labels too small to read"
        # no network: only the file itself was requested, nothing blocked, nothing logged
        assert checks["resources"] == []
        assert set(requests) <= {url}, requests
        assert problems == [] and exceptions == []
    assert pdf.startswith(b"%PDF") and len(pdf) > 20_000
