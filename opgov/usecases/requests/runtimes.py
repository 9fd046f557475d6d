"""What the runtime use cases ask (opgov.usecases.runtimes): runtimes, the coverage matrix, and the
checks of a model or an exported program against them."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import Field

from opgov.usecases.fields import OperatorName, Runtime, Upload
from opgov.usecases.requests import Request

Stage = Literal["core-aten", "exported"]


class RuntimeRef(Request):
    runtime: Runtime


class CoverageQuery(Request):
    stage: Stage = Field(default="core-aten", description="the models' operators after torch.export's core ATen "
                                                          "decompositions (what an edge runtime receives), or as "
                                                          "exported")


class CoverageOfCorpus(CoverageQuery):
    # a path on this machine: in-process only
    models: str = Field(description="a corpus JSON, a .pt2 archive, or a folder of *_ops.json corpora and .pt2 "
                                    "archives")


class RuntimeUpload(Request):
    runtime: Runtime
    ops: list[Upload] = Field(min_length=1, description="ExecuTorch kernel yaml (functions.yaml), "
                                                        "selected_operators.yaml, `opgov opset build` output, or a "
                                                        "list (their union)")
    released: date | None = Field(default=None, description="its release date")
    # a form field ("true"), so not a strict Flag
    replace: bool = Field(default=False, description="replace the operators of a registered runtime")


class ModelCheckUpload(Request):
    models: list[Upload] = Field(min_length=1, description="model files: .pt2 archives, selected_operators.yaml, "
                                                           "op lists (their union)")
    runtime: str | None = Field(default=None, description="a registered runtime NAME@VERSION, or a snapshot label")


class ModelCheckOfCorpus(Request):
    # files and CORPUS#model specs on this machine: in-process only
    models: list[str] = Field(min_length=1, description="files, or CORPUS#model[@stage] specs")
    runtime: str | None = Field(default=None, description="a registered runtime NAME@VERSION, or a snapshot label")


class ExportCheckRequest(Request):
    operators: list[OperatorName] = Field(min_length=1, max_length=100_000,
                                          description="the exported program's operators, e.g. aten::add.Tensor")
