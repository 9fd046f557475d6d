"""The PR gate (``opgov check-pr``): the core ATen policy's CI job, as pure functions.

A pull request changes native_functions.yaml (and perhaps a decomposition rules file) from a
*base* to a *head*. :func:`check_pr` reports, each finding with a kebab-case rule id, a file and
a line:

* everything ``check-bc`` reports, with the same verdicts (:mod:`opgov.core.compat` decides them;
  this module only words the advice for the PR author and names the reviewers);
* the policy rules of :data:`PR_RULES`: a new native function (category 3, custom, until the
  committee decides), the ``core`` tag added or removed without a decision on record, the
  lifecycle tags (``deprecating``/``deprecated``) edited by hand, any schema change of a core
  operator, a decomposition rule whose targets leave core, and an expired allow-list entry.

Then the repository's policy (:class:`Policy`, read from ``.opgov.toml`` by
:mod:`opgov.formats.policy_config`) adjusts severities and drops ignored findings, except where
the policy itself forbids it: a BC break of a core operator is always an error, whatever the
configuration says, and no allow-list entry waives it.

Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from fnmatch import fnmatchcase

from opgov.core import compat

__all__ = ["AllowEntry", "Decision", "OpState", "PR_RULES", "Policy", "PrFinding", "PrInput", "PrReport",
           "PrRule", "check_pr", "matches_pattern"]

SEVERITIES = compat.SEVERITIES  # error, warning, waived, info
LIFECYCLE_TAGS = ("deprecating", "deprecated")
CORE_TAG = "core"

LABEL_CORE = "opgov: core change"
LABEL_NEW = "opgov: new operator"
LABEL_BC = "opgov: bc-breaking"
LABEL_COMMITTEE = "opgov: needs committee"


# --- inputs -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpState:
    """One operator on one side of the PR."""

    schema: str | None
    tags: tuple[str, ...]
    line: int
    composite_implicit: bool = False
    autogen_of: str | None = None  # the entry whose autogen: declares it (no schema of its own)


@dataclass(frozen=True, slots=True)
class Decision:
    """A committee decision on record: ``operator`` was placed in ``category``."""

    operator: str
    category: str  # core | decomposable | custom
    source: str  # where it is recorded (.opgov.toml:12, a decisions file, the database)


@dataclass(frozen=True, slots=True)
class AllowEntry:
    """One allow-list entry of ``.opgov.toml``: a waiver for BC breaks of non-core operators.

    ``operator`` is a glob over canonical names (``aten::_foreach_*``; without ``::`` it matches
    the name without its namespace); ``regex`` is, as in PyTorch's ALLOW_LIST, searched in the
    operator's schema text (``aten::name.overload(args) -> ret``). ``schema``, when given, must
    also be found in the old or the new schema text (PyTorch's third ALLOW_LIST element narrows
    a waiver to one argument list this way)."""

    name: str  # how messages name it: ".opgov.toml:31 (aten::_foreach_*)"
    operator: str | None
    regex: str | None
    schema: str | None
    reason: str
    owner: str
    link: str | None
    expires: date
    file: str | None = None
    line: int | None = None

    def covers(self, operator: str, old_schema: str | None, new_schema: str | None) -> bool:
        if self.operator is not None and not matches_pattern(self.operator, operator):
            return False
        if self.regex is not None:
            texts = [_full_schema(operator, s) for s in (old_schema, new_schema) if s]
            if not texts:
                texts = [operator]
            if not any(re.search(self.regex, t) for t in texts):
                return False
        if self.schema is not None:
            if not any(s and re.search(self.schema, _full_schema(operator, s)) for s in (old_schema, new_schema)):
                return False
        return True

    def expired(self, today: date) -> bool:
        return today > self.expires


@dataclass(frozen=True)
class Policy:
    """The repository's policy (``.opgov.toml``); all parts optional."""

    core_maintainers: tuple[str, ...] = ()
    committee: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)  # rule id → error|warning|info|off
    excepted: frozenset[str] = frozenset()  # rule ids never reported
    ignore_only: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # rule id → operator globs
    allow: tuple[AllowEntry, ...] = ()
    decisions: tuple[Decision, ...] = ()
    file: str | None = None


