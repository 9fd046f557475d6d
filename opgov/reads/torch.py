"""torch's facts per release: those ``decomps import-torch`` recorded (the settings rows), else
those opgov ships (``data/torch/torch-<release>.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select

from opgov.db.tables import settings


#: the settings key holding what ``decomps import-torch`` recorded of one torch release
TORCH_FACTS_KEY = "torch_facts"


def torch_facts(session, version: str | None = None):
    """The :class:`opgov.core.opset.TorchFacts` recorded by the last ``decomps import-torch``, or
    ``None`` when torch's table was never imported. ``version``: those of that torch release
    (each release imported is kept under its own key), ``None`` when opgov holds none."""
    key = TORCH_FACTS_KEY if version is None else f"{TORCH_FACTS_KEY}@{version}"
    value = session.scalar(select(settings.c.value).where(settings.c.key == key))
    if value is None and version is not None:  # recorded before releases were kept apart
        latest = torch_facts(session)
        return latest if latest is not None and latest.version == version else None
    if value is None:
        return None
    return facts_of(json.loads(value), source="import-torch")


def opset_facts(session):
    """The torch facts an opset follows: those ``decomps import-torch`` recorded (the user's own
    torch, the whole table), else opgov's shipped facts for the latest snapshot's release, or the
    nearest release it ships facts for (``nearest_to`` says so); None when the snapshot's label
    names no release (``v2``) and nothing was recorded."""
    from opgov.core.opset import nearest_release
    from opgov.db.tables import snapshots
    from opgov.resources import shipped_torch_facts

    facts = torch_facts(session)
    if facts is not None and facts.complete:
        return facts
    label = session.scalar(select(snapshots.c.label).order_by(snapshots.c.position.desc()).limit(1))
    shipped = shipped_torch_facts()
    release = nearest_release(label, shipped)
    if release is None:
        return None
    return shipped_facts(str(shipped[release]), None if release == label.removeprefix("v") else label)


def shipped_facts(path: str, nearest_to: str | None):
    """The facts of a shipped file (read once per process), saying which release they stand in for
    (``nearest_to``), if another."""
    from dataclasses import replace

    return replace(_read_shipped(path), nearest_to=nearest_to)


_SHIPPED_CACHE: dict[str, Any] = {}


def _read_shipped(path: str):
    """A shipped facts file, read once per process (a server builds many opsets)."""
    if path not in _SHIPPED_CACHE:
        _SHIPPED_CACHE[path] = facts_of(json.loads(Path(path).read_text(encoding="utf-8")), source="shipped")
    return _SHIPPED_CACHE[path]


def facts_of(data: dict, *, source: str):
    """:class:`opgov.core.opset.TorchFacts` from their JSON form (the settings row, a shipped file)."""
    from opgov.core.opset import TorchFacts

    return TorchFacts(version=data["version"], default=frozenset(data["default"]),
                      targets={op: tuple(t) if t is not None else None for op, t in data["targets"].items()},
                      reasons=data.get("reasons", {}), complete=data.get("complete", False),
                      forced=data.get("forced", {}), preservable=frozenset(data.get("preservable", ())),
                      exported={op: tuple(t) for op, t in data.get("exported", {}).items()},
                      inputs=data.get("inputs", {}),
                      source=source)


def torch_releases(session) -> list[str]:
    """Every torch release whose facts opgov holds (``decomps import-torch`` of each), by version."""
    from packaging.version import InvalidVersion, Version

    keys = session.scalars(select(settings.c.key).where(settings.c.key.like(f"{TORCH_FACTS_KEY}@%"))).all()
    held = {key.partition("@")[2] for key in keys}
    latest = torch_facts(session)
    if latest is not None:
        held.add(latest.version)

    def order(version: str):
        try:
            return (0, Version(version), version)
        except InvalidVersion:
            return (1, Version("0"), version)

    return sorted(held, key=order)
