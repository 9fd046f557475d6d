"""What the committee's use cases ask (opgov.usecases.governance): proposals and votes, lifecycle
steps, the tick, upgraders, historical decisions."""

from __future__ import annotations

from datetime import date
from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from opgov.core.vocab import ProposalKind
from opgov.usecases.fields import Flag, OperatorName, ShippedDecisions, Text, Upload, WithinDays
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


class TriageRequest(Request):
    model_config = ConfigDict(json_schema_extra={"anyOf": [  # name the operators: globs, names or both
        {"required": ["match"], "properties": {"match": {"minItems": 1}}},
        {"required": ["operators"], "properties": {"operators": {"minItems": 1}}}]})

    kind: Literal[ProposalKind.core, ProposalKind.custom]
    rationale: Text
    match: list[str] = Field(default_factory=list, description="globs over operator names, e.g. aten::_foreach_*")
    operators: list[OperatorName] = Field(default_factory=list, description="operator names of the review queue")
    apply: bool = Field(default=False, description="false: a dry run that names the selection and writes nothing")


# --- lifecycle ------------------------------------------------------------------------------------


class DeprecateRequest(Request):
    name: OperatorName = Field(description="an operator, e.g. aten::add.Tensor, URL-encoded")
    reason: Text
    replacement: OperatorName | None = Field(default=None, description="the operator to use instead (required for "
                                                                       "core)")


class StepRequest(Request):
    name: OperatorName = Field(description="an operator, e.g. aten::add.Tensor, URL-encoded")
    reason: Text | None = None


class UndeprecateRequest(Request):
    name: OperatorName = Field(description="an operator, e.g. aten::add.Tensor, URL-encoded")
    reason: Text


class TickRequest(Request):
    apply: Flag = Field(default=True, description="perform the due transitions (bots and maintainers)")
    within_days: WithinDays = Field(default=0, description="also list those coming due within this many days")

    @property
    def reads_only(self) -> bool:
        """Without ``apply`` a tick only reads (in-process: a read transaction, which honours ``--now``)."""
        return not self.apply


# --- upgraders ------------------------------------------------------------------------------------


class UpgraderRequest(Request):
    operator: OperatorName = Field(description="e.g. aten::linspace")
    versions: str = Field(pattern=r"^\d{1,9}-\d{1,9}$", description="START-END: the operator versions it applies to, "
                                                                    "e.g. 0-7")
    old_schema: str = Field(description="the operator's schema at those versions")
    bumped_on: date | None = Field(default=None, description="when the version was bumped to END+1 (unless recorded)")
    reason: Text | None = Field(default=None, description="why it was bumped (unless recorded)")
    name: str | None = Field(default=None, description="default <name>_<overload>_<start>_<end>")
    replaces: str | None = Field(default=None, description="take over from this upgrader (180 days after its bump)")


class UpgraderName(Request):
    name: str = Field(description="an upgrader, <name>_<overload>_<start>_<end>")


class TimersQuery(Request):
    within_days: WithinDays = Field(default=0, description="also list those that may be replaced within this many "
                                                           "days")


# --- historical decisions -------------------------------------------------------------------------


class DecisionsRequest(Request):
    # exactly one field of each group is given (the OpenAPI document says so: x-one-of)
    ONE_OF: ClassVar[tuple[tuple[str, ...], ...]] = (("decisions", "shipped"),)
    # the service refuses neither and both
    decisions: Upload | None = Field(default=None, description="a decisions file (format in the user guide)")
    shipped: ShippedDecisions | None = Field(default=None, description="instead of a file, the name of one opgov "
                                                                       "ships")