@dataclass(frozen=True)
class PrInput:
    """Everything :func:`check_pr` compares: both sides, where they are, and what is on record."""

    base: Mapping[str, OpState]
    head: Mapping[str, OpState]
    head_file: str
    base_file: str
    base_is_revision: bool = False  # base lines belong to another revision: never annotate them
    rules_base: Mapping[str, tuple[str, ...]] | None = None  # None: no rules file on the base side
    rules_head: Mapping[str, tuple[str, ...]] | None = None
    rules_lines: Mapping[str, int] = field(default_factory=dict)
    rules_file: str | None = None
    lifecycle: Mapping[str, str] = field(default_factory=dict)  # from a database: op → lifecycle state
    completed_deletions: frozenset[str] = frozenset()
    db_exceptions: tuple[compat.BcException, ...] = ()


# --- outputs ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PrFinding:
    rule: str
    severity: str
    operator: str | None
    message: str
    file: str | None
    line: int | None
    kind: str = "policy"  # bc | fc | new | policy
    reviewers: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    old_schema: str | None = None
    new_schema: str | None = None
    locked: bool = False  # the configuration cannot lower or ignore it (core BC breaks)


@dataclass(frozen=True)
class PrReport:
    findings: tuple[PrFinding, ...]
    reviewers: tuple[str, ...]
    labels: tuple[str, ...]
    # new operators only an autogen: line declares: no schema to compare, no finding (as check-bc)
    not_compared: tuple[str, ...] = ()

    def count(self, severity: str) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    @property
    def errors(self) -> int:
        return self.count("error")


@dataclass(frozen=True, slots=True)
class PrRule:
    id: str
    severity: str
    purpose: str


#: The policy rules check-pr adds to check-bc's (listed by ``opgov check-pr --list-rules``).
PR_RULES: dict[str, PrRule] = {r.id: r for r in (
    PrRule("native-function-added", "warning",
           "A new native function: category 3 (custom) until the committee decides; bring a "
           "decomposition (CompositeImplicitAutograd kernel or a rule) or a justification."),
    PrRule("core-tag-added", "error", "The `core` tag was added without a committee decision on record."),
    PrRule("core-tag-removed", "error", "The `core` tag was removed without a committee decision on record."),
    PrRule("lifecycle-tag-edited", "error",
           "A `deprecating`/`deprecated` tag was added or removed by hand (the lifecycle owns them)."),
    PrRule("core-schema-changed", "warning",
           "The schema of a core operator changed, even compatibly: core maintainers must review."),
    PrRule("decomp-leaves-core", "error",
           "A decomposition rule the PR changes reaches a non-core operator (or one the PR takes out of core)."),
    PrRule("allowlist-entry-expired", "error", "An allow-list entry of .opgov.toml has expired."),
)}


def matches_pattern(pattern: str, operator: str) -> bool:
    """fnmatch glob over canonical names; a pattern without ``::`` ignores the namespace."""
    if "::" not in pattern:
        operator = operator.partition("::")[2] or operator
    return fnmatchcase(operator, pattern)


def _full_schema(operator: str, schema: str) -> str:
    """``cumsum(Tensor self, ...) -> Tensor`` → ``aten::cumsum(Tensor self, ...) -> Tensor``."""
    namespace = operator.partition("::")[0] if "::" in operator else "aten"
    return schema if "::" in schema.partition("(")[0] else f"{namespace}::{schema}"


def _who(names: Sequence[str], fallback: str) -> str:
    return ", ".join(f"@{n.lstrip('@')}" for n in names) if names else fallback


# --- the context every rule sees ----------------------------------------------------------


