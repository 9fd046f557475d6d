"""Historical decisions: recording a decisions file (an upload, or a file opgov ships)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, File, Form, Request, UploadFile

from opgov.api.contract import ONE_OF
from opgov.api.deps import Writer
from opgov.api.uploads import read_upload
from opgov.resources import SHIPPED_DATA
from opgov.results.models import DecisionsLoaded

router = APIRouter(prefix="/api/v1/decisions", tags=["decisions"])


SHIPPED = Literal[tuple(k for k, v in SHIPPED_DATA.items() if v.startswith("decisions/"))]  # type: ignore[valid-type]


@router.post("", response_model=DecisionsLoaded, status_code=201,
             openapi_extra={ONE_OF: [["decisions", "shipped"]]})
def load_decisions(request: Request, ctx: Writer,
                   decisions: UploadFile | None = File(None, description="a decisions file (format in the user "
                                                                          "guide)"),
                   shipped: SHIPPED | None = Form(None, description="instead of a file, the name of one opgov "
                                                                    "ships")) -> DecisionsLoaded:
    """Record a file of historical decisions, dated and marked as imported (maintainers): what
    `opgov decisions load` prints. Loading the same file again records nothing new. Messages and
    the result name an upload as the client named it."""
    from opgov.core.errors import BadInput
    from opgov.resources import shipped_data
    from opgov.services.common import require
    from opgov.services.governance import load_decisions

    require(ctx, "decisions", "load decisions")  # before reading what a member without the role sent
    if (decisions is None) == (shipped is None):
        raise BadInput("give one of `decisions` (a decisions file) and `shipped` (the name of a shipped one)")
    if shipped is not None:
        path = shipped_data(shipped)
        if path is None:
            raise BadInput(f"shipped: no shipped decisions file {shipped!r} (there are: "
                           f"{', '.join(k for k, v in SHIPPED_DATA.items() if v.startswith('decisions/'))})")
        return load_decisions(ctx, str(path))
    return load_decisions(ctx, read_upload(decisions, request.app.state.config.max_upload_bytes,
                                           default="upload.yaml"))
