"""What the pages' own use cases ask (opgov.usecases.pages)."""

from __future__ import annotations

from pydantic import Field

from opgov.usecases.fields import Corpus, OperatorName
from opgov.usecases.requests import Request
from opgov.usecases.requests.decomps import PresetName


class OpsetPageQuery(Request):
    models: Corpus = Field(default=None, description="a corpus on this machine (`site build --models`); else the "
                                                     "models of OPGOV_MODELS_DIR")


class OperatorPageQuery(OpsetPageQuery):
    name: OperatorName


class OpsetViewQuery(OpsetPageQuery):
    preset: PresetName = Field(default="core-aten", description="where the opset starts")
    decompose: list[OperatorName] = Field(default_factory=list, description="also decompose these")
    keep: list[OperatorName] = Field(default_factory=list, description="do not decompose these")
