"""The weekly committee report: one data model, three renderings.

This is functional core: it imports the standard library and pydantic only, never the database,
the CLI or the system clock. A service fills a :class:`WeeklyReport` with plain data; the
renderers turn it into

- :func:`render_markdown`: ready to paste into a GitHub issue or a forum post (GitHub tables,
  long lists folded into ``<details>``);
- :func:`render_json`: one key per section, for bots (the model's own JSON shape);
- :func:`render_html`: one self-contained page (inline CSS, inline SVG charts, no scripts and no
  network access, enforced by a Content-Security-Policy) that reads on a phone and prints cleanly.

The model keeps every section in its reading order whatever order the caller gives (oldest review
item first, BC errors first, earliest due date first), so every rendering and every bot sees the
same order.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from typing import Annotated, Any, Callable, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "Category",
    "CategoryCounts",
    "CompatFinding",
    "DecidedProposal",
    "DeprecatedOp",
    "ExceptionEntry",
    "LifecycleCounts",
    "LifecycleDue",
    "OpenProposal",
    "OpsetNow",
    "RemovedOp",
    "ReviewItem",
    "SECTION_KEYS",
    "SnapshotRef",
    "TrendPoint",
    "Vote",
    "WeeklyReport",
    "render_html",
    "render_json",
    "render_markdown",
]

# --------------------------------------------------------------------------------------------
# The model
# --------------------------------------------------------------------------------------------


def _to_utc(value: datetime) -> datetime:
    return value.astimezone(timezone.utc)


UtcDatetime = Annotated[AwareDatetime, AfterValidator(_to_utc)]
"""A timezone-aware datetime, normalised to UTC. Naive datetimes are refused."""

Category = Literal["core", "decomposable", "custom"]
ProposalKind = Literal["core", "decompose", "custom"]
Outcome = Literal["approved", "rejected", "withdrawn"]
LifecycleState = Literal["active", "deprecating", "deprecated", "deleted"]
FindingKind = Literal["bc", "fc", "new"]
Severity = Literal["error", "warning", "info"]

CATEGORIES: tuple[Category, ...] = ("core", "decomposable", "custom")
LIFECYCLE_STATES: tuple[LifecycleState, ...] = ("active", "deprecating", "deprecated", "deleted")


class _Row(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SnapshotRef(_Row):
    """An imported snapshot of native_functions.yaml, by label and import time."""

    label: str
    imported_at: UtcDatetime


class ReviewItem(_Row):
    """An operator waiting for the committee to decide its category."""

    operator: str = Field(description="canonical name, e.g. aten::add.Tensor")
    schema_text: str = Field(description="the func: text of the operator's current schema")
    first_seen: SnapshotRef
    suggested_category: Category
    suggestion_reason: str


class OpenProposal(_Row):
    """A proposal still collecting votes."""

    id: int
    operator: str
    kind: ProposalKind
    targets: tuple[str, ...] = Field(default=(), description="decomposition targets (kind decompose)")
    proposer: str
    created_at: UtcDatetime
    age_days: int = Field(ge=0)
    approvals: tuple[str, ...] = ()
    rejections: tuple[str, ...] = ()
    quorum: int = Field(ge=1)
    rationale: str = ""


class Vote(_Row):
    voter: str
    approve: bool
    comment: str = ""


class DecidedProposal(_Row):
    """A proposal closed in the period: the outcome, the votes and the recorded rationale."""

    id: int
    operator: str
    kind: ProposalKind
    targets: tuple[str, ...] = ()
    outcome: Outcome
    decided_at: UtcDatetime
    votes: tuple[Vote, ...] = ()
    rationale: str


class LifecycleDue(_Row):
    """A lifecycle transition and when it becomes (or became) possible."""

    operator: str
    from_state: LifecycleState
    to_state: LifecycleState
    due_on: date
    previous_step_at: UtcDatetime
    previous_step_actor: str
    reason: str


class DeprecatedOp(_Row):
    operator: str
    state: Literal["deprecating", "deprecated"]
    since: UtcDatetime
    replacement: str | None = None
    reason: str = ""


class CompatFinding(_Row):
    """A BC/FC finding recorded by an import in the period."""

    snapshot: str = Field(description="label of the snapshot whose import produced the finding")
    operator: str
    kind: FindingKind
    rule: str
    severity: Severity
    message: str


class RemovedOp(_Row):
    """An operator that left native_functions.yaml without completing the deprecation lifecycle."""

    snapshot: str = Field(description="label of the first snapshot without the operator")
    operator: str
    last_schema: str


class ExceptionEntry(_Row):
    """A recorded BC exception (operator pattern, reason, who, expiry)."""

    pattern: str
    reason: str
    created_by: str
    expires_on: date


class CategoryCounts(_Row):
    core: int = Field(default=0, ge=0)
    decomposable: int = Field(default=0, ge=0)
    custom: int = Field(default=0, ge=0)

    @property
    def total(self) -> int:
        return self.core + self.decomposable + self.custom


class LifecycleCounts(_Row):
    active: int = Field(default=0, ge=0)
    deprecating: int = Field(default=0, ge=0)
    deprecated: int = Field(default=0, ge=0)
    deleted: int = Field(default=0, ge=0)


class OpsetNow(_Row):
    categories: CategoryCounts = CategoryCounts()
    lifecycle: LifecycleCounts = LifecycleCounts()


class TrendPoint(_Row):
    """Operators per category present in one snapshot (``categories.core`` is the core size)."""

    label: str
    imported_at: UtcDatetime
    categories: CategoryCounts


_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
_KIND_RANK = {"bc": 0, "fc": 1, "new": 2}


class WeeklyReport(BaseModel):
    """Everything the committee's weekly page shows, as plain data.

    ``model_dump(mode="json")`` has the three header keys and one key per section (see
    :data:`SECTION_KEYS`), always all present, an empty section being an empty list.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    as_of: UtcDatetime
    since: UtcDatetime
    generated_by: str
    soon_days: int = Field(default=7, ge=1, description="window of lifecycle_due_soon and exceptions_expiring")

    review_queue: tuple[ReviewItem, ...] = ()
    proposals_open: tuple[OpenProposal, ...] = ()
    proposals_decided: tuple[DecidedProposal, ...] = ()
    lifecycle_overdue: tuple[LifecycleDue, ...] = ()
    lifecycle_due_now: tuple[LifecycleDue, ...] = ()
    lifecycle_due_soon: tuple[LifecycleDue, ...] = ()
    deprecated_ops: tuple[DeprecatedOp, ...] = ()
    compat_findings: tuple[CompatFinding, ...] = ()
    removed_without_deprecation: tuple[RemovedOp, ...] = ()
    exceptions_expired: tuple[ExceptionEntry, ...] = ()
    exceptions_expiring: tuple[ExceptionEntry, ...] = ()
    opset_now: OpsetNow = OpsetNow()
    opset_trend: tuple[TrendPoint, ...] = ()

    # -- reading order, whatever order the caller used (sorts are stable) --

    @field_validator("review_queue")
    @classmethod
    def _oldest_first(cls, items: tuple[ReviewItem, ...]) -> tuple[ReviewItem, ...]:
        return tuple(sorted(items, key=lambda i: (i.first_seen.imported_at, i.operator)))

    @field_validator("proposals_open")
    @classmethod
    def _open_oldest_first(cls, items: tuple[OpenProposal, ...]) -> tuple[OpenProposal, ...]:
        return tuple(sorted(items, key=lambda p: (p.created_at, p.id)))

    @field_validator("proposals_decided")
    @classmethod
    def _decided_in_order(cls, items: tuple[DecidedProposal, ...]) -> tuple[DecidedProposal, ...]:
        return tuple(sorted(items, key=lambda p: (p.decided_at, p.id)))

    @field_validator("lifecycle_overdue", "lifecycle_due_now", "lifecycle_due_soon")
    @classmethod
    def _earliest_due_first(cls, items: tuple[LifecycleDue, ...]) -> tuple[LifecycleDue, ...]:
        return tuple(sorted(items, key=lambda s: (s.due_on, s.operator)))

    @field_validator("deprecated_ops")
    @classmethod
    def _deprecated_in_order(cls, items: tuple[DeprecatedOp, ...]) -> tuple[DeprecatedOp, ...]:
        return tuple(sorted(items, key=lambda d: (d.since, d.operator)))

    @field_validator("compat_findings")
    @classmethod
    def _errors_first(cls, items: tuple[CompatFinding, ...]) -> tuple[CompatFinding, ...]:
        return tuple(sorted(items, key=lambda f: (_SEVERITY_RANK[f.severity], _KIND_RANK[f.kind])))

    @field_validator("exceptions_expired", "exceptions_expiring")
    @classmethod
    def _expiry_order(cls, items: tuple[ExceptionEntry, ...]) -> tuple[ExceptionEntry, ...]:
        return tuple(sorted(items, key=lambda e: (e.expires_on, e.pattern)))

    @field_validator("opset_trend")
    @classmethod
    def _import_order(cls, items: tuple[TrendPoint, ...]) -> tuple[TrendPoint, ...]:
        return tuple(sorted(items, key=lambda p: p.imported_at))

    @model_validator(mode="after")
    def _period_is_forward(self) -> WeeklyReport:
        if self.since > self.as_of:
            raise ValueError(f"the period starts ({self.since.isoformat()}) after it ends ({self.as_of.isoformat()})")
        return self

    @property
    def is_quiet(self) -> bool:
        """True when nothing happened in the period and nothing waits or is due.

        The standing picture (deprecated operators, the opset counts and trend) does not count.
        """
        return not any(getattr(self, key) for key in _ACTION_KEYS)


