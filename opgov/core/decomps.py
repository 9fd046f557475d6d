"""Decomposition rules: loading them, and the checks that keep them honest.

A *rule* says which operators an operator decomposes into: ``aten::hardswish`` →
``aten::clamp, aten::add.Tensor, aten::mul.Tensor, aten::div.Tensor``. Names are canonical
(:func:`opgov.core.names.canonical`). Rules are one step deep; the checks follow them transitively.

Rules file, format 1
--------------------
::

    # opgov decomposition rules, format 1
    format: 1                      # optional; 1 is the only format so far
    source: my-backend-2025        # required: where the rules come from
    rules:
      - op: aten::hardswish        # the operator decomposed (any spelling opgov accepts)
        into: [aten::clamp, aten::add.Tensor, aten::mul.Tensor, aten::div.Tensor]
        note: x * clamp(x + 3, 0, 6) / 6      # optional free text
      - {op: aten::lift_fresh, into: []}      # [] = the operator disappears (an identity)

Each operator has at most one rule per file and each target appears once in ``into``. Unknown
keys are refused, so a typo cannot silently drop a rule.

The file of facts from the 2023 core ATen review (``core-aten-review-2023.yaml``) is accepted
as well: its ``decomposed:`` list has the same ``{op, into, note}`` items. Its source is the file
name without the extension, and its date ``reviewed_at``.

Checks
------
:func:`check` runs every rule of :data:`CHECKS` over plain mappings, so the database layer, a
test or a bot can call it with whatever it has. :func:`would_break` answers "which violations
would this proposal introduce?" so that a governance service can refuse it with the path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml

from opgov.core.errors import BadInput
from opgov.core.names import canonical

try:  # PyYAML built with libyaml parses several times faster
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

Severity = Literal["error", "warning"]
CORE, DECOMPOSABLE, CUSTOM = "core", "decomposable", "custom"
_DEAD = frozenset({"deprecated", "deleted"})


# --------------------------------------------------------------------------------------------
# rules files


@dataclass(frozen=True)
class Rule:
    """``op`` decomposes into ``into`` (canonical names). ``line`` is where the file says so."""

    op: str
    into: tuple[str, ...]
    note: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class RulesFile:
    """A loaded rules file. ``shape`` is ``rules-v1`` or ``review-decisions``."""

    path: str
    source: str
    shape: str
    rules: tuple[Rule, ...]
    date: str | None = None

    def mapping(self) -> dict[str, tuple[str, ...]]:
        """``{op: into}``, the form :func:`check` and the opset builder take."""
        return {r.op: r.into for r in self.rules}


_RULE_KEYS = frozenset({"op", "into", "note"})
_V1_KEYS = frozenset({"format", "source", "rules"})


def load_rules_file(path: str | Path) -> RulesFile:
    """Read a rules file (format 1) or the 2023 review's facts file.

    Raises :class:`BadInput` naming the file and line of anything malformed.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput("no such file", file=str(path)) from None
    except IsADirectoryError:
        raise BadInput("is a directory, expected a file", file=str(path)) from None
    except UnicodeDecodeError as err:
        raise BadInput(f"not UTF-8 text ({err.reason})", file=str(path)) from None
    except OSError as exc:
        raise BadInput(f"cannot read rules file: {exc.strerror or exc}", file=str(path)) from None
    if "\x00" in text:
        raise BadInput("a binary file (it holds NUL bytes), expected text", file=str(path))
    return parse_rules_text(text, filename=str(path))


