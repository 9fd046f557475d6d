"""core/vocab.py's closed lists as the ``Literal`` types of result fields (an inline enum in the
OpenAPI document): the one place the results type them, each derived from its list."""

from __future__ import annotations

from typing import Literal

from opgov.core import vocab

__all__ = ["Category", "FindingKind", "Lifecycle", "ProposalKind", "ProposalStatus", "Role", "Severity"]

Category = Literal[tuple(vocab.Category)]  # type: ignore[valid-type]
FindingKind = Literal[tuple(vocab.FindingKind)]  # type: ignore[valid-type]
Lifecycle = Literal[tuple(vocab.Lifecycle)]  # type: ignore[valid-type]
ProposalKind = Literal[tuple(vocab.ProposalKind)]  # type: ignore[valid-type]
ProposalStatus = Literal[tuple(vocab.ProposalStatus)]  # type: ignore[valid-type]
Role = Literal[tuple(vocab.Role)]  # type: ignore[valid-type]
Severity = Literal[tuple(vocab.Severity)]  # type: ignore[valid-type]
