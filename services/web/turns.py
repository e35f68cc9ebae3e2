"""Each viewer's API requests in turn.

The gateway reads for every anonymous viewer with one token, so the services' per-user
``calls_at_once`` cannot tell those viewers apart: one client looping over large match
lists would take the referee from every other viewer. So the gateway keeps the same rule
per viewer (its token where reading needs one, else its client address): at most
``share`` requests at once, more wait for their turn in the order they came (anyio's
``CapacityLimiter`` serves waiters first come, first served), at most ``WAITING`` times
as many and each at most ``WAIT_S``; past that, 429. Live streams are bounded apart
(``live.StreamSlots``), and so are analyses (``AnalysisSlots``). Everything here runs on
the event loop: no locks.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import anyio
from arena.services.common import metrics

from arena.errors import ResourceExhaustedError, UnavailableError

WAITING = 4  # requests a viewer may have waiting, per request it may have running
WAIT_S = 30.0


class ViewerTurns:
    def __init__(self, share: int) -> None:
        self.share = share
        self._lines: dict[str, tuple[anyio.CapacityLimiter, int]] = {}  # viewer: line, users

    @asynccontextmanager
    async def turn(self, viewer: str) -> AsyncIterator[None]:
        """Run the body as one of ``viewer``'s requests, once its turn comes."""
        line, users = self._lines.get(viewer) or (anyio.CapacityLimiter(self.share), 0)
        if not line.available_tokens and line.statistics().tasks_waiting >= WAITING * self.share:
            metrics.LIMIT_REFUSALS.labels("web_viewer_requests").inc()
            raise ResourceExhaustedError(
                f"{self.share} requests from here are being answered and "
                f"{WAITING * self.share} more wait, the most one viewer may have: wait for "
                "them", "web_viewer_requests")
        self._lines[viewer] = (line, users + 1)
        borrower = object()
        try:
            with anyio.move_on_after(WAIT_S) as waited:
                await line.acquire_on_behalf_of(borrower)
            if waited.cancelled_caught:
                metrics.LIMIT_REFUSALS.labels("web_viewer_requests").inc()
                raise ResourceExhaustedError(
                    f"this request waited {WAIT_S:.0f} s for the {self.share} before it from "
                    "here to be answered: try again", "web_viewer_requests")
            try:
                yield
            finally:
                line.release_on_behalf_of(borrower)
        finally:
            line, users = self._lines[viewer]
            if users == 1:
                del self._lines[viewer]
            else:
                self._lines[viewer] = (line, users - 1)


class AnalysisSlots:
    """Analyses running through the gateway at once. One holds a gateway thread for the
    bot's whole time (up to the person's ``analyze_time_ms``), and every reader's requests
    run on the same threads; each person's ``analyses_at_once`` quota bounds them one
    person at a time, not forty people at once. Past ``limit`` the next is refused at once
    (503), not queued: waiting would hold the page as long as the searches before it."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.running = 0

    @contextmanager
    def slot(self) -> Iterator[None]:
        if self.running >= self.limit:
            metrics.LIMIT_REFUSALS.labels("web_analyses").inc()
            many = "analysis" if self.limit == 1 else "analyses"
            raise UnavailableError(
                f"this web gateway runs at most {self.limit} {many} at once "
                "(ARENA_WEB_ANALYSES) and is running them: try again when one ends")
        self.running += 1
        try:
            yield
        finally:
            self.running -= 1
