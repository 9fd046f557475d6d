"""`opgov site build`: the web pages as a static site."""

from __future__ import annotations

from typing import List, Optional

import typer

from opgov.cli.app import app, note_skipped_models
from opgov.cli.runtime import command, say

site_app = typer.Typer(help="The web pages as a static site (file://, GitHub Pages).", no_args_is_help=True)
app.add_typer(site_app, name="site")


@site_app.command("build")
def site_build(
    out: str = typer.Argument(..., metavar="DIR", help="The folder to write (replaced if an earlier site)."),
    models: Optional[str] = typer.Option(None, "--models", metavar="CORPUS", callback=note_skipped_models,
                                         help="A corpus JSON, a .pt2 archive, a folder of *_ops.json corpora and .pt2 archives, or a shipped corpus by name (shipped, torchvision, transformers) "
                                              "[env OPGOV_MODELS_DIR, else the shipped corpora]."),
    ops: Optional[List[str]] = typer.Option(None, "--ops", metavar="GLOB",
                                            help="Only these operators get a page (default: every one)."),
) -> None:
    """Write the pages `opgov serve` shows at / (build your own opset, operators, proposals, the
    review queue, the weekly report) into DIR as a static site: relative links, data embedded in
    the pages, no request to any other host; open DIR/index.html from disk or publish DIR."""
    from opgov.reads.models import models_location
    from opgov.web.site import build_site

    with command(write=False) as ctx:
        done = build_site(ctx, out, models=models_location(models), ops=ops)
    say(f"site written to {out}: {done['pages']} pages ({done['operator_pages']} operators), "
        f"{done['models']} models; open {out}/index.html")