def parse_rules_text(text: str, *, filename: str = "<rules>") -> RulesFile:
    """Like :func:`load_rules_file`, for text already in memory."""
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        raise BadInput(f"not valid YAML: {exc.problem or exc}", file=filename, line=line) from exc
    except yaml.YAMLError as exc:
        raise BadInput(f"not valid YAML: {exc}", file=filename) from exc
    if root is None:
        raise BadInput("empty rules file (expected a 'rules:' list)", file=filename)
    top = _mapping(root, filename, "the file")
    if "rules" in top:
        extra = sorted(set(top) - _V1_KEYS)
        if extra:
            raise BadInput(f"unknown top-level key {extra[0]!r} (allowed: {', '.join(sorted(_V1_KEYS))})",
                           file=filename, line=_line(top[extra[0]][0]))
        if "format" in top:
            fmt = _scalar(top["format"][1], filename, "format")
            if fmt != "1":
                raise BadInput(f"unsupported rules format {fmt!r} (this opgov reads format 1)",
                               file=filename, line=_line(top["format"][1]))
        if "source" not in top:
            raise BadInput("missing 'source:' (say where these rules come from)", file=filename,
                           line=_line(root))
        source = _scalar(top["source"][1], filename, "source")
        if not source.strip():
            raise BadInput("'source:' is empty", file=filename, line=_line(top["source"][1]))
        rules = _rules_list(top["rules"][1], filename)
        return RulesFile(path=filename, source=source.strip(), shape="rules-v1", rules=rules)
    if "decomposed" in top:
        rules = _rules_list(top["decomposed"][1], filename)
        date = _scalar(top["reviewed_at"][1], filename, "reviewed_at") if "reviewed_at" in top else None
        return RulesFile(path=filename, source=Path(filename).stem, shape="review-decisions",
                         rules=rules, date=date)
    hint = " (this is a decisions file: use `opgov decisions load`)" if "decisions" in top else ""
    raise BadInput(f"no 'rules:' list (format 1) and no 'decomposed:' list (review facts){hint}",
                   file=filename, line=_line(root))


def _line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _mapping(node: yaml.Node, filename: str, what: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        raise BadInput(f"{what} must be a mapping", file=filename, line=_line(node))
    out: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key, value in node.value:
        name = _scalar(key, filename, "a key")
        if name in out:
            raise BadInput(f"key {name!r} appears twice", file=filename, line=_line(key))
        out[name] = (key, value)
    return out


def _scalar(node: yaml.Node, filename: str, what: str) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise BadInput(f"{what} must be a single value", file=filename, line=_line(node))
    return str(node.value)


def _op(node: yaml.Node, filename: str, what: str) -> str:
    text = _scalar(node, filename, what)
    try:
        return canonical(text)
    except BadInput as exc:
        raise BadInput(exc.message, file=filename, line=_line(node)) from None


def _rules_list(node: yaml.Node, filename: str) -> tuple[Rule, ...]:
    if isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null"):
        return ()
    if not isinstance(node, yaml.SequenceNode):
        raise BadInput("the rules must be a list of {op, into} items", file=filename, line=_line(node))
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for item in node.value:
        fields = _mapping(item, filename, "a rule")
        extra = sorted(set(fields) - _RULE_KEYS)
        if extra:
            raise BadInput(f"unknown key {extra[0]!r} in a rule (allowed: op, into, note)",
                           file=filename, line=_line(fields[extra[0]][0]))
        for required in ("op", "into"):
            if required not in fields:
                raise BadInput(f"a rule without {required!r}", file=filename, line=_line(item))
        op = _op(fields["op"][1], filename, "'op'")
        if op in seen:
            raise BadInput(f"{op} has a rule already (line {seen[op]})", file=filename, line=_line(item))
        seen[op] = _line(item)
        into_node = fields["into"][1]
        if not isinstance(into_node, yaml.SequenceNode):
            raise BadInput(f"'into' of {op} must be a list of operators", file=filename,
                           line=_line(into_node))
        into: list[str] = []
        for target_node in into_node.value:
            target = _op(target_node, filename, "a target in 'into'")
            if target in into:
                raise BadInput(f"{target} is listed twice in the targets of {op}", file=filename,
                               line=_line(target_node))
            into.append(target)
        note = _scalar(fields["note"][1], filename, "'note'") if "note" in fields else None
        rules.append(Rule(op=op, into=tuple(into), note=note, line=_line(item)))
    return tuple(rules)


# --------------------------------------------------------------------------------------------
# checks


@dataclass(frozen=True)
class Violation:
    """One finding of :func:`check`.

    ``path`` is the chain of operators that shows it (a decomposition path, a cycle), empty when
    the finding concerns one operator. ``subject`` is the operator (or cycle) the finding is
    about besides ``operator``; together with ``rule`` and ``operator`` it identifies the
    finding across two runs (see :func:`would_break`).
    """

    rule: str
    severity: Severity
    operator: str
    message: str
    path: tuple[str, ...] = ()
    subject: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rule, self.operator, self.subject)


