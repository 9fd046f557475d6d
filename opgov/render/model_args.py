"""Text and GitHub renderings of a model's calls checked argument by argument
(:class:`opgov.results.model_args.ModelArguments`): one line per problem."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from opgov.render.github import annotation

if TYPE_CHECKING:
    from opgov.results.model_args import ModelArguments


def _times(n: int) -> str:
    return f" ({n} calls)" if n > 1 else ""


def arguments_text(arguments: Sequence[ModelArguments]) -> list[str]:
    """Per archive: what it was checked against, one line per problem, and each operator's dtypes."""
    lines: list[str] = []
    for a in arguments:
        wrote = f"torch {a.torch_version}" if a.torch_version else "an unnamed torch"
        if not a.checked:
            lines.append(f"arguments of {a.model} ({wrote}): not checked: {a.note}")
        else:
            errors = sum(p.severity == "error" for p in a.problems)
            warnings = len(a.problems) - errors
            lines.append(f"arguments of {a.model} ({wrote}) against torch {a.runtime_release}: {a.calls} calls, "
                         f"{errors} error(s), {warnings} warning(s)")
            if a.note:
                lines.append(f"note    {a.note}")
            lines += [f"{p.severity:<8}{p.rule}: {p.message}{_times(p.calls)}" for p in a.problems]
        if a.dtypes:
            lines.append("dtypes  " + "; ".join(f"{d.op} {', '.join(d.dtypes) or '-'}" for d in a.dtypes))
    return lines


def arguments_github(arguments: Sequence[ModelArguments]) -> list[str]:
    return [annotation(p.severity, p.message + _times(p.calls), title=f"opgov {p.rule}")
            for a in arguments for p in a.problems]
