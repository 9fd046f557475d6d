"""The geometry of the HTML page's SVG charts (core opset size, operators per category, the
lifecycle funnel): plain numbers for ``templates/_charts.svg.j2``, which holds the markup. Only
the HTML page has charts; the trend table carries the same numbers everywhere else.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from opgov.results.reports import CATEGORIES, LIFECYCLE_STATES, LifecycleCounts, TrendPoint, WeeklyReport


_CAT_FILL = {"core": ("#0072B2", "on-dark"), "decomposable": ("#E69F00", ""), "custom": ("#009E73", "")}
_LIFE_FILL = {"active": "#0072B2", "deprecating": "#E69F00", "deprecated": "#D55E00", "deleted": "#8c959f"}
_CHAR_W = 6.6  # rough width of a 12px sans-serif character, for layout only


def svg_number(x: float) -> str:
    """A compact SVG coordinate."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


def _short(label: str, limit: int = 14) -> str:
    """Shorten a label for an axis, keeping its end, where snapshot labels usually differ."""
    if len(label) <= limit:
        return label
    head = max(1, (limit - 1) // 3)
    return label[:head] + "…" + label[len(label) - (limit - 1 - head):]


_MAX_COLUMNS = 6  # beyond this many snapshots the core chart turns into rows, which never crowd

_CHART_CAPTIONS = {
    "chart-core-size": "Core opset size per snapshot",
    "chart-categories": "Operators per category in each snapshot",
    "chart-lifecycle": "Lifecycle funnel (log scale)",
}


def _chart(chart_id: str, title: str, desc: str, width: float, height: float, **geometry: Any) -> SimpleNamespace:
    return SimpleNamespace(id=chart_id, caption=_CHART_CAPTIONS[chart_id], title=title, desc=desc, width=width,
                           height=height, **geometry)


def _chart_core_size(trend: tuple[TrendPoint, ...]) -> SimpleNamespace:
    """The number of core operators in each snapshot, each value written beside its bar.

    Columns (oldest on the left) for a few snapshots; one row per snapshot when there are many.
    """
    width = 360.0
    vmax = max(p.categories.core for p in trend) or 1
    title = "Core opset size per snapshot"
    desc = "Core operators per snapshot: " + "; ".join(f"{p.label}: {p.categories.core:,}" for p in trend) + "."
    if len(trend) > _MAX_COLUMNS:
        label_w = min(max(len(_short(p.label)) for p in trend) * _CHAR_W + 8, 100.0)
        value_w = max(len(f"{p.categories.core:,}") for p in trend) * (_CHAR_W + 0.8) + 12
        x0, span = label_w + 4, width - value_w - label_w - 4
        row_h, gap = 16.0, 6.0
        height = len(trend) * (row_h + gap) - gap + 4
        rows = []
        for i, p in enumerate(trend):
            v = p.categories.core
            y = i * (row_h + gap)
            rows.append(SimpleNamespace(label=p.label, short=_short(p.label), value=v, y=y, mid=y + row_h / 2 + 4,
                                        w=max(v / vmax * span, 1.0) if v else 0.0))
        return _chart("chart-core-size", title, desc, width, height, label_w=label_w, x0=x0, row_h=row_h, rows=rows)

    left = right = 6.0
    top, plot_h, bottom = 22.0, 130.0, 38.0
    band = (width - left - right) / len(trend)
    bars = []
    for i, p in enumerate(trend):
        v = p.categories.core
        bars.append(SimpleNamespace(label=p.label, short=_short(p.label, max(6, int(band / _CHAR_W))), value=v,
                                    h=max(v / vmax * plot_h, 1.0) if v else 0.0, cx=left + band * (i + 0.5),
                                    day=p.imported_at.date().isoformat()))
    return _chart("chart-core-size", title, desc, width, top + plot_h + bottom, left=left, right=right,
                  bar_w=min(band * 0.6, 60.0), base_y=top + plot_h, bars=bars)


def _chart_categories(trend: tuple[TrendPoint, ...]) -> SimpleNamespace:
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
    legend, lx = [], 0.0
    for cat in CATEGORIES:
        legend.append(SimpleNamespace(x=lx, fill=_CAT_FILL[cat][0], category=cat))
        lx += 16 + len(cat) * _CHAR_W + 18
    rows = []
    for i, p in enumerate(trend):
        y = legend_h + i * (row_h + gap)
        segments, x = [], x0
        for cat in CATEGORIES:
            v = getattr(p.categories, cat)
            if not v:
                continue
            w = max(v * scale, 1.0)
            fill, text_cls = _CAT_FILL[cat]
            segments.append(SimpleNamespace(x=x, w=w, fill=fill, text_cls=text_cls, category=cat, value=v,
                                            show_value=len(f"{v:,}") * _CHAR_W + 6 <= w))
            x += w
        rows.append(SimpleNamespace(label=p.label, short=_short(p.label), y=y, mid=y + row_h / 2 + 4,
                                    segments=segments, end=x, total=p.categories.total))
    return _chart("chart-categories", "Operators per category in each snapshot", desc, width, height,
                  label_w=label_w, row_h=row_h, legend=legend, rows=rows)


def _chart_lifecycle(counts: LifecycleCounts) -> SimpleNamespace:
    """A funnel: one centred bar per lifecycle state, its width on a log scale of the count.

    Nearly every operator is active, so on a linear scale the few deprecating, deprecated and
    deleted ones would be hairlines; each count is written at the end of its row anyway.
    """
    width = 360.0
    label_w, value_w = 92.0, 56.0
    row_h, gap, top = 26.0, 8.0, 4.0
    x0, x1 = label_w + 6, width - value_w
    span = x1 - x0
    states = [(s, getattr(counts, s)) for s in LIFECYCLE_STATES]
    vmax = max(v for _, v in states) or 1
    height = top + len(states) * (row_h + gap) - gap + 4
    desc = ("Operators per lifecycle state (bar lengths on a log scale): "
            + ", ".join(f"{s} {v:,}" for s, v in states) + ".")
    rows = []
    for i, (state, v) in enumerate(states):
        y = top + i * (row_h + gap)
        rows.append(SimpleNamespace(state=state, value=v, y=y, mid=y + row_h / 2 + 4, fill=_LIFE_FILL[state],
                                    w=max(math.log1p(v) / math.log1p(vmax) * span, 4.0) if v else 0.0))
    return _chart("chart-lifecycle", "Lifecycle funnel: active, deprecating, deprecated, deleted", desc, width,
                  height, label_w=label_w, row_h=row_h, x0=x0, x1=x1, span=span, rows=rows)


def chart_of(chart_id: str, report: WeeklyReport) -> SimpleNamespace:
    if chart_id == "chart-core-size":
        return _chart_core_size(report.opset_trend)
    if chart_id == "chart-categories":
        return _chart_categories(report.opset_trend)
    return _chart_lifecycle(report.opset_now.lifecycle)
