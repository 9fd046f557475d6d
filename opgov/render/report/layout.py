"""The report as the renderings see it, whatever their format: sections (in
:data:`~opgov.results.reports.SECTION_KEYS` order) made of paragraphs, tables and charts, and
the words of the title, the summary and each cell. :mod:`.markdown` and :mod:`.html` only lay
these out and escape them; what a section says is decided here, once.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Callable

from opgov.results.reports import (CATEGORIES, KIND_RANK, LIFECYCLE_STATES, SEVERITY_RANK, CompatFinding,
                                  LifecycleDue, OpenProposal, RemovedOp, Vote, WeeklyReport)


@dataclass(frozen=True)
class Frag:
    """A piece of cell or paragraph text; renderers escape it for their format."""

    text: str
    code: bool = False
    strong: bool = False
    cls: str = ""  # an HTML class (severity badges); markdown ignores it
    nowrap: bool = False  # HTML keeps it on one line (dates); markdown ignores it


Text = tuple[Frag, ...]


def _t(text: str, **style: Any) -> Text:
    """Text; a plain sentence's `backticked` words are code (as in a message that names a command),
    so no rendering shows the backticks themselves, escaped or not."""
    if style or text.count("`") < 2:
        return (Frag(text, **style),)
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd backtick: the last one is a character, not a delimiter
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    return tuple(Frag(part, code=bool(i % 2)) for i, part in enumerate(parts) if part)


def _c(text: str) -> Text:
    return (Frag(text, code=True),)


def _when(text: str, note: str = "") -> Text:
    """A date or time that never breaks across lines, then an optional note that may."""
    return (Frag(text, nowrap=True),) + ((Frag(" "), Frag(note, nowrap=True)) if note else ())


def _codes(names: tuple[str, ...] | list[str], sep: str = ", ") -> Text:
    out: list[Frag] = []
    for i, name in enumerate(names):
        if i:
            out.append(Frag(sep))
        out.append(Frag(name, code=True))
    return tuple(out)


@dataclass(frozen=True)
class Column:
    header: str
    cell: Callable[[Any], Text]
    numeric: bool = False
    wide: bool = False  # prose or a schema: the HTML gives it room to wrap


@dataclass(frozen=True)
class Para:
    text: Text
    cls: str = ""


@dataclass(frozen=True)
class Table:
    caption: str
    columns: tuple[Column, ...]
    rows: tuple[Any, ...]
    keep_visible: int = 0  # leading rows never folded away (BC errors)
    compact: bool = False  # a small table of counts: the HTML lays it out beside its neighbours


@dataclass(frozen=True)
class Chart:
    chart_id: str


Block = Para | Table | Chart


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    blocks: tuple[Block, ...]
    nothing: bool = False  # a section with nothing this week: folded into one line (NOTHING_KEY)

    @property
    def html_id(self) -> str:
        return self.key.replace("_", "-")


# Long tables: more than _FOLD_OVER rows show _SHOW_ROWS and fold the rest away.
_FOLD_OVER = 15
_SHOW_ROWS = 10


def plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else (plural or singular + 's')}"


def fmt_dt(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _fmt_day(value: date) -> str:
    return value.isoformat()


def _fmt_point(value: datetime) -> str:
    """A period boundary: the date alone at midnight, else date and time."""
    return _fmt_day(value.date()) if value.timetz().replace(tzinfo=None) == time(0) else fmt_dt(value)


def title_of(report: WeeklyReport) -> str:
    return f"Core ATen opset: weekly report, {_fmt_point(report.since)} to {_fmt_point(report.as_of)}"


def quiet_line(report: WeeklyReport) -> str:
    return f"Nothing happened between {_fmt_point(report.since)} and {_fmt_point(report.as_of)}; nothing is due."


def _proposal_kind(kind: str, targets: tuple[str, ...]) -> Text:
    if kind == "decompose":
        return _t("decompose into ") + _codes(targets) if targets else _t("decompose")
    return _t(kind)


def _votes_text(votes: tuple[Vote, ...]) -> Text:
    if not votes:
        return _t("none")
    out: list[Frag] = []
    for i, v in enumerate(votes):
        if i:
            out.append(Frag("; "))
        out.append(Frag(v.voter, strong=True))
        out.append(Frag(" approve" if v.approve else " reject"))
        if v.comment:
            out.append(Frag(f": {v.comment}"))
    return tuple(out)


def _tally(p: OpenProposal) -> Text:
    head = f"{len(p.approvals)}/{p.quorum}"
    return _t(head + (": " + ", ".join(p.approvals) if p.approvals else ""))


def _severity(f: CompatFinding) -> Text:
    return _t(f.severity, strong=f.severity == "error", cls=f"sev sev-{f.severity}")


def _days(n: int) -> str:
    return plural(n, "day")


def _kind_label(kind: str) -> str:
    """BC, FC, new, or tag (a governance tag a release added or dropped)."""
    return {"new": "new", "policy": "tag"}.get(kind, kind.upper())


def _findings_summary(findings: tuple[CompatFinding, ...]) -> list[str]:
    counts = Counter((f.kind, f.severity) for f in findings)
    parts = []
    for (kind, severity), n in sorted(counts.items(), key=lambda kv: (SEVERITY_RANK[kv[0][1]], KIND_RANK[kv[0][0]])):
        if kind == "new" and severity == "info":
            parts.append(plural(n, "new operator"))
        else:
            parts.append(plural(n, f"{_kind_label(kind)} {severity}"))
    return parts


def _schema_cell(schema: str, generated_from: str | None) -> Text:
    """A schema in code, or where an operator without its own entry comes from."""
    if generated_from:
        return _t("generated from ") + _c(generated_from) + _t(" by autogen")
    return _c(schema) if schema else _t("unknown")


def _removed_summary(removed: tuple[RemovedOp, ...]) -> str:
    parts = []
    for label, rows in _group_by_snapshot(removed):
        generated = sum(1 for r in rows if r.generated_from)
        note = f" ({generated:,} of them generated by autogen from a removed entry)" if generated else ""
        parts.append(f"{plural(len(rows), 'operator')} removed in {label}{note}")
    return "; ".join(parts) + "."


def _group_by_snapshot(removed: tuple[RemovedOp, ...]) -> list[tuple[str, list[RemovedOp]]]:
    groups: dict[str, list[RemovedOp]] = {}
    for r in removed:
        groups.setdefault(r.snapshot, []).append(r)
    return list(groups.items())


def _last_day_note(last_day: date, today: date) -> str:
    if last_day == today:
        return "(today)"
    return f"(in {_days((last_day - today).days)})"


_KEEP_ERRORS = 25
"""Up to this many BC errors are never folded away; beyond, the list folds like any other and the
overview by rule above it says what is there."""


def _errors_kept(findings: tuple[CompatFinding, ...]) -> int:
    errors = sum(1 for f in findings if f.severity == "error")
    return errors if errors <= _KEEP_ERRORS else 0


def _findings_overview(findings: tuple[CompatFinding, ...]) -> Table | None:
    """Findings per (severity, kind, snapshot, rule), for lists long enough to fold; else None."""
    if len(findings) <= _FOLD_OVER:
        return None
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    for f in findings:  # already in reading order: errors first
        groups.setdefault((f.severity, f.kind, f.snapshot, f.rule), []).append(f.operator)
    rows = tuple((CompatFinding(snapshot=snap, operator=ops[0], kind=kind, rule=rule, severity=sev, message=""), ops)
                 for (sev, kind, snap, rule), ops in groups.items())
    return Table("Compatibility findings by rule", (
        Column("Severity", lambda r: _severity(r[0])),
        Column("Kind", lambda r: _t(_kind_label(r[0].kind))),
        Column("Snapshot", lambda r: _t(r[0].snapshot)),
        Column("Rule", lambda r: _c(r[0].rule)),
        Column("Operators", lambda r: _t(f"{len(r[1]):,}"), numeric=True),
        Column("For example", lambda r: _codes(r[1][:3]) + (_t(", …") if len(r[1]) > 3 else ()), wide=True),
    ), rows)


def _lifecycle_columns(when: Callable[[LifecycleDue], Text]) -> tuple[Column, ...]:
    return (
        Column("Due", when),
        Column("Operator", lambda s: _c(s.operator)),
        Column("Transition", lambda s: _t(f"{s.from_state} → {s.to_state}")),
        Column("Previous step", lambda s: _when(fmt_dt(s.previous_step_at)) + _t(f" by {s.previous_step_actor}")),
        Column("Reason", lambda s: _t(s.reason), wide=True),
    )


def _agenda(report: WeeklyReport) -> Section:
    """The queue for the meeting (opgov queue): counts by suggestion, the oldest, the most impact."""
    title = "Agenda: the queue with its suggestions"
    a = report.agenda
    if a is None or not a.total:
        return Section("agenda", title, (Para(_t("Nothing waits for the committee." if a is not None else
                                                 "The agenda is today's queue: shown for a report of the latest "
                                                 "snapshot."), "empty"),))
    counts = ", ".join(f"{n} {s}" for s, n in a.counts.items() if n)
    columns = (Column("Operator", lambda i: _c(i.operator)), Column("Waiting since", lambda i: _t(i.waiting_since)),
               Column("Suggestion", lambda i: _t(i.suggestion, strong=True)),
               Column("Runtimes", lambda i: _t(str(i.runtimes)), numeric=True),
               Column("Models", lambda i: _t(str(i.models)), numeric=True),
               Column("Because", lambda i: _t(i.because), wide=True))
    blocks: list[Block] = [Para(_t(f"{a.total} operators wait: {counts} (from the evidence: torch "
                                   f"{a.torch or '(no facts recorded)'}, the registered runtimes and the models; "
                                   "opgov queue lists them all with their evidence)."))]
    blocks.append(Table(f"The oldest waiting (at most {a.shown})", columns, tuple(a.oldest)))
    if a.most_impact:
        blocks.append(Table(f"The most runtime or model impact (at most {a.shown})", columns, tuple(a.most_impact)))
    return Section("agenda", title, tuple(blocks))


def sections_of(report: WeeklyReport) -> list[Section]:
    """The report as rendering-neutral sections, in :data:`~opgov.results.reports.SECTION_KEYS` order."""
    return _fold_empty([
        _review_queue(report), _agenda(report), _proposals_open(report), _proposals_decided(report),
        *_lifecycle(report), _deprecated_ops(report), _tag_changes(report), _core_drift(report),
        _decomp_closure(report), _compat_findings(report), _removed_without_deprecation(report),
        *_exceptions(report), _opset_now(report), _opset_trend(report),
    ])


def _table(report: WeeklyReport, key: str, title: str, empty: str, columns: tuple[Column, ...], *,
           intro: Text | None = None, keep_visible: int = 0, overview: Table | None = None) -> Section:
    """The section of the report's list ``key``: a table of its rows, or ``empty`` when it has none."""
    rows = getattr(report, key)
    if not rows:
        return Section(key, title, (Para(_t(empty), "empty"),), nothing=key != "decomp_closure")
    blocks: list[Block] = []
    if intro:
        blocks.append(Para(intro))
    if overview is not None:
        blocks.append(overview)
    blocks.append(Table(title, columns, tuple(rows), keep_visible))
    return Section(key, title, tuple(blocks))


