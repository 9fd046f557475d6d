"""Reading YAML that someone else wrote, safely: the one way every opgov reader parses YAML.

None of opgov's YAML formats (native_functions.yaml, tags.yaml, decisions files, decomposition
rules) has a use for YAML's sharing features, and each is a way to attack or to mislead:

* **aliases** (``*name``) let 500 bytes expand into gigabytes (the "billion laughs");
* **merge keys** (``<<: *base``) copy keys in silently;
* **duplicate keys** make the last value win silently (``func:`` twice in one entry);
* **non-scalar keys** (``? [a, b]``) cannot name anything.

:func:`compose` parses with libyaml (PyYAML's ``CSafeLoader``, the pure loader where libyaml is
missing) into the node tree only, then walks the tree once, without recursion, and refuses each of
these with one :class:`~opgov.core.errors.BadInput` naming the file and line. Parsing into nodes
never expands an alias (an alias is the same node object seen twice), so the check runs before
anything could grow. :func:`load` then builds plain Python values from the checked tree.
"""

from __future__ import annotations

import gc

from opgov.core.errors import BadInput

_MERGE_TAG = "tag:yaml.org,2002:merge"


def _yaml():
    import yaml

    return yaml


def _loader(yaml):
    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _line(node) -> int:
    return node.start_mark.line + 1


def _alias_line(text: str) -> int | None:
    """The line of the first alias in ``text`` (only called once the tree showed there is one)."""
    yaml = _yaml()
    try:
        for event in yaml.parse(text, Loader=_loader(yaml)):
            if isinstance(event, yaml.AliasEvent):
                return event.start_mark.line + 1
    except yaml.YAMLError:
        pass
    return None


def _check(root, text: str, path: str) -> None:
    yaml = _yaml()
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            raise BadInput("YAML aliases (*name) are not accepted in this file: write the value out",
                           file=path, line=_alias_line(text) or _line(node))
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            keys: dict[str, int] = {}
            for key, value in node.value:
                if key.tag == _MERGE_TAG:
                    raise BadInput("YAML merge keys (<<) are not accepted in this file: write the keys out",
                                   file=path, line=_line(key))
                if not isinstance(key, yaml.ScalarNode):
                    raise BadInput("a mapping key must be a plain value, not a list or a mapping",
                                   file=path, line=_line(key))
                if key.value in keys:
                    raise BadInput(f"duplicate key {key.value!r} (first at line {keys[key.value]})",
                                   file=path, line=_line(key))
                keys[key.value] = _line(key)
                if id(key) in seen:
                    raise BadInput("YAML aliases (*name) are not accepted in this file: write the value out",
                                   file=path, line=_alias_line(text) or _line(key))
                seen.add(id(key))
                stack.append(value)


def compose(text: str, path: str):
    """The checked node tree of ``text`` (``None`` for an empty document); nodes carry their line.

    Raises :class:`BadInput` naming ``path`` and the line for malformed YAML, more than one
    document, an alias, a merge key, a non-scalar key or a duplicate key. Building ~30,000 small
    objects triggers the cyclic garbage collector hundreds of times and the tree has no cycles to
    collect: pausing it makes parsing a registry ~40% faster."""
    yaml = _yaml()
    collecting = gc.isenabled()
    gc.disable()
    try:
        root = yaml.compose(text, Loader=_loader(yaml))
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = err.problem or err.context or "malformed YAML"
        raise BadInput(f"malformed YAML: {problem}", file=path, line=line) from None
    except yaml.YAMLError as err:
        problem = str(err).splitlines()[0] if str(err) else "malformed YAML"
        raise BadInput(f"malformed YAML: {problem}", file=path) from None
    except RecursionError:
        raise BadInput("malformed YAML: nested too deeply", file=path) from None
    finally:
        if collecting:
            gc.enable()
    if root is not None:
        _check(root, text, path)
    return root


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
