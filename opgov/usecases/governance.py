"""The committee's use cases: proposals and votes, the lifecycle's steps and tick, upgraders,
historical decisions."""

from __future__ import annotations

from opgov.usecases.declaration import MODELS, UseCase

REQUESTS = "opgov.usecases.requests.governance"

DECLARED: tuple[UseCase, ...] = (
    UseCase("decisions load", request=f"{REQUESTS}:DecisionsRequest", result=f"{MODELS}:DecisionsLoaded",
            service="opgov.services.governance:record_decisions", writes=True, method="POST",
            path="/api/v1/decisions", status=201, one_of=(("decisions", "shipped"),),
            summary="Record a file of historical decisions, dated and marked as imported (maintainers).",
            description="What `opgov decisions load` prints. Loading the same file again records nothing new. "
                        "Messages and the result name an upload as the client named it."),
)