def _review_queue(report: WeeklyReport) -> Section:
    return _table(report, "review_queue", "Review queue", "No operators await a category decision.", (
        Column("Operator", lambda i: _c(i.operator)),
        Column("Schema", lambda i: _schema_cell(i.schema_text, i.generated_from), wide=True),
        Column("First seen", lambda i: _t(f"{i.first_seen.label} ")
               + _when(f"({_fmt_day(i.first_seen.imported_at.date())})")),
        Column("Suggested", lambda i: _t(i.suggestion or i.suggested_category, strong=i.suggestion is not None)),
        Column("Why", lambda i: _t(i.suggestion_reason if i.suggestion is not None
                                   else i.review_reason or i.suggestion_reason), wide=True),
    ), intro=_t("Functional operators: the in-place, out= and other variants a release adds with them are "
                "not listed, they follow their functional operator's category (new operators are not "
                "repeated under compatibility findings)."))


def _proposals_open(report: WeeklyReport) -> Section:
    return _table(report, "proposals_open", "Open proposals", "No open proposals.", (
        Column("#", lambda p: _t(str(p.id)), numeric=True),
        Column("Operator", lambda p: _c(p.operator)),
        Column("Proposal", lambda p: _proposal_kind(p.kind, p.targets)),
        Column("By", lambda p: _t(p.proposer)),
        Column("Opened", lambda p: _when(_fmt_day(p.created_at.date()))),
        Column("Age", lambda p: _when(_days(p.age_days)), numeric=True),
        Column("Approvals", lambda p: _tally(p)),
        Column("Rejections", lambda p: _t(", ".join(p.rejections) or "none")),
        Column("Rationale", lambda p: _t(p.rationale), wide=True),
    ))


