"""Per-user limits kept in Redis: rate limits, a counter per user, limit and minute
(``keys.rate``), shared by every instance of a service, so a user's calls count wherever
they land; and byte counts of what a user stores (``bot_bytes``, ``match_bytes``), kept by
the stores' scripts with ``FITS_LUA`` and ``CHARGE_LUA``."""

from __future__ import annotations

import time

import redis
from arena.services.common.protocol import keys

from arena.errors import ResourceExhaustedError

# Lua for a store's scripts: whether ``size`` more bytes keep a user's byte counter within
# ``limit`` (0: no limit). Checked before anything is written; the script then adds them.
FITS_LUA = """
local function fits(counter, size, limit)
  local used = tonumber(redis.call('GET', counter) or '0')
  return limit <= 0 or used + size <= limit
end
"""

# Lua: count ``size`` bytes more (or fewer) against a user's byte counter and against the
# thing's own counter (what deleting it gives back).
CHARGE_LUA = """
local function charge(counter, own, size)
  if size ~= 0 then
    redis.call('INCRBY', counter, size)
    redis.call('INCRBY', own, size)
  end
end
"""


def counted_bytes(client: redis.Redis, counter: str) -> int:
    """The bytes a counter holds (0 before its first write)."""
    return int(client.get(counter) or 0)


def over_bytes(client: redis.Redis, counter: str, quota: str, limit: int, owner: str,
               what: str, size: int, hint: str) -> ResourceExhaustedError:
    """The refusal of ``size`` more bytes past ``owner``'s ``quota`` (its counter read now,
    for the message)."""
    used = counted_bytes(client, counter)
    return ResourceExhaustedError(f"quota {quota} is {limit:,}: {owner}'s {what} take "
                                  f"{used:,} bytes and this one {size:,} more ({hint})", quota)

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
