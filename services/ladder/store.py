"""Ladders in the durable Redis, and the one atomic write that counts a result.

Layout (all under ``arena:``):

* ``arena:ladder:{id}`` hash: ``info`` (the ``LadderInfo`` as created: id, config with
  the bots resolved to exact versions, owner, time, games_total), ``status``,
  ``games_done`` and ``games_void`` (counters), ``games_total``.
* ``arena:ladder:{id}:matches`` list of match ids in play order, and
  ``arena:ladder:{id}:members`` the same ids as a set (O(1) membership for counting).
* ``arena:ladder:{id}:results`` hash: match id -> ``"<black>,<white>,<score>"`` (bot
  indices into ``config.bots``; black's score 1, 0.5, 0, or ``void`` for a game that
  produced no result). A match id enters this hash once: that is what makes counting
  exactly-once, whatever the number of deliveries or services.
* ``arena:ladder:{id}:progress`` stream: one entry per counted result and one when the
  ladder ends (what WatchLadder follows).
* ``arena:ladders`` sorted set: ids scored by creation time in milliseconds.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis

from arena.errors import NotFoundError
from arena.v1 import ladder_pb2

ALL_LADDERS = "arena:ladders"
PROGRESS_MAXLEN = 100_000
RUNNING = ladder_pb2.LADDER_STATUS_RUNNING
FINISHED = ladder_pb2.LADDER_STATUS_FINISHED
CANCELLED = ladder_pb2.LADDER_STATUS_CANCELLED
VOID = "void"


def ladder_key(ladder_id: str) -> str:
    return f"arena:ladder:{ladder_id}"


def matches_key(ladder_id: str) -> str:
    return f"arena:ladder:{ladder_id}:matches"


def members_key(ladder_id: str) -> str:
    return f"arena:ladder:{ladder_id}:members"


def results_key(ladder_id: str) -> str:
    return f"arena:ladder:{ladder_id}:results"


def progress_key(ladder_id: str) -> str:
    return f"arena:ladder:{ladder_id}:progress"


def new_ladder_id(now_ms: int) -> str:
    return f"L{now_ms:013d}-{secrets.token_hex(4)}"


# KEYS: ladder, members, results, progress. ARGV: match id, result record, running,
# finished, progress max length.
# Returns 1 when counted, 0 when already counted, -1 for no such ladder, -2 for a match
# that is not one of the ladder's.
_COUNT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then return -2 end
if redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[2]) == 0 then return 0 end
if string.sub(ARGV[2], -4) == 'void' then redis.call('HINCRBY', KEYS[1], 'games_void', 1) end
local done = redis.call('HINCRBY', KEYS[1], 'games_done', 1)
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[5], '*', 'match_id', ARGV[1])
local total = tonumber(redis.call('HGET', KEYS[1], 'games_total'))
if done >= total and redis.call('HGET', KEYS[1], 'status') == ARGV[3] then
  redis.call('HSET', KEYS[1], 'status', ARGV[4])
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[5], '*', 'status', ARGV[4])
end
return 1
"""

# KEYS: ladder, progress. ARGV: running, cancelled, progress max length.
# Returns 1 when the ladder was running and is now cancelled, 0 otherwise.
_CANCEL = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'status', ARGV[2])
return 1
"""


@dataclass(frozen=True)
class ResultRecord:
    """A counted game: bot indices and black's score (None for a void game)."""

    black: int
    white: int
    score: float | None

    def encode(self) -> str:
        score = VOID if self.score is None else f"{self.score:g}"
        return f"{self.black},{self.white},{score}"

    @classmethod
    def decode(cls, text: str) -> ResultRecord:
        black, white, score = text.split(",")
        return cls(int(black), int(white), None if score == VOID else float(score))


