"""Decomposition rules: the list, loading a rules file, importing torch's table, and their checks."""

from __future__ import annotations

from fastapi import APIRouter, Depends, File, Request, UploadFile
from pydantic import BaseModel, Field

from opgov.api.deps import Authorization, Reader, Writer, clock, writes, writing
from opgov.api.fields import OperatorName
from opgov.api.uploads import read_upload
from opgov.results.models import RulesLoaded, RuleView, TorchRulesImported

router = APIRouter(prefix="/api/v1/decomps", tags=["decompositions"])


def _violations_report():
    from opgov.results.decomps import ViolationsReport

    return ViolationsReport


@router.get("", response_model=list[RuleView])
def list_rules(ctx: Reader) -> list[RuleView]:
    """Every rule (operator → targets) with where it came from, by operator."""
    from opgov.services.decompositions import list_rules

    return list_rules(ctx)


@router.post("", response_model=RulesLoaded, status_code=201)
def load_rules(request: Request, ctx: Writer,
               rules: UploadFile = File(..., description="a rules file (format in the user guide), or the "
                                                         "2023 review's facts file")) -> RulesLoaded:
    """Record the rules of an uploaded rules file (maintainers). Refused (409, nothing recorded)
    when a rule would make a decomposition produce a non-core operator, a cycle or a deprecated
    target; a committee decision's rule is kept over a file's (decision > file > torch)."""
    from opgov.services.common import require
    from opgov.services.decompositions import load_rules

    require(ctx, "decomps", "change decomposition rules")  # before reading what a member without the role sent
    return load_rules(ctx, read_upload(rules, request.app.state.config.max_upload_bytes, default="upload.yaml"))


class TorchImportRequest(BaseModel):
    budget: float = Field(default=50.0, gt=0, le=120, description="seconds to spend tracing (a request is not "
                                                                  "the place for a longer one: the CLI has no bound)")
    only: list[OperatorName] = Field(default_factory=list, description="trace only these operators")


@router.post("/import-torch", response_model=TorchRulesImported, dependencies=[Depends(writes)])
def import_torch(body: TorchImportRequest, request: Request, authorization: Authorization) -> TorchRulesImported:
    """Record the rules of torch.export's default decomposition table, traced on the server (which
    needs torch installed; maintainers). Other writes go on while torch traces."""
    from opgov.formats.torch_decomps import read_torch_table
    from opgov.services.decompositions import import_torch_rules, torch_import_selection

    with writing(request, authorization, clock()) as ctx:  # the role and the names, before any tracing
        wanted = torch_import_selection(ctx, body.only or None)
    table = read_torch_table(time_budget_s=body.budget, only=wanted)
    with writing(request, authorization, clock()) as ctx:
        return import_torch_rules(ctx, only=wanted, table=table)


@router.get("/check", response_model=_violations_report())
def check(ctx: Reader):
    """Every rule of a non-core operator ends in core operators; no cycles; no dead targets; drift:
    what `opgov check-decomps` prints (``errors`` > 0 is what makes it exit 1). Writes nothing."""
    from opgov.results.decomps import ViolationsReport
    from opgov.services.decompositions import check_decompositions

    return ViolationsReport.of(check_decompositions(ctx))
