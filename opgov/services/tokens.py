"""API tokens of `opgov serve`: create, list, revoke, and authenticate a request.

A token is 32 random bytes (``secrets``), shown once; the database keeps only its sha256, and a
presented token is compared with the stored hash in constant time. A token belongs to one member
record (``member_id``), not to a name: the actor of a request is that member, with the role the
member has at that request. Removing a member revokes its tokens, and a member added again under
the same name is a new record with no token. Maintainers create and revoke tokens (a member may
revoke their own); on a database without members, the first token makes its member the first
maintainer, as ``opgov members add`` bootstraps.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from sqlalchemy import select

from opgov.core.errors import BadInput, NotFound, PolicyRefusal
from opgov.db.models import ApiToken, Member
from opgov.reads.common import Ctx, single_user_mode
from opgov.reads.database import PREFIX, hash_token
from opgov.core.identity import member_name
from opgov.core.text import require_text
from opgov.services.common import log_event, require
from opgov.results.tokens import TokenCreated, TokenView

MAX_EXPIRES_DAYS = 36500  # a hundred years; a date further on does not fit


def _view(row: ApiToken, ctx: Ctx) -> dict:
    now = ctx.now()
    state = ("revoked" if row.revoked_at is not None
             else "expired" if row.expires_at is not None and row.expires_at <= now else "active")
    return {"id": row.id, "member": row.member, "created_at": row.created_at, "created_by": row.created_by,
            "expires_at": row.expires_at, "revoked_at": row.revoked_at, "state": state}


def create_token(ctx: Ctx, member: str, *, expires_days: int | None = None) -> TokenCreated:
    """A new token for ``member`` (maintainers only; on a database without members it makes
    ``member`` the first maintainer). The secret is in the result only."""
    member = require_text(member, "the member")
    if expires_days is not None and not 1 <= expires_days <= MAX_EXPIRES_DAYS:
        raise BadInput(f"--expires must be between 1 and {MAX_EXPIRES_DAYS} days")
    session = ctx.session
    if single_user_mode(session):
        require(ctx, "tokens", "create API tokens")  # refuses a request without a token
        record = Member(name=member_name(member), role="maintainer", added_at=ctx.now(), added_by=ctx.actor)
        session.add(record)
        log_event(ctx, "member.add", f"member:{record.name}", after={"role": "maintainer"},
                  reason="first token on a database without members")
        session.flush()
    else:
        require(ctx, "tokens", "create API tokens")
        record = session.scalars(select(Member).where(Member.name == member)).first()
        if record is None:
            raise NotFound(f"unknown member {member!r} (see `opgov members list`)")
    member = record.name  # as stored (a first member's name normalised, opgov.core.identity)
    secret = PREFIX + secrets.token_urlsafe(32)
    now = ctx.now()
    row = ApiToken(member=member, member_id=record.id, token_hash=hash_token(secret), created_at=now,
                   created_by=ctx.actor,
                   expires_at=now + timedelta(days=expires_days) if expires_days else None)
    session.add(row)
    session.flush()
    log_event(ctx, "token.create", f"member:{member}",
              after={"token": row.id, "expires_at": row.expires_at.isoformat() if row.expires_at else None})
    return TokenCreated(**_view(row, ctx), token=secret)


def list_tokens(ctx: Ctx, *, member: str | None = None) -> list[TokenView]:
    """Tokens (never their secrets), oldest first; maintainers see all, others their own."""
    query = select(ApiToken).order_by(ApiToken.id)
    if member:
        query = query.where(ApiToken.member == member)
    if ctx.anonymous or member != ctx.actor:
        require(ctx, "tokens", "list other members' tokens")
    return [TokenView(**_view(row, ctx)) for row in ctx.session.scalars(query)]


def revoke_token(ctx: Ctx, token_id: int) -> TokenView:
    """Revoke a token now (maintainers; a member their own). Revoking twice is refused."""
    session = ctx.session
    from opgov.db.limits import MAX_INTEGER

    row = (session.scalars(select(ApiToken).where(ApiToken.id == token_id).with_for_update()).first()
           if 0 < token_id <= MAX_INTEGER else None)
    if row is None:
        raise NotFound(f"unknown token {token_id} (see `opgov tokens list`)")
    if ctx.anonymous or row.member != ctx.actor:
        require(ctx, "tokens", "revoke other members' tokens")
    if row.revoked_at is not None:
        raise PolicyRefusal(f"token {token_id} was already revoked by {row.revoked_by}")
    row.revoked_at, row.revoked_by = ctx.now(), ctx.actor
    log_event(ctx, "token.revoke", f"member:{row.member}", before={"token": row.id})
    session.flush()
    return TokenView(**_view(row, ctx))


def revoke_member_tokens(ctx: Ctx, member: Member, *, reason: str) -> list[int]:
    """Revoke every live token of the member record ``member`` (one event each); their ids."""
    rows = ctx.session.scalars(select(ApiToken).where(ApiToken.member_id == member.id, ApiToken.revoked_at.is_(None))
                               .order_by(ApiToken.id).with_for_update()).all()
    for row in rows:
        row.revoked_at, row.revoked_by = ctx.now(), ctx.actor
        log_event(ctx, "token.revoke", f"member:{row.member}", before={"token": row.id}, reason=reason)
    ctx.session.flush()
    return [row.id for row in rows]


