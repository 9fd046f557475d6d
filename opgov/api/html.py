"""The pages of ``opgov serve`` at ``/``: each renders a template from the same result its JSON
twin under ``/api/v1`` returns (see :mod:`opgov.web.render`), read as the static site reads it
(:mod:`opgov.web.data`: a declared use case, or a read of the reads room). The routes live in the
API, over the page renderer of :mod:`opgov.web`, so web/ never imports the API."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response

from opgov.api.deps import Reader
from opgov.core.errors import NotFound

router = APIRouter(include_in_schema=False)
_STATIC = {"pages.css": "text/css; charset=utf-8", "pages.js": "text/javascript; charset=utf-8"}


def _links():
    from opgov.web.render import Links

    return Links(static=False)


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={"Content-Security-Policy": "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; base-uri 'none'; form-action 'self'",
                                                           "Referrer-Policy": "no-referrer"})


@router.get("/favicon.ico")
def favicon() -> Response:
    """The icon the pages carry inline, for clients that ask for /favicon.ico anyway (a JSON
    answer opened in a browser): an answer, not a 404 in the console."""
    from importlib.resources import files

    icon = (files("opgov.web") / "static" / "favicon.svg").read_bytes()
    return Response(icon, media_type="image/svg+xml", headers={"Cache-Control": "public, max-age=86400"})


@router.get("/", response_class=HTMLResponse)
def index(ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import index_page

    return _html(index_page(_links(), counts=data.counts(ctx)))


@router.get("/opset", response_class=HTMLResponse)
def opset(ctx: Reader) -> HTMLResponse:
    from opgov.usecases.pages import PAGES_OPSET_VIEW
    from opgov.web import data
    from opgov.web.render import empty_page, opset_page

    if data.counts(ctx)["operators"] == 0:  # a fresh server: say what to import, not a problem+json
        return _html(empty_page(_links(), current="opset", heading="Build your own opset"))
    return _html(opset_page(_links(), data.opset_page(ctx, view_url=PAGES_OPSET_VIEW.path)))


@router.get("/ops", response_class=HTMLResponse)
def ops(ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import ops_page

    return _html(ops_page(_links(), data.operators(ctx)))


@router.get("/ops/{name}", response_class=HTMLResponse)
def op(name: str, ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import error_page, op_page

    try:
        page = data.operator(ctx, name)
    except NotFound as err:
        return _html(error_page(_links(), str(err)), 404)
    return _html(op_page(_links(), page))


@router.get("/proposals", response_class=HTMLResponse)
def proposals(ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import proposals_page

    return _html(proposals_page(_links(), data.proposals(ctx)))


QUEUE_PAGE = 50  # operators on one page of /queue


@router.get("/queue", response_class=HTMLResponse)
def queue(ctx: Reader, match: str = "", suggestion: str = "", reason: str = "",
          snapshot: str = "", sort: str = "waiting", page: int = 1) -> HTMLResponse:
    from opgov.core.errors import BadInput
    from opgov.web import data
    from opgov.web.render import error_page, queue_page

    params = {"match": match, "suggestion": suggestion, "reason": reason, "snapshot": snapshot, "page": page}
    try:
        view = data.queue(ctx, match=[match] if match else [], suggestion=[suggestion] if suggestion else [],
                          reason=[reason] if reason else [], snapshot=[snapshot] if snapshot else [], sort=sort,
                          limit=QUEUE_PAGE, offset=QUEUE_PAGE * (max(page, 1) - 1))
    except BadInput as err:
        return _html(error_page(_links(), str(err)), 400)
    return _html(queue_page(_links(), view, data.coming_due(ctx), history=data.queue_history(ctx), params=params))


@router.get("/report", response_class=HTMLResponse)
def report(ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import report_page

    return _html(report_page(_links(), data.report(ctx)))


@router.get("/closure", response_class=HTMLResponse)
def closure(ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import closure_page

    return _html(closure_page(_links(), data.closure(ctx)))


@router.get("/check-model", response_class=HTMLResponse)
def check_model_form(ctx: Reader) -> HTMLResponse:
    from opgov.web import data
    from opgov.web.render import check_model_page

    return _html(check_model_page(_links(), data.runtimes(ctx)))


async def _uploaded(request: Request):
    """The form's fields (:func:`opgov.api.routers.checks._model_input`), or the one line that
    refuses them (a file past the size bound, no file)."""
    from fastapi import HTTPException

    from opgov.api.routers.checks import _model_input

    if not request.headers.get("content-type", "").startswith("multipart/form-data"):  # the form sends files
        return None, "models: choose at least one model file (.pt2, selected_operators.yaml, op list)"
    try:
        spec = await _model_input(request)
    except HTTPException as err:
        return None, str(err.detail)
    if spec.operators is not None or not spec.files:
        return spec, "models: choose at least one model file (.pt2, selected_operators.yaml, op list)"
    return spec, None


@router.post("/check-model", response_class=HTMLResponse)
def check_model(ctx: Reader, uploaded=Depends(_uploaded)) -> HTMLResponse:
    """The form's answer: the uploads checked as POST /api/v1/check-model checks them, rendered; a
    refused upload is the page again with its one line (400)."""
    from opgov.core.errors import BadInput
    from opgov.web import data
    from opgov.web.render import check_model_page

    spec, error = uploaded
    runtime = spec.runtime if spec is not None else None
    if error is None:
        try:
            result = data.check_model(ctx, spec.files, runtime)
        except BadInput as err:
            error = str(err)
    if error is not None:
        return _html(check_model_page(_links(), data.runtimes(ctx), chosen=runtime, error=error), 400)
    return _html(check_model_page(_links(), data.runtimes(ctx), chosen=runtime, result=result))


@router.get("/static/{name}")
def static(name: str) -> Response:
    from opgov.web.render import script, stylesheet

    if name not in _STATIC:
        raise NotFound(f"no static file {name}")
    body = stylesheet() if name == "pages.css" else script(name)
    return Response(body, media_type=_STATIC[name], headers={"Cache-Control": "public, max-age=300"})