def _proposals_decided(report: WeeklyReport) -> Section:
    return _table(report, "proposals_decided", "Decided proposals", "No proposals were decided in this period.", (
        Column("#", lambda p: _t(str(p.id)), numeric=True),
        Column("Operator", lambda p: _c(p.operator)),
        Column("Proposal", lambda p: _proposal_kind(p.kind, p.targets)),
        Column("Outcome", lambda p: _t(p.outcome, strong=True)),
        Column("Decided", lambda p: _when(fmt_dt(p.decided_at))),
        Column("Votes", lambda p: _votes_text(p.votes), wide=True),
        Column("Rationale", lambda p: _t(p.rationale), wide=True),
    ))


def _lifecycle(report: WeeklyReport) -> tuple[Section, Section, Section]:
    """The lifecycle transitions overdue, due now and due soon."""
    today, soon = report.as_of.date(), report.soon_days
    return (
        _table(report, "lifecycle_overdue", "Lifecycle: overdue", "No lifecycle transitions are overdue.",
               _lifecycle_columns(lambda s: _when(_fmt_day(s.due_on), f"({_days((today - s.due_on).days)} late)"))),
        _table(report, "lifecycle_due_now", "Lifecycle: due now", "No lifecycle transitions are due now.",
               _lifecycle_columns(lambda s: _when(_fmt_day(s.due_on)))),
        _table(report, "lifecycle_due_soon", f"Lifecycle: due within {_days(soon)}",
               f"No lifecycle transitions come due within {_days(soon)}.",
               _lifecycle_columns(lambda s: _when(_fmt_day(s.due_on), f"(in {_days((s.due_on - today).days)})"))),
    )


