"""Text, Markdown and GitHub renderings of the runtime results (JSON is the results' own, :func:`opgov.results.plain.to_json`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from opgov.render.github import annotation
from opgov.results.plain import to_json

if TYPE_CHECKING:
    from opgov.results.runtimes import CoverageMatrix, RuntimeDetail, RuntimeModelCheck, RuntimeSummary


def _pct(have: int, total: int) -> str:
    return f"{have}/{total} ({have / total:.0%})" if total else f"{have}/0"


def _models(check: RuntimeModelCheck) -> str:
    names = [m.path for m in check.models]
    return names[0] if len(names) == 1 else f"{len(names)} models ({', '.join(names)})"


def summary_line(s: RuntimeSummary) -> str:
    released = f", released {s.released}" if s.released else ""
    growth = ""
    if s.previous:
        growth = f"; since {s.previous}: +{len(s.core_gained)}" + (f" -{len(s.core_lost)}" if s.core_lost else "")
    served = f", {s.served} served without a kernel" if s.served else ""
    follows = f", follows torch {s.torch}" if s.torch else ""
    return (f"{s.runtime}{released}: {s.kernels} kernels{served}, {s.operators} operators, "
            f"core {_pct(s.core_have, s.core_total)}{growth}{follows}")


def render_detail(d: RuntimeDetail) -> str:
    lines = [summary_line(d.runtime),
             f"added {d.added_at:%Y-%m-%d %H:%M} UTC by {d.added_by} from "
             + ", ".join(f"{s.path} ({s.format}, {s.entries})" for s in d.sources)]
    if d.runtime.core_gained:
        lines.append(f"core operators gained since {d.runtime.previous}: {', '.join(d.runtime.core_gained)}")
    if d.runtime.core_lost:
        lines.append(f"core operators lost since {d.runtime.previous}: {', '.join(d.runtime.core_lost)}")
    if d.served:
        lines.append(f"served without a kernel ({len(d.served)}): {', '.join(d.served)}")
    lines.append(f"core operators it lacks ({len(d.core_missing)}): {', '.join(d.core_missing) or 'none'}")
    if d.not_in_registry:
        lines.append(f"kernels the latest snapshot does not hold ({len(d.not_in_registry)}): "
                     + ", ".join(d.not_in_registry))
    return "\n".join(lines) + "\n"


def render_check(check: RuntimeModelCheck, fmt: str = "text") -> str:
    if fmt == "json":
        return to_json(check) + "\n"
    if fmt == "github":
        lines = []
        for m in check.missing:
            lines.append(annotation("error", f"{check.runtime} lacks {m.op}; {_lowering(m)}",
                                    title="opgov runtime-missing"))
        for n in check.lifecycle:
            lines.append(annotation("warning", _lifecycle(n), title=f"opgov operator-{n.state}"))
        from opgov.render.model_args import arguments_github

        lines += arguments_github(check.arguments)
        for p in check.kernel_problems:
            lines.append(annotation("error" if p.status != "unknown" else "warning",
                                    f"{check.runtime}: {p.message} (call {p.call})", title=f"opgov kernel-{p.status}"))
        if check.runs:  # a passing step says so, as a notice, rather than nothing
            lines.append(annotation("notice", _runs(check), title="opgov check-model"))
        return "\n".join(lines) + ("\n" if lines else "")
    what, n, graph = _models(check), *_counted(check)
    refused = [p for p in check.kernel_problems if p.status != "unknown"]
    if check.runs:
        lines = [_runs(check)]
    elif not check.missing and check.verdict == "unknown":
        lines = [f"whether {check.runtime} runs {what} is unknown: it has all {n} operators{graph}, but "
                 f"{_calls(check.kernel_problems)} outside what opgov could read of their kernels"]
    elif not check.missing:
        args_bad = any(not a.runs for a in check.arguments)
        why = " and ".join(w for w, bad in (("not every call's arguments", args_bad),
                                            (f"its kernels refuse {_calls(refused)}", bool(refused))) if bad)
        lines = [f"{check.runtime} does not run {what} as exported: it has all {n} operators{graph}, but {why}"]
    else:
        lines = [f"{check.runtime} does not run {what}: it lacks {len(check.missing)} of {n} operators{graph}"
                 + ("; every one lowers by the rules on record" if check.runs_after_lowering else "")]
    for m in check.missing:
        category = m.category or "not in the registry"
        lines.append(f"missing {m.op} ({category}): {_lowering(m)}")
    if check.unplaced_kernels:
        lines.append(f"note: {len(check.unplaced_kernels)} of {check.runtime}'s kernels are not in the latest "
                     "snapshot, so the operators they give cannot be placed (as `runtimes add` warned); a missing "
                     "operator may be one of theirs: " + ", ".join(check.unplaced_kernels[:5])
                     + (" …" if len(check.unplaced_kernels) > 5 else ""))
    for p in check.kernel_problems:
        word = {"dtype": "dtype not supported", "argument": "argument refused"}.get(p.status, "unknown")
        shared = f", and {p.calls - 1} more call(s)" if p.calls > 1 else ""
        lines.append(f"{word}: {p.op} (call {p.call}{shared}): {p.message}")
    if check.models and not check.kernels_checked and any(a.calls for a in check.arguments):
        lines.append(f"note: {check.runtime} is registered without what its kernels accept (register a release "
                     "opgov knows by name, or with --source): the calls' dtypes and ranks are not checked")
    for op, why in check.graph_ops.items():
        lines.append(f"graph operator {op}: {why}")
    for note in check.lifecycle:
        lines.append(f"warning {_lifecycle(note)}")
    from opgov.render.model_args import arguments_text

    lines += arguments_text(check.arguments)
    lines.append(f"earliest snapshot with every operator: {check.earliest_snapshot or 'none'}")
    name = check.runtime.split("@", 1)[0]
    if check.earliest_version:
        since = check.earliest_version.split("@", 1)[-1]
        lines.append(f"earliest {name} version that runs it: {check.earliest_version} (runs on {name} ≥ {since}"
                     + (f"; {check.before_earliest})" if check.before_earliest else ")"))
    elif check.earliest_version_after_lowering:
        lines.append(f"no registered version of {name} runs it as it is; {check.earliest_version_after_lowering} "
                     "runs it once lowered by the rules on record")
    else:
        lines.append(f"no registered version of {name} runs it, even lowered by the rules on record")
    return "\n".join(lines) + "\n"


def _calls(problems) -> str:
    n = sum(p.calls for p in problems)
    return "1 call" if n == 1 else f"{n} calls"


def _counted(check: RuntimeModelCheck) -> tuple[int, str]:
    """The operators that need a kernel, and the words for the graph operators that need none."""
    g = len(check.graph_ops)
    graph = (" (and 1 graph operator that needs none)" if g == 1 else f" (and {g} graph operators that need none)") \
        if g else ""
    return len(check.operators) - g, graph


def _runs(check: RuntimeModelCheck) -> str:
    n, graph = _counted(check)
    return f"{check.runtime} runs {_models(check)}: it has all {n} operators{graph}"


def _lowering(m) -> str:
    if m.lowers:
        return f"lowers by {'; '.join(m.steps)}"
    if not m.steps:
        return "no decomposition on record lowers it"
    return (f"no decomposition on record lowers it: {'; '.join(m.steps)} reaches "
            f"{', '.join(m.blocked)}, which it lacks and no rule decomposes")


def _lifecycle(n) -> str:
    text = f"{n.op} is {n.state}"
    if n.since:
        text += f" since {n.since:%Y-%m-%d}"
    if n.next_step and n.next_step_on:
        text += f"; it may become {n.next_step} on {n.next_step_on:%Y-%m-%d} (UTC)"
    if n.replacement:
        text += f"; use {n.replacement} instead"
    return text


def render_matrix(matrix: CoverageMatrix, fmt: str = "text") -> str:
    if fmt == "json":
        return to_json(matrix) + "\n"
    if fmt == "md":
        return _matrix_md(matrix)
    lines = [f"core operators of snapshot {matrix.snapshot}: {len(matrix.operators)}"]
    width = max((len(r.runtime) for r in matrix.runtimes), default=0)
    for r in matrix.runtimes:
        text = f"  {r.runtime:<{width}}  {str(r.released or ''):<10}  core {_pct(r.core_have, r.core_total)}"
        if r.previous:
            text += f", +{len(r.core_gained)}" + (f" -{len(r.core_lost)}" if r.core_lost else "") + f" since {r.previous}"
        if r.models_total:
            text += f"; runs {len(r.models_run)}/{r.models_total} models"
        if r.dtypes_gained or r.dtypes_lost:
            text += f"; dtypes: {_dtype_changes(r)}"
        lines.append(text)
    graph = sorted({op for m in matrix.models for op in m.graph_ops})
    if graph:
        lines.append(f"graph operators the models hold, needing no kernel: {', '.join(graph)}")
    return "\n".join(lines) + "\n"


_SHORT = {"bool": "b", "uint8": "u8", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
          "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64"}


def _dtype_changes(r, limit: int = 4) -> str:
    """``aten::gelu +bfloat16, +float16; aten::mean -bool`` (the first few, then how many more)."""
    ops = sorted(set(r.dtypes_gained) | set(r.dtypes_lost))
    parts = []
    for op in ops[:limit]:
        parts.append(f"{op} " + ", ".join([f"+{d}" for d in r.dtypes_gained.get(op, [])]
                                          + [f"-{d}" for d in r.dtypes_lost.get(op, [])]))
    more = f" and {len(ops) - limit} more operator(s)" if len(ops) > limit else ""
    return "; ".join(parts) + more


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _matrix_md(matrix: CoverageMatrix) -> str:
    names = [r.runtime for r in matrix.runtimes]
    out = [f"# Core ATen coverage by runtime (snapshot {matrix.snapshot})", "",
           "| runtime | released | kernels | core operators | gained | lost | models run |",
           "| --- | --- | ---: | ---: | --- | --- | ---: |"]
    for r in matrix.runtimes:
        out.append(f"| {r.runtime} | {r.released or ''} | {r.kernels} | {_pct(r.core_have, r.core_total)} | "
                   f"{_cell(', '.join(r.core_gained))} | {_cell(', '.join(r.core_lost))} | "
                   f"{f'{len(r.models_run)}/{r.models_total}' if r.models_total else ''} |")
    if matrix.models:
        out += ["", f"## Models ({matrix.stage} operators)", "",
                "| model | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
        for m in matrix.models:
            cells = ["runs" if not m.missing[n] else "lacks " + ", ".join(m.missing[n]) for n in names]
            out.append(f"| {m.model} | " + " | ".join(_cell(c) for c in cells) + " |")
        graph = sorted({op for m in matrix.models for op in m.graph_ops})
        if graph:
            out += ["", "Graph operators (assertions, symbolic sizes) need no kernel and are not counted: "
                    + _cell(", ".join(graph)) + "."]
    out += ["", "## Core operators", "", "| operator | " + " | ".join(names) + " |",
            "| --- |" + " :---: |" * len(names)]
    for row in matrix.operators:
        cells = ["" if row.kernels[n] is None else ("✓" if row.kernels[n] == row.op else row.kernels[n].split("::", 1)[-1])
                 for n in names]
        out.append(f"| {row.op} | " + " | ".join(_cell(c) for c in cells) + " |")
    if any(row.dtypes.get(n) is not None for row in matrix.operators for n in names):
        out += ["", "## Core operators by dtype", "",
                "The dtypes each runtime runs an operator in (all tensors of one dtype, after `to_edge`): "
                + ", ".join(f"{short} {name}" for name, short in _SHORT.items()) + "; ? unknown.", "",
                "| operator | " + " | ".join(names) + " |", "| --- |" + " --- |" * len(names)]
        for row in matrix.operators:
            cells = ["" if row.kernels[n] is None else "?" if row.dtypes.get(n) is None
                     else " ".join(_SHORT[d] for d in row.dtypes[n]) for n in names]
            out.append(f"| {row.op} | " + " | ".join(cells) + " |")
        changes = [r for r in matrix.runtimes if r.dtypes_gained or r.dtypes_lost]
        if changes:
            out += ["", "## Dtypes gained and lost, release to release", ""]
            for r in changes:
                out.append(f"- {r.runtime} (since {r.previous}): {_cell(_dtype_changes(r, limit=1000))}")
    return "\n".join(out) + "\n"


def render_opset_runtimes(rows) -> str:
    """What each runtime release (:class:`opgov.results.runtimes.RuntimeDtypes`) runs of an opset, by
    dtype: per release, how many of its operators it has and runs in each dtype, and what it gained
    and lost over the previous release; then, for the newest release of each runtime, each
    operator's dtypes. Empty without registered runtimes."""
    if not rows:
        return ""
    order = list(_SHORT)
    lines = ["", "runtimes by dtype (operators of this opset the release has; of those, how many run in each "
                 "dtype, all tensors of one dtype, after to_edge; ? what its kernels take is unknown):"]
    width = max(len(r.runtime) for r in rows)
    for r in rows:
        text = f"  {r.runtime:<{width}}  {r.have}/{r.total}"
        if r.checked:
            known = [ts for ts in r.dtypes.values() if ts is not None]
            counts = [f"{_SHORT[d]} {sum(d in ts for ts in known)}" for d in order if any(d in ts for ts in known)]
            unknown = r.have - len(known)
            text += ": " + ", ".join(counts) + (f", ? {unknown}" if unknown else "")
        else:
            text += ": dtypes not recorded"
        if r.dtypes_gained or r.dtypes_lost:
            text += f"; since {r.previous}: {_dtype_changes(r, limit=1000)}"
        lines.append(text)
    newest = {}
    for r in rows:
        newest[r.runtime.split("@", 1)[0]] = r
    for r in newest.values():
        if not r.checked:
            continue
        lines.append(f"dtypes by operator, {r.runtime} (- it lacks the operator; ? unknown):")
        opw = max(len(op) for op in r.dtypes)
        lacks = set(r.missing)
        for op, ts in sorted(r.dtypes.items()):
            lines.append(f"  {op:<{opw}}  " + ("-" if op in lacks else "?" if ts is None
                                                else " ".join(_SHORT[d] for d in ts) or "none"))
    return "\n".join(lines) + "\n"
