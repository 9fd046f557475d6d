"""The JSON twins of the pages that no other route returns whole: the opset builder's data and
one operator's page."""

from __future__ import annotations

from fastapi import APIRouter

from opgov.api.deps import Reader
from opgov.api.fields import OperatorPath

router = APIRouter(prefix="/api/v1/pages", tags=["pages"])


def _opset_data():
    from opgov.results.pages import OpsetData

    return OpsetData


def _operator_page():
    from opgov.results.pages import OperatorPage

    return OperatorPage


@router.get("/opset", response_model=_opset_data())
def opset_page_data(ctx: Reader):
    """What /opset computes every choice from: the present operators (category, lifecycle, kind),
    the decomposition rules, the out= variants and the model corpus (``OPGOV_MODELS_DIR``)."""
    from opgov.reads.models import models_location
    from opgov.services.pages import opset_data

    return opset_data(ctx, models=models_location())


@router.get("/ops/{name}", response_model=_operator_page())
def operator_page_data(name: OperatorPath, ctx: Reader):
    """One operator's page: its story, its decomposition rule, what decomposes into it, the
    models that use it and when its next lifecycle step becomes possible."""
    from opgov.reads.models import load_models, models_location
    from opgov.services.pages import operator_page

    return operator_page(ctx, name, models=load_models(models_location()))
