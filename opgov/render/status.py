"""``opgov status`` as text: one fact a line."""

from __future__ import annotations

from typing import Any


def status_text(report: Any) -> str:
    """A :class:`opgov.results.status.StatusReport` as the lines ``opgov status`` prints."""
    operators = sum(report.operators.values())
    by_category = ", ".join(f"{category} {n}" for category, n in report.operators.items())
    latest = f" (latest {report.latest_snapshot})" if report.latest_snapshot else ""
    return "".join(f"{line}\n" for line in (
        f"revision: {report.revision or 'none'}",
        f"snapshots: {report.snapshots}{latest}",
        f"operators: {operators} ({by_category})",
        f"open proposals: {report.open_proposals}",
        f"members: {report.members}" + (" (single-user mode)" if not report.members else ""),
    ))