@dataclass(frozen=True)
class _Ctx:
    pr: PrInput
    policy: Policy
    today: date
    decided: Mapping[str, Decision]

    @property
    def maintainers(self) -> str:
        return _who(self.policy.core_maintainers, "the core ATen maintainers")

    @property
    def committee(self) -> str:
        return _who(self.policy.committee, "the core ATen committee")

    def core_base(self, op: str) -> bool:
        """Core on the base side: the committee's decision if on record, else the ``core`` tag."""
        decision = self.decided.get(op)
        if decision is not None:
            return decision.category == "core"
        state = self.pr.base.get(op)
        return state is not None and CORE_TAG in state.tags

    def core_head(self, op: str) -> bool:
        state = self.pr.head.get(op)
        return state is not None and CORE_TAG in state.tags

    def head_line(self, op: str) -> int:
        """The head file's line for ``op``; for an operator the PR removed, the line of the entry
        that now stands where it was (the next surviving operator of the base, else the previous
        one, else 1), so that an annotation always has a line."""
        state = self.pr.head.get(op)
        if state is not None:
            return state.line
        names = list(self.pr.base)
        if op in self.pr.base:
            i = names.index(op)
            for other in names[i + 1:]:
                if other in self.pr.head:
                    return self.pr.head[other].line
            for other in reversed(names[:i]):
                if other in self.pr.head:
                    return self.pr.head[other].line
        return 1


# --- check-bc's findings, worded for the PR author ----------------------------------------


def _covering(entries: Iterable[AllowEntry], f: compat.RawFinding) -> list[AllowEntry]:
    return [e for e in entries if e.covers(f.operator, f.old_schema, f.new_schema)]


def compat_findings(ctx: _Ctx, raw: Sequence[compat.RawFinding]) -> list[PrFinding]:
    """check-bc's findings with check-bc's verdicts: :func:`opgov.core.compat.apply_policy` decides
    each severity (core never waived; allow-list entries and database exceptions waive the rest)."""
    out: list[PrFinding] = []
    for f in raw:
        entries = _covering(ctx.policy.allow, f)
        # an allow-list entry is a BcException to the shared policy; the entry's name travels in
        # ``reason`` so that the message can cite it
        as_exceptions = [compat.BcException(pattern="*", reason=e.name, created_by=e.owner, expires_on=e.expires)
                         for e in entries]
        as_exceptions += [e for e in ctx.pr.db_exceptions if e.covers(f.operator)]
        (verdict,) = compat.apply_policy([f], core=ctx.core_base, exceptions=as_exceptions,
                                         completed_deletions=ctx.pr.completed_deletions, today=ctx.today)
        out.append(_worded(ctx, f, verdict.severity, entries))
    return out


