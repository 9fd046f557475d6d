"""The weekly report, and the build-your-own opset."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Query, Response

from opgov.api.deps import Reader

router = APIRouter(prefix="/api/v1", tags=["reports"])


def _weekly_model():
    from opgov.render.report import WeeklyReport

    return WeeklyReport


def _opset_model():
    from opgov.render.decomps import OpsetReport

    return OpsetReport


@router.get("/report/weekly", response_model=_weekly_model(),
            responses={200: {"content": {"text/markdown": {}, "text/html": {}}}})
def weekly(ctx: Reader, format: Literal["json", "md", "html"] = "json",  # noqa: A002
           as_of: datetime | None = Query(None, description="end of the period (default now)"),
           since: datetime | None = Query(None, description="start (default 7 days earlier)")):
    """The committee's weekly report for (since, as_of]: JSON, Markdown to post, or one HTML page."""
    from opgov.core.clock import parse_time
    from opgov.render import report as render
    from opgov.services.reports import weekly_report

    end = parse_time(as_of.isoformat(), what="as_of") if as_of else None
    start = parse_time(since.isoformat(), what="since") if since else None
    data = weekly_report(ctx, as_of=end, since=start)
    if format == "md":
        return Response(render.render_markdown(data), media_type="text/markdown; charset=utf-8")
    if format == "html":
        return Response(render.render_html(data), media_type="text/html; charset=utf-8")
    return data


@router.get("/opset", response_model=_opset_model())
def opset(ctx: Reader, preset: Literal["core-aten", "no-decomp", "full-decomp"] = "core-aten",
          decompose: list[str] = Query([], description="also decompose these operators"),
          keep: list[str] = Query([], description="do not decompose these operators")):
    """The operators a backend must implement after the chosen decompositions."""
    from opgov.render.decomps import OpsetReport
    from opgov.services.decompositions import build

    result, _ = build(ctx, preset=preset, decompose=decompose, keep=keep, models=None)
    return OpsetReport.of(result)
