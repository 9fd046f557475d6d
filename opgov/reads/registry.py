"""What the registry holds now, as several use cases and the pages read it: the recorded
decomposition rules, each operator's category and lifecycle, the out= variants, the home page's
counts, the lifecycle steps coming due."""

from __future__ import annotations

from sqlalchemy import func, select

from opgov.db.tables import decomp_rules, operators, proposals
from opgov.reads.common import Ctx


def current_rules(session) -> dict[str, tuple[str, ...]]:
    """``{operator: targets}`` of every recorded rule."""
    return {r.operator: tuple(r.targets) for r in session.execute(select(decomp_rules.c.operator,
                                                                         decomp_rules.c.targets))}


def registry_state(session) -> tuple[dict[str, str], dict[str, str], set[str]]:
    """(categories, lifecycles, operators tagged core in the latest snapshot) of the operators
    present now or deleted."""
    c = operators.c
    categories: dict[str, str] = {}
    lifecycles: dict[str, str] = {}
    tagged: set[str] = set()
    for name, category, lifecycle, tags, present in session.execute(
            select(c.qualname, c.category, c.lifecycle, c.tags, c.present)):
        if present or lifecycle == "deleted":
            categories[name], lifecycles[name] = category, lifecycle
            if present and tags and "core" in tags:
                tagged.add(name)
    return categories, lifecycles, tagged


def implicit_operators(session) -> set[str]:
    """The present operators whose kernel is CompositeImplicitAutograd (a decomposition)."""
    c = operators.c
    return set(session.scalars(select(c.qualname).where(c.present, c.composite_implicit)))


def out_variants(ctx: Ctx, names) -> dict[str, str]:
    """Functional operator → its out= variant, for ``names`` (ExecuTorch's kernels are the out=
    variants). Variants are grouped as torchgen groups them (:func:`opgov.core.schema.family_key`);
    an out= operator that only ``autogen:`` declares belongs to the entry that declares it."""
    from opgov.core.schema import FunctionSchema, family_key

    wanted = set(names)
    c = operators.c
    rows = ctx.session.execute(select(c.qualname, c.name, c.schema, c.kind, c.autogen_of).where(c.present)).all()
    bases = {name.split("::", 1)[1].split(".")[0].rstrip("_") for name in wanted}
    by_family: dict[tuple, str] = {}
    found: dict[str, str] = {}
    for qualname, name, schema, kind, autogen_of in rows:
        if kind != "out":
            continue
        if schema is None:
            if autogen_of in wanted:
                found.setdefault(autogen_of, qualname)
        elif name.rstrip("_") in bases:
            by_family.setdefault(family_key(FunctionSchema.parse(schema)), qualname)
    for qualname, name, schema, kind, _ in rows:
        if qualname in wanted and qualname not in found and schema is not None and kind == "functional":
            out = by_family.get(family_key(FunctionSchema.parse(schema)))
            if out is not None:
                found[qualname] = out
    return found


def home_counts(ctx: Ctx) -> dict[str, int]:
    """The home page's three numbers: present operators, core ones, open proposals."""
    c = operators.c
    present = ctx.session.execute(select(func.count()).where(c.present)).scalar_one()
    core = ctx.session.execute(select(func.count()).where(c.present, c.category == "core")).scalar_one()
    open_ = ctx.session.execute(select(func.count()).select_from(proposals)
                                .where(proposals.c.status == "open")).scalar_one()
    return {"operators": present, "core": core, "open_proposals": open_}
