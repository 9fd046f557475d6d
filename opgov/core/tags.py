"""The tags of native_functions.yaml, and what a release does to the record through them.

``core`` marks the core ATen opset; ``deprecating`` and ``deprecated`` the lifecycle (the sync
bot writes all three): these are the *governance* tags. A release that adds or drops one on an
operator changes the record, so the import judges each edit here, as ``check-pr`` judges the same
edit in a pull request (the same rule ids: ``core-tag-added``, ``core-tag-removed``,
``lifecycle-tag-edited``), and decides what the record does:

- the category never flips silently: only a committee decision takes an operator out of core,
  so a core operator whose tag a release drops stays core, under review, with the reason;
- a core tag a release adds waits for the committee too (core additions need its review),
  unless the committee decided it already (the sync bot wrote the tag it decided);
- a lifecycle tag the record's lifecycle does not explain is a hand edit; one it explains is
  the sync bot's.

Every other tag edit (``pointwise``, ``reduction``…) is recorded as it is (an event and a run
of the operator's history) without a finding. Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CORE_TAG = "core"
LIFECYCLE_TAGS = ("deprecating", "deprecated")
GOVERNANCE_TAGS = frozenset({CORE_TAG, *LIFECYCLE_TAGS})


def tags_edited(before: Iterable[str] | None, after: Iterable[str], *, only: frozenset[str] | None = None) -> list[str]:
    """``["-core", "+reduction"]``: the tags ``after`` drops and adds against ``before`` (``None``:
    the operator was not in the previous snapshot, so every tag it carries is added), dropped
    first, each group by name; ``only`` keeps those tags."""
    old, new = set(before or ()), set(after)
    if only is not None:
        old, new = old & only, new & only
    return [f"-{t}" for t in sorted(old - new)] + [f"+{t}" for t in sorted(new - old)]


def governance_tags_edited(before: Iterable[str] | None, after: Iterable[str]) -> list[str]:
    """``["-core", "+deprecating"]``: the governance tags ``after`` drops and adds against
    ``before`` (nothing when there is no ``before``: the history's first run)."""
    if before is None:
        return []
    return tags_edited(before, after, only=GOVERNANCE_TAGS)


def finding_rule(edit: str) -> str:
    """The check-pr rule id of one governance edit (``-core`` → ``core-tag-removed``)."""
    if edit == "+core":
        return "core-tag-added"
    if edit == "-core":
        return "core-tag-removed"
    return "lifecycle-tag-edited"


def next_category(category: str | None, source: str | None, suggested: str) -> tuple[str, str]:
    """The category (and its source) an import leaves an operator in, from the one on record and
    the one the release's entry suggests (tagged core → core; a CompositeImplicitAutograd kernel →
    decomposable; else custom). A committee decision stands; a core operator stays core until the
    committee decides otherwise (the release dropped the tag: it waits for review); anything else
    follows the file."""
    if category is not None and source == "decision":
        return category, source
    if category == "core" and suggested != "core":
        return category, source or "yaml-tag"
    return suggested, ("yaml-tag" if suggested == "core" else "heuristic")


@dataclass(frozen=True)
class TagFinding:
    """One governance tag edit as a finding of the import (kind ``policy``)."""

    edit: str  # "-core"
    rule: str  # check-pr's rule id
    severity: str  # info when the record already says so (a decision, the lifecycle), else warning
    message: str


@dataclass(frozen=True)
class TagVerdict:
    """What one import does to one operator's record through its tags."""

    edits: tuple[str, ...]  # every tag edit, governance or not ("-core", "+reduction")
    findings: tuple[TagFinding, ...]  # the governance edits, judged
    category: str
    category_source: str
    needs_review: bool
    review_reason: str | None  # why it (still) waits for the committee, when it does

    @property
    def governance(self) -> tuple[str, ...]:
        return tuple(e for e in self.edits if e[1:] in GOVERNANCE_TAGS)


def judge_tags(name: str, label: str, before: Iterable[str] | None, after: Iterable[str], *,
               category: str | None, category_source: str | None, suggested: str, lifecycle: str = "active",
               needs_review: bool = False, review_reason: str | None = None,
               decided: str | None = None, functional: bool = True) -> TagVerdict:
    """Judge what snapshot ``label`` does to ``name`` through its tags.

    ``before``: its tags in the previous snapshot (``None``: it was not there; a new operator's
    governance tags are additions, as check-pr counts them); ``after``: in this one.
    ``category``/``category_source``: on record before the import (``None`` for an operator never
    seen); ``decided``: the category of the committee's latest decision on it, if any;
    ``lifecycle``: on record. Returns the edits, the findings (check-pr's rule ids), and the
    category, review flag and review reason the record takes."""
    after = tuple(after)
    edits = tuple(tags_edited(before, after))
    new_category, new_source = next_category(category, category_source, suggested)
    findings: list[TagFinding] = []
    review, reason = needs_review, review_reason
    for edit in (e for e in edits if e[1:] in GOVERNANCE_TAGS):
        added, tag = edit[0] == "+", edit[1:]
        verb = "adds" if added else "drops"
        rule = finding_rule(edit)
        if tag == CORE_TAG:
            if decided is not None and (decided == "core") == added:
                findings.append(TagFinding(edit, rule, "info",
                                           f"{label} {verb} the core tag of {name}, as the committee decided "
                                           f"({decided})"))
                continue
            if added:
                why = (f"{label} added the core tag" + (f" against the committee's decision ({decided})"
                                                           if decided else "")
                       + ": core additions need the committee's review")
            elif new_category == "core":
                why = (f"{label} dropped the core tag" + (" the committee decided" if decided == "core" else "")
                       + ": it stays core until the committee decides")
            else:
                why = f"{label} dropped the core tag: it waits for the committee's review"
            findings.append(TagFinding(edit, rule, "warning",
                                       f"{label} {verb} the core tag of {name}"
                                       + (f" against the committee's decision ({decided})" if decided else "")
                                       + f" — {why.split(': ', 1)[1]}"))
            if functional:
                review, reason = True, why
        else:
            explained = (lifecycle == tag) if added else (lifecycle != tag)
            findings.append(TagFinding(edit, rule, "info" if explained else "warning",
                                       f"{label} {verb} the {tag} tag of {name}"
                                       + (f", as its lifecycle says ({lifecycle})" if explained else
                                          f" by hand: its lifecycle on record is {lifecycle} (the committee "
                                          "starts a deprecation with opgov deprecate; the sync bot writes the tags)")))
    return TagVerdict(edits=edits, findings=tuple(findings), category=new_category, category_source=new_source,
                      needs_review=review, review_reason=reason if review else None)