@dataclass(frozen=True)
class CheckInfo:
    id: str
    severity: Severity
    purpose: str


#: Every rule :func:`check` applies, by id. Documentation and ``--help`` list them from here.
CHECKS: dict[str, CheckInfo] = {c.id: c for c in (
    CheckInfo("decomp-reaches-non-core", "error",
              "A non-core operator's rules, followed transitively, end in an operator that is not core."),
    CheckInfo("decomp-cycle", "error", "Rules that lead from an operator back to itself."),
    CheckInfo("decomp-target-deprecated", "error", "A rule targets a deprecated or deleted operator."),
    CheckInfo("decomp-target-deprecating", "warning", "A rule targets an operator that is being deprecated."),
    CheckInfo("decomp-target-unknown", "error", "A rule targets an operator the registry does not know."),
    CheckInfo("core-decomposed", "warning", "Drift: a core operator has a decomposition rule."),
    CheckInfo("core-tag-mismatch", "warning",
              "Drift: the `core` tag in native_functions.yaml disagrees with the category."),
    CheckInfo("decomposable-without-rule", "warning", "Drift: a decomposable operator has no rule."),
)}


@dataclass(frozen=True)
class _Graph:
    rules: Mapping[str, tuple[str, ...]]
    categories: Mapping[str, str]
    lifecycle: Mapping[str, str]
    tagged: Mapping[str, bool]

    def category(self, op: str) -> str:
        if op in self.categories:
            return self.categories[op]
        return "uncategorized" if op in self.lifecycle else "unknown"

    def known(self, op: str) -> bool:
        return op in self.categories or op in self.lifecycle


def _violation(rule: str, operator: str, message: str, path: Sequence[str] = (), subject: str = "") -> Violation:
    return Violation(rule, CHECKS[rule].severity, operator, message, tuple(path), subject)


def arrow(path: Iterable[str]) -> str:
    """``a → b → c``."""
    return " → ".join(path)


def check_reaches_core(g: _Graph) -> list[Violation]:
    """``decomp-reaches-non-core``: follow the rules of every non-core operator to their leaves.

    Every operator with a rule counts, whatever its category: a rule is a decomposition, and the
    backends that decompose the operator (every non-core one under the core-aten preset) get its
    leaves. (A heuristic category of a fresh import, e.g. ``custom`` for ``aten::mish``, does not
    exempt its rule.) Core operators are leaves; their own rules are ``core-decomposed`` drift.
    A core target is a leaf (decomposition stops there); a non-core target with a rule is
    followed; a non-core target without one is reported, with the first path found to it.
    One finding per (operator, bad leaf).
    """
    out: list[Violation] = []
    for op in sorted(o for o in g.rules if g.category(o) != CORE):
        if g.lifecycle.get(op) == "deleted":
            continue
        for leaf, path in _bad_leaves(op, g):
            out.append(_violation(
                "decomp-reaches-non-core", op,
                f"{op} decomposes into non-core {leaf}: {arrow(path)} ({g.category(leaf)})",
                path, leaf))
    return out


def _bad_leaves(op: str, g: _Graph) -> list[tuple[str, tuple[str, ...]]]:
    found: dict[str, tuple[str, ...]] = {}
    visited: set[str] = set()

    def walk(node: str, path: tuple[str, ...]) -> None:
        for target in g.rules.get(node, ()):
            if target in path:  # a cycle: decomp-cycle reports it
                continue
            if g.category(target) == CORE:
                continue
            here = (*path, target)
            if target in g.rules:
                if target not in visited:
                    visited.add(target)
                    walk(target, here)
            elif target not in found:
                found[target] = here

    walk(op, (op,))
    return list(found.items())


def check_cycles(g: _Graph) -> list[Violation]:
    """``decomp-cycle``: each strongly connected group of rules reported once, as one cycle."""
    out: list[Violation] = []
    for component in _strongly_connected(g.rules):
        start = min(component)
        cycle = _cycle_through(start, component, g.rules)
        out.append(_violation(
            "decomp-cycle", start, f"decomposition cycle: {arrow(cycle)}", cycle,
            ",".join(sorted(component))))
    return out


