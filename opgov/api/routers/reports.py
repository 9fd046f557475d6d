"""The weekly report (the build-your-own opset is a declared use case: opgov.usecases.decomps)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Query, Response

from opgov.api.deps import Reader
from opgov.api.fields import DATE_TIME_PATTERN

router = APIRouter(prefix="/api/v1", tags=["reports"])


def _weekly_model():
    from opgov.results.report import WeeklyReport

    return WeeklyReport


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