def _worded(ctx: _Ctx, f: compat.RawFinding, severity: str, entries: list[AllowEntry]) -> PrFinding:
    op = f.operator
    core = ctx.core_base(op)
    message = f.message
    reviewers: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    locked = False
    if f.kind == "new":
        message = f.message  # check-bc's words: a new operator, or one now with its own entry
    elif f.kind == "fc":
        message += (" Calls made with the new schema may fail on older releases; keep it if intended.")
        if core:
            reviewers, labels = ctx.policy.core_maintainers, (LABEL_CORE,)
    elif severity == "info":
        message += " The removal completes the operator's deprecation lifecycle."
    elif core:
        locked = True
        reviewers, labels = ctx.policy.core_maintainers, (LABEL_CORE, LABEL_BC)
        message += (f" {op} is a core ATen operator: BC breaks of core operators are never allowed and "
                    "no allow-list entry can waive them. Keep the old overload as it is and add a new "
                    f"overload (or operator) for the new behaviour. Review: {ctx.maintainers}.")
    elif severity == "waived":
        active = next((e for e in entries if not e.expired(ctx.today)), None)
        if active is not None:
            link = f", {active.link}" if active.link else ""
            message += (f" Waived by allow-list entry {active.name} until {active.expires.isoformat()} "
                        f"({active.owner}: {active.reason}{link}).")
        else:
            cover = next(e for e in ctx.pr.db_exceptions if e.covers(op) and not e.expired(ctx.today))
            message += (f" Waived by the database's exception {cover.pattern!r} until "
                        f"{cover.expires_on.isoformat()} ({cover.created_by}: {cover.reason}).")
        labels = (LABEL_BC,)
    else:  # a BC break of a non-core operator nothing waives
        reviewers, labels = ctx.policy.committee, (LABEL_BC, LABEL_COMMITTEE)
        lapsed = [e for e in entries if e.expired(ctx.today)]
        if lapsed:
            message += f" Allow-list entry {lapsed[0].name} expired on {lapsed[0].expires.isoformat()}."
        if f.rule == "operator-removed":
            message += (" Operators leave through the deprecation lifecycle, which the committee runs: keep "
                        "the entry, or if it must go now, ask "
                        f"{ctx.committee} for an allow-list entry in {ctx.policy.file or '.opgov.toml'}.")
        else:
            message += (" Keep the old overload unchanged and add a new overload for the new signature; if "
                        f"the break is intended, ask {ctx.committee} for an allow-list entry in "
                        f"{ctx.policy.file or '.opgov.toml'}.")
    line = ctx.head_line(op)
    if f.rule == "operator-removed" and op not in ctx.pr.head:
        where = ctx.pr.base.get(op)
        message += f" (Removed from here; the base had it at line {where.line}.)" if where else ""
    return PrFinding(rule=f.rule, severity=severity, operator=op, message=message, file=ctx.pr.head_file,
                     line=line, kind=f.kind, reviewers=tuple(reviewers), labels=labels,
                     old_schema=f.old_schema, new_schema=f.new_schema, locked=locked)


# --- the policy rules: one function each --------------------------------------------------


def native_function_added(ctx: _Ctx) -> Iterable[PrFinding]:
    for op, state in ctx.pr.head.items():
        if op in ctx.pr.base or state.schema is None:
            continue
        has_rule = ctx.pr.rules_head is not None and op in ctx.pr.rules_head
        decision = ctx.decided.get(op)
        if decision is not None:
            message = (f"New native function {op}: the committee's decision on record "
                       f"({decision.source}) places it in category {decision.category}.")
            severity = "info"
        elif state.composite_implicit or has_rule:
            how = "a CompositeImplicitAutograd kernel" if state.composite_implicit else \
                f"a decomposition rule in {ctx.pr.rules_file}"
            message = (f"New native function {op}: placed in category 3 (custom) pending committee review; "
                       f"it decomposes through {how}. Review: {ctx.committee}.")
            severity = "info"
        else:
            message = (f"New native function {op}: placed in category 3 (custom) pending committee review. "
                       "Give it a decomposition (a CompositeImplicitAutograd kernel, or a rule"
                       + (f" in {ctx.pr.rules_file}" if ctx.pr.rules_file else "")
                       + ") or say in the PR why it cannot have one. "
                       f"Review: {ctx.committee}.")
            severity = PR_RULES["native-function-added"].severity
        yield PrFinding("native-function-added", severity, op, message, ctx.pr.head_file, state.line,
                        reviewers=ctx.policy.committee, labels=(LABEL_NEW,), new_schema=state.schema)


