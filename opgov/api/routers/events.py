"""The event log: paged JSON, and an Atom feed per operator for backend authors to subscribe to."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request, Response

from opgov.api.deps import Reader
from opgov.services.results import EventsPage, LogVerification

router = APIRouter(tags=["events"])


@router.get("/api/v1/events", response_model=EventsPage)
def list_events(ctx: Reader, operator: str | None = None,
                action: str | None = Query(None, description="an action, or a prefix ending in '.': proposal."),
                since: str | None = Query(None, description="ISO 8601 date or time"),
                limit: int = Query(100, ge=1, le=1000), before: int | None = Query(None, description="event id")
                ) -> EventsPage:
    """The newest ``limit`` events matching the filters (older than ``before``), oldest first."""
    from opgov.services.admin import read_log

    events = read_log(ctx, op=operator, since=since, limit=limit, action=action, before_id=before)
    return EventsPage(events=events, next_before=events[0].id if len(events) == limit else None)


@router.get("/api/v1/events/verify", response_model=LogVerification)
def verify_events(ctx: Reader) -> LogVerification:
    """Walk the event log's hash chain, oldest first: ``intact``, or the first broken link (an event
    changed, removed or inserted since it was written): what `opgov log verify` prints."""
    from opgov.services.admin import verify_log

    return verify_log(ctx)


ATOM = "http://www.w3.org/2005/Atom"


@router.get("/feeds/events.atom", response_class=Response,
            responses={200: {"content": {"application/atom+xml": {}}, "description": "an Atom 1.0 feed"}})
def events_feed(request: Request, ctx: Reader, operator: str | None = None,
                limit: int = Query(50, ge=1, le=500)) -> Response:
    """The newest events (about ``operator``), newest first, as an Atom feed."""
    from xml.etree import ElementTree as ET

    from opgov.services.admin import read_log

    events = read_log(ctx, op=operator, limit=limit)[::-1]
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    host = request.url.hostname or "localhost"

    def add(parent, tag, text=None, **attrs):
        element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
        if text is not None:
            element.text = text
        return element

    title = f"opgov: {operator}" if operator else "opgov: every governance event"
    add(feed, "title", title)
    add(feed, "id", f"tag:{host},2026:opgov/events" + (f"/{operator}" if operator else ""))
    add(feed, "updated", (events[0].at if events else ctx.now()).isoformat())
    add(feed, "link", rel="self", href=str(request.url))
    add(add(feed, "author"), "name", "opgov")
    for e in events:
        entry = add(feed, "entry")
        add(entry, "id", f"tag:{host},2026:opgov/event/{e.id}")
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
