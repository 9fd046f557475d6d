"""What the committee's use cases ask (opgov.usecases.governance): members and settings, proposals
and votes, historical decisions."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from opgov.core.vocab import ProposalKind
from opgov.usecases.fields import (
    MemberName, OperatorName, Role, SettingKey, SettingValue, ShippedDecisions, Text, Upload,
)
from opgov.usecases.requests import Request

# --- proposals ------------------------------------------------------------------------------------


class ProposalQuery(Request):
    open: bool = Field(default=False, description="only open proposals")


class ProposalId(Request):
    proposal_id: int = Field(description="an id opgov gave")


class ProposalRequest(Request):
    # one body for the three kinds (`opgov propose-core`, `propose-decompose`, `propose-custom`):
    # only a decomposition has targets, at least one; the schema says so, the validator checks it
    model_config = ConfigDict(json_schema_extra={"oneOf": [
        {"properties": {"kind": {"const": "decompose"}, "targets": {"minItems": 1}}, "required": ["targets"]},
        {"properties": {"kind": {"enum": ["core", "custom"]}, "targets": {"maxItems": 0}}}]})

    operator: OperatorName = Field(description="e.g. aten::glu")
    kind: Literal[tuple(ProposalKind)] = Field(  # type: ignore[valid-type]
        description="the category proposed: core, decompose (into targets) or custom")
    rationale: Text
    targets: list[OperatorName] = Field(default_factory=list, description="the operators it decomposes into "
                                                                          "(decompose only)")

    @model_validator(mode="after")
    def _targets(self) -> ProposalRequest:
        # in the words of the service (opgov.services.governance.propose), which checks the same
        if self.kind == "decompose" and not self.targets:
            raise PydanticCustomError("targets", "--into needs at least one target operator")
        if self.kind != "decompose" and self.targets:
            raise PydanticCustomError("targets", "--into applies only to propose-decompose")
        return self


class VoteRequest(Request):
    proposal_id: int = Field(description="an id opgov gave")
    approve: bool = Field(description="true to approve, false to reject")
    comment: Text


class ReviewsRequest(Request):
    # `opgov review ID [ID…]`: one vote per proposal in one transaction; one comment for all, or one
    # per id in the order of the ids (the service checks the counts agree)
    proposal_ids: list[int] = Field(min_length=1, description="ids opgov gave, each once")
    approve: bool = Field(description="true to approve every one, false to reject every one")
    comments: list[Text] = Field(min_length=1, description="one comment recorded with every vote, or one per id in "
                                                           "their order")


# --- historical decisions -------------------------------------------------------------------------


class DecisionsRequest(Request):
    # exactly one field of each group is given (the OpenAPI document says so: x-one-of)
    ONE_OF: ClassVar[tuple[tuple[str, ...], ...]] = (("decisions", "shipped"),)
    # the service refuses neither and both
    decisions: Upload | None = Field(default=None, description="a decisions file (format in the user guide)")
    shipped: ShippedDecisions | None = Field(default=None, description="instead of a file, the name of one opgov "
                                                                       "ships")


# --- members and settings ----------------------------------------------------------------------


class MemberRequest(Request):
    name: MemberName = Field(description="the member's name, as the event log records it")
    role: Role = Field(description="maintainer, developer or bot")


class MemberRef(Request):
    name: Annotated[str, Field(max_length=200, description="a member's name")]


class SettingRequest(Request):
    key: SettingKey = Field(description="quorum, deprecating_days or deprecated_days")
    value: SettingValue
