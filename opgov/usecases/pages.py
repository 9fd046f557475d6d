"""The data of the pages that no other use case returns whole (their JSON twins under
``/api/v1/pages``): the opset builder's, and one operator's page. No CLI command asks them; the
pages (opgov.api.html, opgov.web.site) do, through opgov.web.data."""

from __future__ import annotations

from opgov.results.pages import OperatorPage, OpsetData
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.pages import OperatorPageQuery, OpsetPageQuery

OPSET_PAGE = UseCase(
    "pages opset", request=OpsetPageQuery, result=OpsetData, service=lazy("opgov.services.pages", "opset_data"),
    orm=False, method="GET", path="/api/v1/pages/opset",
    summary="What /opset computes every choice from: the present operators (category, lifecycle, kind), the "
            "decomposition rules, the out= variants and the model corpus (`OPGOV_MODELS_DIR`).")
OPERATOR_PAGE = UseCase(
    "pages operator", request=OperatorPageQuery, result=OperatorPage,
    service=lazy("opgov.services.pages", "operator_page"), method="GET", path="/api/v1/pages/ops/{name}",
    summary="One operator's page: its story, its decomposition rule, what decomposes into it, the models that use "
            "it and when its next lifecycle step becomes possible.")

DECLARED: tuple[UseCase, ...] = (OPSET_PAGE, OPERATOR_PAGE)
