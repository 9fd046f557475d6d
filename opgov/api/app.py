"""The FastAPI application of ``opgov serve``.

Stateless: every request opens one transaction on the configured database (SQLite for one host,
PostgreSQL shared by several workers or replicas) and calls the same services as the CLI; the
services' typed results are the response models, so ``/openapi.json`` is the contract.
"""

from __future__ import annotations

import gc
from contextlib import asynccontextmanager
from functools import partial

from fastapi import FastAPI

from opgov import __version__
from opgov.api import contract, errors
from opgov.api.config import Config


def _simulation(engine) -> bool:
    """A simulation database honours claimed times, even ahead of the server's clock: answers
    may change without a write, so none is cached (opgov.api.cache)."""
    from opgov.db.engine import transaction
    from opgov.reads.common import is_simulation

    with transaction(engine, write=False) as session:
        return is_simulation(session)


def create_app(config: Config | None = None) -> FastAPI:
    """The application; ``config`` defaults to the environment (how ``opgov serve`` passes it)."""
    from opgov.api.cache import AnswerCache, Stamps, read_generation
    from opgov.api import docs, html
    from opgov.api import usecases
    from opgov.api.routers import checks, events, system
    from opgov.db.engine import ensure_current, make_engine, resolve_url

    config = config or Config.from_env()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        from opgov.api.lifetime import follow_supervisor

        follow_supervisor()  # a worker of `opgov serve --workers N` ends with its supervisor
        url = resolve_url(config.db)
        engine = make_engine(url, pool_size=config.db_pool)  # one pool per worker process
        ensure_current(engine)
        # one engine: make_engine sets up SQLite's waits (busy timeout, ?timeout= in the URL) and
        # its transactions (writers BEGIN IMMEDIATE; reads, transaction(write=False), BEGIN DEFERRED)
        app.state.engine, app.state.config = engine, config
        app.state.answers = AnswerCache(0 if _simulation(engine) else config.response_cache)
        app.state.stamps = Stamps(partial(read_generation, engine))
        # what the worker holds from here on (modules, routes, schemas: ~all its objects) is left
        # out of the cycle collector's full passes, which otherwise walk it every few thousand
        # requests and stall every request in flight (Python's gc.freeze, meant for servers)
        gc.freeze()
        try:
            yield
        finally:
            engine.dispose()

    app = FastAPI(title="opgov", version=__version__, lifespan=lifespan,
                  # /docs from files installed with opgov (api/docs.py), no CDN; no ReDoc
                  docs_url=None, redoc_url=None, swagger_ui_oauth2_redirect_url=None,
                  description="The operator-governance metadata service of PyTorch's core ATen opset: operators "
                              "and their history, the committee's proposals and votes, the lifecycle, the event "
                              "log and its Atom feed, compatibility checks and the weekly report. Reads are "
                              "public unless the server says otherwise; writes need `Authorization: Bearer "
                              "<token>` (`opgov tokens create`).")
    errors.install(app)
    contract.install(app, public_reads=config.public_reads)
    from opgov.api.inputs import RequestInputs
    from opgov.api.limits import RequestLimits

    # text no database stores and JSON keys given twice: 422 before any route (api/inputs.py)
    app.add_middleware(RequestInputs)

    # a whole request's body, and how many uploads without a token run at once (api/limits.py)
    app.add_middleware(RequestLimits, max_body=config.max_upload_bytes, anonymous_uploads=config.anonymous_uploads,
                       budget=max(config.upload_budget, config.max_upload_bytes), body_timeout=config.body_timeout,
                       request_seconds=config.request_seconds)
    # the routes of the declared use cases (opgov.usecases) are derived; the others are hand-written
    for router in (system.router, events.router, usecases.router(), checks.router,
                   docs.router, html.router):
        app.include_router(router)
    return app