SECTION_KEYS: tuple[str, ...] = (
    "review_queue",
    "proposals_open",
    "proposals_decided",
    "lifecycle_overdue",
    "lifecycle_due_now",
    "lifecycle_due_soon",
    "deprecated_ops",
    "compat_findings",
    "removed_without_deprecation",
    "exceptions_expired",
    "exceptions_expiring",
    "opset_now",
    "opset_trend",
)
"""The report's sections, in reading order; each is one key of the JSON and one heading."""

_STANDING_KEYS = frozenset({"deprecated_ops", "opset_now", "opset_trend"})
_ACTION_KEYS = tuple(k for k in SECTION_KEYS if k not in _STANDING_KEYS)


# --------------------------------------------------------------------------------------------
# A rendering-neutral view of the report: sections made of paragraphs, tables and charts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Frag:
    """A piece of cell or paragraph text; renderers escape it for their format."""

    text: str
    code: bool = False
    strong: bool = False
    cls: str = ""  # an HTML class (severity badges); markdown ignores it
    nowrap: bool = False  # HTML keeps it on one line (dates); markdown ignores it


_Text = tuple[_Frag, ...]


def _t(text: str, **style: Any) -> _Text:
    return (_Frag(text, **style),)


def _c(text: str) -> _Text:
    return (_Frag(text, code=True),)


def _when(text: str, note: str = "") -> _Text:
    """A date or time that never breaks across lines, then an optional note that may."""
    return (_Frag(text, nowrap=True),) + ((_Frag(" "), _Frag(note, nowrap=True)) if note else ())


def _codes(names: tuple[str, ...] | list[str], sep: str = ", ") -> _Text:
    out: list[_Frag] = []
    for i, name in enumerate(names):
        if i:
            out.append(_Frag(sep))
        out.append(_Frag(name, code=True))
    return tuple(out)


