"""The event log's Atom feed, per operator, for backend authors to subscribe to (the paged JSON log and
its verification are use cases: opgov.usecases.admin)."""

from __future__ import annotations

from urllib.parse import quote

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from pydantic import BeforeValidator

from opgov.api.deps import Reader
from opgov.api.fields import OperatorQuery
from opgov.usecases.fields import _number_text

router = APIRouter(tags=["events"])


ATOM = "http://www.w3.org/2005/Atom"


@router.get("/feeds/events.atom", response_class=Response,
            responses={200: {"content": {"application/atom+xml": {}}, "description": "an Atom 1.0 feed"}})
def events_feed(request: Request, ctx: Reader, operator: OperatorQuery = None,
                limit: Annotated[int, BeforeValidator(_number_text)] = Query(50, ge=1, le=500)) -> Response:
    """The newest events (about ``operator``), newest first, as an Atom feed.

    Links and ids never come from the request's Host header: with the server's public URL
    (``--public-url``) links are absolute and ids are ``tag:`` URIs of its host; without it links
    are relative to the feed (the subtitle says so) and ids are UUIDs named by the log's first
    event, so they are the same whatever host a reader used."""
    from xml.etree import ElementTree as ET

    from opgov.reads.database import read_log

    events = read_log(ctx, op=operator, limit=limit)[::-1]
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    from urllib.parse import urlsplit
    from uuid import NAMESPACE_URL, uuid5

    from opgov.reads.database import log_root

    base = request.app.state.config.public_url  # None: relative links (see the subtitle)
    if base is not None:
        tag = f"tag:{urlsplit(base).hostname},2026:opgov/"
        iri = lambda name: tag + name  # noqa: E731
    else:
        root = log_root(ctx)
        iri = lambda name: f"urn:uuid:{uuid5(NAMESPACE_URL, f'opgov:{root}:{name}')}"  # noqa: E731
    path = "/feeds/events.atom" + (f"?{request.url.query}" if request.url.query else "")

    def add(parent, tag, text=None, **attrs):
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        if text is not None:
            element.text = text
        return element

    title = f"opgov: {operator}" if operator else "opgov: every governance event"
    add(feed, "title", title)
    if base is None:
        add(feed, "subtitle", "links are relative to this feed: set the server's public URL "
                              "(opgov serve --public-url, OPGOV_PUBLIC_URL) for absolute ones")
    add(feed, "id", iri("events" + (f"/{operator}" if operator else "")))
    add(feed, "updated", (events[0].at if events else ctx.now()).isoformat())
    add(feed, "link", rel="self", href=f"{base or ''}{path}")
    add(feed, "link", rel="alternate", type="application/json",
        href=f"{base or ''}/api/v1/events" + (f"?operator={quote(operator)}" if operator else ""))
    add(add(feed, "author"), "name", "opgov")
    for e in events:
        entry = add(feed, "entry")
        add(entry, "id", iri(f"event/{e.id}"))
        add(entry, "title", f"{e.action}: {e.subject}")
        add(entry, "updated", e.at.isoformat())
        add(add(entry, "author"), "name", e.actor)
        add(entry, "category", term=e.action)
        summary = e.reason or ""
        if e.after:
            summary += ("; " if summary else "") + ", ".join(f"{k}: {v}" for k, v in e.after.items())
        add(entry, "summary", summary or e.action)
    body = ET.tostring(feed, encoding="unicode", xml_declaration=True)
    return Response(body, media_type="application/atom+xml")
