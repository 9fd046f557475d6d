"""What the runtime use cases ask (opgov.usecases.runtimes): runtimes, the coverage matrix, and the
checks of a model or an exported program against them."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from opgov.usecases.fields import OnThisMachine, OperatorName, Runtime, Upload
from opgov.usecases.requests import Request

Stage = Literal["core-aten", "exported"]


class RuntimeRef(Request):
    runtime: Runtime


class CoverageQuery(Request):
    # the texts a GET also answers besides the JSON, as ``format`` names them
    FORMATS: ClassVar[dict[str, str]] = {"md": "text/markdown", "text": "text/plain"}
    stage: Stage = Field(default="core-aten", description="the models' operators after torch.export's core ATen "
                                                          "decompositions (what an edge runtime receives), or as "
                                                          "exported")
    format: Literal["json", "md", "text"] = Field(default="json", description="JSON, or the matrix as `opgov "
                                                                              "runtimes coverage --format md|text` "
                                                                              "prints it")
    models: Annotated[str | None, OnThisMachine(
        "--models with --server: the server uses the models it bundles (OPGOV_MODELS_DIR on the server); leave out "
        "--models")] = Field(default=None, description="a corpus on this machine (the CLI's --models: a corpus JSON, a "
                                                       ".pt2 archive, or a folder of them); else the models of "
                                                       "OPGOV_MODELS_DIR")


class RuntimeUpload(Request):
    runtime: Runtime
    ops: list[Upload] = Field(default_factory=list, description=(
        "ExecuTorch kernel yaml (functions.yaml), selected_operators.yaml, `opgov opset build` output, or a list "
        "(their union); none for an ExecuTorch release opgov ships data about (its portable and optimized "
        "kernels, prim ops, PyTorch pin and what each kernel accepts)"))
    released: date | None = Field(default=None, description="its release date")
    # a form field ("true"), so not a strict Flag
    replace: bool = Field(default=False, description="replace the operators of a registered runtime")
    served: list[Upload] = Field(default_factory=list, description=(
        "the operators it serves outside its kernel registries (ExecuTorch's register_prim_ops.cpp, or a list); "
        "for a release opgov ships data about (ExecuTorch 0.1.0 to 1.4.1), those of that release by default"))
    torch: str | None = Field(default=None, max_length=100, pattern=r"^\d+\.\d+(\.\d+)?$", description=(
        "the PyTorch release its kernels follow (2.12); for a release opgov ships data about, its PyTorch pin by "
        "default"))
    torch_pin: Upload | None = Field(default=None, description="the PyTorch pin it is built against (ExecuTorch's "
                                                               ".ci/docker/ci_commit_pins/pytorch.txt: release/2.12)")
    source: Annotated[str | None, OnThisMachine(
        "source with --server: the server cannot read a source tree on this machine; run it with --db")] = Field(
        default=None, description="an ExecuTorch source tree on this machine (a checkout of a release) to read the "
                                  "kernel registries, prim ops, PyTorch pin and kernel constraints from (the CLI's)")


class ModelCheckUpload(Request):
    models: list[Upload] = Field(default_factory=list, description="model files: .pt2 archives, "
                                                                   "selected_operators.yaml, op lists (their union)")
    runtime: str | None = Field(default=None, description="a registered runtime NAME@VERSION, or a snapshot label")
    specs: Annotated[list[str] | None, OnThisMachine(
        "CORPUS#model with --server: the server cannot read a corpus on this machine; name model files (.pt2, "
        "selected_operators.yaml, op lists), or run it with --db")] = Field(
        default=None, description="instead of models: files and CORPUS#model specs on this machine (the CLI's)")


class ExportArgument(Request):
    name: str = Field(max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="the schema's name of the argument")
    keyword: bool = Field(default=False, description="passed by keyword")
    arg: dict[str, Any] = Field(description="its value as torch.export's serializer writes it "
                                            "(`{\"as_string\": \"tanh\"}`)")


class ExportCall(Request):
    node: str = Field(max_length=500, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="the graph node's name")
    op: OperatorName = Field(description="the operator it calls, e.g. aten::gelu")
    args: list[ExportArgument] = Field(default_factory=list, max_length=1000, description=(
        "the arguments it passes, by name, as the serializer keeps them (one left to its keyword default is not "
        "written)"))
    dtypes: list[Annotated[str, Field(max_length=100, pattern=r"^[A-Za-z0-9_]+$")]] = Field(
        default_factory=list, max_length=100, description="the dtypes of its tensors")


class ExportCheckRequest(Request):
    operators: list[OperatorName] = Field(min_length=1, max_length=10_000,  # opgov.core.corpus.MAX_MODEL_OPERATORS
                                          description="the exported program's operators, e.g. aten::add.Tensor")
    runtime: str | None = Field(default=None, max_length=200, pattern=r"^[A-Za-z0-9_.@+-]+$", description=(
        "a registered runtime NAME@VERSION, or a snapshot label (torch of that release): the calls are checked "
        "argument by argument against the torch release it follows"))
    torch_version: str | None = Field(default=None, max_length=100, pattern=r"^[A-Za-z0-9_.+-]+$", description=(
        "the torch that exported the program (torch.__version__)"))
    calls: list[ExportCall] | None = Field(default=None, max_length=100_000, description=(
        "the program's calls with their arguments (for the check against `runtime`)"))
