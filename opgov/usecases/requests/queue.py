"""What the committee's workbench asks (opgov.usecases.queue): the queue, filtered and paged, and
triage: a proposal for each operator a filter selects, or for each suggestion."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from opgov.core.vocab import ProposalKind, QueueReason, Suggestion
from opgov.usecases.fields import NOT_BLANK, Corpus, Flag, OperatorName, Text
from opgov.usecases.requests import Request

ReasonName = Literal[tuple(r.value for r in QueueReason)]  # type: ignore[valid-type]
SuggestionName = Literal[tuple(s.value for s in Suggestion)]  # type: ignore[valid-type]
SortName = Literal["waiting", "operator", "suggestion", "impact"]
# a snapshot's label as `opgov import --label` takes it: an empty or blank value names none
SnapshotLabel = Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)]


class QueueFilter(Request):
    reason: list[ReasonName] = Field(default_factory=list, description="only operators waiting for one of these "
                                                                       "reasons (undecided, tag-change, proposal)")
    match: list[str] = Field(default_factory=list, description="globs over operator names, e.g. aten::_foreach_*")
    snapshot: list[SnapshotLabel] = Field(default_factory=list, description="only operators waiting since one of "
                                                                            "these snapshots (labels; an unknown "
                                                                            "label: 404)")
    suggestion: list[SuggestionName] = Field(default_factory=list, description="only these suggestions")
    models: Corpus = Field(default=None, description="a corpus on this machine (the CLI's --models); else the "
                                                     "models of OPGOV_MODELS_DIR")


class QueueQuery(QueueFilter):
    sort: SortName = Field(default="waiting", description="waiting (oldest first), operator, suggestion, or impact "
                                                          "(most runtimes and models first); then by name")
    limit: int = Field(default=0, ge=0, le=100_000, description="items on the page (0: all)")
    offset: int = Field(default=0, ge=0, description="items skipped before the page")


class SuggestedTriageRequest(QueueFilter):
    apply: Flag = Field(default=False, description="false: a dry run that names the proposals and writes nothing")

    @property
    def reads_only(self) -> bool:
        """Without ``apply`` it only reads (in-process: a read transaction, which honours ``--now``)."""
        return not self.apply


class TriageRequest(Request):
    model_config = ConfigDict(json_schema_extra={"anyOf": [  # name the operators: globs, names or both
        {"required": ["match"], "properties": {"match": {"minItems": 1}}},
        {"required": ["operators"], "properties": {"operators": {"minItems": 1}}}]})

    kind: Literal[ProposalKind.core, ProposalKind.custom]
    rationale: Text
    match: list[str] = Field(default_factory=list, description="globs over operator names, e.g. aten::_foreach_*")
    operators: list[OperatorName] = Field(default_factory=list, description="operator names of the review queue")
    apply: bool = Field(default=False, description="false: a dry run that names the selection and writes nothing")
