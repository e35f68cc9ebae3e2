"""Live streams as server-sent events: a ladder's progress (``WatchLadder``) and a match's
moves (``WatchMatch``), each relayed from one gRPC stream to one page.

The SDK's streams block, so each live page gets a thread that reads its gRPC stream and
hands every message to the event loop. The stream's client belongs to that page alone:
when the page goes away (or the server stops) the client is closed, which cancels the
gRPC call and ends the thread. Events are small JSON objects::

    event: ply
    data: {"ply": 12, "board": "...", ...}

A comment line every ``KEEPALIVE_S`` keeps proxies from closing a quiet stream, and
``end`` tells the page the stream is over (so it does not reconnect).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import Any

from arena.clients.sdk import ArenaClient
from arena.services.common import metrics
from arena.services.common.shares import Refusal, Shares
from arena.services.web.errors import http_status, public
from arena.services.web.views import GameTrack, Json, match_summary_json, progress_json, result_json

from arena.errors import ArenaError, ResourceExhaustedError, UnavailableError
from arena.v1 import ladder_pb2, match_pb2

log = logging.getLogger(__name__)

KEEPALIVE_S = 15.0
RETRY_MS = 2000
_END = object()

Event = tuple[str, Json]


def sse(name: str, data: Json) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class StreamSlots:
    """The live streams open at once, against two ceilings: the gateway's, and each
    viewer's share of it, so that one client holding streams cannot shut everyone out."""

    def __init__(self, limit: int, per_viewer: int) -> None:
        self.streams, self.per_viewer = Shares(limit), per_viewer

    def take(self, viewer: str) -> None:
        """Count one more stream of ``viewer``, or raise: ResourceExhausted when the viewer
        has its share open (its own doing), Unavailable when the gateway is full."""
        refusal = self.streams.take(viewer, self.per_viewer)
        if refusal is not None:
            metrics.LIMIT_REFUSALS.labels(f"web_live_pages_{refusal.name.lower()}").inc()
        if refusal is Refusal.SHARE:
            raise ResourceExhaustedError(
                f"{self.per_viewer} live pages are open from here, the most one viewer may "
                "have: close one", "web_live_pages_share")
        if refusal is Refusal.TOTAL:
            raise UnavailableError("too many live pages open: try again shortly")

    def give_back(self, viewer: str) -> None:
        self.streams.give_back(viewer)


_STOP = object()  # a stream's last item after an error event: no "end" follows
MAX_BEHIND = 2000  # events a page may have unread before it is dropped


