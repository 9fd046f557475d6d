"""Checks, what they write back and the committee's report: BC exceptions, the sync bot
(``sync-yaml``), the weekly report."""

from __future__ import annotations

from opgov.usecases.declaration import MODELS, UseCase

REQUESTS = "opgov.usecases.requests.checks"

DECLARED: tuple[UseCase, ...] = (
    UseCase("exceptions list", request=f"{REQUESTS}:ExceptionQuery", result=f"list[{MODELS}:ExceptionView]",
            service="opgov.services.compat_checks:exceptions", method="GET", path="/api/v1/exceptions",
            summary="BC exceptions in force and expired (`all`: removed ones too)."),
    UseCase("exceptions add", request=f"{REQUESTS}:ExceptionRequest", result=f"{MODELS}:ExceptionAdded",
            service="opgov.services.compat_checks:add_exception", writes=True, method="POST",
            path="/api/v1/exceptions", status=201,
            summary="Record an exception: BC breaks of matching non-core operators are not errors until it "
                    "expires."),
    UseCase("exceptions remove", request=f"{REQUESTS}:ExceptionId", result=f"{MODELS}:ExceptionView",
            service="opgov.services.compat_checks:remove_exception", writes=True, method="DELETE",
            path="/api/v1/exceptions/{exception_id}",
            summary="Remove an exception (maintainers; kept in the log). 404 for an unknown id."),
    UseCase("report weekly", group="reports", request=f"{REQUESTS}:WeeklyQuery", result="opgov.results.report:WeeklyReport",
            service="opgov.services.reports:weekly", method="GET", path="/api/v1/report/weekly",
            formats=(("md", "text/markdown"), ("html", "text/html")),
            summary="The committee's weekly report for (since, as_of]: JSON, Markdown to post, or one HTML page."),
    UseCase("sync-yaml", group="sync", request=f"{REQUESTS}:SyncCheck",
            result="opgov.results.sync:SyncAnswer", light=True,
            service="opgov.services.sync:check_files", method="POST", path="/api/v1/sync-yaml", orm=False,
            summary="What the sync bot would change in the uploaded files: `opgov sync-yaml --check` / `--diff`.",
            description="`report.in_sync` false, or conflicts, is what makes the command exit 1. Writes nothing."),
    UseCase("sync-yaml write", group="sync", request=f"{REQUESTS}:SyncWrite",
            result="opgov.results.sync:SyncAnswer", light=True,
            service="opgov.services.sync:write_files", writes=True, method="POST", path="/api/v1/sync-yaml/write",
            orm=False, commands=("sync-yaml",),
            summary="`opgov sync-yaml --write` (bots and maintainers): the new texts of the files that change, for "
                    "the client to write, and the sync logged.",
            description="`native_functions`, `tags`: the new texts (null: unchanged)."),
)
