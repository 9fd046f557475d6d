"""The weekly committee report: one data model, three renderings.

Its data model is :class:`opgov.results.reports.WeeklyReport`, which a service fills with plain data;
this package imports the standard library and the core vocabulary, and Jinja2 when it
renders HTML; never the database, the CLI or the system clock. :mod:`.layout` turns a report into
sections of paragraphs, tables and charts that say the same in every format, and the renderers lay
those out:

- :func:`render_markdown` (:mod:`.markdown`): ready to paste into a GitHub issue or a forum post
  (GitHub tables, long lists folded into ``<details>``);
- :func:`render_json`: one key per section, for bots (the model's own JSON shape);
- :func:`render_html` (:mod:`.html`): one self-contained page (inline CSS, inline SVG charts whose
  geometry :mod:`.charts` computes, no scripts and no network access, enforced by a
  Content-Security-Policy) that reads on a phone and prints cleanly; the markup is in
  ``opgov/render/templates/`` (autoescaped Jinja2), the stylesheet in ``opgov/render/static/opgov.css``.
"""

from __future__ import annotations

from opgov.render.report.html import render_html
from opgov.render.report.markdown import GITHUB_BODY_LIMIT, MARKDOWN_BUDGET, render_markdown
from opgov.results.plain import to_json
from opgov.results.reports import WeeklyReport

__all__ = ["GITHUB_BODY_LIMIT", "MARKDOWN_BUDGET", "render_html", "render_json", "render_markdown"]


def render_json(report: WeeklyReport) -> str:
    """The model's JSON: ``as_of``, ``since``, ``generated_by``, ``soon_days`` and one key per section."""
    return to_json(report) + "\n"
