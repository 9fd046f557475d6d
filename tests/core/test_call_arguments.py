"""The per-call argument check, pure: releases, and each verdict on small schemas."""

from __future__ import annotations

import pytest

from opgov.core.errors import BadInput
from opgov.core.model_args import Call, CallArg, check_calls, newer, release_of, snapshot_for
from opgov.core.upgraders import Upgrader

T = ("tensor", "as_tensor")


def test_releases():
    assert release_of("2.13.0+cpu") == "2.13.0" and release_of("2.12.0a0+git1234") == "2.12.0"
    with pytest.raises(BadInput):
        release_of("nightly")
    assert newer("2.14.0", "2.13.0+cpu") and not newer("2.13", "2.13.0") and newer("2.13.0", "2.9.1")
    labels = ["2.6.0", "2.12.0", "2.12.1", "v2", "2.13.0"]
    assert snapshot_for("2.12", labels) == "2.12.1" and snapshot_for("2.13.0", labels) == "2.13.0"
    assert snapshot_for("2.3", labels) is None


def call(*args: CallArg, op: str = "aten::f", node: str = "f") -> Call:
    return Call(node, op, (CallArg("self", False, T, "a tensor"), *args), ("float32",))


def test_each_verdict():
    model = {"aten::f": "f(Tensor self, *, str mode='none', float eps=1e-05) -> Tensor"}
    older = {"aten::f": "f(Tensor self, *, float eps=1e-06) -> Tensor"}
    kw = dict(model_release="2.13.0", runtime_release="2.12.0", model_schemas=model, runtime_schemas=older)
    # a new argument: passed with its default is harmless, with another value a forward break
    assert check_calls([call(CallArg("mode", True, ("str", "none"), "'none'"), CallArg("eps", True, ("float", 0.1),
                                                                                         "0.1"))], **kw) == ()
    [p] = check_calls([call(CallArg("mode", True, ("str", "tanh"), "'tanh'"), CallArg("eps", True, ("float", 0.1),
                                                                                       "0.1"))], **kw)
    assert (p.rule, p.severity, p.argument) == ("argument-unknown", "error", "mode")
    # a changed default the call leaves to itself: a warning, once for every call sharing it
    [p] = check_calls([call(), call(node="f_1")], **kw)
    assert (p.rule, p.severity, p.argument, p.call, p.calls) == ("default-changed", "warning", "eps", "f", 2)
    assert "1e-05 in torch 2.13.0 and 1e-06 in 2.12.0" in p.message
    # an operator the release lacks
    [p] = check_calls([call(op="aten::g", node="g")], **kw)
    assert (p.rule, p.op) == ("operator-missing", "aten::g")


def test_a_rename_is_refused_or_upgraded():
    model = {"aten::f": "f(Tensor self, int dim) -> Tensor"}
    newer_ = {"aten::f": "f(Tensor self, int axis) -> Tensor"}
    calls = [call(CallArg("dim", False, ("int", 1), "1"))]
    # on an older runtime (no upgrade possible): the required argument is missing, so torch.export.load
    # refuses the archive; that is the one finding (issue 40: not also "the given one is dropped")
    axis = [call(CallArg("axis", False, ("int", 1), "1"))]  # as a 2.14.0 model names it
    [p] = check_calls(axis, model_release="2.14.0", runtime_release="2.13.0", model_schemas=newer_,
                      runtime_schemas=model)
    assert (p.rule, p.argument) == ("argument-refused", "dim") and "the call names axis instead" in p.message
    kw = dict(model_release="2.13.0", runtime_release="2.14.0", model_schemas=model, runtime_schemas=newer_)
    [p] = check_calls(calls, **kw)
    assert (p.rule, p.severity, p.upgrader) == ("schema-bc-break", "error", None)
    upgrader = Upgrader("f_0_3", "aten::f", 0, 3, "f(Tensor self, int dim) -> Tensor")
    [p] = check_calls(calls, **kw, upgraders=[upgrader])
    assert (p.rule, p.severity, p.upgrader) == ("schema-bc-break", "warning", "f_0_3")
    # without the model's release, only what the runtime's schema says
    [p] = check_calls(calls, model_release="2.13.0", runtime_release="2.14.0", model_schemas=None,
                      runtime_schemas=newer_)[:1]
    assert p.rule == "argument-refused"
