"""``opgov site build DIR``: the pages as a static site (relative links, data embedded in the pages
or written beside them as .json), which works from ``file://`` and from GitHub Pages.

The site is written to a temporary folder beside DIR and renamed into place, so DIR holds either
the previous site or the new one, never half of one.
"""

from __future__ import annotations

import fnmatch
import shutil
import tempfile
from pathlib import Path

from opgov.core.errors import BadInput
from opgov.reads.common import Ctx
from opgov.results.plain import to_json

MARKER = ".opgov-site"


def build_site(ctx: Ctx, out: str, *, models: str | None = None, ops: list[str] | None = None) -> dict:
    """Write every page into ``out``; ``ops``: globs of the operators that get a page (default all).
    Returns what was written: ``pages``, ``operator_pages``, ``models``. Each page's data is the
    served page's (:mod:`opgov.web.data`)."""
    from opgov.reads.runtimes import runtimes_by_name
    from opgov.web import data as read
    from opgov.web import render as r

    target = Path(out)
    if target.exists() and (not target.is_dir() or (any(target.iterdir()) and not (target / MARKER).exists())):
        raise BadInput(f"{out}: exists and is not an opgov site (nor an empty folder); choose another DIR")
    data = read.opset(ctx, models=models)
    all_ops = read.operators(ctx)
    patterns = ops or ["*"]
    chosen = [o.name for o in all_ops if any(fnmatch.fnmatchcase(o.name, p) for p in patterns)]
    if ops and not chosen:
        raise BadInput(f"--ops {', '.join(ops)}: matches no operator")
    top, deep = r.Links(static=True, op_pages=frozenset(chosen)), r.Links(static=True, depth=1,
                                                                           op_pages=frozenset(chosen))
    report = read.report(ctx)
    proposals = read.proposals(ctx)
    queued = read.queue(ctx, models=models)
    closure = read.closure(ctx)
    files: dict[str, str] = {
        "index.html": r.index_page(top, counts=read.counts(ctx)),
        "opset.html": r.opset_page(top, read.opset_page(ctx, models=models, data=data)),
        "ops.html": r.ops_page(top, all_ops),
        "proposals.html": r.proposals_page(top, proposals),
        "queue.html": r.queue_page(top, queued, read.coming_due(ctx)),
        "report.html": r.report_page(top, report),
        "closure.html": r.closure_page(top, closure),
        "static/pages.css": r.stylesheet(),
        "static/pages.js": r.script("pages.js"),
        "data/opset.json": to_json(data, indent=None),
        "data/operators.json": to_json(all_ops, indent=None),
        "data/proposals.json": to_json(proposals, indent=None),
        "data/report.json": to_json(report, indent=None),
        "data/queue.json": to_json(queued, indent=None),
        **({"data/closure.json": to_json(closure, indent=None)} if closure is not None else {}),
        MARKER: "written by opgov site build; the next build replaces this folder\n",
    }
    runtimes = runtimes_by_name(ctx)  # what every registered runtime has, read once for all the pages
    for name in chosen:
        page = read.operator(ctx, name, corpus=data.models, runtimes=runtimes)
        files[f"ops/{r.op_slug(name)}.html"] = r.op_page(deep, page)
        files[f"data/ops/{r.op_slug(name)}.json"] = to_json(page, indent=None)
    parent = target.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=parent))
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        staging.chmod(0o755)
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=parent))
            target.rename(old / "site")
            staging.rename(target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"pages": sum(k.endswith(".html") for k in files), "operator_pages": len(chosen),
            "models": len(data.models)}
