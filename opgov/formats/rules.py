"""Reading decomposition rules files into :class:`opgov.core.decomps.RulesFile`.

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

Every problem is one :class:`BadInput` naming the file and the line.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from opgov.core.decomps import Rule, RulesFile
from opgov.core.errors import BadInput
from opgov.core.names import canonical
from opgov.formats.files import context, read_text, text_of
from opgov.formats.safeyaml import compose

__all__ = ["load_rules_file", "parse_rules", "parse_rules_text"]

_RULE_KEYS = frozenset({"op", "into", "note"})
_V1_KEYS = frozenset({"format", "source", "rules"})


def load_rules_file(path: str | Path) -> RulesFile:
    """Read a rules file (format 1) or the 2023 review's facts file.

    Raises :class:`BadInput` naming the file and line of anything malformed.
    """
    return parse_rules_text(read_text(path), filename=str(path))


def parse_rules(content: str | bytes, name: str) -> RulesFile:
    """:func:`load_rules_file` of a file already in memory (an upload): checked as a file is
    (:func:`opgov.formats.files.text_of`), its messages and ``path`` naming it ``name``."""
    return parse_rules_text(text_of(content, name), filename=name)


def parse_rules_text(text: str, *, filename: str = "<rules>") -> RulesFile:
    """Like :func:`load_rules_file`, for text already read and checked."""
    root = compose(text, filename)  # no aliases, merge keys or duplicate keys
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
    with context(filename, _line(node)):
        return canonical(text)


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