def core_tag_changed(ctx: _Ctx) -> Iterable[PrFinding]:
    for op, state in ctx.pr.head.items():
        before = ctx.pr.base.get(op)
        had = before is not None and CORE_TAG in before.tags
        has = CORE_TAG in state.tags
        if had == has:
            continue
        decision = ctx.decided.get(op)
        rule = "core-tag-added" if has else "core-tag-removed"
        if decision is not None and (decision.category == "core") == has:
            yield PrFinding(rule, "info", op,
                            f"`core` tag {'added to' if has else 'removed from'} {op}, as the committee "
                            f"decided ({decision.source}). Review: {ctx.maintainers}.",
                            ctx.pr.head_file, state.line, reviewers=ctx.policy.core_maintainers,
                            labels=(LABEL_CORE,))
            continue
        verb = "added to" if has else "removed from"
        yield PrFinding(rule, PR_RULES[rule].severity, op,
                        f"`core` tag {verb} {op} without a committee decision on record. Revert the tag "
                        f"change, or ask {ctx.committee} to decide on {op}; the tag can land once the decision "
                        f"is on record ({ctx.policy.file or '.opgov.toml'} or the decisions file). "
                        f"Review: {ctx.maintainers}.",
                        ctx.pr.head_file, state.line, reviewers=ctx.policy.core_maintainers + ctx.policy.committee,
                        labels=(LABEL_CORE, LABEL_COMMITTEE), new_schema=state.schema)
    # a removed core operator is check-bc's operator-removed, an error on a core operator


def lifecycle_tag_edited(ctx: _Ctx) -> Iterable[PrFinding]:
    for op, state in ctx.pr.head.items():
        before = ctx.pr.base.get(op)
        old = set(before.tags if before is not None else ()) & set(LIFECYCLE_TAGS)
        new = set(state.tags) & set(LIFECYCLE_TAGS)
        if old == new:
            continue
        recorded = ctx.pr.lifecycle.get(op)
        if recorded in new or (recorded is not None and not new and recorded not in LIFECYCLE_TAGS):
            continue  # the database's lifecycle says so: the sync bot's edit
        changes = [f"added `{t}`" for t in sorted(new - old)] + [f"removed `{t}`" for t in sorted(old - new)]
        yield PrFinding("lifecycle-tag-edited", PR_RULES["lifecycle-tag-edited"].severity, op,
                        f"{' and '.join(changes)} on {op} by hand: the deprecation lifecycle owns these tags "
                        "(the committee starts it with opgov deprecate; the sync bot writes the tags). "
                        f"Revert the tag change and ask {ctx.committee} to deprecate the operator.",
                        ctx.pr.head_file, state.line, reviewers=ctx.policy.committee, labels=(LABEL_COMMITTEE,))


def core_schema_changed(ctx: _Ctx) -> Iterable[PrFinding]:
    for op, before in ctx.pr.base.items():
        state = ctx.pr.head.get(op)
        if state is None or state.schema == before.schema or not ctx.core_base(op):
            continue
        yield PrFinding("core-schema-changed", PR_RULES["core-schema-changed"].severity, op,
                        f"Schema of core operator {op} changed; every backend implements it, so even a "
                        f"compatible change needs a review by the core maintainers: {ctx.maintainers}.",
                        ctx.pr.head_file, state.line, reviewers=ctx.policy.core_maintainers,
                        labels=(LABEL_CORE,), old_schema=before.schema, new_schema=state.schema)


def decomp_leaves_core(ctx: _Ctx) -> Iterable[PrFinding]:
    rules = ctx.pr.rules_head
    if rules is None:
        return
    old = ctx.pr.rules_base or {}

    def was_core(op: str) -> bool:
        state = ctx.pr.base.get(op)
        return state is not None and CORE_TAG in state.tags

    for op, into in rules.items():
        changed = op not in old or tuple(old[op]) != tuple(into)
        for leaf, path in _non_core_leaves(op, rules, ctx.core_head):
            if changed:
                why = (f"The rule for {op} now reaches {leaf}, which is not core: {' → '.join(path)}. "
                       f"A decomposition must end in core operators: decompose {leaf} further (a rule for it) "
                       "or target core operators.")
            elif was_core(leaf):  # an unchanged rule whose target this PR takes out of core
                why = (f"The rule for {op} reaches {leaf} ({' → '.join(path)}), which this PR takes out of core: "
                       f"keep {leaf} core, or change the rule to reach core operators only.")
            else:
                continue  # an old violation: check-decomps reports it, the PR did not cause it
            yield PrFinding("decomp-leaves-core", PR_RULES["decomp-leaves-core"].severity, op,
                            f"{why} Review: {ctx.maintainers}.", ctx.pr.rules_file, ctx.pr.rules_lines.get(op, 1),
                            reviewers=ctx.policy.core_maintainers, labels=(LABEL_CORE,))


