"""Dependencies of the routes: the clock, the authenticated member, and one transaction per
request (committed before the response is sent, rolled back on any error)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated, Iterator

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPBearer

from opgov.core.clock import Clock, SystemClock
from opgov.core.identity import ANONYMOUS
from opgov.reads.common import Ctx


def clock() -> Clock:
    """The server's clock: a client never sets the time."""
    return SystemClock()


def _unauthorized(detail: str) -> HTTPException:
    return HTTPException(401, detail, headers={"WWW-Authenticate": "Bearer"})


def _ctx(request: Request, authorization: str | None, now: Clock, *, write: bool, orm: bool = True) -> Iterator[Ctx]:
    from opgov.db.engine import transaction
    from opgov.reads.database import authenticate

    config = request.app.state.config
    # a read begins DEFERRED on SQLite and may not write (opgov.db.engine's shared lock/wait set-up)
    with transaction(request.app.state.engine, write=write, orm=orm) as session:
        actor, token_id, anonymous = ANONYMOUS, None, True
        if authorization:
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise _unauthorized("the Authorization header must be `Bearer <token>`")
            who = authenticate(session, token.strip(), now.now())
            if who is None:
                raise _unauthorized("the token is unknown, revoked or expired")
            (actor, token_id), anonymous = who, False
        elif write:
            raise _unauthorized("this request changes governance: it needs `Authorization: Bearer <token>` "
                                "(see `opgov tokens create`)")
        elif not config.public_reads:
            raise _unauthorized("reads need a token on this server (see `opgov tokens create`)")
        # without a token the actor is a label, never a member: role checks refuse it by the flag
        yield Ctx(session=session, actor=actor, clock=now, token_id=token_id, anonymous=anonymous)


# a read outside FastAPI's dependencies (a route doing all its blocking work in one thread), on a
# Core connection: the ORM session is opened on it only when a service needs one (orm_session)
reading = contextmanager(lambda request, authorization, now: _ctx(request, authorization, now, write=False, orm=False))


# a write outside FastAPI's dependencies (a route whose slow work must not hold the write lock);
# such a route declares ``writes`` among its dependencies, so the contract knows it writes
writing = contextmanager(lambda request, authorization, now: _ctx(request, authorization, now, write=True))


def writes() -> None:
    """Marks a route that opens its write transactions itself (``writing``)."""


@contextmanager
def orm_session(ctx: Ctx) -> Iterator[Ctx]:
    """``ctx`` with an ORM session inside the transaction of its Core connection (``reading``)."""
    from sqlalchemy.orm import Session

    from opgov.db.events import logged, logged_so_far

    with Session(ctx.session, expire_on_commit=False) as session:
        yield Ctx(session=session, actor=ctx.actor, clock=ctx.clock, token_id=ctx.token_id, anonymous=ctx.anonymous)
        if logged_so_far(session):  # events logged on it belong to the connection's transaction
            logged(ctx.session).extend(logged_so_far(session))


class _Bearer(HTTPBearer):
    """The ``Authorization`` header as it came (None when absent): ``_ctx`` refuses a malformed one
    with 401 itself. Declared as HTTP bearer security, so the OpenAPI document says how to
    authenticate (opgov.api.contract)."""

    async def __call__(self, request: Request) -> str | None:  # type: ignore[override]
        return request.headers.get("authorization")


bearer = _Bearer(auto_error=False, scheme_name="bearer")
Authorization = Annotated[str | None, Depends(bearer)]


def reader(request: Request, authorization: Authorization, now: Clock = Depends(clock)) -> Iterator[Ctx]:
    """A read-only request: public unless the server says otherwise; a token given must be valid."""
    yield from _ctx(request, authorization, now, write=False)


def writer(request: Request, authorization: Authorization, now: Clock = Depends(clock)) -> Iterator[Ctx]:
    """A request that writes: the actor is the member whose token it carries."""
    yield from _ctx(request, authorization, now, write=True)


# scope="function": the transaction ends (commits) before the response is sent
Reader = Annotated[Ctx, Depends(reader, scope="function")]
Writer = Annotated[Ctx, Depends(writer, scope="function")]
