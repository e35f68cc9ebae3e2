"""The shared transposition cache: whole root searches, shared by every worker.

Entries live in the cache Redis (never the durable one, so LRU eviction can only cost
speed) under ``arena:tt:{game}:{evaluator hash}:{digest}``. The digest covers everything
that decides a search's result: the game, the bot version's evaluator hash (the evaluator
and every parameter, depth included), the exact position text (side to move included) and
the request's depth and node limits. An entry is a hash: ``pb`` (move, score, depth, bound
(exact or not), nodes, PV, the tied root moves) and ``ms``, the engine time the search took.

The seed is not in the key: a search never depends on it, only a bot's final draw among
root moves of equal score does (KReversi's random tie rule), and the entry keeps those
tied moves so that a job with another seed draws again (``GameEngine.redraw``). So every
game that reaches a position shares its search, whatever its seed. A move the seed drew
otherwise (SharpMoku's random opening) is never stored.

Why whole searches and not a node-level table: a Redis round trip costs ~100 µs, a search
node ~1 µs; probing per node would make every search slower. Every ply of every game is the
root of some job, so a ladder that repeats openings hits the cache at the start of each game
and keeps hitting until the games diverge.

Determinism: only a search that no limit cut short is stored (the engines report it in
``SearchResult.cut_short``; no tree capture either), and an entry is only reused for an
identical request under whose time limit the search would not have been cut short either:
its engine time must stay under ``CLOCK_FREE_SHARE`` of that limit, the earliest point at
which an engine lets the clock change a search (past 40% of the limit iterative deepening
starts no new iteration; the Othello solver gives up at 60%). At a fixed depth a hit
therefore returns the move, score and depth the search returns.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.protocol.keys import TT_STATS, tt_entry

from arena.engine.api import SearchResult
from arena.engine.gomoku.bots import SOFT_TIME_SHARE as GOMOKU_SOFT_SHARE
from arena.engine.othello.engine import SOFT_TIME_SHARE as OTHELLO_SOFT_SHARE
from arena.v1 import common_pb2, engine_pb2

log = logging.getLogger(__name__)

OWNER = "worker"

STATS_KEY = TT_STATS
ENTRY_TTL_S = 14 * 24 * 3600
OTHELLO_SOLVER_SHARE = 0.6  # the solver's share of the limit (othello.engine.choose_move)
CLOCK_FREE_SHARE = min(GOMOKU_SOFT_SHARE, OTHELLO_SOFT_SHARE, OTHELLO_SOLVER_SHARE)


# A probe is one round trip inside a bot's move (~100 µs). One that takes longer than this
# has a Redis that stalls (or is gone): the move is searched instead, and the cache is left
# alone for a while, so that the stall costs one move this much, not every move the read
# timeout (redis-py's default, 5 s, was more than a short move's wall-clock guard).
PROBE_TIMEOUT_S = 0.5
PAUSE_AFTER_FAILURE_S = 5.0


def cache_client(url: str) -> redis.Redis:
    """A client for ``SharedSearchCache`` on the cache Redis at ``url``: its round trips
    give up after ``PROBE_TIMEOUT_S``."""
    return redis.Redis.from_url(url, socket_timeout=PROBE_TIMEOUT_S,
                                socket_connect_timeout=PROBE_TIMEOUT_S)


def clock_free_ms(time_limit_ms: float | None) -> float | None:
    """How long a search may take under ``time_limit_ms`` with no clock rule shaping it."""
    return None if time_limit_ms is None else CLOCK_FREE_SHARE * time_limit_ms


@dataclass(frozen=True)
class CacheKey:
    """One deterministic search request."""

    game: str
    evaluator_hash: str
    position_text: str
    depth: int = 0
    nodes: int = 0

    def redis_key(self) -> str:
        material = "|".join([self.game, self.evaluator_hash, self.position_text,
                             f"d{self.depth}", f"n{self.nodes}"])
        digest = hashlib.blake2b(material.encode(), digest_size=16).hexdigest()
        return tt_entry(self.game, self.evaluator_hash, digest)


def _to_entry(result: SearchResult) -> bytes:
    return engine_pb2.AnalyzeResponse(
        move=common_pb2.Move(square=result.move),
        search=common_pb2.SearchInfo(
            score=result.score, depth=result.depth, nodes=result.nodes, nps=result.nps,
            pv=result.pv, time_ms=result.elapsed_ms, exact=result.exact,
            tied_moves=result.ties),
    ).SerializeToString()


def _from_entry(payload: bytes) -> SearchResult:
    entry = engine_pb2.AnalyzeResponse.FromString(payload)
    info = entry.search
    return SearchResult(move=entry.move.square, score=info.score, depth=info.depth,
                        nodes=info.nodes, elapsed_ms=info.time_ms, pv=list(info.pv),
                        exact=info.exact, ties=list(info.tied_moves))


# One round trip per probe: read the entry, apply the time-limit rule and count the outcome.
# KEYS: entry, stats. ARGV: the request's clock-free time in ms (``clock_free_ms``; 0: none).
# An entry is a hash: ``pb`` (AnalyzeResponse bytes) and ``ms`` (engine time it took).
_PROBE = """
local found = redis.call('HMGET', KEYS[1], 'pb', 'ms')
local spent = tonumber(found[2])
local limit = tonumber(ARGV[1])
if found[1] and spent and (limit == 0 or spent < limit) then
  redis.call('HINCRBY', KEYS[2], 'hits', 1)
  redis.call('HINCRBYFLOAT', KEYS[2], 'saved_ms', found[2])
  return found[1]
