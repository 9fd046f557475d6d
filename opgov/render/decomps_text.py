"""The text, GitHub-annotation, selective-build and Python renderings of ``opgov check-decomps``,
``opgov opset build`` and ``opgov check-model``.

Pure functions from the results of :mod:`opgov.core.decomps`, :mod:`opgov.core.opset` and
:mod:`opgov.core.corpus` to a string. The JSON shapes are the dataclasses of
:mod:`opgov.results.decomps`, imported only when JSON is asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from opgov.core.corpus import ModelCheck
from opgov.core.decomps import Violation
from opgov.core.errors import BadInput
from opgov.core.opset import PRESET_POLICY, TEXTS, Coverage, Opset, OpsetChoice, fill
from opgov.render.github import annotation
from opgov.results.plain import to_json

__all__ = ["SELECTIVE_BUILD", "describe_choice", "python_listing", "python_template", "render_model_check",
           "render_opset", "render_python", "render_selective_build", "render_violations"]


# --- check-decomps ------------------------------------------------------------------------------



def render_violations(violations: Sequence[Violation], fmt: str = "text") -> str:
    """``text`` (one line each and a summary), ``json`` (see
    :class:`opgov.results.decomps.ViolationsReport`) or ``github`` (workflow annotations)."""
    if fmt == "json":
        from opgov.results.decomps import ViolationsReport

        return to_json(ViolationsReport.of(violations))
    if fmt == "github":
        return _github(violations)
    if fmt != "text":
        raise BadInput(f"unknown format {fmt!r} (text, json or github)")
    if not violations:
        return "decomposition rules: no violations\n"
    lines = [f"{v.severity:<7} {v.rule:<26} {v.message}" for v in violations]
    errors = sum(v.severity == "error" for v in violations)
    lines.append(f"{errors} error(s), {len(violations) - errors} warning(s)")
    return "\n".join(lines) + "\n"


#: GitHub shows at most this many annotations of each level per step; the rest are dropped.
GITHUB_ANNOTATIONS_PER_LEVEL = 10


def _github(violations: Sequence[Violation]) -> str:
    """Workflow annotations within GitHub's limits (10 errors and 10 warnings per step): when a
    level has more, the first 9 are shown and one summary annotation counts the rest by rule."""
    lines: list[str] = []
    for level in ("error", "warning"):
        found = [v for v in violations if v.severity == level]
        shown = found if len(found) <= GITHUB_ANNOTATIONS_PER_LEVEL else found[:GITHUB_ANNOTATIONS_PER_LEVEL - 1]
        lines += [annotation(level, v.message, title=f"opgov {v.rule}") for v in shown]
        rest = found[len(shown):]
        if rest:
            by_rule: dict[str, int] = {}
            for v in rest:
                by_rule[v.rule] = by_rule.get(v.rule, 0) + 1
            counts = ", ".join(f"{n} {rule}" for rule, n in sorted(by_rule.items()))
            lines.append(annotation(level, f"{len(rest)} more {level}(s) not annotated ({counts}); "
                                           "run `opgov check-decomps` for all of them",
                                    title="opgov check-decomps summary"))
    return "\n".join(lines) + ("\n" if lines else "")


# --- opset build --------------------------------------------------------------------------------


def describe_choice(choice: OpsetChoice) -> str:
    parts = [choice.preset]
    if choice.decompose:
        parts.append(fill(TEXTS["choice_decompose"], ops=", ".join(choice.decompose)))
    if choice.keep:
        parts.append(fill(TEXTS["choice_keep"], ops=", ".join(choice.keep)))
    return "; ".join(parts)


def render_opset(opset: Opset, cov: Coverage | None = None, fmt: str = "text") -> str:
    """``text`` or ``json`` (:class:`opgov.results.decomps.OpsetReport`); see also
    :func:`render_selective_build` and :func:`render_python`."""
    if fmt == "json":
        from opgov.results.decomps import OpsetReport

        return to_json(OpsetReport.of(opset, cov))
    if fmt == "selective-build":
        return render_selective_build(opset)
    if fmt == "python":
        return render_python(opset)
    if fmt != "text":
        raise BadInput(f"unknown format {fmt!r} (text, json, selective-build or python)")
    exact = f" (exact for {opset.torch_facts})" if opset.torch_facts else ""
    lines = [f"opset {describe_choice(opset.choice)}: {len(opset.entries)} operators to implement{exact}"]
    for e in opset.entries:
        extra = f"  ← {', '.join(e.produced_by[:3])}{' …' if len(e.produced_by) > 3 else ''}" if e.why == "target" else ""
        state = f" [{e.lifecycle}]" if e.lifecycle not in ("active",) else ""
        lines.append(f"  {e.op:<48} {e.why}{state}{extra}")
    if opset.without_rule:
        lines.append(fill(TEXTS["without_rule"], n=len(opset.without_rule)) + " (--format json lists them)")
    if opset.graph_ops:
        lines.append(fill(TEXTS["graph_ops"], n=len(opset.graph_ops), ops=", ".join(opset.graph_ops)))
    if opset.torch_removes:
        shown = [f"{op} (→ {', '.join(opset.rules[op]) or 'no operator'})" if op in opset.rules
                 else f"{op} (not traced)" for op, _ in opset.torch_removes[:6]]
        more = " …; --format json says why for each" if len(opset.torch_removes) > 6 else ""
        lines.append("not listed: " + fill(TEXTS["torch_removes"], n=len(opset.torch_removes), version=opset.torch_version,
                                           ops=", ".join(shown) + more))
    lines += [f"note: {n}" for n in opset.notes]
    if cov is not None:
        lines.append(f"models ({cov.start} operators): {cov.covered}/{len(cov.models)} covered "
                     f"({cov.share:.0%})")
        for m in cov.models:
            mark = "covered" if m.covered else "missing " + ", ".join(m.missing)
            lines.append(f"  {m.model:<40} {mark}")
        if cov.suggestions:
            lines.append("add, in this order, to cover the most further models:")
            unknown = frozenset(cov.not_in_registry)
            for i, s in enumerate(cov.suggestions, 1):
                lines.append(f"  {i}. {s.op:<44} +{len(s.newly_covered)} model(s) → "
                             f"{s.covered_after}/{len(cov.models)} ({s.share_after:.0%}); used by {s.needed_by}"
                             + (" (not in the registry)" if s.op in unknown else ""))
        if cov.not_in_registry:
            shown = ", ".join(cov.not_in_registry[:5]) + (" …" if len(cov.not_in_registry) > 5 else "")
            lines.append(f"note: {len(cov.not_in_registry)} operators the models need are not in the registry "
                         f"({shown}): it holds part of ATen, or is older than the models")
    return "\n".join(lines) + "\n"


#: The selected-operators YAML, written from these pieces (``@placeholders@``, see
#: :func:`opgov.core.opset.fill`) by :func:`render_selective_build` and by the opset page alike: what
#: PyYAML's safe dumper writes for it (no line folded), without a YAML writer.
SELECTIVE_BUILD: dict[str, str] = {
    "label": "opgov opset @choice@",
    "why": "@label@: @why@",
    "produced": "@why@, produced by @ops@",
    "out_variant": "out= variant of @op@",
    "no_rule": "no decomposition rule",
    "header": "# selected operators: @label@\n# @n@ operators; generated by opgov\n",
    "empty": "operators: {}\n",
    "open": "operators:\n",
    "item": ("  @op@:\n    is_root_operator: true\n    is_used_for_training: false\n"
             "    include_all_overloads: false\n    debug_info:\n    - '@why@'\n"),
}


def render_selective_build(opset: Opset, *, include_without_rule: bool = False,
                           out_variants: Mapping[str, str] | None = None) -> str:
    """The selected-operators YAML of PyTorch's and ExecuTorch's selective build.

    Top level ``operators:``, each key a full operator name as torchgen spells it
    (``aten::add.Tensor``, ``aten::abs`` for the default overload) with ``include_all_overloads:
    false`` so that exactly that overload is selected. ``out_variants`` (functional → its
    out= overload, from the registry) adds the out= variants ExecuTorch's kernels implement.
    ``include_without_rule`` also selects :attr:`Opset.without_rule`.
    """
    t = SELECTIVE_BUILD
    label, selected = selective_build_selection(opset, include_without_rule=include_without_rule,
                                                out_variants=out_variants)
    text = fill(t["header"], label=label, n=len(selected))
    if not selected:
        return text + t["empty"]
    return text + t["open"] + "".join(fill(t["item"], op=op, why=fill(t["why"], label=label, why=why))
                                      for op, why in selected)


def selective_build_selection(opset: Opset, *, include_without_rule: bool = False,
                              out_variants: Mapping[str, str] | None = None) -> tuple[str, list[tuple[str, str]]]:
    """What :func:`render_selective_build` selects: (its label, [(operator, why)] by operator), each
    why quoted for single-quoted YAML (a quote doubled; operator names and reasons hold none, nor
    does the label: a preset and operator names). The /opset page writes the yaml from these and
    :data:`SELECTIVE_BUILD`."""
    t = SELECTIVE_BUILD
    selected: dict[str, str] = {}

    def select(op: str, why: str) -> None:
        selected[op] = why.replace("'", "''")

    for e in opset.entries:
        select(e.op, fill(t["produced"], why=e.why, ops=", ".join(e.produced_by[:3])) if e.produced_by else e.why)
        if out_variants and e.op in out_variants:
            select(out_variants[e.op], fill(t["out_variant"], op=e.op))
    if include_without_rule:
        for op in opset.without_rule:
            select(op, t["no_rule"])
    return fill(t["label"], choice=describe_choice(opset.choice)), sorted(selected.items())


#: How the Python snippet lists operator names (names hold no quote: ``repr`` writes them so).
PYTHON_LIST = {"empty": "[]", "open": "[\n", "item": "    '@op@',\n", "close": "]"}


def python_listing(names: Iterable[str]) -> str:
    names = sorted(names)
    if not names:
        return PYTHON_LIST["empty"]
    return PYTHON_LIST["open"] + "".join(fill(PYTHON_LIST["item"], op=n) for n in names) + PYTHON_LIST["close"]


def python_template(preset: str, torch_facts: str | None) -> str:
    """The snippet of :func:`render_python` for a preset, with ``@choice@``, ``@keep@`` and
    ``@decompose@`` to fill (``/api/v1/pages/opset`` gives them). ``torch_facts``: which release's
    facts it follows (:meth:`opgov.core.opset.TorchFacts.describe`), or None."""
    exact = ""
    if torch_facts is not None:  # the adjustments measured on that torch release
        exact = f"\n# Exact for {torch_facts}; another release may decompose differently."
    base = "{}" if PRESET_POLICY[preset]["from_empty"] else "torch.export.default_decompositions()"
    # measured code also adds decompositions only the default table holds (CompositeImplicitAutograd)
    default = "_default = torch.export.default_decompositions()\n" if exact else ""
    fallback = "\n    if _fn is None and _op in _default:\n        _fn = _default[_op]" if exact else ""
    return f'''# Reproduces the opgov opset choice "@choice@" with torch.export.{exact}
# Use: ep = torch.export.export(model, example_args).run_decompositions(decomp_table)
import warnings

import torch
import torch._decomp

# the operators of this opset: a backend implements them, so torch must not decompose them
KEEP = @keep@
DECOMPOSE = @decompose@


def _overload(name):
    """Map 'aten::add.Tensor' to torch.ops.aten.add.Tensor; None when this torch lacks it."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace), base, None)
    if packet is None or (overload or "default") not in packet.overloads():
        warnings.warn(f"{{name}} does not exist in torch {{torch.__version__}}")
        return None
    return getattr(packet, overload or "default")


