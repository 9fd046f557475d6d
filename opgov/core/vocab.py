"""opgov's vocabulary: every closed list of words, written once.

Each is a :class:`~enum.StrEnum`, so a member *is* its string: ``Category.core == "core"``, it
prints, hashes, sorts and serialises (JSON, the database, yaml) exactly as the plain word did.
Code compares with members, option parsers and pydantic models take the classes, and the order
of the members is the order a list or report shows them in. A ``Literal`` of these words elsewhere
is derived from its class (``Literal[tuple(Category)]``, ``Literal[ProposalKind.core, ...]``), never
typed again (tests/core/test_vocab.py checks the whole package).

Standard library only.
"""

from __future__ import annotations

import enum

__all__ = ["Category", "FindingKind", "Lifecycle", "Preset", "ProposalKind", "ProposalStatus", "QueueReason", "Role",
           "Severity", "Suggestion"]


class Category(enum.StrEnum):
    """What the committee decided an operator is."""

    core = "core"  # in the core ATen opset: every backend implements it
    decomposable = "decomposable"  # has a decomposition into other operators
    custom = "custom"  # neither: a backend may implement it or not


class ProposalKind(enum.StrEnum):
    """What a proposal asks for; each kind names the category it moves the operator into."""

    core = "core"
    decompose = "decompose"
    custom = "custom"

    @property
    def category(self) -> Category:
        """``decompose`` → ``decomposable``; the others are their own category."""
        return Category.decomposable if self is ProposalKind.decompose else Category(self.value)


class ProposalStatus(enum.StrEnum):
    """Where a proposal is: collecting votes, or closed one of three ways."""

    open = "open"
    approved = "approved"
    rejected = "rejected"
    withdrawn = "withdrawn"


class Role(enum.StrEnum):
    """What a member may do: maintainers vote and step the lifecycle, developers propose, bots import
    and sync."""

    maintainer = "maintainer"
    developer = "developer"
    bot = "bot"


class Lifecycle(enum.StrEnum):
    """Where an operator is on its way out (``active`` for almost every one)."""

    active = "active"
    deprecating = "deprecating"  # torch.export warns
    deprecated = "deprecated"  # torch.export fails
    deleted = "deleted"  # gone from native_functions.yaml


class Severity(enum.StrEnum):
    """How serious a finding is, most serious first (``waived``: a BC break a recorded exception
    lets through)."""

    error = "error"
    warning = "warning"
    waived = "waived"
    info = "info"

    @property
    def rank(self) -> int:
        """0 for ``error`` … 3 for ``info``: sort findings by it."""
        return _SEVERITY_ORDER.index(self)


_SEVERITY_ORDER = tuple(Severity)


class FindingKind(enum.StrEnum):
    """What a compatibility finding is about."""

    bc = "bc"  # backward compatibility: old callers and serialized programs on the new schema
    fc = "fc"  # forward compatibility: new programs on an old runtime
    new = "new"  # an operator that did not exist before
    policy = "policy"  # a governance tag (core, deprecating, deprecated) a release added or dropped

    @property
    def rank(self) -> int:
        return _KIND_ORDER.index(self)


_KIND_ORDER = tuple(FindingKind)


class Preset(enum.StrEnum):
    """Where ``opgov opset build`` starts before ``--decompose`` and ``--keep``."""

    core_aten = "core-aten"  # the core ATen opset: decomposable operators decomposed
    no_decomp = "no-decomp"  # every operator a model can export, nothing decomposed
    full_decomp = "full-decomp"  # every rule applied, core operators with a rule included


class Suggestion(enum.StrEnum):
    """What the committee's workbench (``opgov queue``) suggests for a queued operator, from its
    evidence only (:mod:`opgov.core.queue`)."""

    decompose = "decompose"  # torch decomposes it into core operators, or export never holds it
    custom = "custom"  # no decomposition, no runtime implements it, no model uses it
    core = "core"  # no decomposition, and runtimes implement it or models use it
    human = "human"  # the evidence disagrees, or is missing: a person must look


class QueueReason(enum.StrEnum):
    """Why an operator waits for the committee."""

    undecided = "undecided"  # new in a snapshot: no category decided yet
    tag_change = "tag-change"  # a release added or dropped its core tag
    proposal = "proposal"  # a proposal on it is open
