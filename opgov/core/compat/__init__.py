"""Backward- and forward-compatibility of ATen function schemas, with PyTorch's own verdicts.

The semantics are those of PyTorch's C++ ``FunctionSchema::isBackwardCompatibleWith`` and
``isForwardCompatibleWith`` (what ``torch._C.FunctionSchema.is_backward_compatible_with`` and
``check_forward_compatible_with`` call), computed from schema text alone:

* Types are compared as TorchScript sees them. ``SymInt``, ``ScalarType``, ``Layout``,
  ``MemoryFormat`` and ``DeviceIndex`` are all ``int`` there, and ``Scalar`` is ``number``, of
  which ``int``, ``float`` and ``complex`` are subtypes; ``T`` is a subtype of ``T?``; lists are
  invariant; a fixed list size (``int[2]``) must stay the same.
* Defaults are compared as values, the way PyTorch's schema parser reads them: ``float eps=1``
  equals ``float eps=1.0``, ``int reduction=Mean`` equals ``int reduction=1``, ``int[2] s=1``
  equals ``int[2] s=[1, 1]``; but ``Scalar alpha=1`` differs from ``Scalar alpha=1.0``.
* BC: same name and overload; as many returns, each of a type at least as specific; at least as
  many arguments; each old argument before the out arguments still at its position with its
  name, its alias annotation, a type at least as general, not newly keyword-only, and its
  default; every new argument before the outs with a default; the out arguments unchanged.
* FC: same name and overload and number of returns; the same number of trailing out arguments;
  the common arguments before the outs unchanged except for a type at least as specific; no
  default added, removed or changed; new arguments only right before the outs, each with a
  non-container default.

The package, one concern a module:

* :mod:`~opgov.core.compat.torchscript` — TorchScript's view of types and defaults;
* :mod:`~opgov.core.compat.pairing` — the adapters: which old and new parts each rule compares;
* :mod:`~opgov.core.compat.rules` — one function per rule id and the :data:`RULES` table (id,
  kind, subjects, purpose, function);
* :mod:`~opgov.core.compat.checker` — :func:`bc_breaks`, :func:`fc_breaks` and :func:`compare`;
* :mod:`~opgov.core.compat.policy` — :func:`apply_policy`: severities under the core ATen
  policy, recorded exceptions, completed deletions.

Standard library only; the JSON shapes and renderers live in :mod:`opgov.render.compat`.
"""

from __future__ import annotations

from opgov.core.compat.checker import (Break, RawFinding, bc_breaks, compare, fc_breaks, iter_compare,
                                       own_entry_message)
from opgov.core.compat.policy import BcException, Finding, apply_policy, expired_exceptions, iter_policy
from opgov.core.compat.rules import RULES, Rule, rules_for
from opgov.core.vocab import Severity

__all__ = [
    "BcException",
    "Break",
    "Finding",
    "RULES",
    "RawFinding",
    "Rule",
    "SEVERITIES",
    "apply_policy",
    "bc_breaks",
    "compare",
    "expired_exceptions",
    "fc_breaks",
    "iter_compare",
    "iter_policy",
    "own_entry_message",
    "rules_for",
]

#: The severities a finding can have, most serious first.
SEVERITIES = tuple(Severity)