def _deprecated_ops(report: WeeklyReport) -> Section:
    return _table(report, "deprecated_ops", "Deprecated operators", "No operators are deprecating or deprecated.", (
        Column("Operator", lambda d: _c(d.operator)),
        Column("State", lambda d: _t(d.state)),
        Column("Since", lambda d: _when(_fmt_day(d.since.date()))),
        Column("Replacement", lambda d: _c(d.replacement) if d.replacement else _t("none")),
        Column("Reason", lambda d: _t(d.reason), wide=True),
    ))


def _tag_changes(report: WeeklyReport) -> Section:
    return _table(report, "tag_changes", "Core and lifecycle tags changed", "No import of this period added or "
                  "dropped a core, deprecating or deprecated tag.", (
                      Column("Snapshot", lambda c: _t(c.snapshot)),
                      Column("Operator", lambda c: _c(c.operator)),
                      Column("Edit", lambda c: _t(c.edit, strong=True)),
                      Column("Severity", _severity),
                      Column("Rule", lambda c: _c(c.rule)),
                      Column("What the record did", lambda c: _t(c.message), wide=True),
                  ))


def _core_drift(report: WeeklyReport) -> Section:
    return _table(report, "core_drift", "Core drift",
                  "The category on record and the core tag agree for every operator.", (
                      Column("Operator", lambda d: _c(d.operator)),
                      Column("On record", lambda d: _t(f"{d.category} ({d.category_source})")),
                      Column("Tagged core", lambda d: _t("yes" if d.tagged_core else "no")),
                      Column("Why", lambda d: _t(d.reason + (" (in the review queue)" if d.waiting else "")),
                             wide=True),
                  ), intro=_t("Operators whose category on record and whose core tag in the latest snapshot "
                              "disagree: a release dropped or added the tag and the committee has not decided yet, "
                              "or the committee decided and the sync bot has not written the tag (opgov sync-yaml)."))


