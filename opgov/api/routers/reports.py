"""The build-your-own opset."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Response

from opgov.api.deps import Reader
from opgov.api.fields import OperatorsQuery

router = APIRouter(prefix="/api/v1", tags=["reports"])


def _opset_model():
    from opgov.render.decomps import OpsetReport

    return OpsetReport


@router.get("/opset", response_model=_opset_model(),
            responses={200: {"content": {"text/plain": {}, "application/yaml": {}, "text/x-python": {}}}})
def opset(ctx: Reader, preset: Literal["core-aten", "no-decomp", "full-decomp"] = "core-aten",
          decompose: OperatorsQuery = [], keep: OperatorsQuery = [],
          format: Literal["json", "text", "selective-build", "python"] = "json"):  # noqa: A002
    """The operators a backend must implement after the chosen decompositions: JSON, or what
    `opgov opset build --format text|selective-build|python` prints (the selective-build yaml with
    the out= variants ExecuTorch's kernels implement)."""
    from opgov.render.decomps import OpsetReport
    from opgov.services.decompositions import build, out_variants

    result, _ = build(ctx, preset=preset, decompose=decompose, keep=keep, models=None)
    if format == "json":
        return OpsetReport.of(result)
    from opgov.render.decomps_text import render_opset, render_selective_build

    if format == "selective-build":
        text = render_selective_build(result, out_variants=out_variants(ctx, result.operators))
    else:
        text = render_opset(result, None, format)
    media = {"text": "text/plain", "selective-build": "application/yaml", "python": "text/x-python"}[format]
    return Response(text, media_type=f"{media}; charset=utf-8")
