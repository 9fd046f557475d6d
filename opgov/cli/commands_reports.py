"""Reports for the committee: `opgov report weekly`."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from opgov.cli.app import app


report_app = typer.Typer(help="Reports for the committee.", no_args_is_help=True)
app.add_typer(report_app, name="report")


class ReportFormat(str, Enum):
    md = "md"
    json = "json"
    html = "html"


@report_app.command("weekly")
def report_weekly(
    as_of: Optional[str] = typer.Option(None, "--as-of", metavar="DATE",
                                        help="End of the period (default now); a date alone means its midnight UTC."),
    since: Optional[str] = typer.Option(None, "--since", metavar="DATE", help="Start (default 7 days earlier)."),
    fmt: ReportFormat = typer.Option(ReportFormat.md, "--format"),
    out: Optional[Path] = typer.Option(None, "--out", metavar="PATH", help="Write to a file instead of stdout."),
) -> None:
    """The weekly committee report: what to decide, what is due, what broke.

    The period is (since, as_of]; everything is shown as it stood at --as-of.
    """
    from opgov.cli.client import ask
    from opgov.core.clock import parse_time
    from opgov.core.errors import BadInput
    from opgov.render import report as render
    from opgov.results.rendered import Rendered
    from opgov.usecases.reports import REPORT_WEEKLY

    # the period checked and said as the options (a date alone: its midnight UTC) before anything runs
    end = parse_time(as_of, what="--as-of") if as_of else None
    start = parse_time(since, what="--since") if since else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        raise BadInput(f"--out {out}: " + ("is a directory" if out.is_dir() else f"no directory {out.parent}"))
    # json: the report; md and html: the text the service renders
    answer = ask(REPORT_WEEKLY, as_of=end.isoformat() if end else None,
                                since=start.isoformat() if start else None, format=fmt.value)
    text = answer.text if isinstance(answer, Rendered) else render.render_json(answer)
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        from opgov.formats.atomic import atomic_write_text

        try:
            atomic_write_text(out, text)
        except OSError as err:
            raise BadInput(f"--out {out}: cannot write ({err.strerror or err})") from None
        sys.stdout.write(f"wrote {out}\n")
