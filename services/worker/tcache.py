"""The shared transposition cache: whole root searches, shared by every worker.

Entries live in the cache Redis (never the durable one, so LRU eviction can only cost
speed) under ``arena:tt:{game}:{evaluator hash}:{digest}``. The digest covers everything
that decides a search's result: the game, the bot version's evaluator hash (the evaluator
and every parameter, depth included), the exact position text (side to move included), the
request's depth and node limits, and the seed when the engine says the seed can matter
here. An entry holds the move, score, depth, bound (exact or not), nodes, PV and the engine
time the search took.

Why whole searches and not a node-level table: a Redis round trip costs ~100 µs, a search
node ~1 µs; probing per node would make every search slower. Every ply of every game is the
root of some job, so a ladder that repeats openings hits the cache at the start of each game
and keeps hitting until the games diverge.

Determinism: only a search that ran to completion is stored (no tree capture, no stop by the
clock: its wall time stayed under its time limit), and an entry is only reused for an
identical request whose time limit would have let the original search complete. At a fixed
depth a hit therefore returns exactly what the search would have returned.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from typing import Any

import redis

from arena.engine.api import SearchResult
from arena.v1 import common_pb2, engine_pb2

log = logging.getLogger(__name__)

STATS_KEY = "arena:tt:stats"
ENTRY_TTL_S = 14 * 24 * 3600


@dataclass(frozen=True)
class CacheKey:
    """One deterministic search request."""

    game: str
    evaluator_hash: str
    position_text: str
    depth: int = 0
    nodes: int = 0
    seed: int | None = None

    def redis_key(self) -> str:
        material = "|".join([self.game, self.evaluator_hash, self.position_text,
                             f"d{self.depth}", f"n{self.nodes}", f"s{self.seed}"])
        digest = hashlib.blake2b(material.encode(), digest_size=16).hexdigest()
        return f"arena:tt:{self.game}:{self.evaluator_hash[:16]}:{digest}"


def _to_entry(result: SearchResult) -> bytes:
    return engine_pb2.AnalyzeResponse(
        move=common_pb2.Move(square=result.move),
        search=common_pb2.SearchInfo(
            score=result.score, depth=result.depth, nodes=result.nodes, nps=result.nps,
            pv=result.pv, time_ms=result.elapsed_ms, exact=result.exact),
    ).SerializeToString()


def _from_entry(payload: bytes) -> SearchResult:
    entry = engine_pb2.AnalyzeResponse.FromString(payload)
    info = entry.search
    return SearchResult(move=entry.move.square, score=info.score, depth=info.depth,
                        nodes=info.nodes, elapsed_ms=info.time_ms, pv=list(info.pv),
                        exact=info.exact)


class SharedSearchCache:
    """Probe and store whole-search results; counts hits, misses and engine time saved."""

    def __init__(self, client: redis.Redis | None) -> None:
        self.client = client

    @property
    def enabled(self) -> bool:
        return self.client is not None

    def probe(self, key: CacheKey, time_limit_ms: int | None) -> SearchResult | None:
        """The stored result for ``key`` if it would have completed under ``time_limit_ms``."""
        if self.client is None:
            return None
        try:
            payload: Any = self.client.get(key.redis_key())
        except redis.RedisError as exc:  # the cache is an optimisation: never fail a move
            log.warning("transposition cache probe failed: %s", exc)
            return None
        found = _from_entry(payload) if payload is not None else None
        if found is not None and time_limit_ms and found.elapsed_ms >= time_limit_ms:
            found = None
        self._count(found)
        return found

    def store(self, key: CacheKey, result: SearchResult) -> None:
        """Store a completed search and its engine time, in one pipelined round trip."""
        if self.client is None:
            return
        try:
            with self.client.pipeline(transaction=False) as pipe:
                pipe.set(key.redis_key(), _to_entry(result), ex=ENTRY_TTL_S)
                pipe.hincrby(STATS_KEY, "stores", 1)
                pipe.hincrbyfloat(STATS_KEY, "spent_ms", result.elapsed_ms)
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("transposition cache store failed: %s", exc)

    def _count(self, found: SearchResult | None) -> None:
        assert self.client is not None
        try:
            with self.client.pipeline(transaction=False) as pipe:
                pipe.hincrby(STATS_KEY, "hits" if found is not None else "misses", 1)
                if found is not None:
                    pipe.hincrbyfloat(STATS_KEY, "saved_ms", found.elapsed_ms)
                pipe.execute()
        except redis.RedisError as exc:
            log.warning("transposition cache stats failed: %s", exc)

    def stats(self) -> dict[str, float]:
        """hits, misses, stores, spent_ms (engine time of stored searches), saved_ms."""
        if self.client is None:
            return {}
        raw: Any = self.client.hgetall(STATS_KEY)
        return {key.decode(): float(value) for key, value in raw.items()}
