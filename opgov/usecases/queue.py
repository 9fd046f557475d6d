"""The committee's workbench: the review queue with its evidence and suggestions, and triage (a
proposal for each operator a filter selects, or for each suggestion)."""

from __future__ import annotations

from opgov.results.queue import QueueView, SuggestedTriage, TriageResult
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.queue import QueueQuery, SuggestedTriageRequest, TriageRequest


QUEUE = UseCase("queue", request=QueueQuery, result=QueueView, service=lazy("opgov.services.queue", "queue"),
                method="GET", path="/api/v1/queue",
                summary="Every operator waiting for the committee, with its evidence and a suggested decision.",
                description="Waiting: its category undecided, a `core` tag change to review, or a proposal open. Each "
                            "item's evidence (kind, family, torch's facts, CompositeImplicitAutograd, runtimes, models, "
                            "since when) names its source; `suggestion` (decompose, custom, core or human) follows from "
                            "it, `because` says why. Filtered, sorted and paged; the models are those of "
                            "`OPGOV_MODELS_DIR` on the server, else the corpora opgov ships.")
DECLARED: tuple[UseCase, ...] = (
    UseCase("triage", request=TriageRequest, result=TriageResult,
            service=lazy("opgov.services.queue", "triage"), writes=True, method="POST", path="/api/v1/proposals/triage",
            summary="Triage the review queue in bulk (developers and maintainers).",
            description="One proposal, with the rationale, for each queued operator a glob or a name selects; a dry "
                        "run unless `apply`."),
    QUEUE,
    UseCase("triage suggested", request=SuggestedTriageRequest, result=SuggestedTriage,
            service=lazy("opgov.services.queue", "triage_suggested"), writes=True, method="POST",
            path="/api/v1/queue/triage", group="proposals", commands=("triage",),
            summary="A proposal for each suggestion of the queue the filters select (developers and maintainers).",
            description="decompose (into the traced targets), core or custom, with the suggestion's reason as the "
                        "rationale; a dry run unless `apply`; what the policy refuses is skipped, with why."),
)
