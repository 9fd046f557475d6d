"""The weekly committee report: one data model, three renderings.

It imports the standard library, pydantic and the core vocabulary, and Jinja2 when it renders
HTML; never the database, the CLI or the system clock. A service fills a :class:`WeeklyReport`
(:mod:`.model`) with plain data; :mod:`.layout` turns it into sections of paragraphs, tables and
charts that say the same in every format, and the renderers lay those out:

- :func:`render_markdown` (:mod:`.markdown`): ready to paste into a GitHub issue or a forum post
  (GitHub tables, long lists folded into ``<details>``);
- :func:`render_json` (:mod:`.model`): one key per section, for bots (the model's own JSON shape);
- :func:`render_html` (:mod:`.html`): one self-contained page (inline CSS, inline SVG charts whose
  geometry :mod:`.charts` computes, no scripts and no network access, enforced by a
  Content-Security-Policy) that reads on a phone and prints cleanly; the markup is in
  ``opgov/render/templates/`` (autoescaped Jinja2), the stylesheet in ``opgov/render/static/opgov.css``.
"""

from __future__ import annotations

from opgov.render.report.html import render_html
from opgov.render.report.markdown import GITHUB_BODY_LIMIT, MARKDOWN_BUDGET, render_markdown
from opgov.render.report.model import (SECTION_KEYS, Category, CategoryCounts, CompatFinding, DecidedProposal,
                                       DeprecatedOp, DriftItem, ExceptionEntry, LifecycleCounts, LifecycleDue,
                                       OpenProposal, OpsetNow, RemovedOp, ReviewItem, SnapshotRef, TagChange,
                                       TrendPoint, Vote, WeeklyReport, render_json)

__all__ = [
    "Category",
    "CategoryCounts",
    "CompatFinding",
    "DecidedProposal",
    "DeprecatedOp",
    "DriftItem",
    "ExceptionEntry",
    "GITHUB_BODY_LIMIT",
    "LifecycleCounts",
    "LifecycleDue",
    "MARKDOWN_BUDGET",
    "OpenProposal",
    "OpsetNow",
    "RemovedOp",
    "ReviewItem",
    "SECTION_KEYS",
    "SnapshotRef",
    "TagChange",
    "TrendPoint",
    "Vote",
    "WeeklyReport",
    "render_html",
    "render_json",
    "render_markdown",
]
