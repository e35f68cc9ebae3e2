"""Open reads answered once for every viewer.

While reading is open the gateway reads with one token for everyone, so every viewer of
a page asks the services the very same question: thirty people watching a running
ladder each reload its standings and its 200 games after every game, and that took the
referee's CPU from judging the ladder's moves (it played 2.4 times fewer games). So a GET
of the API is answered by the services at most once per address (path and query) every
``FRESH_S``: requests that come while it is being answered wait for that answer, and
those that come within ``FRESH_S`` after it get it too. An action through this gateway
(one not refused) forgets every kept answer, so its author reads what it did at once
(other replicas may show the older state for up to ``FRESH_S``). Only answers of 200 are
kept. Where reading needs a token, each reads as themselves and nothing is shared.
Everything here runs on the event loop: no locks.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

FRESH_S = 1.0
KEPT = 256  # answers kept at most, and ...
KEPT_BYTES = 64 << 20  # ... their bodies' bytes

Handler = Callable[[Request], Awaitable[Response]]


class SharedReads:
    def __init__(self) -> None:
        self._kept: OrderedDict[str, tuple[float, Response]] = OrderedDict()  # by expiry
        self._bytes = 0
        self._pending: dict[str, asyncio.Future[Response | None]] = {}
        self._generation = 0  # one more at each action: answers begun before are not kept

    def shared(self, handler: Handler) -> Handler:
        """``handler``'s answers shared as the module says."""
        async def answer(request: Request) -> Response:
            # The same question asked with its parameters in another order is one.
            key = f"{request.url.path}?{urlencode(sorted(request.query_params.multi_items()))}"
            kept = self._kept.get(key)
            if kept is not None and kept[0] > time.monotonic():
                return kept[1]
            pending = self._pending.get(key)
            if pending is None:
                return await self._answer(key, handler, request)
            found = await asyncio.shield(pending)
            return found if found is not None else await handler(request)  # it failed
        return answer

    async def _answer(self, key: str, handler: Handler, request: Request) -> Response:
        future: asyncio.Future[Response | None] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        generation = self._generation
        shareable: Response | None = None
        try:
            response = await handler(request)
            if response.status_code == 200 and isinstance(getattr(response, "body", None),
                                                          bytes):
                shareable = response
                if generation == self._generation:
                    self._keep(key, response)
            return response
        finally:
            if self._pending.get(key) is future:
                del self._pending[key]
            future.set_result(shareable)

    def _keep(self, key: str, response: Response) -> None:
        now = time.monotonic()
        self._drop(key)
        self._kept[key] = (now + FRESH_S, response)
        self._bytes += len(response.body)
        while self._kept and (len(self._kept) > KEPT or self._bytes > KEPT_BYTES
                              or next(iter(self._kept.values()))[0] <= now):
            self._drop(next(iter(self._kept)))

    def _drop(self, key: str) -> None:
        kept = self._kept.pop(key, None)
        if kept is not None:
            self._bytes -= len(kept[1].body)

    def forget(self) -> None:
        """Keep nothing more, and wait for no answer begun before: an action changed
        what the services would answer."""
        self._kept.clear()
        self._bytes = 0
        self._pending.clear()
        self._generation += 1
