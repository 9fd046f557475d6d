"""Moved: the results of check-decomps, opset build and check-model are declared in
:mod:`opgov.results.decomps` (import them from there); their renderings are in
:mod:`opgov.render.decomps_text`. These names stay importable here only for use-case declarations
written before the move (``opgov.render.decomps:OpsetReport``)."""

from opgov.results.decomps import ModelCheckReport, OpsetReport, ViolationsReport

__all__ = ["ModelCheckReport", "OpsetReport", "ViolationsReport"]
