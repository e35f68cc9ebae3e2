"""Referees advertise that they are alive, whether or not they run a match.

The match group's consumer list cannot say it: Redis (before 7.2) counts a consumer idle
from the last read that returned an entry, so a referee waiting for work looked dead ten
seconds after its last match, and one that never took a match was not listed at all.
Each referee scores its name in ``keys.REFEREES`` by when its presence ends, refreshed
with its matches' heartbeat; one that dies stops refreshing, and readers prune it.

A referee restarted under its name (``arena up`` keeps names) is present again at once,
while the match jobs its earlier run held stay pending under that name until a referee
takes them over (``match_idle_ms``). So each run also says when it started
(``keys.referee``, Redis's clock): a job pending under its name that was last delivered
or kept before then is its earlier run's, not running (:func:`held_before_restart`).
"""

from __future__ import annotations

import time

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import MATCH_STREAM, REFEREE_GROUP
from redis.client import Pipeline

OWNER = "referee"  # each referee writes its own presence and reads the others' (GetStatus)


def advertise(pipe: Pipeline | redis.Redis, referee: str, ttl_ms: int,
              started_ms: int = 0) -> None:
    """Present for ``ttl_ms`` more (queued on ``pipe`` if it is a pipeline), this run
    started at ``started_ms`` (:func:`clock_ms`; 0: not said)."""
    pipe.zadd(keys.REFEREES, {referee: int(time.time() * 1000) + ttl_ms})
    if started_ms:
        pipe.set(keys.referee(referee), started_ms, px=ttl_ms)


def retire(client: redis.Redis, referee: str) -> None:
    """A referee that stops on purpose leaves at once."""
    with client.pipeline(transaction=False) as pipe:
        pipe.zrem(keys.REFEREES, referee)
        pipe.delete(keys.referee(referee))
        pipe.execute()


def clock_ms(client: redis.Redis) -> int:
    """Redis's clock, the one the match group's idle times are counted by."""
    seconds, micros = client.time()
    return int(seconds) * 1000 + int(micros) // 1000


def present(client: redis.Redis, now_ms: int | None = None) -> set[str]:
    """The referees whose presence has not ended."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    with client.pipeline(transaction=False) as pipe:
        pipe.zremrangebyscore(keys.REFEREES, "-inf", now_ms)
        pipe.zrange(keys.REFEREES, 0, -1)
        _, names = pipe.execute()
    return {name.decode() for name in names}


def held_before_restart(client: redis.Redis, held: dict[str, int]) -> dict[str, int]:
    """Of the match jobs pending with each referee of ``held`` (name -> jobs), how many
    were last delivered to it or kept by it before its running incarnation started: its
    earlier run's, awaiting a takeover. Referees that do not say when they started (gone,
    or of a version before this) are left out."""
    names = [name for name, count in held.items() if count]
    if not names:
        return {}
    starts = client.mget([keys.referee(name) for name in names])
    now_ms = clock_ms(client)
    earlier = {}
    for name, started in zip(names, starts, strict=True):
        if started is None:
            continue
        # Idle since before the start: untouched by this run, which keeps its own fresh.
        idle_ms = max(1, now_ms - int(started) + 1)
        stale = client.xpending_range(MATCH_STREAM, REFEREE_GROUP, min="-", max="+",
                                      count=held[name], consumername=name, idle=idle_ms)
        if stale:
            earlier[name] = len(stale)
    return earlier
