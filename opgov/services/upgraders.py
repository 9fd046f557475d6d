"""Upgraders and operator version bumps (the operator versioning guide), and their 180-day rule.

Use cases (each returns a frozen dataclass of :mod:`opgov.results.upgraders`; an API endpoint is a
call and a return):

- :func:`add_upgrader` — ``opgov upgraders add``: record an upgrader and the version bump it came
  with (date and reason, as versions.h writes them); ``replaces`` another one only once its bump
  is :data:`~opgov.core.upgraders.REPLACE_AFTER_DAYS` days old
- :func:`list_upgraders`, :func:`show_upgrader` — ``opgov upgraders list|show``
- :func:`cover_findings` — what ``opgov check-bc`` does with a BC break of a non-core operator:
  covered when a recorded upgrader adapts its old schema, otherwise the upgrader to add

The rules are pure (:mod:`opgov.core.upgraders`); the bumps and the upgraders on record are read by
:mod:`opgov.reads.upgraders` (the lifecycle's timers and the model checks read them too); queries use
the Core tables only.
"""

from __future__ import annotations

from datetime import date

from sqlalchemy import func, insert, select, update

from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.core.upgraders import (Upgrader, check_replace, default_name, normalize_schema,
                                  overlapping, parse_range, replaceable_from, schema_operator, suggest,
                                  version_map_entry)
from opgov.db.tables import operator_version_bumps as bumps
from opgov.db.tables import operators, upgraders
from opgov.reads.common import Ctx
from opgov.reads.upgraders import bumps_of, recorded_upgraders
from opgov.services.common import log_event, require
from opgov.results.upgraders import UpgraderAdded, UpgraderList, UpgraderView, VersionBump


# --- reading ---------------------------------------------------------------------------------------


def _view(u: Upgrader, row, bump_dates: dict[int, VersionBump]) -> UpgraderView:
    bump = bump_dates.get(u.bumped_at)
    return UpgraderView(
        name=u.name, operator=u.operator, start=u.start, end=u.end, old_schema=u.old_schema, bump=bump,
        version_map_entry=version_map_entry(u.operator, u.bumped_at, u.name, u.old_schema),
        follows_naming=u.name == default_name(u.operator, u.start, u.end),
        replaceable_from=replaceable_from(bump.bumped_on) if bump else None,
        replaced_by=row.replaced_by, replaced_at=row.replaced_at, added_at=row.added_at, added_by=row.added_by)


def current_version(session) -> int:
    return session.scalar(select(func.max(bumps.c.version))) or 0


# --- use cases --------------------------------------------------------------------------------------


def add_upgrader(ctx: Ctx, operator: str, *, versions: str, old_schema: str, bumped_on: date | None = None,
                 reason: str | None = None, name: str | None = None, replaces: str | None = None) -> UpgraderAdded:
    """Record that ``operator`` at the versions ``versions`` (``START-END``) has an upgrader, declared
    by ``old_schema``, which came with the bump to END + 1 (``bumped_on``, ``reason``: needed unless
    that bump is recorded). ``replaces``: an upgrader of the same operator this one takes over from,
    refused (exit 1) until its bump is 180 days old."""
    session = ctx.session
    op = _known_operator(session, operator)
    start, end = parse_range(versions)
    try:
        normalized = normalize_schema(old_schema)
    except BadInput as exc:
        raise BadInput(f"--old-schema: {exc.message}") from None
    declared = schema_operator(old_schema, op.split("::", 1)[0])
    if declared != op:
        raise BadInput(f"--old-schema declares {declared}, not {op}")
    name = (name or default_name(op, start, end)).strip()
    if not name or not name.replace("_", "a").isalnum():
        raise BadInput(f"upgrader name {name!r}: letters, digits and underscores only")
    bump_dates = bumps_of(session)
    bump = _checked_bump(bump_dates, end + 1, bumped_on, reason)
    require(ctx, "upgraders", "record upgraders")
    recorded = recorded_upgraders(session, bump_dates)
    for u, _ in recorded:
        if u.name == name:
            if (u.operator, u.start, u.end, normalize_schema(u.old_schema)) == (op, start, end, normalized) \
                    and replaces is None:
                return UpgraderAdded(outcome="unchanged", upgrader=_view(u, _, bump_dates), replaced=None)
            raise PolicyRefusal(f"an upgrader named {name} is recorded already, for {u.operator} "
                                f"versions {u.start}-{u.end}", subject=name)
    old = _replaced(ctx, recorded, replaces, op) if replaces is not None else None
    clash = overlapping(start, end, [u for u, _ in recorded if u.operator == op and u is not old])
    if clash is not None:
        raise PolicyRefusal(f"versions {start}-{end} of {op} meet those of upgrader {clash.name} "
                            f"({clash.start}-{clash.end}); --replaces {clash.name} to take over from it",
                            subject=op)
    now = ctx.now()
    if bump is None:
        session.execute(insert(bumps).values(version=end + 1, bumped_on=bumped_on, reason=reason.strip(),
                                             recorded_at=now, recorded_by=ctx.actor))
        log_event(ctx, "version-bump", str(end + 1), after={"bumped_on": bumped_on.isoformat(), "reason": reason})
    if old is not None:
        session.execute(update(upgraders).where(upgraders.c.name == old.name)
                        .values(replaced_by=name, replaced_at=now))
        log_event(ctx, "upgrader-replaced", old.name, after={"replaced_by": name})
    session.execute(insert(upgraders).values(name=name, operator=op, start_version=start, end_version=end,
                                             old_schema=old_schema.strip(), added_at=now, added_by=ctx.actor))
    log_event(ctx, "upgrader-added", op, after={"name": name, "versions": [start, end], "old_schema": old_schema})
    return UpgraderAdded(outcome="added", upgrader=show_upgrader(ctx, name), replaced=old.name if old else None)


