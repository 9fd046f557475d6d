"""The data of the pages that no other use case returns whole (their JSON twins under
``/api/v1/pages``): the opset builder's, what /opset shows for one choice (which pages.js asks of
``pages opset view`` for a choice the page does not embed), and one operator's page. No CLI command
asks them; the pages (opgov.api.html, opgov.web.site) do, through opgov.web.data."""

from __future__ import annotations

from opgov.results.pages import OperatorPage, OpsetData, OpsetView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.pages import OperatorPageQuery, OpsetPageQuery, OpsetViewQuery

PAGES_OPSET = UseCase(
    "pages opset", request=OpsetPageQuery, result=OpsetData, service=lazy("opgov.services.pages", "opset_data"),
    orm=False, method="GET", path="/api/v1/pages/opset",
    summary="What /opset computes every choice from: the present operators (category, lifecycle, kind), the "
            "decomposition rules, the out= variants and the model corpus (`OPGOV_MODELS_DIR`).")
PAGES_OPSET_VIEW = UseCase(
    "pages opset view", request=OpsetViewQuery, result=OpsetView, service=lazy("opgov.services.pages", "opset_view"),
    orm=False, method="GET", path="/api/v1/pages/opset/view",
    summary="What /opset shows for one choice: `opgov opset build`'s answer (the operators, notes, coverage of the "
            "corpus `OPGOV_MODELS_DIR`, the Python snippet and the selective-build yaml), worded for the page; for a "
            "choice opset build refuses, why (`refused`, still a 200: the page's answer, not its error).")
PAGES_OPERATOR = UseCase(
    "pages operator", request=OperatorPageQuery, result=OperatorPage,
    service=lazy("opgov.services.pages", "operator_page"), method="GET", path="/api/v1/pages/ops/{name}",
    summary="One operator's page: its story, its decomposition rule, what decomposes into it, the models that use "
            "it and when its next lifecycle step becomes possible.")

DECLARED: tuple[UseCase, ...] = (PAGES_OPSET, PAGES_OPSET_VIEW, PAGES_OPERATOR)
