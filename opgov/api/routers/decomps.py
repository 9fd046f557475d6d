"""Decomposition rules: loading a rules file (the list, importing torch's table and the checks are
declared use cases: opgov.usecases.decomps)."""

from __future__ import annotations

from fastapi import APIRouter, File, Request, UploadFile

from opgov.api.deps import Writer
from opgov.api.uploads import read_upload
from opgov.results.models import RulesLoaded

router = APIRouter(prefix="/api/v1/decomps", tags=["decompositions"])


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
