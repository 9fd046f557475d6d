"""What each page shows, read once for the served pages (opgov.api.html) and the static site
(:mod:`opgov.web.site`): the use case the API declares for it (opgov.usecases), run in the page's
transaction, or a read of the reads room (opgov.reads). The pages never reach into the services.

Each function takes the page's ``Ctx``; ``models``, where a page shows the model corpus, is where
it is (None: ``OPGOV_MODELS_DIR``, else the corpora opgov ships)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opgov.core.errors import BadInput

if TYPE_CHECKING:
    from opgov.reads.common import Ctx
    from opgov.results.closure import ClosureReport
    from opgov.results.pages import OpsetData, OpsetPage, OpsetView
    from opgov.usecases.declaration import UseCase


def _run(use_case: UseCase, ctx: Ctx, **fields: Any) -> Any:
    """The declared use case in the page's transaction, its request checked as the API checks it."""
    return use_case.run(ctx, use_case.ask(**fields))


def counts(ctx: Ctx) -> dict[str, int]:
    """The home page's three numbers (present operators, core ones, open proposals)."""
    from opgov.reads.registry import home_counts

    return home_counts(ctx)


def opset(ctx: Ctx, *, models: str | None = None) -> OpsetData:
    """What every choice of /opset is computed from (``pages opset``)."""
    from opgov.usecases.pages import PAGES_OPSET

    return _run(PAGES_OPSET, ctx, models=models)


def opset_view(ctx: Ctx, *, preset: str = "core-aten", decompose: list[str] | tuple[str, ...] = (),
               keep: list[str] | tuple[str, ...] = (), models: str | None = None) -> OpsetView:
    """What /opset shows for one choice (``pages opset view``): opset build's answer worded for the
    page, or why it refuses the choice (``refused``)."""
    from opgov.usecases.pages import PAGES_OPSET_VIEW

    return _run(PAGES_OPSET_VIEW, ctx, preset=preset, decompose=list(decompose), keep=list(keep), models=models)


#: The toggle groups of /opset, in order: category → title.
TOGGLE_GROUPS: dict[str | None, str] = {"core": "Core", "decomposable": "Decomposable", "custom": "Custom",
                                        None: "Not yet categorized"}


def opset_page(ctx: Ctx, *, models: str | None = None, view_url: str | None = None,
               data: OpsetData | None = None) -> OpsetPage:
    """The data /opset embeds: its toggles (the operators a choice can change, by category, with
    what each preset decides of them: :func:`opgov.core.opset.opset_policy`'s ``v``, ``a`` and ``f``
    flags) and the view of each preset (:func:`opset_view`; a served page: of the first preset only).
    ``view_url``: where a served page asks for other choices' views (``pages opset view``'s path;
    none for a static site); ``data``:
    :func:`opset`'s, when read already."""
    from opgov.core.opset import PRESETS
    from opgov.results.pages import OpsetPage

    data = data if data is not None else opset(ctx, models=models)
    presets = list(PRESETS)
    # a static site embeds every preset's view (no server to ask); a served page the first one's,
    # and asks for another as for any choice
    shown = presets if view_url is None else presets[:1]
    decomposes = [data.presets[p].decomposes for p in presets]
    groups = []
    for category, title in TOGGLE_GROUPS.items():
        toggles = [(op, ", ".join(data.rules.get(op, ())),
                    "".join(str(i) for i, flag in enumerate(decomposes) if flag and flag in flags))
                   for op, (cat, _, flags) in data.operators.items() if "v" in flags and cat == category]
        if toggles:
            groups.append((category or "none", title, toggles))
    return OpsetPage(presets=presets, groups=groups, view_url=view_url, selective_build=data.selective_build,
                     models=len(data.models), models_source=data.models_source, torch_facts=data.torch_facts,
                     views={p: opset_view(ctx, preset=p, models=models) for p in shown})


def operators(ctx: Ctx):
    """Every operator ever seen (the /ops page)."""
    from opgov.usecases.ops import OPS_LIST

    return _run(OPS_LIST, ctx, all=True)


def operator(ctx: Ctx, name: str, *, models: str | None = None, corpus=None, runtimes=None):
    """One operator's page (``pages operator``); a site gives the ``corpus`` and the ``runtimes`` it read
    once for all its operator pages (opgov.reads.runtimes.runtimes_by_name)."""
    from opgov.usecases.pages import PAGES_OPERATOR

    if corpus is None and runtimes is None:
        return _run(PAGES_OPERATOR, ctx, name=name, models=models)
    return PAGES_OPERATOR.function(ctx, name, corpus=corpus, runtimes=runtimes)


def proposals(ctx: Ctx):
    from opgov.usecases.governance import PROPOSALS

    return _run(PROPOSALS, ctx)


def queue(ctx: Ctx, **query: Any):
    """The review queue (``query``: the request's fields), its filters checked by the service alone,
    which names a value it does not know and the values it takes (``unknown suggestion 'maybe' (one
    of …)``): the page's one line."""
    from opgov.usecases.queue import QUEUE

    return QUEUE.function(ctx, **query)


def queue_history(ctx: Ctx) -> tuple[str, ...]:
    """Every snapshot's label, in the order of history (the queue's "waiting since" choices)."""
    from opgov.reads.registry import snapshot_history

    return snapshot_history(ctx)


def coming_due(ctx: Ctx):
    """The lifecycle steps coming due (the /queue page's second list), as today's weekly report lists them."""
    from opgov.reads.registry import lifecycle_coming_due

    return lifecycle_coming_due(ctx)


def report(ctx: Ctx):
    """This week's report."""
    from opgov.usecases.reports import REPORT_WEEKLY

    return _run(REPORT_WEEKLY, ctx)


def closure(ctx: Ctx) -> ClosureReport | None:
    """The page /closure: ``decomps closure`` of the latest release opgov holds facts of,
    compared with the release before it when opgov holds two; None when it holds none."""
    from opgov.reads.torch import torch_releases
    from opgov.usecases.closure import DECOMPS_CLOSURE

    held = torch_releases(ctx.session)
    if not held:  # the facts opgov ships for the latest snapshot's release (or the nearest), if any
        try:
            return _run(DECOMPS_CLOSURE, ctx)
        except BadInput:
            return None
    return _run(DECOMPS_CLOSURE, ctx, against=held[-2] if len(held) > 1 else None)


def runtimes(ctx: Ctx) -> list:
    """The registered runtimes (the check-model form's choices)."""
    from opgov.usecases.runtimes import RUNTIMES_LIST

    return _run(RUNTIMES_LIST, ctx).runtimes


def check_model(ctx: Ctx, files: list, runtime: str | None):
    """check-model of uploaded files (the /check-model form's answer)."""
    from opgov.usecases.runtimes import CHECK_MODEL

    return _run(CHECK_MODEL, ctx, models=files, runtime=runtime)
