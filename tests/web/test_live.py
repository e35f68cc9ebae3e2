"""A broadcast's pages, on an event loop of their own: the gRPC stream is a generator here
(the one boundary replaced), everything else is the gateway's code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

from arena.services.web.live import _STOP, MAX_BEHIND, Broadcast, Event


class Upstream:
    """A gRPC stream's stand-in: ``count`` messages, after ``go`` is set; the client's
    close is what cancels a real one."""

    def __init__(self, count: int) -> None:
        self.count, self.go, self.closed = count, threading.Event(), threading.Event()

    def messages(self, client: Any) -> Iterator[int]:
        self.go.wait(10)
        yield from range(self.count)

    def close(self) -> None:
        self.closed.set()


def _events(number: int) -> list[Event]:
    return [("progress", {"n": number})]


def test_a_page_that_reads_nothing_holds_a_bounded_backlog_and_is_dropped() -> None:
    """A stalled page (a browser tab that stopped reading) kept every event of a long
    ladder in memory; now it holds at most MAX_BEHIND, and the pages reading go on."""
    async def run() -> tuple[int, list[Any], int, bool]:
        upstream = Upstream(MAX_BEHIND * 2)
        cast = Broadcast(upstream, upstream.messages, _events, keep_all=False)
        stalled, reading = cast.join(), cast.join()
        upstream.go.set()
        got = 0
        while got < MAX_BEHIND * 2:  # the reading page reads everything, then "end"
            item = await asyncio.wait_for(reading.get(), 10)
            got += isinstance(item, bytes)
        held = stalled.qsize()
        tail = [stalled.get_nowait() for _ in range(held)][-1:]
        cast.leave(reading)
        return held, tail, len(cast.pages), upstream.closed.is_set()

    held, tail, pages, closed = asyncio.run(run())
    assert held == MAX_BEHIND + 1 and tail == [_STOP]  # dropped: it reads what it holds
    assert pages == 0 and closed  # the last page that reads left: the stream is cancelled


def test_a_page_that_joins_late_starts_from_the_latest_progress() -> None:
    async def run() -> list[Any]:
        upstream = Upstream(3)
        cast = Broadcast(upstream, upstream.messages, _events, keep_all=False)
        first = cast.join()
        upstream.go.set()
        for _ in range(3):
            await asyncio.wait_for(first.get(), 10)
        late = cast.join()
        return [late.get_nowait() for _ in range(late.qsize())]

    assert asyncio.run(run())[0] == b'event: progress\ndata: {"n":2}\n\n'
