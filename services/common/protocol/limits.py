"""Per-user rate limits: a counter per user, limit and minute (``keys.rate``), shared by
every instance of a service, so a user's calls count wherever they land."""

from __future__ import annotations

import time

import redis
from arena.services.common.protocol import keys

WINDOW_S = 60


class RateLimiter:
    """Fixed one-minute windows: cheap (one round trip), and a burst at a window's edge is
    at most twice the limit."""

    def __init__(self, client: redis.Redis, service: str) -> None:
        self.client, self.service = client, service

    def hit(self, user: str, rate: str) -> int:
        """Count one call; returns the calls of this window so far."""
        key = keys.rate(self.service, user, rate, int(time.time()) // WINDOW_S)
        with self.client.pipeline(transaction=False) as pipe:
            pipe.incr(key)
            pipe.expire(key, 2 * WINDOW_S)
            used, _ = pipe.execute()
        return int(used)

    @staticmethod
    def retry_after_s() -> int:
        return WINDOW_S - int(time.time()) % WINDOW_S
