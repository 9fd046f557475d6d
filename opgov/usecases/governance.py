"""The committee's use cases: proposals and votes, the lifecycle's steps and tick, upgraders,
historical decisions."""

from __future__ import annotations

from opgov.results.models import DecisionsLoaded, LifecycleStepResult, ProposalView, TickResult, TriageResult
from opgov.results.upgraders import UpgraderAdded, UpgraderList, UpgraderTimers, UpgraderView
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.governance import (
    DecisionsRequest, DeprecateRequest, ProposalId, ProposalQuery, ProposalRequest, ReviewsRequest, StepRequest, TickRequest,
    TimersQuery, TriageRequest, UndeprecateRequest, UpgraderName, UpgraderRequest, VoteRequest,
)


DECLARED: tuple[UseCase, ...] = (
    # --- proposals and votes
    UseCase("proposals", request=ProposalQuery, result=list[ProposalView],
            service=lazy("opgov.services.governance", "list_proposals"), method="GET", path="/api/v1/proposals",
            commands=("proposals", "proposals list"), summary="Every proposal (`open`: only open ones), with votes."),
    UseCase("proposals show", request=ProposalId, result=ProposalView,
            service=lazy("opgov.services.governance", "show_proposal"), method="GET", path="/api/v1/proposals/{proposal_id}",
            summary="One proposal with its votes and, once approved, its decision."),
    UseCase("propose", request=ProposalRequest, result=ProposalView,
            service=lazy("opgov.services.governance", "propose"), writes=True, method="POST", path="/api/v1/proposals",
            status=201, commands=("propose-core", "propose-decompose", "propose-custom"),
            summary="Propose moving a functional operator into a category (developers and maintainers).",
            description="`kind` is core, custom or decompose; only a decomposition has `targets`."),
    UseCase("review", request=VoteRequest, result=ProposalView,
            service=lazy("opgov.services.governance", "review"), writes=True, method="POST",
            path="/api/v1/proposals/{proposal_id}/votes",
            summary="A maintainer's vote (not on their own proposal); quorum approvals decide it."),
    UseCase("review many", request=ReviewsRequest, result=list[ProposalView],
            service=lazy("opgov.services.governance", "review_many"), writes=True, method="POST",
            path="/api/v1/proposals/reviews", commands=("review",),
            summary="A maintainer's vote on many proposals in one transaction, each vote its own record.",
            description="One comment for every vote, or one per id in their order. A refusal on any proposal "
                        "(409, naming it) records none of the votes. The answer lists the proposals in the "
                        "order of the ids."),
    UseCase("withdraw", request=ProposalId, result=ProposalView,
            service=lazy("opgov.services.governance", "withdraw"), writes=True, method="POST",
            path="/api/v1/proposals/{proposal_id}/withdraw",
            summary="Withdraw an open proposal (the proposer; maintainers any)."),
    UseCase("triage", request=TriageRequest, result=TriageResult,
            service=lazy("opgov.services.governance", "triage"), writes=True, method="POST", path="/api/v1/proposals/triage",
            summary="Triage the review queue in bulk (developers and maintainers).",
            description="One proposal, with the rationale, for each queued operator a glob or a name selects; a dry "
                        "run unless `apply`."),
    # --- the lifecycle
    UseCase("deprecate", request=DeprecateRequest, result=LifecycleStepResult,
            service=lazy("opgov.services.lifecycle", "deprecate"), writes=True, method="POST",
            path="/api/v1/operators/{name}/deprecate", summary="active → deprecating (maintainers)."),
    UseCase("mark-deprecated", request=StepRequest, result=LifecycleStepResult,
            service=lazy("opgov.services.lifecycle", "mark_deprecated"), writes=True, method="POST",
            path="/api/v1/operators/{name}/mark-deprecated",
            summary="deprecating → deprecated, no sooner than deprecating_days after."),
    UseCase("delete", request=StepRequest, result=LifecycleStepResult,
            service=lazy("opgov.services.lifecycle", "delete"), writes=True, method="POST",
            path="/api/v1/operators/{name}/delete", summary="deprecated → deleted, no sooner than deprecated_days after."),
    UseCase("undeprecate", request=UndeprecateRequest, result=LifecycleStepResult,
            service=lazy("opgov.services.lifecycle", "undeprecate"), writes=True, method="POST",
            path="/api/v1/operators/{name}/undeprecate", summary="Back to active from deprecating or deprecated."),
    UseCase("tick", group="lifecycle", request=TickRequest, result=TickResult,
            service=lazy("opgov.services.lifecycle", "tick"), writes=True, method="POST",
            path="/api/v1/tick",
            summary="Lifecycle transitions due now (and within `within_days`); `apply` performs the due ones."),
    # --- upgraders
    UseCase("upgraders list", result=UpgraderList, service=lazy("opgov.services.upgraders", "list_upgraders"), orm=False,
            method="GET", path="/api/v1/upgraders",
            summary="Every recorded upgrader, the recorded version bumps, and the current operator version."),
    UseCase("upgraders timers", request=TimersQuery, result=UpgraderTimers,
            service=lazy("opgov.services.upgraders", "upgrader_timers"), orm=False, method="GET", path="/api/v1/upgraders/timers",
            commands=("tick",),
            summary="Upgraders that may be replaced now (180 days after their version bump), and those that may "
                    "within `within_days`: what `opgov tick` reports besides the lifecycle."),
    UseCase("upgraders show", request=UpgraderName, result=UpgraderView,
            service=lazy("opgov.services.upgraders", "show_upgrader"), orm=False, method="GET", path="/api/v1/upgraders/{name}",
            summary="One upgrader by name (`<name>_<overload>_<start>_<end>`)."),
    UseCase("upgraders add", request=UpgraderRequest, result=UpgraderAdded,
            service=lazy("opgov.services.upgraders", "add_upgrader"), orm=False, writes=True, method="POST", path="/api/v1/upgraders",
            status=201, summary="Record an upgrader and the version bump it came with.",
            description="Replacing one is refused (409) until 180 days after its bump."),
    # --- historical decisions
    UseCase("decisions load", request=DecisionsRequest, result=DecisionsLoaded,
            service=lazy("opgov.services.governance", "record_decisions"), writes=True, method="POST",
            path="/api/v1/decisions", status=201,
            summary="Record a file of historical decisions, dated and marked as imported (maintainers).",
            description="What `opgov decisions load` prints. Loading the same file again records nothing new. "
                        "Messages and the result name an upload as the client named it."),
)
