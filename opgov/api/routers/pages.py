"""The JSON twins of the pages that no other route returns whole: the opset builder's data and
one operator's page."""

from __future__ import annotations

from fastapi import APIRouter, Query

from opgov.api.deps import Reader
from opgov.api.fields import OperatorPath
from opgov.usecases.fields import OperatorName
from opgov.usecases.requests.decomps import PresetName

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
    from opgov.services.pages import models_location, opset_data

    return opset_data(ctx, models=models_location())


def _opset_view():
    from opgov.results.pages import OpsetView

    return OpsetView


@router.get("/opset/view", response_model=_opset_view())
def opset_view_data(ctx: Reader, preset: PresetName = "core-aten",
                    decompose: list[OperatorName] = Query(default_factory=list, description="also decompose these"),
                    keep: list[OperatorName] = Query(default_factory=list, description="do not decompose these")):
    """What /opset shows for one choice: `opgov opset build`'s answer (the operators, notes,
    coverage of the corpus ``OPGOV_MODELS_DIR``, the Python snippet and the selective-build yaml),
    worded for the page; for a choice opset build refuses, why (``refused``)."""
    from opgov.services.pages import models_location, opset_view

    return opset_view(ctx, preset=preset, decompose=decompose, keep=keep, models=models_location())


@router.get("/ops/{name}", response_model=_operator_page())
def operator_page_data(name: OperatorPath, ctx: Reader):
    """One operator's page: its story, its decomposition rule, what decomposes into it, the
    models that use it and when its next lifecycle step becomes possible."""
    from opgov.services.pages import load_models, models_location, operator_page

    return operator_page(ctx, name, models=load_models(models_location()))
