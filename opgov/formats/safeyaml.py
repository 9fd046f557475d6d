"""Reading YAML that someone else wrote, safely: the one way every opgov reader parses YAML.

None of opgov's YAML formats (native_functions.yaml, tags.yaml, decisions files, decomposition
rules) has a use for YAML's sharing features, and each is a way to attack or to mislead:

* **aliases** (``*name``) let 500 bytes expand into gigabytes (the "billion laughs");
* **merge keys** (``<<: *base``) copy keys in silently;
* **duplicate keys** make the last value win silently (``func:`` twice in one entry);
* **non-scalar keys** (``? [a, b]``) cannot name anything;
* **text no database stores** (``"a\\0b"``: a NUL or a lone surrogate, opgov.core.text), which
  PostgreSQL would refuse with a traceback and SQLite store.

:func:`compose` parses with libyaml (PyYAML's ``CSafeLoader``, the pure loader where libyaml is
missing) into the node tree only, and refuses each of
these with one :class:`~opgov.core.errors.BadInput` naming the file and line. The tree is built
from libyaml's event stream in a loop (no recursion, so no depth can crash the interpreter, and
nesting is bounded), and an alias is refused the moment it is met, before anything could grow.
:func:`load` then builds plain Python values from the checked tree.
"""

from __future__ import annotations

import gc

from opgov.core.errors import BadInput
from opgov.core.text import UNSTORABLE, unstorable

unstorable_search = UNSTORABLE.search

_MERGE_TAG = "tag:yaml.org,2002:merge"


def _yaml():
    import yaml

    return yaml


def _loader(yaml):
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


MAX_DEPTH = 500
"""Deepest nesting accepted. The real files nest four levels; libyaml's composer recurses in C
and crashes the interpreter (a segmentation fault) somewhere past 10,000."""


def _compose(text: str, path: str):
    """The node tree of ``text``, built from libyaml's event stream without recursion, refusing
    what the module docstring lists as it goes."""
    yaml = _yaml()
    from yaml.events import (AliasEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent, ScalarEvent,
                             SequenceEndEvent, SequenceStartEvent, StreamEndEvent)
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    loader = _loader(yaml)(text)
    resolve, get_event = loader.resolve, loader.get_event
    stack: list = []  # the collections being built
    keys: list[dict[str, int] | None] = []  # for each mapping on the stack: its keys so far → line
    root = None
    documents = 0
    try:
        while True:
            event = get_event()
            kind = event.__class__
            if kind is ScalarEvent:
                if unstorable_search(event.value):
                    raise BadInput(f"a value {unstorable(event.value)}: {event.value[:40]!r}", file=path,
                                   line=event.start_mark.line + 1)
                tag = event.tag
                if tag is None or tag == "!":
                    tag = resolve(ScalarNode, event.value, event.implicit)
                node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
            elif kind is SequenceStartEvent or kind is MappingStartEvent:
                node_class = SequenceNode if kind is SequenceStartEvent else MappingNode
                tag = event.tag
                if tag is None or tag == "!":
                    tag = resolve(node_class, None, event.implicit)
                if len(stack) >= MAX_DEPTH:
                    raise BadInput(f"nested more than {MAX_DEPTH} levels deep", file=path,
                                   line=event.start_mark.line + 1)
                stack.append(node_class(tag, [], event.start_mark, None, flow_style=event.flow_style))
                keys.append({} if node_class is MappingNode else None)
                continue
            elif kind is SequenceEndEvent or kind is MappingEndEvent:
                node = stack.pop()
                keys.pop()
                node.end_mark = event.end_mark
            elif kind is AliasEvent:
                raise BadInput("YAML aliases (*name) are not accepted in this file: write the value out",
                               file=path, line=event.start_mark.line + 1)
            elif kind is DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise BadInput("more than one YAML document (a second '---')", file=path,
                                   line=event.start_mark.line + 1)
                continue
            elif kind is StreamEndEvent:
                break
            else:
                continue
            if not stack:
                root = node
                continue
            parent = stack[-1]
            if parent.__class__ is SequenceNode:
                parent.value.append(node)
                continue
            pairs = parent.value
            if pairs and len(pairs[-1]) == 1:  # the value of the pending key
                pairs[-1] = (pairs[-1][0], node)
                continue
            line = node.start_mark.line + 1  # a new key
            if node.tag == _MERGE_TAG:
                raise BadInput("YAML merge keys (<<) are not accepted in this file: write the keys out",
                               file=path, line=line)
            if node.__class__ is not ScalarNode:
                raise BadInput("a mapping key must be a plain value, not a list or a mapping", file=path, line=line)
            seen = keys[-1]
            if node.value in seen:
                raise BadInput(f"duplicate key {node.value!r} (first at line {seen[node.value]})", file=path,
                               line=line)
            seen[node.value] = line
            pairs.append((node,))
    finally:
        loader.dispose()
    return root


def compose(text: str, path: str):
    """The checked node tree of ``text`` (``None`` for an empty document); nodes carry their line.

    Raises :class:`BadInput` naming ``path`` and the line for malformed YAML, more than one
    document, an alias, a merge key, a non-scalar key, a duplicate key or nesting deeper than
    :data:`MAX_DEPTH`. Building ~30,000 small objects triggers the cyclic garbage collector
    hundreds of times and the tree has no cycles to collect: pausing it makes parsing a registry
    ~40% faster."""
    yaml = _yaml()
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _compose(text, path)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or err.context or "malformed YAML"
        raise BadInput(f"malformed YAML: {problem}", file=path, line=line) from None
    except yaml.YAMLError as err:
        problem = str(err).splitlines()[0] if str(err) else "malformed YAML"
        raise BadInput(f"malformed YAML: {problem}", file=path) from None
    finally:
        if collecting:
            gc.enable()


def construct(node, path: str):
    """Plain Python values (dict, list, str, int, float, bool, None, date, datetime) of a node tree
    :func:`compose` returned."""
    yaml = _yaml()
    if node is None:
        return None
    constructor = yaml.SafeLoader("")
    try:
        return constructor.construct_document(node)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        raise BadInput(f"malformed YAML: {err.problem or err.context or 'bad value'}", file=path,
                       line=line) from None
    except yaml.YAMLError as err:
        raise BadInput(f"malformed YAML: {err}", file=path) from None
    except (ValueError, OverflowError, RecursionError) as err:
        # e.g. a timestamp the calendar does not have (2023-02-30), a date past year 9999
        raise BadInput(f"a value YAML cannot represent: {err}", file=path) from None


def load(text: str, path: str):
    """``(data, root)``: the plain values of ``text`` and its checked node tree (both ``None`` for
    an empty document)."""
    root = compose(text, path)
    return construct(root, path), root