def _decomp_closure(report: WeeklyReport) -> Section:
    return _table(report, "decomp_closure", "Closure of torch's decomposition table",
                  (f"Every operator of the default table of {report.closure_facts} ends in core operators."
                   if report.closure_facts else
                   "opgov holds no torch release's facts and ships none for the latest snapshot (`opgov decomps "
                   "import-torch` records them)."), (
                      Column("Operator", lambda c: _c(c.operator)),
                      Column("Closure", lambda c: _t(c.status + (f" since torch {c.since}" if c.since else ""),
                                                     strong=c.status == "stopped closing")),
                      Column("Why", lambda c: _t(c.why), wide=True),
                  ), intro=_closure_intro(report.decomp_closure))


def _compat_findings(report: WeeklyReport) -> Section:
    return _table(report, "compat_findings", "Compatibility findings", "No compatibility findings in this period.", (
        Column("Severity", _severity),
        Column("Kind", lambda f: _t(_kind_label(f.kind))),
        Column("Snapshot", lambda f: _t(f.snapshot)),
        Column("Operator", lambda f: _c(f.operator)),
        Column("Rule", lambda f: _c(f.rule)),
        Column("Message", lambda f: _t(f.message), wide=True),
    ), intro=_t(", ".join(_findings_summary(report.compat_findings)) + "."),
        keep_visible=_errors_kept(report.compat_findings), overview=_findings_overview(report.compat_findings))


def _removed_without_deprecation(report: WeeklyReport) -> Section:
    return _table(report, "removed_without_deprecation", "Removed without deprecation",
                  "No operators were removed without completing the deprecation lifecycle.", (
                      Column("Snapshot", lambda r: _t(r.snapshot)),
                      Column("Operator", lambda r: _c(r.operator)),
                      Column("Last schema", lambda r: _schema_cell(r.last_schema, r.generated_from), wide=True),
                  ), intro=_t(_removed_summary(report.removed_without_deprecation)))


def _exceptions(report: WeeklyReport) -> tuple[Section, Section]:
    """The BC exceptions expired, and those expiring soon."""
    today, soon = report.as_of.date(), report.soon_days
    return (
        _table(report, "exceptions_expired", "Exceptions expired", "No expired BC exceptions.", (
            Column("Pattern", lambda e: _c(e.pattern)),
            Column("Last day", lambda e: _when(_fmt_day(e.expires_on), f"({_days((today - e.expires_on).days)} ago)")),
            Column("Reason", lambda e: _t(e.reason), wide=True),
            Column("Recorded by", lambda e: _t(e.created_by)),
        )),
        _table(report, "exceptions_expiring", f"Exceptions expiring within {_days(soon)}",
               f"No BC exceptions expire within {_days(soon)}.", (
                   Column("Pattern", lambda e: _c(e.pattern)),
                   Column("Last day", lambda e: _when(_fmt_day(e.expires_on), _last_day_note(e.expires_on, today))),
                   Column("Reason", lambda e: _t(e.reason), wide=True),
                   Column("Recorded by", lambda e: _t(e.created_by)),
               )),
    )


def _opset_now(report: WeeklyReport) -> Section:
    now = report.opset_now
    if now.categories.total == 0 and sum(dataclasses.astuple(now.lifecycle)) == 0:
        return Section("opset_now", "The opset now", (Para(_t("No operators recorded yet."), "empty"),))
    cat_rows = tuple((c, getattr(now.categories, c)) for c in CATEGORIES) + (("total", now.categories.total),)
    life_rows = tuple((s, getattr(now.lifecycle, s)) for s in LIFECYCLE_STATES)
    count_col = Column("Operators", lambda r: _t(f"{r[1]:,}"), numeric=True)
    return Section("opset_now", "The opset now", (
        Table("Operators per category", (Column("Category", lambda r: _t(r[0], strong=r[0] == "total")), count_col),
              cat_rows, compact=True),
        Table("Operators per lifecycle state", (Column("Lifecycle", lambda r: _t(r[0])), count_col), life_rows,
              compact=True),
        Chart("chart-lifecycle"),
    ))


