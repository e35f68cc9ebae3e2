"""What the job streams hold, as operators see it: depth, consumer-group lag, the oldest
waiting job, dead letters, recent results; and the lease that makes one referee the
exporter of these figures.

Reads only. ``lag`` is the number of entries not yet delivered to the group: Redis 7 keeps
it (``XINFO GROUPS``); on Redis 6.2 (the one shipped with Arena) it is counted from the
group's last delivered entry, up to :data:`LAG_SCAN` entries.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import FINISHED_STREAM
from arena.services.common.protocol.streams import entry_ms, queued_ms, text
from google.protobuf.message import DecodeError

from arena.v1 import match_pb2

OWNER = "referee"  # the streams' owner; its referees export and report these figures

LAG_SCAN = 10_000  # most undelivered entries counted one by one (Redis < 7)
WAITING_SCAN = 256  # most undelivered entries read for the one that waited longest
FORFEITS_SHOWN = 10  # forfeits a status lists unless asked for another number
FORFEIT_SCAN = 500  # recent finished matches a status searches for forfeits

# KEYS: lease. ARGV: holder, ttl ms. 1 if ``holder`` holds the lease now (taken or kept).
_HOLD = """
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if not current then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""


@dataclass(frozen=True)
class GroupFigures:
    """One consumer group of one stream (``status_pb2.QueueStatus`` has the meanings)."""

    stream: str
    group: str
    length: int = 0
    pending: int = 0
    lag: int = 0
    oldest_waiting_ms: int = 0
    consumers: int = 0
    idle_ms: dict[str, int] | None = None  # consumer -> ms since it last read or claimed
    held: dict[str, int] | None = None  # consumer -> entries pending with it


def group_figures(client: redis.Redis, stream: str, group: str,
                  now_ms: int | None = None) -> GroupFigures:
    """The figures of ``group`` on ``stream`` (zeros if neither exists yet)."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    try:
        groups: Any = client.xinfo_groups(stream)
    except redis.ResponseError:  # no such stream
        return GroupFigures(stream, group)
    info = next((g for g in groups if text(g["name"]) == group), None)
    length = int(client.xlen(stream))
    if info is None:
        return GroupFigures(stream, group, length)
    last = text(info["last-delivered-id"])
    known = info.get("lag") is not None
    waiting: Any = client.xrange(stream, f"({last}", "+",
                                 count=min(int(info["lag"]), WAITING_SCAN) or 1 if known
                                 else LAG_SCAN)
    lag = int(info["lag"]) if known else len(waiting)
    # A job handed back goes to the end of its stream as a new entry: its wait counts from
    # the entry it first was (``QUEUED``), or the oldest wait restarted at every hand-back.
    oldest = now_ms - min((queued_ms(entry_id, fields) for entry_id, fields
                           in waiting[:WAITING_SCAN]), default=now_ms)
    consumers: Any = client.xinfo_consumers(stream, group) if info["consumers"] else []
    idle = {text(c["name"]): int(c["idle"]) for c in consumers}
    held = {text(c["name"]): int(c["pending"]) for c in consumers}
    return GroupFigures(stream, group, length, int(info["pending"]), lag, max(0, oldest),
                        int(info["consumers"]), idle, held)


def engine_streams(client: redis.Redis) -> list[str]:
    """The protocol engines' move streams workers have consumed, sorted."""
    return sorted(text(name) for name in client.smembers(keys.ENGINE_STREAMS))


def stream_length(client: redis.Redis, stream: str) -> int:
    return int(client.xlen(stream))


def hold_lease(client: redis.Redis, holder: str, ttl_ms: int,
               lease: str = keys.QUEUE_EXPORTER_LEASE) -> bool:
    """Take or keep ``lease`` for ``holder``; False while someone else holds it."""
    return bool(client.eval(_HOLD, 1, lease, holder, ttl_ms))


def memory(client: redis.Redis) -> tuple[int, int]:
    """(used bytes, ``maxmemory`` bytes; 0: no limit) of a Redis server."""
    info: Any = client.info("memory")
    return int(info.get("used_memory", 0)), int(info.get("maxmemory", 0))


@dataclass(frozen=True)
class Finished:
    """A finished match as the finished-matches stream announced it."""

    at_ms: int
    match: match_pb2.Match


def recent_finished(client: redis.Redis, since_ms: int, most: int = 1000) -> list[Finished]:
    """Matches finished since ``since_ms`` (unix ms), newest first, at most ``most``."""
    found: Any = client.xrevrange(FINISHED_STREAM, "+", f"{since_ms}-0", count=most)
    finished = []
    for entry_id, fields in found:
        if b"match_id" not in fields:
            continue  # not a finished match: matches deleted (``MatchStore.announce_deleted``)
        try:
            match = match_pb2.Match.FromString(fields.get(b"pb", b""))
        except DecodeError:
            continue
        finished.append(Finished(entry_ms(entry_id), match))
    return finished
