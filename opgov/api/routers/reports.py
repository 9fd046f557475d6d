"""The weekly report, and the build-your-own opset."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Response

from opgov.api.deps import Reader
from opgov.api.fields import DATE_TIME_PATTERN, OperatorsQuery

router = APIRouter(prefix="/api/v1", tags=["reports"])


def _weekly_model():
    from opgov.results.report import WeeklyReport

    return WeeklyReport


def _opset_model():
    from opgov.results.decomps import OpsetReport

    return OpsetReport


@router.get("/report/weekly", response_model=_weekly_model(),
            responses={200: {"content": {"text/markdown": {}, "text/html": {}}}})
def weekly(ctx: Reader, format: Literal["json", "md", "html"] = "json",  # noqa: A002
           as_of: str | None = Query(None, pattern=DATE_TIME_PATTERN, max_length=40,
                                     description="end of the period (default now): ISO 8601 date or time"),
           since: str | None = Query(None, pattern=DATE_TIME_PATTERN, max_length=40,
                                     description="start (default 7 days earlier): ISO 8601 date or time")):
    """The committee's weekly report for (since, as_of]: JSON, Markdown to post, or one HTML page."""
    from opgov.core.clock import parse_time
    from opgov.render import report as render
    from opgov.services.reports import weekly_report

    end = parse_time(as_of, what="as_of") if as_of else None
    start = parse_time(since, what="since") if since else None
    data = weekly_report(ctx, as_of=end, since=start)
    if format == "md":
        return Response(render.render_markdown(data), media_type="text/markdown; charset=utf-8")
    if format == "html":
        return Response(render.render_html(data), media_type="text/html; charset=utf-8")
    return data


@router.get("/opset", response_model=_opset_model(),
            responses={200: {"content": {"text/plain": {}, "application/yaml": {}, "text/x-python": {}}}})
def opset(ctx: Reader, preset: Literal["core-aten", "no-decomp", "full-decomp"] = "core-aten",
          decompose: OperatorsQuery = [], keep: OperatorsQuery = [],
          format: Literal["json", "text", "selective-build", "python"] = "json"):  # noqa: A002
    """The operators a backend must implement after the chosen decompositions: JSON, or what
    `opgov opset build --format text|selective-build|python` prints (the selective-build yaml with
    the out= variants ExecuTorch's kernels implement)."""
    from opgov.results.decomps import OpsetReport
    from opgov.services.decompositions import build, out_variants

    result, _ = build(ctx, preset=preset, decompose=decompose, keep=keep, models=None)
    if format == "json":
        return OpsetReport.of(result)
    from opgov.render.decomps_text import render_opset, render_selective_build

    if format == "selective-build":
        text = render_selective_build(result, out_variants=out_variants(ctx, result.operators))
    else:
        text = render_opset(result, None, format)
    media = {"text": "text/plain", "selective-build": "application/yaml", "python": "text/x-python"}[format]
    return Response(text, media_type=f"{media}; charset=utf-8")