@dataclass(frozen=True)
class _Column:
    header: str
    cell: Callable[[Any], _Text]
    numeric: bool = False
    wide: bool = False  # prose or a schema: the HTML gives it room to wrap


@dataclass(frozen=True)
class _Para:
    text: _Text
    cls: str = ""


@dataclass(frozen=True)
class _Table:
    caption: str
    columns: tuple[_Column, ...]
    rows: tuple[Any, ...]
    keep_visible: int = 0  # leading rows never folded away (BC errors)
    compact: bool = False  # a small table of counts: the HTML lays it out beside its neighbours


@dataclass(frozen=True)
class _Chart:
    chart_id: str


_Block = _Para | _Table | _Chart


@dataclass(frozen=True)
class _Section:
    key: str
    title: str
    blocks: tuple[_Block, ...]

    @property
    def html_id(self) -> str:
        return self.key.replace("_", "-")


# Long tables: more than _FOLD_OVER rows show _SHOW_ROWS and fold the rest away.
_FOLD_OVER = 15
_SHOW_ROWS = 10


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else (plural or singular + 's')}"


def _fmt_dt(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _fmt_day(value: date) -> str:
    return value.isoformat()


def _fmt_point(value: datetime) -> str:
    """A period boundary: the date alone at midnight, else date and time."""
    return _fmt_day(value.date()) if value.timetz().replace(tzinfo=None) == time(0) else _fmt_dt(value)


def _title(report: WeeklyReport) -> str:
    return f"Core ATen opset: weekly report, {_fmt_point(report.since)} to {_fmt_point(report.as_of)}"


def _quiet_line(report: WeeklyReport) -> str:
    return f"Nothing happened between {_fmt_point(report.since)} and {_fmt_point(report.as_of)}; nothing is due."


def _proposal_kind(kind: str, targets: tuple[str, ...]) -> _Text:
    if kind == "decompose":
        return _t("decompose into ") + _codes(targets) if targets else _t("decompose")
    return _t(kind)


def _votes_text(votes: tuple[Vote, ...]) -> _Text:
    if not votes:
        return _t("none")
    out: list[_Frag] = []
    for i, v in enumerate(votes):
        if i:
            out.append(_Frag("; "))
        out.append(_Frag(v.voter, strong=True))
        out.append(_Frag(" approve" if v.approve else " reject"))
        if v.comment:
            out.append(_Frag(f": {v.comment}"))
    return tuple(out)


def _tally(p: OpenProposal) -> _Text:
    head = f"{len(p.approvals)}/{p.quorum}"
    return _t(head + (": " + ", ".join(p.approvals) if p.approvals else ""))


def _severity(f: CompatFinding) -> _Text:
    return _t(f.severity, strong=f.severity == "error", cls=f"sev sev-{f.severity}")


def _days(n: int) -> str:
    return _plural(n, "day")


def _findings_summary(findings: tuple[CompatFinding, ...]) -> list[str]:
    counts = Counter((f.kind, f.severity) for f in findings)
    parts = []
    for (kind, severity), n in sorted(counts.items(), key=lambda kv: (_SEVERITY_RANK[kv[0][1]], _KIND_RANK[kv[0][0]])):
        if kind == "new" and severity == "info":
            parts.append(_plural(n, "new operator"))
        else:
            parts.append(_plural(n, f"{kind.upper()} {severity}"))
    return parts


def _lifecycle_columns(when: Callable[[LifecycleDue], _Text]) -> tuple[_Column, ...]:
    return (
        _Column("Due", when),
        _Column("Operator", lambda s: _c(s.operator)),
        _Column("Transition", lambda s: _t(f"{s.from_state} → {s.to_state}")),
        _Column("Previous step", lambda s: _when(_fmt_dt(s.previous_step_at)) + _t(f" by {s.previous_step_actor}")),
        _Column("Reason", lambda s: _t(s.reason), wide=True),
    )


def _sections(report: WeeklyReport) -> list[_Section]:
    """The report as rendering-neutral sections, in :data:`SECTION_KEYS` order."""
    today = report.as_of.date()
    soon = report.soon_days

    def table(key: str, title: str, empty: str, columns: tuple[_Column, ...], *, intro: _Text | None = None,
              keep_visible: int = 0) -> _Section:
        rows = getattr(report, key)
        if not rows:
            return _Section(key, title, (_Para(_t(empty), "empty"),))
        blocks: list[_Block] = []
        if intro:
            blocks.append(_Para(intro))
        blocks.append(_Table(title, columns, tuple(rows), keep_visible))
        return _Section(key, title, tuple(blocks))

    out = [
        table("review_queue", "Review queue", "No operators await a category decision.", (
            _Column("Operator", lambda i: _c(i.operator)),
            _Column("Schema", lambda i: _c(i.schema_text), wide=True),
            _Column("First seen", lambda i: _t(f"{i.first_seen.label} ")
                    + _when(f"({_fmt_day(i.first_seen.imported_at.date())})")),
            _Column("Suggested", lambda i: _t(i.suggested_category)),
            _Column("Why", lambda i: _t(i.suggestion_reason), wide=True),
        )),
        table("proposals_open", "Open proposals", "No open proposals.", (
            _Column("#", lambda p: _t(str(p.id)), numeric=True),
            _Column("Operator", lambda p: _c(p.operator)),
            _Column("Proposal", lambda p: _proposal_kind(p.kind, p.targets)),
            _Column("By", lambda p: _t(p.proposer)),
            _Column("Opened", lambda p: _when(_fmt_day(p.created_at.date()))),
            _Column("Age", lambda p: _when(_days(p.age_days)), numeric=True),
            _Column("Approvals", lambda p: _tally(p)),
            _Column("Rejections", lambda p: _t(", ".join(p.rejections) or "none")),
            _Column("Rationale", lambda p: _t(p.rationale), wide=True),
        )),
        table("proposals_decided", "Decided proposals", "No proposals were decided in this period.", (
            _Column("#", lambda p: _t(str(p.id)), numeric=True),
            _Column("Operator", lambda p: _c(p.operator)),
            _Column("Proposal", lambda p: _proposal_kind(p.kind, p.targets)),
            _Column("Outcome", lambda p: _t(p.outcome, strong=True)),
            _Column("Decided", lambda p: _when(_fmt_dt(p.decided_at))),
            _Column("Votes", lambda p: _votes_text(p.votes), wide=True),
            _Column("Rationale", lambda p: _t(p.rationale), wide=True),
        )),
        table("lifecycle_overdue", "Lifecycle: overdue", "No lifecycle transitions are overdue.",
              _lifecycle_columns(lambda s: _when(_fmt_day(s.due_on), f"({_days((today - s.due_on).days)} late)"))),
        table("lifecycle_due_now", "Lifecycle: due now", "No lifecycle transitions are due now.",
              _lifecycle_columns(lambda s: _when(_fmt_day(s.due_on)))),
        table("lifecycle_due_soon", f"Lifecycle: due within {_days(soon)}",
              f"No lifecycle transitions come due within {_days(soon)}.",
              _lifecycle_columns(lambda s: _when(_fmt_day(s.due_on), f"(in {_days((s.due_on - today).days)})"))),
        table("deprecated_ops", "Deprecated operators", "No operators are deprecating or deprecated.", (
            _Column("Operator", lambda d: _c(d.operator)),
            _Column("State", lambda d: _t(d.state)),
            _Column("Since", lambda d: _when(_fmt_day(d.since.date()))),
            _Column("Replacement", lambda d: _c(d.replacement) if d.replacement else _t("none")),
            _Column("Reason", lambda d: _t(d.reason), wide=True),
        )),
        table("compat_findings", "Compatibility findings", "No compatibility findings in this period.", (
            _Column("Severity", _severity),
            _Column("Kind", lambda f: _t(f.kind.upper() if f.kind != "new" else "new")),
            _Column("Snapshot", lambda f: _t(f.snapshot)),
            _Column("Operator", lambda f: _c(f.operator)),
            _Column("Rule", lambda f: _c(f.rule)),
            _Column("Message", lambda f: _t(f.message), wide=True),
        ), intro=_t(", ".join(_findings_summary(report.compat_findings)) + "."),
            keep_visible=sum(1 for f in report.compat_findings if f.severity == "error")),
        table("removed_without_deprecation", "Removed without deprecation",
              "No operators were removed without completing the deprecation lifecycle.", (
                  _Column("Snapshot", lambda r: _t(r.snapshot)),
                  _Column("Operator", lambda r: _c(r.operator)),
                  _Column("Last schema", lambda r: _c(r.last_schema), wide=True),
              ), intro=_t("; ".join(f"{_plural(n, 'operator')} removed in {label}" for label, n in
                                    Counter(r.snapshot for r in report.removed_without_deprecation).items()) + ".")),
        table("exceptions_expired", "Exceptions expired", "No expired BC exceptions.", (
            _Column("Pattern", lambda e: _c(e.pattern)),
            _Column("Expired on", lambda e: _when(_fmt_day(e.expires_on))),
            _Column("Reason", lambda e: _t(e.reason), wide=True),
            _Column("Recorded by", lambda e: _t(e.created_by)),
        )),
        table("exceptions_expiring", f"Exceptions expiring within {_days(soon)}",
              f"No BC exceptions expire within {_days(soon)}.", (
                  _Column("Pattern", lambda e: _c(e.pattern)),
                  _Column("Expires on", lambda e: _when(_fmt_day(e.expires_on),
                                                        f"(in {_days((e.expires_on - today).days)})")),
                  _Column("Reason", lambda e: _t(e.reason), wide=True),
                  _Column("Recorded by", lambda e: _t(e.created_by)),
              )),
    ]

    now = report.opset_now
    if now.categories.total == 0 and sum(now.lifecycle.model_dump().values()) == 0:
        out.append(_Section("opset_now", "The opset now", (_Para(_t("No operators recorded yet."), "empty"),)))
    else:
        cat_rows = tuple((c, getattr(now.categories, c)) for c in CATEGORIES) + (("total", now.categories.total),)
        life_rows = tuple((s, getattr(now.lifecycle, s)) for s in LIFECYCLE_STATES)
        count_col = _Column("Operators", lambda r: _t(f"{r[1]:,}"), numeric=True)
        out.append(_Section("opset_now", "The opset now", (
            _Table("Operators per category", (_Column("Category", lambda r: _t(r[0], strong=r[0] == "total")), count_col),
                   cat_rows, compact=True),
            _Table("Operators per lifecycle state", (_Column("Lifecycle", lambda r: _t(r[0])), count_col), life_rows,
                   compact=True),
            _Chart("chart-lifecycle"),
        )))

    if not report.opset_trend:
        out.append(_Section("opset_trend", "The opset across snapshots", (_Para(_t("No snapshots imported yet."), "empty"),)))
    else:
        out.append(_Section("opset_trend", "The opset across snapshots", (
            _Chart("chart-core-size"),
            _Chart("chart-categories"),
            _Table("Operators per category in each snapshot", (
                _Column("Snapshot", lambda p: _t(p.label)),
                _Column("Imported", lambda p: _when(_fmt_day(p.imported_at.date()))),
                _Column("core", lambda p: _t(f"{p.categories.core:,}"), numeric=True),
                _Column("decomposable", lambda p: _t(f"{p.categories.decomposable:,}"), numeric=True),
                _Column("custom", lambda p: _t(f"{p.categories.custom:,}"), numeric=True),
                _Column("total", lambda p: _t(f"{p.categories.total:,}"), numeric=True),
            ), report.opset_trend),
        )))
    return out


def _summary(report: WeeklyReport) -> list[tuple[str, str]]:
    """(text, section key) for every non-empty section that asks for attention."""
    r = report
    items: list[tuple[str, str]] = []

    def add(rows: tuple[Any, ...], key: str, text: str) -> None:
        if rows:
            items.append((text, key))

    add(r.review_queue, "review_queue", _plural(len(r.review_queue), "operator") + " awaiting a category decision")
    add(r.proposals_open, "proposals_open", _plural(len(r.proposals_open), "open proposal"))
    add(r.proposals_decided, "proposals_decided", _plural(len(r.proposals_decided), "proposal") + " decided")
    add(r.lifecycle_overdue, "lifecycle_overdue", _plural(len(r.lifecycle_overdue), "overdue transition"))
    add(r.lifecycle_due_now, "lifecycle_due_now", _plural(len(r.lifecycle_due_now), "transition") + " due now")
    add(r.lifecycle_due_soon, "lifecycle_due_soon",
        _plural(len(r.lifecycle_due_soon), "transition") + f" due within {_days(r.soon_days)}")
    if r.compat_findings:
        items.append((", ".join(_findings_summary(r.compat_findings)), "compat_findings"))
    add(r.removed_without_deprecation, "removed_without_deprecation",
        _plural(len(r.removed_without_deprecation), "operator") + " removed without deprecation")
    add(r.exceptions_expired, "exceptions_expired", _plural(len(r.exceptions_expired), "expired exception"))
    add(r.exceptions_expiring, "exceptions_expiring",
        _plural(len(r.exceptions_expiring), "exception") + f" expiring within {_days(r.soon_days)}")
    return items


def _fold(table: _Table) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Split a table's rows into (always shown, folded away)."""
    rows = table.rows
    if len(rows) <= _FOLD_OVER:
        return rows, ()
    shown = max(_SHOW_ROWS, table.keep_visible)
    if len(rows) - shown <= _FOLD_OVER - _SHOW_ROWS:
        return rows, ()
    return rows[:shown], rows[shown:]


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------


_WHITESPACE = re.compile(r"\s+")
# characters that would start emphasis, code, links or escapes; "_" only where it is not inside a word
_MD_SPECIAL = re.compile(r"[\\`*\[\]|]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _md_escape_text(text: str) -> str:
    """Plain text for a GitHub table cell or paragraph: one line, no HTML, no markup, no cell breaks."""
    text = _WHITESPACE.sub(" ", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), text)


def _md_code(text: str) -> str:
    """A code span that survives any backticks in the text and sits safely in a table cell."""
    text = _WHITESPACE.sub(" ", text).strip()
    longest = run = 0
    for ch in text:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    # GFM splits table cells on "|" before parsing code spans, even inside them; "\|" keeps it.
    return f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}"


