"""The committee's weekly report."""

from __future__ import annotations

from opgov.results.reports import WeeklyReport
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.reports import WeeklyQuery


REPORT_WEEKLY = UseCase("report weekly", group="reports", request=WeeklyQuery, result=WeeklyReport,
                        service=lazy("opgov.services.reports", "weekly"), method="GET", path="/api/v1/report/weekly",
                        summary="The committee's weekly report for (since, as_of]: JSON, Markdown to post, or one HTML page.")
DECLARED: tuple[UseCase, ...] = (
    REPORT_WEEKLY,
)