class LadderStore:
    """Reads and writes ladders; every write that several services may race on is atomic."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._count = client.register_script(_COUNT)
        self._cancel = client.register_script(_CANCEL)

    def create(self, info: ladder_pb2.LadderInfo, created_ms: int) -> None:
        """Store a new running ladder (no matches yet: ``add_match`` appends them)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(
                ladder_key(info.id),
                mapping={
                    "info": info.SerializeToString(),
                    "status": RUNNING,
                    "games_total": info.games_total,
                    "games_done": 0,
                    "games_void": 0,
                },
            )
            pipe.zadd(ALL_LADDERS, {info.id: created_ms})
            pipe.execute()

    def delete(self, ladder_id: str) -> None:
        """Forget a ladder entirely (used when its creation fails half-way)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.zrem(ALL_LADDERS, ladder_id)
            pipe.delete(
                ladder_key(ladder_id),
                matches_key(ladder_id),
                members_key(ladder_id),
                results_key(ladder_id),
                progress_key(ladder_id),
            )
            pipe.execute()

    def add_match(self, ladder_id: str, match_id: str) -> None:
        with self.client.pipeline(transaction=True) as pipe:
            pipe.sadd(members_key(ladder_id), match_id)
            pipe.rpush(matches_key(ladder_id), match_id)
            pipe.execute()

    def get(self, ladder_id: str) -> ladder_pb2.LadderInfo:
        """The ladder with its current status, counters and match ids."""
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(ladder_key(ladder_id))
            pipe.lrange(matches_key(ladder_id), 0, -1)
            fields, match_ids = pipe.execute()
        return _decode_info(ladder_id, fields, match_ids)

    def snapshot(self, ladder_id: str) -> tuple[ladder_pb2.LadderInfo, bytes]:
        """The ladder and the id of the newest progress entry its state includes, read in
        one transaction: following the progress stream after that id then neither repeats
        a counted result nor misses one (a count writes the state and its entry atomically).
        """
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hgetall(ladder_key(ladder_id))
            pipe.lrange(matches_key(ladder_id), 0, -1)
            pipe.xrevrange(progress_key(ladder_id), count=1)
            fields, match_ids, newest = pipe.execute()
        last: bytes = newest[0][0] if newest else b"0-0"
        return _decode_info(ladder_id, fields, match_ids), last

    def status(self, ladder_id: str) -> int:
        raw = self.client.hget(ladder_key(ladder_id), "status")
        if raw is None:
            raise NotFoundError(f"no ladder {ladder_id!r}")
        return int(raw)

    def count(self, ladder_id: str, match_id: str, record: ResultRecord) -> int:
        """Count one result once: 1 counted now, 0 counted before, -1 no ladder, -2 not
        one of this ladder's matches."""
        keys = [
            ladder_key(ladder_id),
            members_key(ladder_id),
            results_key(ladder_id),
            progress_key(ladder_id),
        ]
        args: list[str | int] = [match_id, record.encode(), RUNNING, FINISHED, PROGRESS_MAXLEN]
        return int(self._count(keys=keys, args=args))

    def cancel(self, ladder_id: str) -> bool:
        keys = [ladder_key(ladder_id), progress_key(ladder_id)]
        return int(self._cancel(keys=keys, args=[RUNNING, CANCELLED, PROGRESS_MAXLEN])) == 1

    def results(self, ladder_id: str) -> dict[str, ResultRecord]:
        raw: dict[bytes, bytes] = self.client.hgetall(results_key(ladder_id))  # type: ignore[assignment]
        return {key.decode(): ResultRecord.decode(value.decode()) for key, value in raw.items()}

    def uncounted(self, ladder_id: str) -> list[str]:
        """Match ids of the ladder whose result is not counted yet, in play order."""
        counted = set(_texts(self.client.hkeys(results_key(ladder_id))))
        ids = _texts(self.client.lrange(matches_key(ladder_id), 0, -1))
        return [match_id for match_id in ids if match_id not in counted]

    def running_ids(self) -> list[str]:
        ids = _texts(self.client.zrange(ALL_LADDERS, 0, -1))
        return [
            i for i in ids if self.client.hget(ladder_key(i), "status") == str(RUNNING).encode()
        ]

    def page(self, offset: int, size: int) -> tuple[list[str], bool]:
        """Ladder ids newest first from ``offset``; the flag says whether more follow."""
        decoded = _texts(self.client.zrevrange(ALL_LADDERS, offset, offset + size))
        return decoded[:size], len(decoded) > size


def _decode_info(ladder_id: str, fields: Any, match_ids: Any) -> ladder_pb2.LadderInfo:
    if not fields:
        raise NotFoundError(f"no ladder {ladder_id!r}")
    info = ladder_pb2.LadderInfo.FromString(fields[b"info"])
    info.status = int(fields[b"status"])  # type: ignore[assignment]
    info.games_done = int(fields[b"games_done"])
    info.games_void = int(fields.get(b"games_void", 0))
    info.match_ids.extend(raw.decode() for raw in match_ids)
    return info


def _texts(replies: Any) -> list[str]:
    """Decode a list reply (this client returns bytes)."""
    return [raw.decode() for raw in replies]


def now_ms() -> int:
    return int(time.time() * 1000)
