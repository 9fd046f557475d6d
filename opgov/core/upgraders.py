"""Operator upgraders, as PyTorch's operator versioning guide defines them. Pure.

When a change to an operator breaks backward compatibility, PyTorch bumps the operator version
(``kProducedFileFormatVersion`` in ``caffe2/versions.h``, with the date and the reason written
beside it) and adds an *upgrader*: a function that runs the old semantics with the new operator,
for programs serialized at the versions ``[start, end]`` before the bump. Its name follows
``<name>_<overload>_<start>_<end>`` (``div_Tensor_0_3``; ``linspace_0_7`` for a default overload),
and ``version_map.cpp`` maps the operator to ``{bumped_at_version, upgrader_name, old_schema}``.

The policy opgov enforces: a deployed model is promised 180 days, so an upgrader stays as it is
for :data:`REPLACE_AFTER_DAYS` days after its version bump; only then may another replace it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone

from opgov.core.errors import BadInput
from opgov.core.names import parse_op_name

REPLACE_AFTER_DAYS = 180


def default_name(operator: str, start: int, end: int) -> str:
    """``aten::div.Tensor``, 0, 3 → ``div_Tensor_0_3``; ``aten::linspace``, 0, 7 → ``linspace_0_7``."""
    op = parse_op_name(operator)
    return "_".join(part for part in (op.name, op.overload, str(start), str(end)) if part)


def parse_range(text: str) -> tuple[int, int]:
    """``0-3`` (or ``0..3``, ``[0, 3]``) → (0, 3); the start is at most the end, both 0 or more."""
    cleaned = text.strip().strip("[]").replace("..", "-").replace(",", "-").replace(" ", "")
    start, sep, end = cleaned.partition("-")
    if not sep or not start.isdigit() or not end.isdigit():
        raise BadInput(f"version range {text!r}: expected START-END, e.g. 0-3")
    if int(start) > int(end):
        raise BadInput(f"version range {text!r}: the start is after the end")
    return int(start), int(end)


def normalize_schema(text: str) -> str:
    """A schema as opgov prints it, without a namespace (``aten::div.Tensor(...)`` → ``div.Tensor(...)``);
    :class:`BadInput` when it does not parse."""
    from opgov.core.schema import FunctionSchema

    raw = text.strip()
    head, paren, rest = raw.partition("(")
    if "::" in head:
        head = head.split("::", 1)[1]
    return str(FunctionSchema.parse(head + paren + rest))


def schema_operator(text: str, namespace: str = "aten") -> str:
    """The operator a schema declares, in opgov's spelling."""
    head = text.strip().partition("(")[0]
    return str(parse_op_name(head if "::" in head else f"{namespace}::{head}"))


def version_map_entry(operator: str, bumped_at: int, name: str, old_schema: str) -> str:
    """The entry of ``version_map.cpp``'s operator version map for this upgrader."""
    op = parse_op_name(operator)
    return f'{{"{op}", {{{{{bumped_at}, "{name}", "{op.namespace}::{normalize_schema(old_schema)}"}}}}}}'


@dataclass(frozen=True)
class Upgrader:
    name: str
    operator: str
    start: int
    end: int
    old_schema: str
    bumped_on: date | None = None  # the date of the version bump ``end + 1``
    replaced_by: str | None = None

    @property
    def bumped_at(self) -> int:
        return self.end + 1

    def covers(self, operator: str, old_schema: str) -> bool:
        """This upgrader adapts ``operator`` as it was declared by ``old_schema``."""
        if self.replaced_by is not None or self.operator != operator:
            return False
        try:
            return normalize_schema(self.old_schema) == normalize_schema(old_schema)
        except BadInput:
            return False


def overlapping(start: int, end: int, others: Iterable[Upgrader]) -> Upgrader | None:
    """The first in-force upgrader of ``others`` whose range meets ``[start, end]``."""
    return next((u for u in others if u.replaced_by is None and u.start <= end and start <= u.end), None)


def replaceable_from(bumped_on: date, days: int = REPLACE_AFTER_DAYS) -> datetime:
    """When an upgrader of a bump on ``bumped_on`` may be replaced (midnight UTC)."""
    return datetime.combine(bumped_on, time(), tzinfo=timezone.utc) + timedelta(days=days)


def check_replace(upgrader: Upgrader, now: datetime, days: int = REPLACE_AFTER_DAYS) -> str | None:
    """Why ``upgrader`` may not be replaced now, or None when it may."""
    if upgrader.replaced_by is not None:
        return f"{upgrader.name} was replaced already, by {upgrader.replaced_by}"
    if upgrader.bumped_on is None:
        return None
    ready = replaceable_from(upgrader.bumped_on, days)
    if now < ready:
        left = math.ceil((ready - now).total_seconds() / 86400)
        return (f"{upgrader.name} came with version bump {upgrader.bumped_at} on {upgrader.bumped_on.isoformat()}; "
                f"deployed models are promised {days} days, so it can be replaced from "
                f"{ready.date().isoformat()} ({left} day{'' if left == 1 else 's'} left)")
    return None


def suggest(operator: str, old_schema: str, recorded: Iterable[Upgrader], current_version: int) -> tuple[str, int, str]:
    """For an uncovered BC break of ``operator`` (declared by ``old_schema`` before it): the upgrader
    to add (its name), the version to bump to, and the version-map entry. The range starts after
    the operator's last upgrader (or at 0) and ends at the current operator version."""
    ends = [u.end for u in recorded if u.operator == operator]
    start = max(ends) + 1 if ends else 0
    end = max(current_version, start)
    name = default_name(operator, start, end)
    return name, end + 1, version_map_entry(operator, end + 1, name, old_schema)