class Broadcast:
    """One gRPC stream, read in a thread of its own, and the pages reading it. A page
    that joins is sent what the stream said so far (``keep_all``: every event, a match's
    plies; else the last, a ladder's latest progress, which carries the whole ladder),
    then what comes. When the last page leaves, the gRPC stream is cancelled. Runs on
    the event loop, but for the reading thread, which only posts to it. A page reading
    with its own token has one of its own; while reading is open the pages of one thing
    share one (``Broadcasts``)."""

    def __init__(self, client: ArenaClient, open_stream: Callable[[ArenaClient], Iterable[Any]],
                 to_events: Callable[[Any], list[Event]], keep_all: bool,
                 on_over: Callable[[Broadcast], None] = lambda cast: None) -> None:
        self.client, self.to_events, self.keep_all = client, to_events, keep_all
        self.on_over = on_over  # called once no page may join any more
        self.said: list[bytes] = []  # what a page that joins now is sent first
        self.pages: set[asyncio.Queue[Any]] = set()
        self.closed = threading.Event()
        loop = asyncio.get_running_loop()

        def post(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: the server stopped
                loop.call_soon_threadsafe(self._deliver, item)

        def read() -> None:
            try:
                for message in open_stream(client):
                    post(message)
                post(_END)
            except Exception as exc:
                if self.closed.is_set():
                    return  # we cancelled it: nobody reads any more
                if not isinstance(exc, ArenaError):
                    log.exception("live stream failed")  # not a service's answer: a bug
                post(exc)

        threading.Thread(target=read, name="live-stream", daemon=True).start()

    def join(self) -> asyncio.Queue[Any]:
        queue: asyncio.Queue[Any] = asyncio.Queue()
        for chunk in self.said:
            queue.put_nowait(chunk)
        self.pages.add(queue)
        return queue

    def leave(self, queue: asyncio.Queue[Any]) -> None:
        self.pages.discard(queue)
        if not self.pages:
            self._close()

    def _close(self) -> None:
        self.on_over(self)
        if not self.closed.is_set():
            self.closed.set()
            self.client.close()  # cancels the gRPC call; the reading thread then ends

    def _deliver(self, item: Any) -> None:
        if item is _END or isinstance(item, BaseException):
            last: list[Any] = [_END]
            if isinstance(item, BaseException):
                item = public(item)
                status, code = http_status(item)
                last = [sse("error", {"status": code, "http_status": status,
                                      "message": str(item) if status != 500
                                      else "internal error"}), _STOP]
            self._close()
            for queue in self.pages:
                for each in last:
                    queue.put_nowait(each)
            return
        chunks = [sse(name, data) for name, data in self.to_events(item)]
        if self.keep_all:
            self.said += chunks
        elif chunks:
            self.said = chunks[-1:]
        for queue in list(self.pages):
            if queue.qsize() >= MAX_BEHIND:  # a page that reads nothing holds no more
                self.pages.discard(queue)  # (it ends when it reads what it holds; a
                queue.put_nowait(_STOP)  # browser then reconnects and starts afresh)
                continue
            for chunk in chunks:
                queue.put_nowait(chunk)


class Broadcasts:
    """The shared ``Broadcast`` of each thing watched, while reading is open (everyone
    reads the same then, with the service token): one gRPC stream per match or ladder,
    whatever the number of pages open on it; when it ends, the next page starts a new
    one. Sixty pages of a running ladder, each with a stream of its own, took the ladder
    service's CPU and the ladder played half its games."""

    def __init__(self) -> None:
        self.casts: dict[str, Broadcast] = {}

    def get(self, key: str, start: Callable[[Callable[[Broadcast], None]], Broadcast],
            ) -> Broadcast:
        """The broadcast of ``key``, started (``start(on_over)``) if there is none."""
        cast = self.casts.get(key)
        if cast is None:
            cast = self.casts[key] = start(lambda over: self._over(key, over))
        return cast

    def _over(self, key: str, cast: Broadcast) -> None:
        if self.casts.get(key) is cast:
            del self.casts[key]


async def follow(cast: Callable[[], Broadcast], stopping: asyncio.Event,
                 on_close: Callable[[], None]) -> AsyncIterator[bytes]:
    """One page's server-sent events, read from the broadcast ``cast()`` gives."""
    try:
        reading = cast()
        queue = reading.join()
    except BaseException:
        on_close()
        raise
    try:
        yield f"retry: {RETRY_MS}\n\n".encode()
        async for item in _items(queue, stopping):
            if item is None:
                yield b": keepalive\n\n"
            elif item is _END:
                yield sse("end", {})
                return
            elif item is _STOP:
                return
            else:
                yield item
        yield sse("bye", {"reason": "the server is stopping"})
    finally:
        reading.leave(queue)
        on_close()


async def _items(queue: asyncio.Queue[Any], stopping: asyncio.Event) -> AsyncIterator[Any]:
    """Queued items as they come, None after every quiet ``KEEPALIVE_S``; stops when
    the server is stopping."""
    quiet_since = time.monotonic()
    while not stopping.is_set():
        try:
            item = await asyncio.wait_for(queue.get(), timeout=0.5)
        except TimeoutError:
            if time.monotonic() - quiet_since >= KEEPALIVE_S:
                quiet_since = time.monotonic()
                yield None
            continue
        quiet_since = time.monotonic()
        yield item


# -- what each stream turns into ------------------------------------------------------------


def ladder_events(progress: ladder_pb2.LadderProgress) -> list[Event]:
    return [("progress", progress_json(progress))]


class MatchEvents:
    """A match's gRPC events as page events: ``match`` once (the header and the plies
    before the bots' first move), ``ply`` per move or pass, ``ended`` with the result."""

    def __init__(self) -> None:
        self.track: GameTrack | None = None
        self.header: match_pb2.Match | None = None

    def __call__(self, event: match_pb2.MatchEvent) -> list[Event]:
        kind = event.WhichOneof("event")
        if kind == "started":
            return self._started(event.started.match)
        if self.track is None:
            return []  # a move before the header cannot be placed; the stream starts with one
        if kind == "move":
            return _ply(self.track.add_record(event.move))
        if kind == "pass":
            return _ply(self.track.add_pass(getattr(event, "pass")))  # `pass` is a keyword
        if kind == "ended" and self.header is not None:
            cancelled = event.ended.result.termination == match_pb2.TERMINATION_CANCELLED
            self.header.status = (match_pb2.MATCH_STATUS_CANCELLED if cancelled
                                  else match_pb2.MATCH_STATUS_FINISHED)
            self.header.result.CopyFrom(event.ended.result)
            return [("ended", {"result": result_json(self.header),
                               "status": "cancelled" if cancelled else "finished"})]
        return []

    def _started(self, match: match_pb2.Match) -> list[Event]:
        if self.track is not None:
            return []  # the same match again, after a reconnect upstream
        self.header = match_pb2.Match()
        self.header.CopyFrom(match)
        del self.header.moves[:]
        self.track = GameTrack.of(self.header)
        for record in match.moves:
            self.track.add_record(record)
        data = match_summary_json(self.header)
        data |= {"plies": self.track.plies, "opening_plies": self.track.opening_plies}
        return [("match", data)]


def _ply(view: Json | None) -> list[Event]:
    return [] if view is None else [("ply", view)]


def watch_match(match_id: str) -> Callable[[ArenaClient], Iterator[match_pb2.MatchEvent]]:
    return lambda client: client.watch_match(match_id)


def watch_ladder(ladder_id: str) -> Callable[[ArenaClient],
                                             Iterator[ladder_pb2.LadderProgress]]:
    return lambda client: client.watch_ladder(ladder_id)
