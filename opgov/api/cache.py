"""HTTP caching of read answers: a strong ETag with ``If-None-Match`` → 304, and a bounded
server-side cache of the serialized bytes.

An answer is cached under its key (the route and its arguments) and a *generation*: the
database's version stamp (the id of the newest event in the append-only log,
:func:`opgov.reads.common.log_version`) and today's date (UTC). Every write that can change
an answer logs an event in its own transaction, so any write, through any worker or replica
sharing the database, moves the stamp and the next read computes the answer afresh; the date
is there because findings are judged against the BC exceptions in force today, which expire by
date. The stamp is read before the answer, in the same transaction, so a cached answer is never
older than its stamp.

Not used on a simulation database (``opgov db upgrade --simulation``), where commands may claim
a time ahead of the server's clock and so write what only becomes true later in the day.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from starlette.responses import Response

MEDIA_TYPE = "application/json"
DEFAULT_ENTRIES = 1024  # OPGOV_RESPONSE_CACHE: at most this many answers (0: no server-side cache)
MAX_BYTES = 64 * 1024 * 1024  # and at most this many bytes of them


@dataclass(frozen=True)
class Answer:
    """A serialized answer: its bytes, strong ETag and extra headers (``Deprecation``, ``Sunset``)."""

    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    etag: str = ""

    @classmethod
    def of(cls, body: bytes, headers: dict[str, str] | None = None) -> Answer:
        return cls(body=body, headers=dict(headers or {}), etag=f'"{hashlib.sha256(body).hexdigest()[:32]}"')

    def response(self, if_none_match: str | None, *, private: bool = False) -> Response:
        """200 with the body, or 304 when ``If-None-Match`` names this answer's ETag (RFC 9110 13.1.2:
        weak comparison, ``*`` matches any)."""
        headers = {**self.headers, "ETag": self.etag,
                   # clients and caches may keep it but must ask again: any write can change it
                   "Cache-Control": "private, no-cache" if private else "no-cache"}
        if if_none_match and matches(if_none_match, self.etag):
            return Response(status_code=304, headers=headers)
        return Response(self.body, media_type=MEDIA_TYPE, headers=headers)


def matches(if_none_match: str, etag: str) -> bool:
    if if_none_match.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in if_none_match.split(","))


class AnswerCache:
    """Answers of the current generation, least recently used dropped first, bounded in count and
    bytes. Thread-safe (sync routes run in a thread pool). A newer generation empties it: answers
    of an older one are never served again."""

    def __init__(self, max_entries: int = DEFAULT_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._generation: tuple | None = None
        self._answers: OrderedDict[tuple, Answer] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.max_entries > 0

    def get(self, key: tuple, generation: tuple) -> Answer | None:
        with self._lock:
            if generation != self._generation:
                return None
            answer = self._answers.get(key)
            if answer is not None:
                self._answers.move_to_end(key)
            return answer

    def put(self, key: tuple, generation: tuple, answer: Answer) -> None:
        if not self.enabled or len(answer.body) > self.max_bytes:
            return
        with self._lock:
            if generation != self._generation:
                if self._generation is not None and generation < self._generation:
                    return  # a request that began before the latest write: keep the newer generation
                self._generation, self._bytes = generation, 0
                self._answers.clear()
            previous = self._answers.pop(key, None)
            self._bytes -= len(previous.body) if previous else 0
            self._answers[key] = answer
            self._bytes += len(answer.body)
            while len(self._answers) > self.max_entries or self._bytes > self.max_bytes:
                _, dropped = self._answers.popitem(last=False)
                self._bytes -= len(dropped.body)

    def __len__(self) -> int:
        return len(self._answers)


class Stamps:
    """The current generation (version stamp, date) for the requests of one worker's event loop,
    read by one query for all the requests waiting for it.

    A request may only use a stamp read that *began after it arrived*: then every write
    committed before the request is counted. ``current()`` joins the read that has not begun yet,
    or schedules one; the read begins (in a thread) only after it stops taking requests. Under
    load, one query and one trip to a thread serve every request that arrived meanwhile, instead
    of one each."""

    def __init__(self, read) -> None:
        self._read = read  # () -> generation, blocking: runs in a worker thread
        self._next: asyncio.Future | None = None

    async def current(self) -> tuple:
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().call_soon(self._begin, self._next)
        return await asyncio.shield(self._next)

    def _begin(self, result: asyncio.Future) -> None:
        self._next = None  # requests arriving from now on wait for the next read
        asyncio.ensure_future(self._run(result))

    async def _run(self, result: asyncio.Future) -> None:
        from starlette.concurrency import run_in_threadpool

        try:
            result.set_result(await run_in_threadpool(self._read))
        except asyncio.CancelledError:  # the server is stopping
            result.cancel()
            raise
        except Exception as err:  # noqa: BLE001 - every waiting request gets the error (a busy database)
            result.set_exception(err)


def read_generation(engine) -> tuple:
    """(the newest event's id, today's UTC date), in a read transaction of its own."""
    from opgov.core.clock import SystemClock
    from opgov.db.engine import transaction
    from opgov.reads.common import log_version

    with transaction(engine, write=False, orm=False) as connection:
        return log_version(connection), SystemClock().now().date()