def _known_operator(session, operator: str) -> str:
    """The canonical name of an operator the database holds; an unknown one is refused with the
    names close to it."""
    from opgov.core.names import canonical

    op = canonical(operator)
    known = session.scalar(select(operators.c.qualname).where(operators.c.qualname == op))
    if known is None:
        import difflib

        names = list(session.scalars(select(operators.c.qualname)))
        close = difflib.get_close_matches(op, names, n=3, cutoff=0.75)
        raise NotFound(f"unknown operator {operator}" + (f"; did you mean {', '.join(close)}?" if close else ""))
    return op


def _checked_bump(bump_dates: dict, version: int, bumped_on: date | None, reason: str | None):
    """The version bump ``version`` on record, else None once ``bumped_on`` and ``reason`` say when
    and why it came (versions go up with time); given for a recorded bump, they must be its own."""
    bump = bump_dates.get(version)
    if bump is None:
        if bumped_on is None or not (reason or "").strip():
            raise BadInput(f"version bump {version} is not recorded: give --bumped-on DATE and --reason "
                           "(as caffe2/versions.h writes them)")
        earlier = [b for v, b in bump_dates.items() if v < version and b.bumped_on > bumped_on]
        later = [b for v, b in bump_dates.items() if v > version and b.bumped_on < bumped_on]
        if earlier or later:
            other = (earlier or later)[0]
            raise BadInput(f"version bump {version} on {bumped_on.isoformat()} would come "
                           f"{'before' if earlier else 'after'} bump {other.version} on {other.bumped_on.isoformat()}: "
                           "versions go up with time")
    elif (bumped_on is not None and bumped_on != bump.bumped_on) or (reason and reason.strip() != bump.reason):
        raise BadInput(f"version bump {version} is recorded already, on {bump.bumped_on.isoformat()} "
                       f"({bump.reason}); leave out --bumped-on and --reason, or give the same")
    return bump


def _replaced(ctx: Ctx, recorded: list, replaces: str, op: str):
    """The upgrader ``replaces`` names: one of ``op``, whose bump is old enough to be replaced."""
    old = next((u for u, _ in recorded if u.name == replaces), None)
    if old is None:
        raise BadInput(f"unknown upgrader {replaces} (--replaces)")
    if old.operator != op:
        raise BadInput(f"--replaces {replaces}: it is an upgrader of {old.operator}, not {op}")
    why = check_replace(old, ctx.now())
    if why is not None:
        raise PolicyRefusal(f"{replaces} may not be replaced yet: {why}", subject=replaces)
    return old


def list_upgraders(ctx: Ctx) -> UpgraderList:
    bump_dates = bumps_of(ctx.session)
    views = [_view(u, row, bump_dates) for u, row in recorded_upgraders(ctx.session, bump_dates)]
    return UpgraderList(current_version=current_version(ctx.session), upgraders=views,
                        bumps=list(bump_dates.values()))


def show_upgrader(ctx: Ctx, name: str) -> UpgraderView:
    bump_dates = bumps_of(ctx.session)
    recorded = recorded_upgraders(ctx.session, bump_dates)
    for u, row in recorded:
        if u.name == name:
            return _view(u, row, bump_dates)
    import difflib

    close = difflib.get_close_matches(name, [u.name for u, _ in recorded], n=3, cutoff=0.6)
    raise NotFound(f"unknown upgrader {name}" + (f"; did you mean {', '.join(close)}?" if close else ""))


def cover_findings(session, report, core: set[str]):
    """``report`` (a check-bc :class:`~opgov.results.compat.CheckReport`) with each BC break of a
    non-core operator judged against the recorded upgraders: one that adapts the operator's old
    schema covers it (``waived``, naming the upgrader); an error gets the upgrader to add, with
    its name and the version-map entry text."""
    from dataclasses import replace

    from opgov.core.vocab import Severity
    from opgov.results.compat import CheckReport

    bump_dates = bumps_of(session)
    recorded = [u for u, _ in recorded_upgraders(session, bump_dates)]
    version = current_version(session)
    changed = []
    for f in report.findings:
        if (f.kind != "bc" or f.rule == "operator-removed" or f.operator in core or f.old_schema is None
                or f.severity not in ("error", "waived")):
            changed.append(f)
            continue
        cover = next((u for u in recorded if u.covers(f.operator, f.old_schema)), None)
        if cover is not None:
            bump = bump_dates.get(cover.bumped_at)
            when = f" on {bump.bumped_on.isoformat()}" if bump else ""
            plain = f.message.replace(f" {f.operator} is not core: if the break is intended, record an exception "
                                      "(opgov exceptions add).", "")
            changed.append(replace(
                f, severity=Severity.waived, upgrader=cover.name,
                message=f"{plain} Covered by upgrader {cover.name} (versions {cover.start}-{cover.end}, "
                        f"version bump {cover.bumped_at}{when})."))
        elif f.severity == "error":
            name, bumped_at, entry = suggest(f.operator, f.old_schema, recorded, version)
            changed.append(replace(
                f, suggested_upgrader=name, version_map_entry=entry,
                message=f"{f.message} Or keep old programs running: bump the operator version to {bumped_at}, "
                        f"add upgrader {name} and the version-map entry {entry} (opgov upgraders add)."))
        else:
            changed.append(f)
    if changed == list(report.findings):
        return report
    return replace(report, findings=changed, summary=CheckReport.of(changed).summary)
