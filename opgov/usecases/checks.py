"""Checks, what they write back and the committee's report: BC exceptions, the sync bot
(``sync-yaml``), the weekly report."""

from __future__ import annotations

from opgov.results.models import ExceptionAdded, ExceptionView
from opgov.results.report import WeeklyReport
from opgov.results.sync import SyncAnswer
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.checks import (
    ExceptionId, ExceptionQuery, ExceptionRequest, SyncCheck, SyncWrite, WeeklyQuery,
)


DECLARED: tuple[UseCase, ...] = (
    UseCase("exceptions list", request=ExceptionQuery, result=list[ExceptionView],
            service=lazy("opgov.services.compat_checks", "exceptions"), method="GET", path="/api/v1/exceptions",
            summary="BC exceptions in force and expired (`all`: removed ones too)."),
    UseCase("exceptions add", request=ExceptionRequest, result=ExceptionAdded,
            service=lazy("opgov.services.compat_checks", "add_exception"), writes=True, method="POST",
            path="/api/v1/exceptions", status=201,
            summary="Record an exception: BC breaks of matching non-core operators are not errors until it "
                    "expires."),
    UseCase("exceptions remove", request=ExceptionId, result=ExceptionView,
            service=lazy("opgov.services.compat_checks", "remove_exception"), writes=True, method="DELETE",
            path="/api/v1/exceptions/{exception_id}",
            summary="Remove an exception (maintainers; kept in the log). 404 for an unknown id."),
    UseCase("report weekly", group="reports", request=WeeklyQuery, result=WeeklyReport,
            service=lazy("opgov.services.reports", "weekly"), method="GET", path="/api/v1/report/weekly",
            summary="The committee's weekly report for (since, as_of]: JSON, Markdown to post, or one HTML page."),
    UseCase("sync-yaml", group="sync", request=SyncCheck,
            result=SyncAnswer,
            service=lazy("opgov.services.sync", "check_files"), method="POST", path="/api/v1/sync-yaml", orm=False,
            summary="What the sync bot would change in the uploaded files: `opgov sync-yaml --check` / `--diff`.",
            description="`report.in_sync` false, or conflicts, is what makes the command exit 1. Writes nothing."),
    UseCase("sync-yaml write", group="sync", request=SyncWrite,
            result=SyncAnswer,
            service=lazy("opgov.services.sync", "write_files"), writes=True, method="POST", path="/api/v1/sync-yaml/write",
            orm=False, commands=("sync-yaml",),
            summary="`opgov sync-yaml --write` (bots and maintainers): the new texts of the files that change, for "
                    "the client to write, and the sync logged.",
            description="`native_functions`, `tags`: the new texts (null: unchanged)."),
)
