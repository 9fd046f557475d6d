"""Operators: the list and one operator's story (its lifecycle steps are declared use cases:
opgov.usecases.governance)."""

from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime
from typing import Literal
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from opgov.api.deps import Authorization, Reader
from opgov.api.fields import OperatorPath
from opgov.results.models import OperatorDetail, OperatorSummary

router = APIRouter(prefix="/api/v1/operators", tags=["operators"])


@router.get("", response_model=list[OperatorSummary])
def list_operators(ctx: Reader, category: Literal["core", "decomposable", "custom"] | None = None,
                   lifecycle: Literal["active", "deprecating", "deprecated", "deleted"] | None = None,
                   q: str | None = None, tag: str | None = None, all: bool = False) -> list[OperatorSummary]:  # noqa: A002
    """Operators present in the latest snapshot (``all``: every operator ever seen); ``q`` filters
    by a part of the name."""
    from opgov.services.ops import list_ops

    return list_ops(ctx, category=category, lifecycle=lifecycle, tag=tag, include_all=all, q=q)


def deprecation_headers(op: OperatorDetail) -> dict[str, str]:
    """``Deprecation`` (RFC 9745: when it began deprecating) and ``Sunset`` (RFC 8594: the earliest
    time its entry may be deleted) for a deprecating or deprecated operator."""
    if op.lifecycle not in ("deprecating", "deprecated"):
        return {}
    began: datetime | None = next((s.at for s in reversed(op.lifecycle_steps) if s.to_state == "deprecating"),
                                  op.lifecycle_since)
    headers = {}
    if began is not None:
        headers["Deprecation"] = f"@{int(began.timestamp())}"
    if op.sunset is not None:
        headers["Sunset"] = format_datetime(op.sunset, usegmt=True)
    if op.replacement:
        headers["Link"] = f'</api/v1/operators/{quote(op.replacement, safe="")}>; rel="successor-version"'
    return headers


@router.get("/{name}", response_model=OperatorDetail, responses={
    200: {"headers": {"ETag": {"description": "strong validator of this answer", "schema": {"type": "string"}}}},
    304: {"description": "the answer is unchanged since the ETag given in If-None-Match"}})
async def get_operator(name: OperatorPath, request: Request,
                       authorization: Authorization) -> Response:
    """One operator (``aten::add.Tensor``, URL-encoded): schema per snapshot, category and its
    decisions with rationale, proposals, lifecycle with dates, compatibility findings. A
    deprecating or deprecated operator's response carries ``Deprecation`` and ``Sunset``. The
    answer has a strong ``ETag``: send it back in ``If-None-Match`` to get 304 while nothing changed."""
    from starlette.concurrency import run_in_threadpool

    state = request.app.state
    if state.answers.enabled and authorization is None and state.config.public_reads:
        # an anonymous public read: the cached answer, if it is of the generation read after this
        # request arrived (one read of the stamp serves the requests that arrived meanwhile)
        answer = state.answers.get(("operator", name), await state.stamps.current())
        if answer is not None:
            return answer.response(request.headers.get("if-none-match"))
    # the whole read (token, stamp, answer) in one trip to the thread pool
    return await run_in_threadpool(operator_answer, request, name, authorization)


def operator_answer(request: Request, name: str, authorization: str | None) -> Response:
    """The operator's answer, from the cache while the database's stamp and the date are those it
    was computed at (opgov.api.cache), in one read transaction."""
    from opgov.api.cache import Answer
    from opgov.api.deps import clock, orm_session, reading
    from opgov.services.common import log_version

    answers = request.app.state.answers
    with reading(request, authorization, clock()) as ctx:
        key = ("operator", name)
        # the stamp first: the answer computed next is at least as new as it
        generation = (log_version(ctx.session), ctx.now().date()) if answers.enabled else None
        answer = answers.get(key, generation) if answers.enabled else None
        if answer is None:
            from opgov.services.ops import show_op

            with orm_session(ctx) as orm:
                op = show_op(orm, name)
            answer = Answer.of(op.model_dump_json().encode(), deprecation_headers(op))
            if answers.enabled:
                answers.put(key, generation, answer)
    return answer.response(request.headers.get("if-none-match"), private=not request.app.state.config.public_reads)
