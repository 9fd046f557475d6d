"""What the decomposition use cases ask (opgov.usecases.decomps): rules, their checks, the opset."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from opgov.core.vocab import Preset
from opgov.usecases.fields import Corpus, HttpBound, OperatorName, Upload
from opgov.usecases.requests import Request

PresetName = Literal[tuple(p.value for p in Preset)]  # type: ignore[valid-type]


class RulesFile(Request):
    rules: Upload = Field(description="a rules file (format in the user guide), or the 2023 review's facts file")


class TorchImportRequest(Request):
    # a request is not the place for a long trace: 120 seconds at most over HTTP, no bound in-process
    budget: Annotated[float, Field(gt=0), HttpBound(le=120)] = Field(
        default=50.0, description="seconds to spend tracing (a request is not the place for a longer one: the CLI "
                                  "has no bound)")
    only: list[OperatorName] = Field(default_factory=list, description="trace only these operators")


class DecompsCheck(Request):
    models: Corpus = Field(default=None, description="a corpus on this machine (the CLI's --models)")


class OpsetRequest(Request):
    # the texts a GET also answers besides the JSON, as ``format`` names them
    FORMATS: ClassVar[dict[str, str]] = {"text": "text/plain", "selective-build": "application/yaml",
                                          "python": "text/x-python"}
    preset: PresetName = Field(default="core-aten", description="where the opset starts")
    decompose: list[OperatorName] = Field(default_factory=list, description="also decompose these operators")
    keep: list[OperatorName] = Field(default_factory=list, description="do not decompose these operators")
    format: Literal["json", "text", "selective-build", "python"] = Field(
        default="json", description="JSON, or what `opgov opset build --format text|selective-build|python` prints "
                                    "(the selective-build yaml with the out= variants ExecuTorch's kernels implement)")
    models: Corpus = Field(default=None, description="a corpus on this machine (the CLI's --models)")
