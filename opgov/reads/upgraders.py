"""The upgraders and the operator version bumps on record, as ``opgov upgraders``, the lifecycle's
timers (:func:`opgov.services.lifecycle.upgrader_timers`) and the model checks read them."""

from __future__ import annotations

from sqlalchemy import select

from opgov.core.upgraders import Upgrader
from opgov.db.tables import operator_version_bumps as bumps
from opgov.db.tables import upgraders
from opgov.results.upgraders import VersionBump


def bumps_of(session) -> dict[int, VersionBump]:
    """Every recorded operator version bump, by version (its date and reason)."""
    b = bumps.c
    return {r.version: VersionBump(version=r.version, bumped_on=r.bumped_on, reason=r.reason)
            for r in session.execute(select(b.version, b.bumped_on, b.reason).order_by(b.version))}


def recorded_upgraders(session, bump_dates: dict[int, VersionBump]) -> list[tuple[Upgrader, object]]:
    """(each recorded upgrader, its row) by operator and start version; ``bump_dates``: :func:`bumps_of`,
    which dates the bump each came with."""
    rows = session.execute(select(upgraders).order_by(upgraders.c.operator, upgraders.c.start_version)).all()
    out = []
    for r in rows:
        bump = bump_dates.get(r.end_version + 1)
        out.append((Upgrader(name=r.name, operator=r.operator, start=r.start_version, end=r.end_version,
                             old_schema=r.old_schema, bumped_on=bump.bumped_on if bump else None,
                             replaced_by=r.replaced_by), r))
    return out