def _opset_trend(report: WeeklyReport) -> Section:
    if not report.opset_trend:
        return Section("opset_trend", "The opset across snapshots", (Para(_t("No snapshots imported yet."), "empty"),))
    return Section("opset_trend", "The opset across snapshots", (
        Chart("chart-core-size"),
        Chart("chart-categories"),
        Table("Operators per category in each snapshot", (
            Column("Snapshot", lambda p: _t(p.label)),
            Column("Imported", lambda p: _when(_fmt_day(p.imported_at.date()))),
            Column("core", lambda p: _t(f"{p.categories.core:,}"), numeric=True),
            Column("decomposable", lambda p: _t(f"{p.categories.decomposable:,}"), numeric=True),
            Column("custom", lambda p: _t(f"{p.categories.custom:,}"), numeric=True),
            Column("total", lambda p: _t(f"{p.categories.total:,}"), numeric=True),
        ), report.opset_trend),
    ))


NOTHING_KEY = "nothing_this_week"


def _fold_empty(sections: list[Section]) -> list[Section]:
    """The sections with something in them, in order, and one line naming those that had nothing
    (where the first of them stood): eight headings over "No …" say less than one line does."""
    empty = [s for s in sections if s.nothing]
    if not empty:
        return sections
    line = Section(NOTHING_KEY, "Nothing this week", (Para(_t(
        "Nothing in: " + "; ".join(s.title[0].lower() + s.title[1:] for s in empty) + "."), "empty"),))
    at = sections.index(empty[0])
    kept = [s for s in sections if not s.nothing]
    return kept[:at] + [line] + kept[at:]


def _closure_intro(rows) -> Text | None:
    if not rows:
        return None
    first = rows[0]
    open_count = sum(c.status == "does not close" for c in rows)
    return _t(f"torch {first.torch}'s default decomposition table against the core tags of "
              f"{first.snapshot or 'no snapshot'}: {plural(open_count, 'operator')} "
              f"{'does' if open_count == 1 else 'do'} not end in core operators only, following the table as traced "
              "(opgov decomps closure lists every operator and what it ends in; the page /closure too).")


def summary_of(report: WeeklyReport) -> list[tuple[str, str]]:
    """(text, section key) for every non-empty section that asks for attention."""
    r = report
    items: list[tuple[str, str]] = []

    def add(rows: tuple[Any, ...], key: str, text: str) -> None:
        if rows:
            items.append((text, key))

    add(r.review_queue, "review_queue", plural(len(r.review_queue), "operator") + " awaiting a category decision")
    add(r.proposals_open, "proposals_open", plural(len(r.proposals_open), "open proposal"))
    add(r.proposals_decided, "proposals_decided", plural(len(r.proposals_decided), "proposal") + " decided")
    add(r.lifecycle_overdue, "lifecycle_overdue", plural(len(r.lifecycle_overdue), "overdue transition"))
    add(r.lifecycle_due_now, "lifecycle_due_now", plural(len(r.lifecycle_due_now), "transition") + " due now")
    add(r.lifecycle_due_soon, "lifecycle_due_soon",
        plural(len(r.lifecycle_due_soon), "transition") + f" due within {_days(r.soon_days)}")
    add(r.tag_changes, "tag_changes", plural(len(r.tag_changes), "core or lifecycle tag") + " changed by a release")
    stopped = tuple(c for c in r.decomp_closure if c.status == "stopped closing")
    add(stopped, "decomp_closure", plural(len(stopped), "operator") + " of torch's decomposition table stopped "
        "ending in core operators")
    if r.compat_findings:
        items.append((", ".join(_findings_summary(r.compat_findings)), "compat_findings"))
    add(r.removed_without_deprecation, "removed_without_deprecation",
        plural(len(r.removed_without_deprecation), "operator") + " removed without deprecation")
    add(r.exceptions_expired, "exceptions_expired", plural(len(r.exceptions_expired), "expired exception"))
    add(r.exceptions_expiring, "exceptions_expiring",
        plural(len(r.exceptions_expiring), "exception") + f" expiring within {_days(r.soon_days)}")
    return items


def fold(table: Table) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Split a table's rows into (always shown, folded away)."""
    rows = table.rows
    if len(rows) <= _FOLD_OVER:
        return rows, ()
    shown = max(_SHOW_ROWS, table.keep_visible)
    if len(rows) - shown <= _FOLD_OVER - _SHOW_ROWS:
        return rows, ()
    return rows[:shown], rows[shown:]
