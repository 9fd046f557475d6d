"""The pages' HTML: autoescaped Jinja2 templates (``web/templates``) filled with the services'
typed results, for ``opgov serve`` (links are paths on the server) and for ``opgov site build``
(links are relative files, so the site works from ``file://`` and GitHub Pages).

One stylesheet (``render/static/opgov.css``, the report's, followed by ``web/static/pages.css``)
and one script (``web/static/pages.js``: /opset and the /ops filter); no request to any other host.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import PurePath
from urllib.parse import quote

from opgov import __version__
from opgov.core.vocab import Category, Lifecycle
from opgov.results.plain import to_json

PAGES = (("opset", "Build your opset"), ("ops", "Operators"), ("proposals", "Proposals"),
         ("queue", "Review queue"), ("report", "Weekly report"), ("closure", "Closure"),
         ("check-model", "Check a model"))
SERVED_ONLY = frozenset({"check-model"})  # pages a static site cannot hold (they read an upload)


def op_slug(name: str) -> str:
    """The file name of an operator's page in a static site: ``aten::add.Tensor`` →
    ``aten.add.Tensor`` (no colon, which a relative link would read as a URL scheme)."""
    return name.replace("::", ".")


@dataclass(frozen=True)
class Links:
    """Where each page is: ``static`` (files, relative to the page at ``depth``) or served paths."""

    static: bool = False
    depth: int = 0
    op_pages: frozenset[str] | None = None  # static: the operators that have a page (None: all)

    def _root(self) -> str:
        return "../" * self.depth if self.static else "/"

    def page(self, name: str) -> str:
        if name == "index":
            return self._root() + ("index.html" if self.static else "")
        return self._root() + (f"{name}.html" if self.static else name)

    def op(self, name: str) -> str | None:
        if self.static:
            if self.op_pages is not None and name not in self.op_pages:
                return None
            return f"{self._root()}ops/{quote(op_slug(name))}.html"
        return f"/ops/{quote(name, safe='')}"

    def asset(self, name: str) -> str:
        return f"{self._root()}static/{name}"

    def feeds(self, operator: str | None = None) -> list[tuple[str, str]]:
        """(title, URL) of the Atom feeds a page offers (``<link rel="alternate">``): the whole log,
        and an operator's own on its page. None in a static site, which serves no feed."""
        if self.static:
            return []
        found = [("opgov: every governance event", "/feeds/events.atom")]
        if operator is not None:
            found.append((f"opgov: {operator}", f"/feeds/events.atom?operator={quote(operator, safe='')}"))
        return found

    def json(self, name: str) -> str:
        """The page's JSON twin: a file beside the static site, the API when served."""
        if self.static:
            return f"{self._root()}data/{name}.json"
        return "/api/v1/" + name


def stylesheet() -> str:
    base = resources.files("opgov.render").joinpath("static", "opgov.css").read_text(encoding="utf-8")
    extra = resources.files("opgov.web").joinpath("static", "pages.css").read_text(encoding="utf-8")
    return base.rstrip() + "\n\n/* --- the pages (opgov/web/static/pages.css) --- */\n" + extra


def script(name: str) -> str:
    return resources.files("opgov.web").joinpath("static", name).read_text(encoding="utf-8")


def schema_diff(old: str | None, new: str | None) -> list[tuple[str, str]]:
    """(kind, text) pieces of a word diff of two schemas: kind ``same``, ``del`` or ``ins``."""
    if old is None or new is None:
        return [("ins" if new else "del", new or old or "")]
    split = lambda s: re.findall(r"\w+|\s+|[^\w\s]", s)  # noqa: E731
    a, b = split(old), split(new)
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("ins", "".join(b[j1:j2])))
    return out


