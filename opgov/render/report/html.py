"""The report as one self-contained HTML page: inline CSS, inline SVG charts, no scripts and no
network access (enforced by a Content-Security-Policy); it reads on a phone and prints cleanly.
The markup is in ``opgov/render/templates/weekly_report.html.j2`` (and its ``_macros``,
``_charts``; Jinja2 with autoescape), the stylesheet in ``opgov/render/static/opgov.css``. Here:
the data those templates are filled with.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from types import SimpleNamespace
from typing import Any

from opgov.render.report.charts import chart_of, svg_number
from opgov.render.report.layout import (Chart, Para, Section, Table, fmt_dt, fold, plural, quiet_line, sections_of,
                                        summary_of, title_of)
from opgov.results.reports import WeeklyReport


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2} UTC)?")


def _dated(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_date): the page keeps every date (and time) on one line."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for m in _DATE.finditer(text):
        if m.start() > at:
            pieces.append((text[at:m.start()], False))
        pieces.append((m.group(0), True))
        at = m.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def _html_parts(report: WeeklyReport, section: Section) -> list[SimpleNamespace]:
    """A section's blocks as the page lays them out: charts and small tables side by side in a
    grid, as the width allows; paragraphs; long tables folded."""
    parts: list[SimpleNamespace] = []
    grid: list[Any] = []
    for block in section.blocks:
        if isinstance(block, Chart):
            grid.append(chart_of(block.chart_id, report))
            continue
        if isinstance(block, Table) and block.compact:
            grid.append(block)
            continue
        if grid:
            parts.append(SimpleNamespace(kind="grid", items=grid))
            grid = []
        if isinstance(block, Para):
            parts.append(SimpleNamespace(kind="para", block=block))
        else:
            shown, folded = fold(block)
            parts.append(SimpleNamespace(kind="table", block=block, shown=shown, folded=folded,
                                         more=plural(len(folded), "more row")))
    if grid:
        parts.append(SimpleNamespace(kind="grid", items=grid))
    return parts


@lru_cache(maxsize=1)
def _templates() -> Any:
    """The Jinja2 environment of opgov/render/templates (imported on first use: only the HTML
    report needs it)."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("opgov.render", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["n"] = svg_number
    env.filters["thousands"] = lambda v: f"{v:,}"
    return env


def _css() -> str:
    return resources.files("opgov.render").joinpath("static", "opgov.css").read_text(encoding="utf-8")


def render_html(report: WeeklyReport) -> str:
    """One self-contained HTML page: inline CSS and SVG, no scripts, no external resources."""
    from markupsafe import Markup

    title = title_of(report)
    sections = [SimpleNamespace(id=s.html_id, title=s.title, parts=_html_parts(report, s)) for s in sections_of(report)]
    return _templates().get_template("weekly_report.html.j2").render(
        title=title,
        title_dated=_dated(title),
        generated_by=report.generated_by,
        css=Markup(_css()),  # a file of the package, not user input
        since=_dated(fmt_dt(report.since)),
        as_of=_dated(fmt_dt(report.as_of)),
        as_of_plain=fmt_dt(report.as_of),
        quiet=_dated(quiet_line(report)) if report.is_quiet else None,
        summary=[(text, key.replace("_", "-")) for text, key in summary_of(report)],
        sections=sections,
    )
