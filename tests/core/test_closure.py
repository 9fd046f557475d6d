"""The closure proof's logic (opgov.core.closure) on small made-up tables: transitive ends, what
stops an operator from closing, and the change between two closures."""

from __future__ import annotations

from opgov.core.closure import closure, compare

CORE = {"aten::mul.Tensor", "aten::add.Tensor", "aten::exp"}


def _closure(targets, default=None, core=CORE, reasons=None):
    return closure(version="9.9", default=default if default is not None else targets.keys(), targets=targets,
                   reasons=reasons or {}, core=core, snapshot="s")


def test_an_operator_closes_through_the_table_transitively():
    c = _closure({"aten::a": ("aten::b", "aten::mul.Tensor"), "aten::b": ("aten::exp", "aten::sym_size.int"),
                  "aten::nothing": ()})
    a = c.item("aten::a")
    assert a.closed and a.why is None and a.ends_in == ("aten::exp", "aten::mul.Tensor", "aten::sym_size.int")
    assert c.item("aten::nothing").closed and c.item("aten::nothing").ends_in == ()
    assert c.closed == 3 and c.open == ()


def test_what_stops_an_operator_is_named_with_its_path():
    c = _closure({"aten::a": ("aten::b",), "aten::b": ("aten::c", "aten::add.Tensor"), "aten::x": None,
                  "aten::y": ("aten::x",), "aten::p": ("aten::q",), "aten::q": ("aten::p",),
                  "aten::k": ("prims::var",)},
                 reasons={"aten::x": "no example input worked"})
    a = c.item("aten::a")
    assert not a.closed and a.not_core == ("aten::c",) and a.path == ("aten::a", "aten::b", "aten::c")
    assert a.why == "ends in 1 non-core operator: aten::c (via aten::a → aten::b → aten::c)"
    assert c.item("aten::x").why == "its decomposition could not be traced (no example input worked)"
    assert c.item("aten::y").why.startswith("reaches aten::x, whose decomposition could not be traced")
    assert c.item("aten::p").cycle and "cycle" in c.item("aten::p").why
    assert c.item("aten::k").not_core == ("prims::var",)  # outside ATen: not core
    # a table's operator outside the table decomposes no further: an operator torch keeps ends there
    kept = _closure({"aten::a": ("aten::b",), "aten::b": ("aten::exp",)}, default=["aten::a"])
    assert kept.item("aten::a").ends_in == ("aten::b",) and not kept.item("aten::a").closed


def test_a_change_between_two_closures_is_found():
    targets = {"aten::a": ("aten::b",), "aten::c": ("aten::exp",), "aten::d": ("aten::exp",)}
    before = _closure(targets, core=CORE | {"aten::b"})
    after = _closure({**targets, "aten::d": ("aten::add.Tensor",), "aten::e": ("aten::exp",)}, core=CORE)
    change = compare(before, after)
    assert change.stopped == ("aten::a",) and change.started == ()
    assert change.added == ("aten::e",) and change.removed == () and change.ends_changed == ("aten::d",)
    assert compare(after, before).started == ("aten::a",)


def test_an_operator_export_keeps_ends_in_itself_not_in_a_cycle():
    # torch.export leaves upsample_nearest2d where its decomposition declines the input: the
    # recorded targets hold the operator itself, which is not core, so it does not close
    c = _closure({"aten::up": ("aten::up", "aten::mul.Tensor"), "aten::via": ("aten::up",)})
    up = c.item("aten::up")
    assert not up.closed and not up.cycle and up.not_core == ("aten::up",)
    assert up.why.startswith("torch.export keeps it")
    assert not c.item("aten::via").closed and c.item("aten::via").not_core == ("aten::up",)
