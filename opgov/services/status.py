"""``opgov status``: the database at a glance (its revision, snapshots, operators by category, open
proposals, members), read in the caller's transaction."""

from __future__ import annotations

from sqlalchemy import func, select, text

from opgov.core.vocab import Category
from opgov.db import tables
from opgov.results.status import StatusReport
from opgov.reads.common import Ctx, latest_snapshot_id


def status(ctx: Ctx) -> StatusReport:
    session = ctx.session
    count = func.count()
    latest = latest_snapshot_id(session)
    label = None if latest is None else session.scalar(
        select(tables.snapshots.c.label).where(tables.snapshots.c.id == latest))
    o = tables.operators.c
    by_category = dict(session.execute(select(o.category, count).where(o.present.is_(True)).group_by(o.category)).all())
    return StatusReport(
        revision=session.scalar(text("SELECT version_num FROM alembic_version")),
        snapshots=session.scalar(select(count).select_from(tables.snapshots)),
        latest_snapshot=label,
        operators={category.value: by_category.get(category.value, 0) for category in Category},
        open_proposals=session.scalar(select(count).select_from(tables.proposals)
                                      .where(tables.proposals.c.status == "open")),
        members=session.scalar(select(count).select_from(tables.members)),
    )