def _md_frags(text: _Text) -> str:
    out = []
    for f in text:
        if f.code:
            out.append(_md_code(f.text))
        elif f.strong:
            out.append(f"**{_md_escape_text(f.text)}**")
        else:
            out.append(_md_escape_text(f.text))
    return "".join(out)


def _md_table_lines(columns: tuple[_Column, ...], rows: tuple[Any, ...]) -> list[str]:
    head = "| " + " | ".join(_md_escape_text(c.header) for c in columns) + " |"
    rule = "|" + "|".join(" ---: " if c.numeric else " --- " for c in columns) + "|"
    body = ["| " + " | ".join(_md_frags(c.cell(row)) or " " for c in columns) + " |" for row in rows]
    return [head, rule, *body]


def render_markdown(report: WeeklyReport) -> str:
    """The report as GitHub-flavoured markdown: a title with the period, one ``##`` per section."""
    lines = [f"# {_md_escape_text(_title(report))}", ""]
    lines.append(f"Period {_fmt_dt(report.since)} to {_fmt_dt(report.as_of)}; "
                 f"generated by {_md_escape_text(report.generated_by)}.")
    lines.append("")
    if report.is_quiet:
        lines += [f"**{_quiet_line(report)}**", ""]
    else:
        lines += ["**This week:** " + " · ".join(_md_escape_text(text) for text, _ in _summary(report)), ""]

    for section in _sections(report):
        lines += [f"## {_md_escape_text(section.title)}", ""]
        for block in section.blocks:
            if isinstance(block, _Para):
                lines += [_md_frags(block.text), ""]
            elif isinstance(block, _Table):
                shown, folded = _fold(block)
                lines += _md_table_lines(block.columns, shown)
                lines.append("")
                if folded:
                    lines += ["<details>",
                              f"<summary>Show {_plural(len(folded), 'more row')}</summary>",
                              "",
                              *_md_table_lines(block.columns, folded),
                              "",
                              "</details>",
                              ""]
            # charts exist only in the HTML page; the trend table carries the same numbers
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------------------------