end
redis.call('HINCRBY', KEYS[2], 'misses', 1)
return false
"""


class SharedSearchCache:
    """Probe and store whole-search results; counts hits, misses and engine time saved.

    Round trips are what a worker pays for on a busy machine (each one is a wake-up), so:
    a probe is one script call, and stores are deferred (the worker answers its move first)
    and sent in the same pipeline as the next probe, or by :meth:`flush` before the worker
    waits for work. After a failed round trip the cache is not asked for
    ``PAUSE_AFTER_FAILURE_S`` (give it a ``cache_client``, whose round trips are bounded).
    """

    def __init__(self, client: redis.Redis | None) -> None:
        self.client = client
        self._probe_sha = ""
        self._pending: list[tuple[str, bytes, float]] = []
        self._lock = threading.Lock()
        self._paused_until = 0.0  # time.monotonic(): no round trip before then

    @property
    def enabled(self) -> bool:
        return self.client is not None

    def probe(self, key: CacheKey, time_limit_ms: int | None) -> SearchResult | None:
        """The stored result for ``key`` if the clock could not have shaped it under
        ``time_limit_ms`` (see ``clock_free_ms``)."""
        if self.client is None or self._paused():
            return None
        try:
            payload = self._send(key.redis_key(), clock_free_ms(time_limit_ms or None) or 0)
        except redis.RedisError as exc:  # the cache is an optimisation: never fail a move
            self._pause("probe", exc)
            return None
        return _from_entry(payload) if payload else None

    def _paused(self) -> bool:
        if time.monotonic() >= self._paused_until:
            return False
        with self._lock:  # what would have been stored meanwhile is only a saving lost
            self._pending.clear()
        return True

    def _pause(self, what: str, exc: redis.RedisError) -> None:
        self._paused_until = time.monotonic() + PAUSE_AFTER_FAILURE_S
        log.warning("transposition cache %s failed (%s): not used for %.0f s", what, exc,
                    PAUSE_AFTER_FAILURE_S)

    def store(self, key: CacheKey, result: SearchResult) -> None:
        """Store a completed search now (one pipelined round trip with any deferred ones)."""
        self.defer(key, result)
        self.flush()

    def defer(self, key: CacheKey, result: SearchResult) -> None:
        """Store a completed search with the next probe or flush."""
        if self.client is None:
            return
        with self._lock:
            self._pending.append((key.redis_key(), _to_entry(result), result.elapsed_ms))

    def flush(self) -> None:
        """Send the deferred stores."""
        if self.client is None or not self._pending or self._paused():
            return
        try:
            self._send("", 0)
        except redis.RedisError as exc:
            self._pause("store", exc)

    def _send(self, probe_key: str, free_ms: float) -> Any:
        """Deferred stores, then the probe of ``probe_key`` (if any), in one round trip."""
        assert self.client is not None
        with self._lock:
            pending, self._pending = self._pending, []
        if not self._probe_sha and probe_key:
            self._probe_sha = str(self.client.script_load(_PROBE))
        with self.client.pipeline(transaction=False) as pipe:
            for redis_key, entry, spent_ms in pending:
                pipe.hset(redis_key, mapping={"pb": entry, "ms": repr(float(spent_ms))})
                pipe.expire(redis_key, ENTRY_TTL_S)
                pipe.hincrby(STATS_KEY, "stores", 1)
                pipe.hincrbyfloat(STATS_KEY, "spent_ms", spent_ms)
            if probe_key:
                pipe.evalsha(self._probe_sha, 2, probe_key, STATS_KEY, free_ms)
            replies = pipe.execute(raise_on_error=False)
        failed = [r for r in replies[: len(replies) - bool(probe_key)]
                  if isinstance(r, Exception)]
        if failed:
            log.warning("transposition cache store failed: %s", failed[0])
        if not probe_key:
            return None
        found = replies[-1]
        if isinstance(found, redis.exceptions.NoScriptError):  # the cache Redis restarted
            self._probe_sha = str(self.client.script_load(_PROBE))
            return self.client.evalsha(self._probe_sha, 2, probe_key, STATS_KEY, free_ms)
        if isinstance(found, Exception):
            raise found
        return found

    def stats(self) -> dict[str, float]:
        """hits, misses, stores, spent_ms (engine time of stored searches), saved_ms."""
        if self.client is None:
            return {}
        raw: Any = self.client.hgetall(STATS_KEY)
        return {key.decode(): float(value) for key, value in raw.items()}