def _non_core_leaves(op: str, rules: Mapping[str, Sequence[str]],
                     is_core: Callable[[str], bool]) -> list[tuple[str, tuple[str, ...]]]:
    """The non-core operators ``op``'s rule leads to (following other rules), with a path each."""
    found: dict[str, tuple[str, ...]] = {}
    seen = {op}
    stack = [(t, (op, t)) for t in reversed(rules.get(op, ()))]
    while stack:
        target, path = stack.pop()
        if target in seen:
            continue
        seen.add(target)
        if is_core(target):
            continue
        if target in rules:
            stack.extend((t, path + (t,)) for t in reversed(rules[target]))
        elif target not in found:
            found[target] = path
    return list(found.items())


def allowlist_entry_expired(ctx: _Ctx) -> Iterable[PrFinding]:
    for entry in ctx.policy.allow:
        if entry.expired(ctx.today):
            yield PrFinding("allowlist-entry-expired", PR_RULES["allowlist-entry-expired"].severity, None,
                            f"Allow-list entry {entry.name} ({entry.owner}: {entry.reason}) expired on "
                            f"{entry.expires.isoformat()} and waives nothing now: remove it, or ask "
                            f"{ctx.committee} to renew it with a new expiry.",
                            entry.file, entry.line, reviewers=ctx.policy.committee, labels=(LABEL_COMMITTEE,))


_POLICY_RULES = (native_function_added, core_tag_changed, lifecycle_tag_edited, core_schema_changed,
                 decomp_leaves_core, allowlist_entry_expired)


# --- the whole check ----------------------------------------------------------------------


def configured(findings: Iterable[PrFinding], policy: Policy) -> list[PrFinding]:
    """Apply ``except``, ``ignore_only`` and severity overrides; locked findings stay as they are."""
    out = []
    for f in findings:
        if f.locked:
            out.append(f)
            continue
        if f.rule in policy.excepted:
            continue
        if f.operator is not None and any(matches_pattern(p, f.operator) for p in policy.ignore_only.get(f.rule, ())):
            continue
        severity = policy.severity.get(f.rule)
        if severity == "off":
            continue
        if severity is not None and f.severity not in ("waived", "info"):
            f = replace(f, severity=severity)
        out.append(f)
    return out


def check_pr(pr: PrInput, raw: Sequence[compat.RawFinding], policy: Policy, *, today: date) -> PrReport:
    """The PR gate's findings: ``raw`` is :func:`opgov.core.compat.compare` of the two sides."""
    decided = {d.operator: d for d in policy.decisions}
    ctx = _Ctx(pr, policy, today, decided)
    found = compat_findings(ctx, raw)
    for rule in _POLICY_RULES:
        found.extend(rule(ctx))
    found = configured(found, policy)
    order = {s: i for i, s in enumerate(SEVERITIES)}
    found.sort(key=lambda f: (order[f.severity], f.file or "", f.line or 0, f.rule))
    reviewers: list[str] = []
    labels: list[str] = []
    for f in found:
        if f.severity in ("error", "warning") or f.rule in ("core-schema-changed", "native-function-added"):
            reviewers.extend(r for r in f.reviewers if r not in reviewers)
        labels.extend(label for label in f.labels if label not in labels)
    not_compared = tuple(op for op, state in pr.head.items() if state.schema is None and op not in pr.base)
    return PrReport(tuple(found), tuple(reviewers), tuple(labels), not_compared)