def render_json(report: WeeklyReport) -> str:
    """The model's JSON: ``as_of``, ``since``, ``generated_by``, ``soon_days`` and one key per section."""
    return report.model_dump_json(indent=2) + "\n"


# --------------------------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------------------------


def _e(text: str) -> str:
    return html.escape(text, quote=True)


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2} UTC)?")


def _e_dates(text: str) -> str:
    """Escape text, keeping every date (and time) in it on one line."""
    return _DATE.sub(lambda m: f'<span class="nowrap">{m.group(0)}</span>', _e(text))


_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

_CSS = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa;
  --link: #0969da; --error: #cf222e; --warning: #9a6700; --info: #0969da; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body { margin: 0; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.35rem; line-height: 1.25; margin: 0 0 .35rem; }
h2 { font-size: 1.1rem; line-height: 1.3; margin: 1.75rem 0 .5rem; padding-bottom: .25rem;
  border-bottom: 1px solid var(--line); }
p { margin: .4rem 0; }
a { color: var(--link); }
.meta { color: var(--muted); font-size: .875rem; }
.quiet { font-weight: 600; padding: .6rem .8rem; border: 1px solid var(--line); border-radius: 6px; }
.summary { margin: .6rem 0 0; padding-left: 1.2rem; }
.summary li { margin: .15rem 0; }
.empty { color: var(--muted); }
.nowrap { white-space: nowrap; }
/* wide tables scroll sideways inside their frame; shadows at the edges show there is more */
.table-wrap { max-width: 100%; overflow-x: auto; margin: .5rem 0; border: 1px solid var(--line);
  border-radius: 6px;
  background: linear-gradient(to right, #fff 30%, rgba(255, 255, 255, 0)) left / 2.5rem 100% no-repeat local,
    linear-gradient(to left, #fff 30%, rgba(255, 255, 255, 0)) right / 2.5rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, .2), transparent) left / .8rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, .2), transparent) right / .8rem 100% no-repeat scroll; }
table { border-collapse: collapse; width: 100%; font-size: .875rem; }
th, td { text-align: left; vertical-align: top; padding: .35rem .6rem; border-top: 1px solid var(--line); }
thead th { background: var(--head); white-space: nowrap; border-top: 0; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.wide { min-width: 14rem; }
code { font: .85em/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
  overflow-wrap: break-word; }
.sev { display: inline-block; padding: 0 .4rem; border: 1px solid currentColor; border-radius: 1rem;
  font-size: .8rem; font-weight: 600; }
.sev-error { color: var(--error); }
.sev-warning { color: var(--warning); }
.sev-info { color: var(--info); }
details { margin: .25rem 0 .75rem; }
summary { cursor: pointer; color: var(--link); }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 19rem), 1fr));
  gap: .5rem 2rem; align-items: start; margin: .5rem 0; }