def _strongly_connected(rules: Mapping[str, tuple[str, ...]]) -> list[frozenset[str]]:
    """Tarjan's algorithm, iterative; only components that contain a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[frozenset[str]] = []
    counter = 0
    for root in sorted(rules):
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = rules.get(node, ())
            if i < len(targets):
                work.append((node, i + 1))
                nxt = targets[i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                members = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    members.append(m)
                    if m == node:
                        break
                if len(members) > 1 or node in rules.get(node, ()):
                    result.append(frozenset(members))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return sorted(result, key=min)


def _cycle_through(start: str, component: frozenset[str], rules: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    """A shortest cycle from ``start`` back to itself inside ``component`` (breadth first)."""
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for target in rules.get(node, ()):
                if target == start:
                    chain = [node]
                    while chain[-1] != start:
                        chain.append(parents[chain[-1]])
                    return (*reversed(chain), start)
                if target in component and target not in parents:
                    parents[target] = node
                    nxt.append(target)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - components have one


def check_targets(g: _Graph) -> list[Violation]:
    """``decomp-target-deprecated``, ``decomp-target-deprecating``, ``decomp-target-unknown``."""
    out: list[Violation] = []
    for op in sorted(g.rules):
        if g.lifecycle.get(op) == "deleted":
            continue
        for target in g.rules[op]:
            state = g.lifecycle.get(target)
            if not g.known(target):
                out.append(_violation("decomp-target-unknown", op,
                                      f"{op} decomposes into {target}, which the registry does not know",
                                      (op, target), target))
            elif state in _DEAD:
                out.append(_violation("decomp-target-deprecated", op,
                                      f"{op} decomposes into {target}, which is {state}", (op, target), target))
            elif state == "deprecating":
                out.append(_violation("decomp-target-deprecating", op,
                                      f"{op} decomposes into {target}, which is being deprecated",
                                      (op, target), target))
    return out


def check_core_decomposed(g: _Graph) -> list[Violation]:
    """``core-decomposed``: a core operator with a rule (core operators are what rules end in)."""
    return [_violation("core-decomposed", op,
                       f"{op} is core but a rule decomposes it into {', '.join(g.rules[op]) or 'nothing'}",
                       (op, *g.rules[op]))
            for op in sorted(g.rules) if g.category(op) == CORE and g.lifecycle.get(op) != "deleted"]


def check_core_tag(g: _Graph) -> list[Violation]:
    """``core-tag-mismatch``: the yaml ``core`` tag and the category disagree."""
    out: list[Violation] = []
    for op in sorted(set(g.tagged) | {o for o, c in g.categories.items() if c == CORE}):
        if op not in g.tagged or g.lifecycle.get(op) == "deleted":
            continue
        tagged, is_core = g.tagged[op], g.category(op) == CORE
        if tagged and not is_core:
            out.append(_violation("core-tag-mismatch", op,
                                  f"{op} is tagged core in native_functions.yaml but its category is {g.category(op)}"))
        elif is_core and not tagged:
            out.append(_violation("core-tag-mismatch", op,
                                  f"{op} is core but native_functions.yaml does not tag it core"))
    return out


def check_decomposable_has_rule(g: _Graph) -> list[Violation]:
    """``decomposable-without-rule``."""
    return [_violation("decomposable-without-rule", op, f"{op} is decomposable but no rule says into what")
            for op, c in sorted(g.categories.items())
            if c == DECOMPOSABLE and op not in g.rules and g.lifecycle.get(op) != "deleted"]


_RULE_FUNCTIONS = (check_reaches_core, check_cycles, check_targets, check_core_decomposed,
                   check_core_tag, check_decomposable_has_rule)


def check(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
          lifecycle: Mapping[str, str] | None = None,
          yaml_core_tag: Mapping[str, bool] | Iterable[str] | None = None) -> list[Violation]:
    """Every violation of :data:`CHECKS`, errors first, then by rule id and operator.

    ``categories`` maps operators to ``core``/``decomposable``/``custom`` (an operator missing
    from it is *uncategorized*); ``lifecycle`` maps them to ``active``/``deprecating``/
    ``deprecated``/``deleted`` (an operator in neither mapping is *unknown*). ``yaml_core_tag``
    is either ``{op: tagged}`` for the operators the yaml lists, or the set of operators it tags
    core — then every operator of ``categories`` or ``lifecycle`` absent from the set counts as
    untagged. ``None`` skips the tag check.
    """
    g = _graph(rules, categories, lifecycle, yaml_core_tag)
    found = [v for fn in _RULE_FUNCTIONS for v in fn(g)]
    return sorted(found, key=lambda v: (v.severity != "error", v.rule, v.operator, v.subject))


def _graph(rules, categories, lifecycle, yaml_core_tag) -> _Graph:
    lifecycle = dict(lifecycle or {})
    if yaml_core_tag is None:
        tagged: dict[str, bool] = {}
    elif isinstance(yaml_core_tag, Mapping):
        tagged = {op: bool(v) for op, v in yaml_core_tag.items()}
    else:
        tagged_set = set(yaml_core_tag)
        tagged = {op: op in tagged_set for op in set(categories) | set(lifecycle) | tagged_set}
    return _Graph({op: tuple(into) for op, into in rules.items()}, dict(categories), lifecycle, tagged)


# --------------------------------------------------------------------------------------------
# proposed changes


@dataclass(frozen=True)
class RuleChange:
    """Set the rule of ``op`` to ``into``; ``into=None`` removes the rule."""

    op: str
    into: tuple[str, ...] | None


@dataclass(frozen=True)
class CategoryChange:
    """Move ``op`` to ``category`` (``core``, ``decomposable``, ``custom``)."""

    op: str
    category: str


Change = RuleChange | CategoryChange


def apply_changes(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
                  changes: Change | Sequence[Change]) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The rules and categories after ``changes`` (inputs are not modified)."""
    new_rules = {op: tuple(into) for op, into in rules.items()}
    new_categories = dict(categories)
    for change in _as_list(changes):
        if isinstance(change, RuleChange):
            if change.into is None:
                new_rules.pop(change.op, None)
            else:
                new_rules[change.op] = tuple(change.into)
        elif isinstance(change, CategoryChange):
            if change.category not in (CORE, DECOMPOSABLE, CUSTOM):
                raise BadInput(f"unknown category {change.category!r} (core, decomposable or custom)",
                               subject=change.op)
            new_categories[change.op] = change.category
        else:  # pragma: no cover - typing guards this
            raise TypeError(f"not a change: {change!r}")
    return new_rules, new_categories


