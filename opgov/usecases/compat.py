"""Compatibility: the check of two registries (``check-bc``) as a server answers it (each side an
uploaded native_functions.yaml or a snapshot it holds; a local check of files or git refs runs in the
command, opgov.cli.commands_compat), and the recorded exceptions to the BC policy."""

from __future__ import annotations

from opgov.results.compat import CheckReport, ExceptionAdded, ExceptionView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.compat import CheckBcSides, ExceptionId, ExceptionQuery, ExceptionRequest


EXCEPTIONS_LIST = UseCase(
    "exceptions list", request=ExceptionQuery, result=list[ExceptionView],
    service=lazy("opgov.services.compat", "exceptions"), method="GET", path="/api/v1/exceptions",
    summary="BC exceptions in force and expired (`all`: removed ones too).")

EXCEPTIONS_ADD = UseCase(
    "exceptions add", request=ExceptionRequest, result=ExceptionAdded,
    service=lazy("opgov.services.compat", "add_exception"), writes=True, method="POST",
    path="/api/v1/exceptions", status=201,
    summary="Record an exception: BC breaks of matching non-core operators are not errors until it "
            "expires.")

EXCEPTIONS_REMOVE = UseCase(
    "exceptions remove", request=ExceptionId, result=ExceptionView,
    service=lazy("opgov.services.compat", "remove_exception"), writes=True, method="DELETE",
    path="/api/v1/exceptions/{exception_id}",
    summary="Remove an exception (maintainers; kept in the log). 404 for an unknown id.")

CHECK_BC = UseCase(
    "check-bc", request=CheckBcSides, result=CheckReport,
    service=lazy("opgov.services.compat", "check_bc_sides"), method="POST", path="/api/v1/check-bc",
    group="checks",
    summary="BC/FC findings of old → new: `opgov check-bc OLD NEW --server`.",
    description="With PyTorch's semantics and the core policy (the database's decisions, exceptions and "
                "completed deletions apply). Each side is an uploaded file or the label of a snapshot the "
                "server holds (`opgov check-bc 2.12.0 2.13.0 --server …`). `summary.errors` > 0 is what "
                "makes `opgov check-bc` exit 1. Writes nothing.")

DECLARED: tuple[UseCase, ...] = (EXCEPTIONS_LIST, EXCEPTIONS_ADD, EXCEPTIONS_REMOVE, CHECK_BC)
