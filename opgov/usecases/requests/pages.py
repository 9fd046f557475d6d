"""What the pages' own use cases ask (opgov.usecases.pages)."""

from __future__ import annotations

from pydantic import Field

from opgov.usecases.fields import Corpus, OperatorName
from opgov.usecases.requests import Request


class OpsetPageQuery(Request):
    models: Corpus = Field(default=None, description="a corpus on this machine (`site build --models`); else the "
                                                     "models of OPGOV_MODELS_DIR")


class OperatorPageQuery(OpsetPageQuery):
    name: OperatorName
