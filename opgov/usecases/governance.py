"""The committee: its members and settings, proposals and votes, historical decisions."""

from __future__ import annotations

from opgov.results.governance import DecisionsLoaded, MemberView, ProposalView, SettingChange, Settings
from opgov.usecases.declaration import UseCase, lazy
from opgov.usecases.requests.governance import (
    DecisionsRequest, MemberRef, MemberRequest, ProposalId, ProposalQuery, ProposalRequest, ReviewsRequest,
    SettingRequest, VoteRequest,
)


PROPOSALS = UseCase("proposals", request=ProposalQuery, result=list[ProposalView],
                    service=lazy("opgov.services.governance", "list_proposals"), method="GET", path="/api/v1/proposals",
                    commands=("proposals", "proposals list"), summary="Every proposal (`open`: only open ones), with votes.")
DECLARED: tuple[UseCase, ...] = (
    UseCase("members list", result=list[MemberView], service=lazy("opgov.services.governance", "list_members"),
            method="GET", path="/api/v1/members", summary="Members and their roles, by name."),
    UseCase("members add", request=MemberRequest, result=MemberView,
            service=lazy("opgov.services.governance", "add_member"), writes=True, method="POST", path="/api/v1/members",
            status=201, summary="Add a member (maintainers). Give them a token with `opgov tokens create`."),
    UseCase("members remove", request=MemberRef, result=MemberView,
            service=lazy("opgov.services.governance", "remove_member"), writes=True, method="DELETE",
            path="/api/v1/members/{name}",
            summary="Remove a member (maintainers; never the last maintainer while others remain)."),
    UseCase("config list", result=Settings, service=lazy("opgov.services.governance", "list_settings"),
            method="GET", path="/api/v1/config", summary="The governance settings."),
    UseCase("config set", request=SettingRequest, result=SettingChange,
            service=lazy("opgov.services.governance", "set_setting"), writes=True, method="PUT", path="/api/v1/config/{key}",
            summary="Set quorum, deprecating_days or deprecated_days (maintainers; logged)."),
    PROPOSALS,
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
    UseCase("decisions load", request=DecisionsRequest, result=DecisionsLoaded,
            service=lazy("opgov.services.governance", "record_decisions"), writes=True, method="POST",
            path="/api/v1/decisions", status=201,
            summary="Record a file of historical decisions, dated and marked as imported (maintainers).",
            description="What `opgov decisions load` prints. Loading the same file again records nothing new. "
                        "Messages and the result name an upload as the client named it."),
)
