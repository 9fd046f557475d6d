"""A model's calls checked argument by argument against the schemas of the torch release a runtime
follows, as ``torch.export.load`` of that release would read them. Pure.

A ``.pt2`` archive names the torch release that wrote it (``torch_version``) and, for every call,
each argument it passes by name (an argument left to its keyword default is not written).
``torch.export.load`` matches those names against the loading release's schema: a required
argument the call does not name makes it refuse the archive (a renamed argument), an argument the
schema does not know is dropped (the call then runs as if it were left to its default), and an
argument the call leaves out takes the loading release's default. So, for a model of release M
on a runtime following release R (:func:`check_calls`):

``operator-missing``
    R has no schema of the operator: nothing can load the call (error).
``argument-unknown``
    the call passes an argument R's schema does not know, with a value other than M's default:
    R drops it, so the call computes something else (a forward-compatibility break, error).
``argument-refused``
    R's schema requires an argument the call does not name (renamed since, or new without a
    default): ``torch.export.load`` refuses the archive (error).
``default-changed``
    the call leaves an argument to its default and M's default differs from R's: the results
    change silently (warning).
``schema-bc-break``
    R is newer than M and the operator's schema broke backward compatibility between them: the
    model runs only through an upgrader (a warning naming the upgrader that covers M's schema; an
    error when none does).

One problem per operator, rule and argument, naming the first call and how many calls share it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from opgov.core.errors import BadInput

# the values an argument may have, as opgov.core.compat.torchscript.default_value tags them, plus
# ("tensor",) and ("symbolic", name) for what is no constant
NOT_CONSTANT = ("tensor", "symbolic")


@dataclass(frozen=True)
class CallArg:
    """One argument a call passes: its name, whether by keyword, its value (a tagged tuple) and how
    to show it."""

    name: str
    keyword: bool
    value: tuple
    text: str


@dataclass(frozen=True)
class Call:
    """One call of a program: the node's name, the operator (canonical), the arguments it names and
    the dtypes of the tensors it takes and gives."""

    node: str
    op: str
    args: tuple[CallArg, ...]
    dtypes: tuple[str, ...] = ()
    tensors: tuple = ()  # opgov.core.kernels.TensorUse: each tensor passed and returned, its dtype and rank


@dataclass(frozen=True)
class Problem:
    rule: str
    severity: str  # error | warning
    call: str
    op: str
    argument: str | None
    model_release: str
    runtime_release: str
    message: str
    upgrader: str | None = None
    calls: int = 1  # how many calls share it


RULES = {
    "operator-missing": "error",
    "argument-unknown": "error",
    "argument-refused": "error",
    "default-changed": "warning",
    "schema-bc-break": "error",
}


# --- releases ---------------------------------------------------------------------------------------


def release_of(version: str) -> str:
    """``2.13.0+cpu`` → ``2.13.0``; ``2.12.0a0+git1234`` → ``2.12.0``."""
    match = re.match(r"^v?(\d+(?:\.\d+)*)", version.strip())
    if match is None:
        raise BadInput(f"{version!r} is not a torch release")
    return match.group(1)


def _key(release: str) -> tuple[int, ...]:
    return tuple(int(p) for p in release.split("."))


def newer(a: str, b: str) -> bool:
    """Release ``a`` is newer than ``b`` (``2.13`` and ``2.13.0`` are the same release)."""
    ka, kb = _key(release_of(a)), _key(release_of(b))
    width = max(len(ka), len(kb))
    return ka + (0,) * (width - len(ka)) > kb + (0,) * (width - len(kb))


def snapshot_for(release: str, labels: Iterable[str]) -> str | None:
    """The snapshot label that stands for ``release``: the label itself, else the newest label of the
    same major.minor (``2.12`` → ``2.12.1``); None when no snapshot holds that release."""
    labels = list(labels)
    if release in labels:
        return release
    try:
        wanted = _key(release_of(release))[:2]
    except BadInput:
        return None
    same = []
    for label in labels:
        try:
            key = _key(release_of(label))
        except BadInput:
            continue
        if key[:2] == wanted:
            same.append((key, label))
    return max(same)[1] if same else None


# --- the check ----------------------------------------------------------------------------------------


def _equal(a: tuple, b: tuple) -> bool:
    """Values equal as torch compares them, with 1 == 1.0 (a Scalar written either way)."""
    if a == b:
        return True
    if a[:1] in (("int",), ("float",)) and b[:1] in (("int",), ("float",)):
        return a[1] == b[1]
    if a[:1] == ("list",) and b[:1] == ("list",) and len(a[1]) == len(b[1]):
        return all(_equal(x, y) for x, y in zip(a[1], b[1], strict=True))
    return False


def _is_default(arg, value: tuple) -> bool:
    """``value`` is the default of the schema argument ``arg``."""
    from opgov.core.compat.torchscript import default_value

    if arg.default is None or value[:1] in (("tensor",), ("symbolic",)):
        return False
    return _equal(default_value(arg.type, arg.default), value)


def _parse(text: str | None):
    from opgov.core.schema import FunctionSchema

    if text is None:
        return None
    try:
        return FunctionSchema.parse(text)
    except BadInput:
        return None


def check_calls(calls: Sequence[Call], *, model_release: str, runtime_release: str,
                model_schemas: Mapping[str, str] | None, runtime_schemas: Mapping[str, str],
                upgraders: Sequence = ()) -> tuple[Problem, ...]:
    """Every problem of ``calls`` (a model of ``model_release``) on a runtime following
    ``runtime_release``: ``runtime_schemas`` (operator → schema text) are that release's,
    ``model_schemas`` the model's release's (None when opgov holds no snapshot of it: defaults
    and BC are then not compared). ``upgraders``: :class:`opgov.core.upgraders.Upgrader` on record."""
    problems = _Problems(model_release, runtime_release)
    upgrade = model_schemas is not None and newer(runtime_release, model_release)
    for call in calls:
        r_text = runtime_schemas.get(call.op)
        if r_text is None:
            problems.add("operator-missing", call, None, f"{call.node} calls {call.op}, which torch {runtime_release} "
                                                         "does not have: it cannot load the call")
            continue
        r_schema = _parse(r_text)
        m_text = model_schemas.get(call.op) if model_schemas is not None else None
        m_schema = _parse(m_text)
        if r_schema is None:
            continue
        if upgrade and m_schema is not None and m_text != r_text and _bc_break(problems, call, m_schema, m_text,
                                                                                r_schema, upgraders):
            continue  # the upgrader (or its absence) is the whole story of this call
        _argument_problems(problems, call, r_schema, m_schema)
    return problems.ordered()


class _Problems:
    """The problems found so far, one per (rule, operator, argument), counting its calls."""

    def __init__(self, model_release: str, runtime_release: str) -> None:
        self.model_release = model_release
        self.runtime_release = runtime_release
        self.found: dict[tuple, Problem] = {}

    def add(self, rule: str, call: Call, argument: str | None, message: str, upgrader: str | None = None) -> None:
        key = (rule, call.op, argument)
        if key in self.found:
            p = self.found[key]
            self.found[key] = Problem(p.rule, p.severity, p.call, p.op, p.argument, p.model_release,
                                      p.runtime_release, p.message, p.upgrader, p.calls + 1)
            return
        severity = "warning" if upgrader is not None else RULES[rule]
        self.found[key] = Problem(rule, severity, call.node, call.op, argument, self.model_release,
                                  self.runtime_release, message, upgrader)

    def ordered(self) -> tuple[Problem, ...]:
        """Errors first, then by operator, rule and argument."""
        order = {"error": 0, "warning": 1}
        return tuple(sorted(self.found.values(), key=lambda p: (order[p.severity], p.op, p.rule, p.argument or "")))


def _bc_break(problems: _Problems, call: Call, m_schema, m_text: str, r_schema, upgraders: Sequence) -> bool:
    """Whether the operator broke BC between the model's release and the runtime's (then the call
    runs only through an upgrader on record, or not at all: a problem either way)."""
    from opgov.core.compat import bc_breaks

    breaks = bc_breaks(m_schema, r_schema)
    if not breaks:
        return False
    model_release, runtime_release = problems.model_release, problems.runtime_release
    covering = next((u for u in upgraders if u.covers(call.op, m_text)), None)
    why = breaks[0].message.rstrip(".")
    if covering is not None:
        problems.add("schema-bc-break", call, None,
                     f"{call.op} broke backward compatibility between torch {model_release} and {runtime_release} "
                     f"({why}): {call.node} runs only through the upgrader {covering.name}", covering.name)
    else:
        problems.add("schema-bc-break", call, None,
                     f"{call.op} broke backward compatibility between torch {model_release} and {runtime_release} "
                     f"({why}) and no upgrader on record covers its {model_release} schema: {call.node} does not "
                     "run")
    return True


def _argument_problems(problems: _Problems, call: Call, r_schema, m_schema) -> None:
    """The call's arguments against the runtime's schema: one it does not know, one it requires
    that the call does not name, a default the call relies on that changed."""
    model_release, runtime_release = problems.model_release, problems.runtime_release
    r_args = {a.name: a for a in r_schema.arguments.flat}
    m_args = {a.name: a for a in m_schema.arguments.flat} if m_schema is not None else {}
    named = {a.name: a for a in call.args}
    # a renamed argument is one finding: the call names the new name, R requires the old one;
    # torch.export.load refuses the archive, so "dropped, runs as if defaulted" is not said of it
    refused_here = any(r_arg.default is None and not r_arg.kwarg_only and name not in named
                       for name, r_arg in r_args.items())
    for arg in call.args:
        if arg.name in r_args or refused_here:
            continue
        m_arg = m_args.get(arg.name)
        if m_arg is not None and _is_default(m_arg, arg.value):
            continue  # passes the default: dropping it changes nothing
        problems.add("argument-unknown", call, arg.name,
                     f"{call.node} passes {arg.name}={arg.text} to {call.op}, an argument torch {runtime_release} "
                     f"does not know (the model's torch {model_release} does): torch.export.load of "
                     f"{runtime_release} drops it, so the call runs as if it were left to its default")
    for name, r_arg in r_args.items():
        if name in named:
            continue
        if r_arg.default is None and not r_arg.kwarg_only:
            unknown_here = [a.name for a in call.args if a.name not in r_args]
            renamed = f"; the call names {', '.join(unknown_here)} instead" if unknown_here else ""
            problems.add("argument-refused", call, name,
                         f"{call.node} does not name {name}, which torch {runtime_release}'s {call.op} requires "
                         f"({'renamed or added since ' + model_release if m_schema is not None else 'unknown to the model'}"
                         f"{renamed}): torch.export.load of {runtime_release} refuses the archive")
            continue
        m_arg = m_args.get(name)
        if m_arg is None or m_arg.default is None or r_arg.default is None:
            continue
        from opgov.core.compat.torchscript import value_differs

        if value_differs(m_arg, r_arg):
            problems.add("default-changed", call, name,
                         f"{call.node} leaves {name} of {call.op} to its default, which is {m_arg.default} in torch "
                         f"{model_release} and {r_arg.default} in {runtime_release}: the results change silently")


def dtypes_by_operator(calls: Iterable[Call]) -> dict[str, tuple[str, ...]]:
    """Each operator → the dtypes of the tensors its calls take and give, sorted."""
    out: dict[str, set[str]] = {}
    for call in calls:
        out.setdefault(call.op, set()).update(call.dtypes)
    return {op: tuple(sorted(types)) for op, types in out.items()}
