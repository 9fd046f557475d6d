"""The governance tags of native_functions.yaml, and what a release does to them.

``core`` marks the core ATen opset; ``deprecating`` and ``deprecated`` the lifecycle (the sync
bot writes all three). A release that adds or drops one on an operator it keeps changes the
record: the import makes each edit a finding (the rule ids ``check-pr`` uses), an event and a
line of the operator's history.
"""

from __future__ import annotations

from collections.abc import Iterable

GOVERNANCE_TAGS = frozenset({"core", "deprecating", "deprecated"})


def governance_tags_edited(before: Iterable[str] | None, after: Iterable[str]) -> list[str]:
    """``["-core", "+deprecating"]``: the governance tags ``after`` drops and adds against
    ``before`` (nothing when there is no ``before``: an operator that was not there)."""
    if before is None:
        return []
    old, new = GOVERNANCE_TAGS & set(before), GOVERNANCE_TAGS & set(after)
    return [f"-{t}" for t in sorted(old - new)] + [f"+{t}" for t in sorted(new - old)]


def finding_rule(edit: str) -> str:
    """The check-pr rule id of one edit (``-core`` → ``core-tag-removed``)."""
    if edit == "+core":
        return "core-tag-added"
    if edit == "-core":
        return "core-tag-removed"
    return "lifecycle-tag-edited"
