"""A broadcast's pages, on an event loop of their own: the gRPC stream is a generator here
(the one boundary replaced), everything else is the gateway's code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from arena.services.web import live
from arena.services.web.live import _STOP, Broadcast, Event


class Upstream:
    """A gRPC stream's stand-in: one message each time ``step`` is released; the
    client's close is what cancels a real one."""

    def __init__(self, count: int) -> None:
        self.count, self.step, self.closed = count, threading.Semaphore(0), threading.Event()

    def messages(self, client: Any) -> Iterator[int]:
        for number in range(self.count):
            assert self.step.acquire(timeout=10)
            yield number

    def close(self) -> None:
        self.closed.set()


def _events(number: int) -> list[Event]:
    return [("progress", {"n": number})]


def test_a_page_that_reads_nothing_holds_a_bounded_backlog_and_is_dropped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stalled page (a browser tab that stopped reading) kept every event of a long
    ladder in memory; now it holds at most MAX_BEHIND, and the pages reading go on."""
    monkeypatch.setattr(live, "MAX_BEHIND", 50)

    async def run() -> tuple[int, list[Any], int, bool]:
        upstream = Upstream(80)
        cast = Broadcast(upstream, upstream.messages, _events, keep_all=False)
        stalled, reading = cast.join(), cast.join()
        for _ in range(80):  # the reading page reads each event as it comes
            upstream.step.release()
            assert isinstance(await asyncio.wait_for(reading.get(), 10), bytes)
        held = stalled.qsize()
        tail = [stalled.get_nowait() for _ in range(held)][-1:]
        cast.leave(reading)
        return held, tail, len(cast.pages), upstream.closed.is_set()

    held, tail, pages, closed = asyncio.run(run())
    assert held == 50 + 1 and tail == [_STOP]  # dropped: it reads what it holds, then ends
    assert pages == 0 and closed  # the last page that reads left: the stream is cancelled


def test_a_page_that_joins_late_starts_from_the_latest_progress() -> None:
    async def run() -> list[Any]:
        upstream = Upstream(3)
        cast = Broadcast(upstream, upstream.messages, _events, keep_all=False)
        first = cast.join()
        for _ in range(3):
            upstream.step.release()
            await asyncio.wait_for(first.get(), 10)
        late = cast.join()
        return [late.get_nowait() for _ in range(late.qsize())]

    assert asyncio.run(run())[0] == b'event: progress\ndata: {"n":2}\n\n'