.grid .table-wrap { margin: 0; }
figure { margin: 0; }
figcaption { font-size: .875rem; font-weight: 600; margin-bottom: .35rem; }
svg.chart { display: block; width: 100%; max-width: 27rem; height: auto; }
svg.chart text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #1f2328; }
svg.chart text.muted { fill: #59636e; }
svg.chart text.on-dark { fill: #fff; }
footer { margin-top: 2rem; color: var(--muted); font-size: .8rem; }
@media (min-width: 48rem) { main { padding: 1.5rem 2rem; } h1 { font-size: 1.6rem; } }
@media print {
  @page { margin: 1.5cm; }
  body { font-size: 10pt; background: none; color: #000; }
  main { max-width: none; padding: 0; }
  a { color: inherit; text-decoration: none; }
  thead th, .table-wrap, .quiet { background: none; }
  .table-wrap { overflow: visible; border: 0; }
  table, tr, figure, svg.chart, .quiet { break-inside: avoid; page-break-inside: avoid; }
  thead { display: table-header-group; }
  h2 { break-after: avoid; page-break-after: avoid; }
  summary { display: none; }
  details::details-content { content-visibility: visible; display: block; }
  .grid { grid-template-columns: repeat(2, minmax(0, 1fr)); }
}
"""

_CAT_FILL = {"core": ("#0072B2", "on-dark"), "decomposable": ("#E69F00", ""), "custom": ("#009E73", "")}
_LIFE_FILL = {"active": "#0072B2", "deprecating": "#E69F00", "deprecated": "#D55E00", "deleted": "#8c959f"}
_CHAR_W = 6.6  # rough width of a 12px sans-serif character, for layout only


def _n(x: float) -> str:
    """A compact SVG coordinate."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _svg_open(chart_id: str, width: float, height: float, title: str, desc: str) -> str:
    return (f'<svg class="chart" id="{chart_id}" '
            f'viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
            f'aria-labelledby="{chart_id}-title {chart_id}-desc">'
            f'<title id="{chart_id}-title">{_e(title)}</title><desc id="{chart_id}-desc">{_e(desc)}</desc>')


def _short(label: str, limit: int = 14) -> str:
    """Shorten a label for an axis, keeping its end, where snapshot labels usually differ."""
    if len(label) <= limit:
        return label
    head = max(1, (limit - 1) // 3)
    return label[:head] + "…" + label[len(label) - (limit - 1 - head):]


_MAX_COLUMNS = 6  # beyond this many snapshots the core chart turns into rows, which never crowd


def _svg_core_size(trend: tuple[TrendPoint, ...]) -> str:
    """The number of core operators in each snapshot, each value written beside its bar.

    Columns (oldest on the left) for a few snapshots; one row per snapshot when there are many.
    """
    width = 360.0
    vmax = max(p.categories.core for p in trend) or 1
    desc = "Core operators per snapshot: " + "; ".join(f"{p.label}: {p.categories.core:,}" for p in trend) + "."
    if len(trend) > _MAX_COLUMNS:
        label_w = min(max(len(_short(p.label)) for p in trend) * _CHAR_W + 8, 100.0)
        value_w = max(len(f"{p.categories.core:,}") for p in trend) * (_CHAR_W + 0.8) + 12
        x0, span = label_w + 4, width - value_w - label_w - 4
        row_h, gap = 16.0, 6.0
        height = len(trend) * (row_h + gap) - gap + 4
        out = [_svg_open("chart-core-size", width, height, "Core opset size per snapshot", desc)]
        for i, p in enumerate(trend):
            v = p.categories.core
            y = i * (row_h + gap)
            mid = y + row_h / 2 + 4
            w = max(v / vmax * span, 1.0) if v else 0.0
            out.append(f'<text x="{_n(label_w)}" y="{_n(mid)}" text-anchor="end" font-size="12">'
                       f'<title>{_e(p.label)}</title>{_e(_short(p.label))}</text>')
            out.append(f'<rect x="{_n(x0)}" y="{_n(y)}" width="{_n(w)}" height="{_n(row_h)}" fill="#0072B2">'
                       f'<title>{_e(p.label)}: {v:,} core operators</title></rect>')
            out.append(f'<text x="{_n(x0 + w + 4)}" y="{_n(mid)}" font-size="12" font-weight="600">{v:,}</text>')
        out.append("</svg>")
        return "".join(out)

    left = right = 6.0
    top, plot_h, bottom = 22.0, 130.0, 38.0
    height = top + plot_h + bottom
    band = (width - left - right) / len(trend)
    bar_w = min(band * 0.6, 60.0)
    base_y = top + plot_h
    out = [_svg_open("chart-core-size", width, height, "Core opset size per snapshot", desc)]
    for i, p in enumerate(trend):
        v = p.categories.core
        h = max(v / vmax * plot_h, 1.0) if v else 0.0
        cx = left + band * (i + 0.5)
        out.append(f'<rect x="{_n(cx - bar_w / 2)}" y="{_n(base_y - h)}" width="{_n(bar_w)}" height="{_n(h)}" '
                   f'fill="#0072B2"><title>{_e(p.label)}: {v:,} core operators</title></rect>')
        out.append(f'<text x="{_n(cx)}" y="{_n(base_y - h - 6)}" text-anchor="middle" font-size="12" '
                   f'font-weight="600">{v:,}</text>')
        out.append(f'<text x="{_n(cx)}" y="{_n(base_y + 16)}" text-anchor="middle" font-size="12">'
                   f'<title>{_e(p.label)}</title>{_e(_short(p.label, max(6, int(band / _CHAR_W))))}</text>')
        out.append(f'<text class="muted" x="{_n(cx)}" y="{_n(base_y + 31)}" text-anchor="middle" '
                   f'font-size="10">{p.imported_at.date().isoformat()}</text>')
    out.append(f'<line x1="{_n(left)}" y1="{_n(base_y)}" x2="{_n(width - right)}" y2="{_n(base_y)}" '
               f'stroke="#8c959f" stroke-width="1"/>')
    out.append("</svg>")
    return "".join(out)


def _svg_categories(trend: tuple[TrendPoint, ...]) -> str:
    """Stacked horizontal bars: operators per category in each snapshot, totals at the end."""
    width = 360.0
    label_w = min(max(len(_short(p.label)) for p in trend) * _CHAR_W + 8, 100.0)
    total_w = max(len(f"{p.categories.total:,}") for p in trend) * (_CHAR_W + 0.8) + 12
    x0, x1 = label_w + 4, width - total_w
    legend_h, row_h, gap = 26.0, 24.0, 10.0
    height = legend_h + len(trend) * (row_h + gap) - gap + 4
    vmax = max(p.categories.total for p in trend) or 1
    scale = (x1 - x0) / vmax
    desc = "Operators per category in each snapshot: " + "; ".join(
        f"{p.label}: " + ", ".join(f"{c} {getattr(p.categories, c):,}" for c in CATEGORIES)
        + f", total {p.categories.total:,}" for p in trend) + "."
    out = [_svg_open("chart-categories", width, height, "Operators per category in each snapshot", desc)]
    lx = 0.0
    for cat in CATEGORIES:
        fill, _ = _CAT_FILL[cat]
        out.append(f'<rect x="{_n(lx)}" y="4" width="12" height="12" fill="{fill}"/>'
                   f'<text x="{_n(lx + 16)}" y="14.5" font-size="12">{cat}</text>')
        lx += 16 + len(cat) * _CHAR_W + 18
    for i, p in enumerate(trend):
        y = legend_h + i * (row_h + gap)
        mid = y + row_h / 2 + 4
        out.append(f'<text x="{_n(label_w)}" y="{_n(mid)}" text-anchor="end" font-size="12">'
                   f'<title>{_e(p.label)}</title>{_e(_short(p.label))}</text>')
        x = x0
        for cat in CATEGORIES:
            v = getattr(p.categories, cat)
            if not v:
                continue
            w = max(v * scale, 1.0)
            fill, text_cls = _CAT_FILL[cat]
            out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{_n(row_h)}" fill="{fill}">'
                       f'<title>{_e(p.label)}: {cat} {v:,}</title></rect>')
            label = f"{v:,}"
            if len(label) * _CHAR_W + 6 <= w:
                cls = f' class="{text_cls}"' if text_cls else ""
                out.append(f'<text{cls} x="{_n(x + w / 2)}" y="{_n(mid)}" text-anchor="middle" '
                           f'font-size="11">{label}</text>')
            x += w
        out.append(f'<text x="{_n(x + 4)}" y="{_n(mid)}" font-size="12" font-weight="600">'
                   f'{p.categories.total:,}</text>')
    out.append("</svg>")
    return "".join(out)


def _svg_lifecycle(counts: LifecycleCounts) -> str:
    """A funnel: one centred bar per lifecycle state, its width proportional to the count."""
    width = 360.0
    label_w, value_w = 92.0, 56.0
    row_h, gap, top = 26.0, 8.0, 4.0
    x0, x1 = label_w + 6, width - value_w
    span = x1 - x0
    states = [(s, getattr(counts, s)) for s in LIFECYCLE_STATES]
    vmax = max(v for _, v in states) or 1
    height = top + len(states) * (row_h + gap) - gap + 4
    desc = "Operators per lifecycle state: " + ", ".join(f"{s} {v:,}" for s, v in states) + "."
    out = [_svg_open("chart-lifecycle", width, height, "Lifecycle funnel: active, deprecating, deprecated, deleted",
                     desc)]
    for i, (state, v) in enumerate(states):
        y = top + i * (row_h + gap)
        mid = y + row_h / 2 + 4
        out.append(f'<text x="{_n(label_w)}" y="{_n(mid)}" text-anchor="end" font-size="12">{state}</text>')
        w = max(v / vmax * span, 2.0) if v else 0.0
        if w:
            out.append(f'<rect x="{_n(x0 + (span - w) / 2)}" y="{_n(y)}" width="{_n(w)}" height="{_n(row_h)}" '
                       f'rx="3" fill="{_LIFE_FILL[state]}"><title>{state}: {v:,}</title></rect>')
        else:
            out.append(f'<line x1="{_n(x0)}" y1="{_n(mid - 4)}" x2="{_n(x1)}" y2="{_n(mid - 4)}" '
                       f'stroke="#d1d9e0" stroke-dasharray="3 3"/>')
        out.append(f'<text x="{_n(width - 2)}" y="{_n(mid)}" text-anchor="end" font-size="12" '
                   f'font-weight="600">{v:,}</text>')
    out.append("</svg>")
    return "".join(out)


_CHART_CAPTIONS = {
    "chart-core-size": "Core opset size per snapshot",
    "chart-categories": "Operators per category in each snapshot",
    "chart-lifecycle": "Lifecycle funnel",
}


def _html_chart(chart_id: str, report: WeeklyReport) -> str:
    if chart_id == "chart-core-size":
        svg = _svg_core_size(report.opset_trend)
    elif chart_id == "chart-categories":
        svg = _svg_categories(report.opset_trend)
    else:
        svg = _svg_lifecycle(report.opset_now.lifecycle)
    return f'<figure><figcaption aria-hidden="true">{_CHART_CAPTIONS[chart_id]}</figcaption>{svg}</figure>'


def _html_frags(text: _Text) -> str:
    out = []
    for f in text:
        body = _e(f.text)
        if f.code:
            body = f"<code>{body}</code>"
        if f.strong and not f.cls:
            body = f"<strong>{body}</strong>"
        classes = " ".join(c for c in (f.cls, "nowrap" if f.nowrap else "") if c)
        if classes:
            body = f'<span class="{_e(classes)}">{body}</span>'
        out.append(body)
    return "".join(out)


_NUM_ATTR = ' class="num"'


def _html_table(caption: str, columns: tuple[_Column, ...], rows: tuple[Any, ...]) -> str:
    head = "".join(f'<th scope="col"{_NUM_ATTR if c.numeric else ""}>{_e(c.header)}</th>' for c in columns)
    body = []
    for row in rows:
        cells = []
        for c in columns:
            cls = "num" if c.numeric else ("wide" if c.wide else "")
            attr = f' class="{cls}"' if cls else ""
            cells.append(f"<td{attr}>{_html_frags(c.cell(row))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<div class="table-wrap" role="region" aria-label="{_e(caption)}" tabindex="0">'
            f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def render_html(report: WeeklyReport) -> str:
    """One self-contained HTML page: inline CSS and SVG, no scripts, no external resources."""
    title = _title(report)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="referrer" content="no-referrer">',
        f'<meta name="generator" content="{_e(report.generated_by)}">',
        f"<title>{_e(title)}</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        "<header>",
        f"<h1>{_e_dates(title)}</h1>",
        f'<p class="meta">Period {_e_dates(_fmt_dt(report.since))} to {_e_dates(_fmt_dt(report.as_of))}; '
        f"generated by {_e(report.generated_by)}.</p>",
    ]
    if report.is_quiet:
        parts.append(f'<p class="quiet" id="quiet">{_e_dates(_quiet_line(report))}</p>')
    else:
        items = "".join(f'<li><a href="#{key.replace("_", "-")}">{_e(text)}</a></li>' for text, key in _summary(report))
        parts.append(f'<nav aria-label="This week"><ul class="summary" id="summary">{items}</ul></nav>')
    parts.append("</header>")

    for section in _sections(report):
        sid = section.html_id
        parts.append(f'<section id="{sid}" aria-labelledby="{sid}-heading">')
        parts.append(f'<h2 id="{sid}-heading">{_e(section.title)}</h2>')
        grid: list[str] = []  # charts and small tables side by side, as the width allows
        for block in section.blocks:
            if isinstance(block, _Chart):
                grid.append(_html_chart(block.chart_id, report))
                continue
            if isinstance(block, _Table) and block.compact:
                grid.append(_html_table(block.caption, block.columns, block.rows))
                continue
            if grid:
                parts.append('<div class="grid">' + "".join(grid) + "</div>")
                grid = []
            if isinstance(block, _Para):
                cls = f' class="{block.cls}"' if block.cls else ""
                parts.append(f"<p{cls}>{_html_frags(block.text)}</p>")
            else:
                shown, folded = _fold(block)
                parts.append(_html_table(block.caption, block.columns, shown))
                if folded:
                    parts.append(f"<details><summary>Show {_plural(len(folded), 'more row')}</summary>"
                                 f"{_html_table(block.caption + ' (continued)', block.columns, folded)}</details>")
        if grid:
            parts.append('<div class="grid">' + "".join(grid) + "</div>")
        parts.append("</section>")

    parts += [f"<footer>Generated by {_e(report.generated_by)} as of {_e(_fmt_dt(report.as_of))}.</footer>",
              "</main>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"