def _env():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("opgov.web", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    # a file a command was given is named by its name alone: a page never shows the folders of
    # the machine that loaded it (a checkout, site-packages, a home directory)
    env.filters["file_name"] = lambda value: PurePath(str(value)).name if value and ("/" in str(value) or "\\" in str(value)) else value
    env.filters["day"] = lambda value: value.strftime("%Y-%m-%d") if value else ""
    env.filters["minute"] = lambda value: value.strftime("%Y-%m-%d %H:%M UTC") if value else ""
    env.globals.update(schema_diff=schema_diff, pages=PAGES, served_only=SERVED_ONLY, version=__version__)
    return env


_ENV = None


def render(template: str, links: Links, *, current: str, title: str, json_twin: str | None, **context) -> str:
    global _ENV
    if _ENV is None:
        _ENV = _env()
    context.setdefault("feed_operator", None)  # the page of one operator offers its own feed too
    return _ENV.get_template(template).render(links=links, current=current, title=title, json_twin=json_twin,
                                              **context)


def embed_json(value) -> str:
    """JSON for a ``<script type="application/json">`` element: ``<``, ``>`` and ``&`` escaped so
    no text in it can close the element."""
    from markupsafe import Markup

    text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
    return Markup(text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e"))


# --- one function per page -------------------------------------------------------------------------


def index_page(links: Links, *, counts: dict[str, int]) -> str:
    return render("index.html", links, current="index", title="opgov", json_twin=None, counts=counts)


def opset_page(links: Links, page) -> str:
    """/opset from :class:`opgov.results.pages.OpsetPage` (embedded whole: what the script shows)."""
    payload = to_json(page, indent=None)
    return render("opset.html", links, current="opset", title="Build your own opset",
                  json_twin="pages/opset" if not links.static else "opset", data=embed_json(payload),
                  models_source=page.models_source, n_models=page.models, torch=page.torch_facts,
                  torch_facts=page.torch_facts)


def ops_page(links: Links, ops) -> str:
    categories = tuple(Category)
    lifecycles = tuple(Lifecycle)
    kinds = sorted({o.kind for o in ops})
    tags = sorted({t for o in ops for t in o.tags})
    return render("ops.html", links, current="ops", title="Operators",
                  json_twin="operators", ops=ops, categories=categories, lifecycles=lifecycles, kinds=kinds,
                  tags=tags)


def op_page(links: Links, page) -> str:
    op = page.operator
    twin = f"pages/ops/{quote(op.name, safe='')}" if not links.static else f"ops/{op_slug(op.name)}"
    return render("op.html", links, current="ops", title=op.name, json_twin=twin, page=page, op=op,
                  feed_operator=op.name)


def proposals_page(links: Links, proposals) -> str:
    open_ = [p for p in proposals if p.status == "open"]
    closed = [p for p in proposals if p.status != "open"]
    return render("proposals.html", links, current="proposals", title="Proposals", json_twin="proposals",
                  open_proposals=open_, closed=closed)


def queue_page(links: Links, view, due, *, history: tuple[str, ...] = (), params: dict | None = None) -> str:
    """The committee's workbench (``view``: :class:`opgov.results.queue.QueueView`) and the lifecycle
    steps coming due (``due``: :class:`opgov.results.reports.LifecycleDue` rows, overdue first). Served, ``params`` are the query's filters (match, suggestion,
    reason, snapshot) and ``page``; the sort links, the form and the pager keep them."""
    from urllib.parse import urlencode

    from opgov.core.vocab import QueueReason, Suggestion

    params = {k: v for k, v in (params or {}).items() if v}
    page = max(1, int(params.get("page") or 1))

    def query(**changes) -> str:
        merged = {**params, "sort": view.sort, "page": page, **changes}
        return links.page("queue") + "?" + urlencode({k: v for k, v in merged.items() if v not in (None, "")})

    return render("queue.html", links, current="queue", title="Review queue",
                  json_twin="queue", view=view, due=due, history=history,
                  params={k: params.get(k, "") for k in ("match", "suggestion", "reason", "snapshot")}, page=page,
                  query=query, suggestions=[s.value for s in Suggestion], reasons=[r.value for r in QueueReason])


def closure_page(links: Links, report) -> str:
    """The closure proof of torch's default decomposition table (``report``: None when opgov holds
    no torch release's facts)."""
    return render("closure.html", links, current="closure", title="Closure of torch's decomposition table",
                  json_twin="decomps/closure" if not links.static else "closure", report=report)


def check_model_page(links: Links, runtimes, *, chosen: str | None = None, result=None,
                     error: str | None = None) -> str:
    """Can a runtime run this model? The upload form (``runtimes``: the registered ones) and, after
    a check, its answer (``result``: a :class:`~opgov.results.runtimes.RuntimeModelCheck` with a
    runtime, else a :class:`~opgov.results.runtimes.ModelCheckReport`) or the one line that refused
    the upload (``error``). Served only: the check reads the uploaded files."""
    headline = None
    if result is not None and hasattr(result, "runtime"):
        from opgov.render.runtimes import render_check

        headline = render_check(result).splitlines()[0]
    elif result is not None:
        problems = sum(not a.runs for a in result.arguments)
        headline = (f"{len(result.operators)} operators: {len(result.errors)} error(s), {len(result.warnings)} "
                    f"warning(s), {len(result.notes)} note(s)"
                    + (f"; {problems} archive(s) whose calls the release cannot run as exported" if problems else ""))
    return render("check_model.html", links, current="check-model", title="Check a model", json_twin=None,
                  runtimes=runtimes, chosen=chosen, result=result, error=error, headline=headline)


def empty_page(links: Links, *, current: str, heading: str) -> str:
    """A page of a database that holds no snapshot yet: what to import (served only)."""
    return render("empty.html", links, current=current, title=heading, json_twin=None, heading=heading)


def error_page(links: Links, message: str) -> str:
    return render("error.html", links, current="", title="Not found", json_twin=None, message=message)


def report_page(links: Links, report) -> str:
    from markupsafe import Markup

    from opgov.render.report import render_html

    full = render_html(report)
    body = re.search(r"<main>(.*)</main>", full, flags=re.S)
    return render("report.html", links, current="report", title="Weekly report",
                  json_twin="report/weekly" if not links.static else "report",
                  body=Markup(body.group(1) if body else full))  # rendered by the report's own autoescaped templates