{default}decomp_table = {base}
for _name in KEEP:
    _op = _overload(_name)
    if _op is not None:
        decomp_table.pop(_op, None)
for _name in DECOMPOSE:
    _op = _overload(_name)
    if _op is None:
        continue
    _fn = torch._decomp.decomposition_table.get(_op){fallback}
    if _fn is None:
        warnings.warn(f"torch has no decomposition for {{_name}}; it stays")
    else:
        decomp_table[_op] = _fn
'''


def render_python(opset: Opset) -> str:
    """A snippet that reproduces the choice with torch.export's decomposition table.

    It defines ``decomp_table``: ``torch.export.default_decompositions()`` for core-aten and
    full-decomp (an empty dict for no-decomp), minus every operator of the opset (what the
    backend implements must reach it whole: torch's table also decomposes operators that are core
    by the committee's decision, e.g. ``aten::roll``), plus PyTorch's own
    decompositions (``torch._decomp.decomposition_table``) of :attr:`Opset.beyond_default`: the
    ``--decompose`` operators and, for full-decomp, the core operators that have a rule. Operators
    PyTorch has no decomposition for are reported when the snippet runs. Built with torch's facts,
    it makes the adjustments measured on that release (:attr:`Opset.code_keep`, :attr:`Opset.code_decompose`).
    """
    choice = opset.choice
    extra = opset.beyond_default
    # no-decomp starts from an empty table: only the choice's own keeps matter there
    kept = list(choice.keep) if PRESET_POLICY[choice.preset]["from_empty"] else set(choice.keep) | opset.operators
    if opset.torch_version is not None:
        extra, kept = opset.code_decompose, list(opset.code_keep)
    return fill(python_template(choice.preset, opset.torch_facts), choice=describe_choice(choice),
                keep=python_listing(kept), decompose=python_listing(extra))


# --- check-model --------------------------------------------------------------------------------


def render_model_check(check: ModelCheck, fmt: str = "text") -> str:
    """``text``, ``json`` (:class:`opgov.results.runtimes.ModelCheckReport`) or ``github``
    (workflow annotations)."""
    if fmt == "json":
        from opgov.results.runtimes import ModelCheckReport

        return to_json(ModelCheckReport.of(check))
    if fmt == "github":
        lines = [annotation(level, f.message, title=f"opgov {f.rule}")
                 for level, group in (("error", check.errors), ("warning", check.warnings), ("notice", check.notes))
                 for f in group]
        if not check.errors:  # a passing step says so, as a notice, rather than nothing
            lines.append(annotation("notice", f"{len(check.ops)} operators: {len(check.errors)} error(s), "
                                              f"{len(check.warnings)} warning(s), {len(check.notes)} note(s)",
                                    title="opgov check-model"))
        return "\n".join(lines) + ("\n" if lines else "")
    if fmt != "text":
        raise BadInput(f"unknown format {fmt!r} (text, json or github)")
    lines = [f"{len(check.ops)} operators: {len(check.errors)} error(s), {len(check.warnings)} warning(s), "
             f"{len(check.notes)} note(s)"]
    for label, group in (("error", check.errors), ("warning", check.warnings), ("note", check.notes)):
        lines += [f"{label:<8}{f.message}" for f in group]
    if check.snapshots_checked:
        lines.append(f"earliest snapshot with every operator: {check.earliest_snapshot}" if check.earliest_snapshot
                     else f"none of the {check.snapshots_checked} snapshots has every operator")
    return "\n".join(lines) + "\n"