def would_break(rules: Mapping[str, Sequence[str]], categories: Mapping[str, str],
                change: Change | Sequence[Change], *, lifecycle: Mapping[str, str] | None = None,
                include_warnings: bool = False) -> list[Violation]:
    """The violations ``change`` would introduce: present after it, absent before.

    By default only errors: the governance service refuses a proposal that introduces one (its
    message carries the path). ``include_warnings=True`` adds new drift findings too. The tag
    check is not run: a category change is expected to disagree with the yaml until the sync
    bot writes the tag.
    """
    before = {v.key for v in check(rules, categories, lifecycle)}
    new_rules, new_categories = apply_changes(rules, categories, change)
    after = check(new_rules, new_categories, lifecycle)
    return [v for v in after if v.key not in before and (include_warnings or v.severity == "error")]


def _as_list(changes: Change | Sequence[Change]) -> list[Change]:
    if isinstance(changes, (RuleChange, CategoryChange)):
        return [changes]
    return list(changes)


# --------------------------------------------------------------------------------------------
# rendering


def render_violations(violations: Sequence[Violation], fmt: str = "text") -> str:
    """``text`` (one line each and a summary), ``json`` (see
    :class:`opgov.render.decomps.ViolationsReport`) or ``github`` (workflow annotations)."""
    if fmt == "json":
        from opgov.render.decomps import ViolationsReport

        return ViolationsReport.of(violations).model_dump_json(indent=2)
    if fmt == "github":
        lines = []
        for v in violations:
            level = "error" if v.severity == "error" else "warning"
            lines.append(f"::{level} title=opgov {v.rule}::{_escape_github(v.message)}")
        return "\n".join(lines) + ("\n" if lines else "")
    if fmt != "text":
        raise BadInput(f"unknown format {fmt!r} (text, json or github)")
    if not violations:
        return "decomposition rules: no violations\n"
    lines = [f"{v.severity:<7} {v.rule:<26} {v.message}" for v in violations]
    errors = sum(v.severity == "error" for v in violations)
    lines.append(f"{errors} error(s), {len(violations) - errors} warning(s)")
    return "\n".join(lines) + "\n"


def _escape_github(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
