"""``/docs``: Swagger UI from files that travel with opgov (the ``swagger-ui-bundle-v2`` package,
Apache-2.0, its licence in its own dist-info), so the page renders on a network with no CDN — the
usual place for an internal metadata service. Outside the OpenAPI document, like the pages."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.responses import HTMLResponse, Response

from opgov.core.errors import NotFound

router = APIRouter(include_in_schema=False)

ASSETS = "/docs/assets"
_TYPES = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8", "swagger-ui.css": "text/css; charset=utf-8",
          "favicon-32x32.png": "image/png"}


@router.get("/docs", response_class=HTMLResponse)
def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/openapi.json", title="opgov — API",
                               oauth2_redirect_url="/docs/oauth2-redirect",
                               swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
                               swagger_css_url=f"{ASSETS}/swagger-ui.css",
                               swagger_favicon_url=f"{ASSETS}/favicon-32x32.png")


@router.get("/docs/oauth2-redirect", response_class=HTMLResponse)
def swagger_ui_redirect() -> HTMLResponse:
    return get_swagger_ui_oauth2_redirect_html()


@router.get(ASSETS + "/{name}")
def swagger_ui_asset(name: str) -> Response:
    """One of Swagger UI's files, from the installed package (an allow-list: no path of the machine)."""
    if name not in _TYPES:
        raise NotFound(f"no file {name} of the API's documentation page")
    from swagger_ui_bundle import swagger_ui_path

    body = (swagger_ui_path / name).read_bytes()
    return Response(body, media_type=_TYPES[name], headers={"Cache-Control": "public, max-age=86400"})
