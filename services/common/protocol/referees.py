"""Referees advertise that they are alive, whether or not they run a match.

The match group's consumer list cannot say it: Redis (before 7.2) counts a consumer idle
from the last read that returned an entry, so a referee waiting for work looked dead ten
seconds after its last match, and one that never took a match was not listed at all.
Each referee scores its name in ``keys.REFEREES`` by when its presence ends, refreshed
with its matches' heartbeat; one that dies stops refreshing, and readers prune it.
"""

from __future__ import annotations

import time

import redis
from arena.services.common.protocol import keys
from redis.client import Pipeline

OWNER = "referee"  # each referee writes its own presence and reads the others' (GetStatus)


def advertise(pipe: Pipeline | redis.Redis, referee: str, ttl_ms: int) -> None:
    """Present for ``ttl_ms`` more (queued on ``pipe`` if it is a pipeline)."""
    pipe.zadd(keys.REFEREES, {referee: int(time.time() * 1000) + ttl_ms})


def retire(client: redis.Redis, referee: str) -> None:
    """A referee that stops on purpose leaves at once."""
    client.zrem(keys.REFEREES, referee)


def present(client: redis.Redis, now_ms: int | None = None) -> set[str]:
    """The referees whose presence has not ended."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    with client.pipeline(transaction=False) as pipe:
        pipe.zremrangebyscore(keys.REFEREES, "-inf", now_ms)
        pipe.zrange(keys.REFEREES, 0, -1)
        _, names = pipe.execute()
    return {name.decode() for name in names}
