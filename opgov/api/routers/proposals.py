"""Proposals and votes."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from opgov.api.deps import Reader, Writer
from opgov.api.fields import IdPath, OperatorName, Text
from opgov.results.models import ProposalView, TriageResult

router = APIRouter(prefix="/api/v1/proposals", tags=["proposals"])


@router.get("", response_model=list[ProposalView])
def list_proposals(ctx: Reader, open: bool = False) -> list[ProposalView]:  # noqa: A002
    """Every proposal (``open``: only open ones), with votes."""
    from opgov.services.governance import list_proposals

    return list_proposals(ctx, open_only=open)


@router.get("/{proposal_id:int}", response_model=ProposalView)
def get_proposal(proposal_id: IdPath, ctx: Reader) -> ProposalView:
    """One proposal with its votes and, once approved, its decision."""
    from opgov.services.governance import show_proposal

    return show_proposal(ctx, proposal_id)


class _Proposal(BaseModel):
    operator: OperatorName = Field(description="e.g. aten::glu")
    rationale: Text


class CoreProposal(_Proposal):
    kind: Literal["core"]
    targets: list[OperatorName] = Field(default_factory=list, max_length=0, description="none: only a "
                                        "decomposition has targets")


class CustomProposal(_Proposal):
    kind: Literal["custom"]
    targets: list[OperatorName] = Field(default_factory=list, max_length=0, description="none: only a "
                                        "decomposition has targets")


class DecomposeProposal(_Proposal):
    kind: Literal["decompose"]
    targets: list[OperatorName] = Field(min_length=1, description="the operators it decomposes into")


ProposalRequest = Annotated[CoreProposal | DecomposeProposal | CustomProposal, Field(discriminator="kind")]


@router.post("", response_model=ProposalView, status_code=201)
def post_proposal(body: ProposalRequest, ctx: Writer) -> ProposalView:
    """Propose moving a functional operator into a category (developers and maintainers)."""
    from opgov.services.governance import propose

    return propose(ctx, body.operator, body.kind, body.rationale, targets=body.targets or None)


class VoteRequest(BaseModel):
    approve: bool
    comment: Text


@router.post("/{proposal_id}/votes", response_model=ProposalView)
def post_vote(proposal_id: IdPath, body: VoteRequest, ctx: Writer) -> ProposalView:
    """A maintainer's vote (not on their own proposal); quorum approvals decide it."""
    from opgov.services.governance import review

    return review(ctx, proposal_id, approve=body.approve, comment=body.comment)


@router.post("/{proposal_id}/withdraw", response_model=ProposalView)
def post_withdraw(proposal_id: IdPath, ctx: Writer) -> ProposalView:
    """Withdraw an open proposal (the proposer; maintainers any)."""
    from opgov.services.governance import withdraw

    return withdraw(ctx, proposal_id)


class TriageRequest(BaseModel):
    model_config = ConfigDict(json_schema_extra={"anyOf": [  # name the operators: globs, names or both
        {"required": ["match"], "properties": {"match": {"minItems": 1}}},
        {"required": ["operators"], "properties": {"operators": {"minItems": 1}}}]})

    kind: Literal["core", "custom"]
    rationale: Text
    match: list[str] = Field(default_factory=list, description="globs over operator names, e.g. aten::_foreach_*")
    operators: list[OperatorName] = Field(default_factory=list, description="operator names of the review queue")
    apply: bool = Field(default=False, description="false: a dry run that names the selection and writes nothing")


@router.post("/triage", response_model=TriageResult)
def post_triage(body: TriageRequest, ctx: Writer) -> TriageResult:
    """Triage the review queue in bulk: one proposal, with the rationale, for each queued operator a
    glob or a name selects; a dry run unless ``apply`` (developers and maintainers)."""
    from opgov.services.governance import triage

    return triage(ctx, body.kind, body.rationale, match=body.match, names=body.operators, apply=body.apply)
