"""The committee's use cases: proposals and votes, the lifecycle's steps and tick, upgraders,
historical decisions."""

from __future__ import annotations

from opgov.usecases.declaration import MODELS, UseCase

REQUESTS = "opgov.usecases.requests.governance"
UPGRADERS = "opgov.services.upgraders"

DECLARED: tuple[UseCase, ...] = (
    # --- proposals and votes
    UseCase("proposals", request=f"{REQUESTS}:ProposalQuery", result=f"list[{MODELS}:ProposalView]",
            service="opgov.services.governance:list_proposals", method="GET", path="/api/v1/proposals",
            commands=("proposals", "proposals list"), summary="Every proposal (`open`: only open ones), with votes."),
    UseCase("proposals show", request=f"{REQUESTS}:ProposalId", result=f"{MODELS}:ProposalView",
            service="opgov.services.governance:show_proposal", method="GET", path="/api/v1/proposals/{proposal_id}",
            summary="One proposal with its votes and, once approved, its decision."),
    UseCase("propose", request=f"{REQUESTS}:ProposalRequest", result=f"{MODELS}:ProposalView",
            service="opgov.services.governance:propose", writes=True, method="POST", path="/api/v1/proposals",
            status=201, commands=("propose-core", "propose-decompose", "propose-custom"),
            summary="Propose moving a functional operator into a category (developers and maintainers).",
            description="`kind` is core, custom or decompose; only a decomposition has `targets`."),
    UseCase("review", request=f"{REQUESTS}:VoteRequest", result=f"{MODELS}:ProposalView",
            service="opgov.services.governance:review", writes=True, method="POST",
            path="/api/v1/proposals/{proposal_id}/votes",
            summary="A maintainer's vote (not on their own proposal); quorum approvals decide it."),
    UseCase("withdraw", request=f"{REQUESTS}:ProposalId", result=f"{MODELS}:ProposalView",
            service="opgov.services.governance:withdraw", writes=True, method="POST",
            path="/api/v1/proposals/{proposal_id}/withdraw",
            summary="Withdraw an open proposal (the proposer; maintainers any)."),
    UseCase("triage", request=f"{REQUESTS}:TriageRequest", result=f"{MODELS}:TriageResult",
            service="opgov.services.governance:triage", writes=True, method="POST", path="/api/v1/proposals/triage",
            summary="Triage the review queue in bulk (developers and maintainers).",
            description="One proposal, with the rationale, for each queued operator a glob or a name selects; a dry "
                        "run unless `apply`."),
    # --- the lifecycle
    UseCase("deprecate", request=f"{REQUESTS}:DeprecateRequest", result=f"{MODELS}:LifecycleStepResult",
            service="opgov.services.lifecycle:deprecate", writes=True, method="POST",
            path="/api/v1/operators/{name}/deprecate", summary="active → deprecating (maintainers)."),
    UseCase("mark-deprecated", request=f"{REQUESTS}:StepRequest", result=f"{MODELS}:LifecycleStepResult",
            service="opgov.services.lifecycle:mark_deprecated", writes=True, method="POST",
            path="/api/v1/operators/{name}/mark-deprecated",
            summary="deprecating → deprecated, no sooner than deprecating_days after."),
    UseCase("delete", request=f"{REQUESTS}:StepRequest", result=f"{MODELS}:LifecycleStepResult",
            service="opgov.services.lifecycle:delete", writes=True, method="POST",
            path="/api/v1/operators/{name}/delete", summary="deprecated → deleted, no sooner than deprecated_days after."),
    UseCase("undeprecate", request=f"{REQUESTS}:UndeprecateRequest", result=f"{MODELS}:LifecycleStepResult",
            service="opgov.services.lifecycle:undeprecate", writes=True, method="POST",
            path="/api/v1/operators/{name}/undeprecate", summary="Back to active from deprecating or deprecated."),
    UseCase("tick", group="lifecycle", request=f"{REQUESTS}:TickRequest", result=f"{MODELS}:TickResult",
            service="opgov.services.lifecycle:tick", writes=True, reads_unless="apply", method="POST",
            path="/api/v1/tick",
            summary="Lifecycle transitions due now (and within `within_days`); `apply` performs the due ones."),
    # --- upgraders
    UseCase("upgraders list", result=f"opgov.results.upgraders:UpgraderList", service=f"{UPGRADERS}:list_upgraders", orm=False,
            method="GET", path="/api/v1/upgraders",
            summary="Every recorded upgrader, the recorded version bumps, and the current operator version."),
    UseCase("upgraders timers", request=f"{REQUESTS}:TimersQuery", result=f"opgov.results.upgraders:UpgraderTimers",
            service=f"{UPGRADERS}:upgrader_timers", orm=False, method="GET", path="/api/v1/upgraders/timers",
            commands=("tick",),
            summary="Upgraders that may be replaced now (180 days after their version bump), and those that may "
                    "within `within_days`: what `opgov tick` reports besides the lifecycle."),
    UseCase("upgraders show", request=f"{REQUESTS}:UpgraderName", result=f"opgov.results.upgraders:UpgraderView",
            service=f"{UPGRADERS}:show_upgrader", orm=False, method="GET", path="/api/v1/upgraders/{name}",
            summary="One upgrader by name (`<name>_<overload>_<start>_<end>`)."),
    UseCase("upgraders add", request=f"{REQUESTS}:UpgraderRequest", result=f"opgov.results.upgraders:UpgraderAdded",
            service=f"{UPGRADERS}:add_upgrader", orm=False, writes=True, method="POST", path="/api/v1/upgraders",
            status=201, summary="Record an upgrader and the version bump it came with.",
            description="Replacing one is refused (409) until 180 days after its bump."),
    # --- historical decisions
    UseCase("decisions load", request=f"{REQUESTS}:DecisionsRequest", result=f"{MODELS}:DecisionsLoaded",
            service="opgov.services.governance:record_decisions", writes=True, method="POST",
            path="/api/v1/decisions", status=201, one_of=(("decisions", "shipped"),),
            summary="Record a file of historical decisions, dated and marked as imported (maintainers).",
            description="What `opgov decisions load` prints. Loading the same file again records nothing new. "
                        "Messages and the result name an upload as the client named it."),
)
