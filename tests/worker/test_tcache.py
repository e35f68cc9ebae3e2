"""The shared transposition cache changes speed only: fixed-depth games are identical."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.protocol import tcache
from arena.services.common.protocol.tcache import STATS_KEY, CacheKey, SharedSearchCache

from arena.engine.api import SearchResult
from arena.games.othello import PASS
from arena.v1 import common_pb2, match_pb2
from tests.conftest import NewMatch
from tests.support.bots import builtin_bot, match_config, replay_moves, wait_finished

LAB = {"evaluator": "lab", "look_ahead": 1}
# KReversi's own clock (time_limit_s, 3 s by default) would bound it below the move time.
KREVERSI = {"evaluator": "kreversi", "depth": {"begin": 3, "middle": 3, "end": 3},
            "random_tied_root_moves": True, "time_limit_s": 60}
# The trained pattern evaluator (arena-pattern's weights), at a fixed depth, no solver.
PATTERN = {"evaluator": "pattern", "depth": 2, "time_ms": 600_000, "endgame_empties": 0,
           "probcut": 0}
# With ProbCut, which cuts from 3 plies left: its shallow searches share the table.
PATTERN_PROBCUT = {**PATTERN, "depth": 5, "probcut": 15}


# Plies each bot searches: lab look_ahead 1 -> 2, kreversi depth 3 -> 2. A search stops short
# of them only at the end of the game (depth = empty squares) or by the clock.
PLANNED_DEPTH = {common_pb2.COLOR_BLACK: 2, common_pb2.COLOR_WHITE: 2}
# Generous: the clock must not shape any search, even on a loaded machine (it would make the
# games differ for reasons that have nothing to do with the cache).
MOVE_TIME_MS = 30_000


def _empties(position_text: str) -> int:
    squares = position_text.split()[0]
    return sum(1 for ch in squares if ch not in "XO")


def _assert_clock_free(match: match_pb2.Match, black_depth: int) -> None:
    """The game ended normally and every search reached its fixed depth."""
    assert match.result.termination == match_pb2.TERMINATION_NORMAL, match.result
    before = match.start_position
    planned = {**PLANNED_DEPTH, common_pb2.COLOR_BLACK: black_depth}
    for record in match.moves:
        if record.move.square != PASS:
            reached = record.search.depth
            expected = min(planned[record.color], _empties(before))
            assert reached == expected or record.search.exact, (record.ply, reached, expected)
        before = record.position_after


def _play(
    client: redis.Redis, new_match: NewMatch, seeds: list[int], black: str = "kr",
    black_depth: int = 2,
) -> list[match_pb2.Match]:
    """The games, played one after the other (so each can hit what the previous stored)."""
    matches = []
    for seed in seeds:
        config = match_config(black, "lab", move_time_ms=MOVE_TIME_MS, seed=seed)
        match = wait_finished(client, new_match(config).id, 180)
        replay_moves(match)
        _assert_clock_free(match, black_depth)
        matches.append(match)
    return matches


def _moves(matches: list[match_pb2.Match]) -> list[list[int]]:
    return [[r.move.square for r in m.moves] for m in matches]


def test_games_identical_with_and_without_the_cache(
    redis_client: redis.Redis, cache_client: redis.Redis, loops: Callable[..., Any],
    peers: ArenaClient, new_match: NewMatch,
) -> None:
    builtin_bot(peers, "lab", LAB)
    builtin_bot(peers, "kr", KREVERSI)
    seeds = [1, 3, 1]  # seeds 1 and 3 play the same first 10 plies, then KReversi's draw differs
    refs, works = loops(referees=1, workers=2, shared_cache=False)
    without = _moves(_play(redis_client, new_match, seeds))
    for loop in [*refs, *works]:
        loop.stop(5)
    assert cache_client.hgetall(STATS_KEY) == {}
    loops(referees=1, workers=2, shared_cache=True)
    cold = _play(redis_client, new_match, seeds)
    warm = _play(redis_client, new_match, seeds)
    assert without == _moves(cold) == _moves(warm)
    assert without[0] == without[2] and without[0] != without[1]  # the seed decides ties
    stats = SharedSearchCache(cache_client).stats()
    assert stats["hits"] >= len(without[0]) and stats["saved_ms"] > 0
    # The seed is not part of the key: seed 3's game reuses seed 1's KReversi searches of
    # the positions both games reach, drawing among their tied moves again, and at ply 10
    # that draw picks another move than seed 1's game played.
    first = cold[1].moves[0]
    assert first.search.cache_hit and first.search.tied_moves == [19, 26, 37, 44]
    redrawn = [r for r in cold[1].moves if r.search.cache_hit and len(r.search.tied_moves) > 1
               and r.move.square != cold[0].moves[r.ply].move.square]
    assert redrawn and all(r.move.square in r.search.tied_moves for r in redrawn)
    assert all(r.search.cache_hit for r in warm[1].moves if r.move.square != PASS)


@pytest.mark.parametrize("config", [PATTERN, PATTERN_PROBCUT], ids=["plain", "probcut"])
def test_pattern_games_identical_with_and_without_the_cache(
    redis_client: redis.Redis, cache_client: redis.Redis, loops: Callable[..., Any],
    peers: ArenaClient, new_match: NewMatch, config: dict[str, object],
) -> None:
    builtin_bot(peers, "pat", config)
    builtin_bot(peers, "lab", LAB)
    depth = int(config["depth"])  # type: ignore[call-overload]
    refs, works = loops(referees=1, workers=2, shared_cache=False)
    without = _moves(_play(redis_client, new_match, [1], black="pat", black_depth=depth))
    for loop in [*refs, *works]:
        loop.stop(5)
    loops(referees=1, workers=2, shared_cache=True)
    cold = _play(redis_client, new_match, [1], black="pat", black_depth=depth)
    warm = _play(redis_client, new_match, [1], black="pat", black_depth=depth)
    assert without == _moves(cold) == _moves(warm)
    assert all(r.search.cache_hit for r in warm[0].moves if r.move.square != PASS)


def test_cache_entry_rules(cache_client: redis.Redis) -> None:
    cache = SharedSearchCache(cache_client)
    key = CacheKey("othello", "abc", "pos X")
    result = SearchResult(move=19, score=4, depth=6, nodes=900, elapsed_ms=40.0, pv=[19, 18],
                          ties=[19, 26])
    assert cache.probe(key, 1000) is None
    cache.store(key, result)
    hit = cache.probe(key, 1000)
    assert hit is not None
    assert (hit.move, hit.score, hit.depth, hit.pv, hit.ties) == (19, 4, 6, [19, 18], [19, 26])
    assert cache.probe(key, 30) is None  # would not have completed under a 30 ms limit
    # It would have, under 80 ms, but past the share of the limit where the engines' clock
    # rules may cut a search short: not reused (see ``clock_free_ms``).
    assert cache.probe(key, 80) is None
    assert cache.probe(CacheKey("othello", "abc", "pos X", depth=5), 1000) is None
    assert cache.probe(CacheKey("othello", "abd", "pos X"), 1000) is None
    assert SharedSearchCache(None).probe(key, 1000) is None


def test_deferred_stores_go_out_with_the_next_probe(cache_client: redis.Redis) -> None:
    cache = SharedSearchCache(cache_client)
    first, second = CacheKey("othello", "abc", "pos A"), CacheKey("othello", "abc", "pos B")
    result = SearchResult(move=26, score=-2, depth=5, nodes=300, elapsed_ms=12.5, pv=[26])
    cache.defer(first, result)
    cache.defer(second, result)
    assert cache_client.keys("arena:tt:othello:*") == []  # nothing sent yet
    hit = cache.probe(first, None)  # the stores precede the probe in its pipeline
    assert hit is not None and (hit.move, hit.pv, hit.elapsed_ms) == (26, [26], 12.5)
    assert len(cache_client.keys("arena:tt:othello:*")) == 2
    cache.defer(CacheKey("othello", "abc", "pos C"), result)
    cache.flush()
    assert cache.probe(CacheKey("othello", "abc", "pos C"), 100) is not None
    stats = cache.stats()
    assert (stats["hits"], stats["stores"], stats["saved_ms"]) == (2, 3, 25.0)


def test_a_stalled_cache_delays_one_probe_briefly_then_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A probe runs inside a bot's move: a cache Redis that stops answering costs one probe
    ``PROBE_TIMEOUT_S``, the next ones nothing, until the pause is over (before, every
    probe waited out redis-py's 5 s read timeout)."""
    monkeypatch.setattr(tcache, "PAUSE_AFTER_FAILURE_S", 1.0)
    key = CacheKey("othello", "abc", "pos X")
    result = SearchResult(move=19, score=4, depth=6, nodes=900, elapsed_ms=4.0, pv=[19])
    with EmbeddedRedis(tmp_path / "cache") as server:
        cache = SharedSearchCache(tcache.cache_client(server.url))
        cache.store(key, result)
        assert server.pid is not None
        os.kill(server.pid, signal.SIGSTOP)
        try:
            took = [_timed(lambda: cache.probe(key, 1000)) for _ in range(3)]
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert took[0][0] is None and took[0][1] < tcache.PROBE_TIMEOUT_S + 0.5, took
        assert all(found is None and seconds < 0.05 for found, seconds in took[1:]), took
        time.sleep(1.0)
        assert cache.probe(key, 1000) is not None  # asked again once the pause is over


def _timed(probe: Callable[[], SearchResult | None]) -> tuple[SearchResult | None, float]:
    start = time.monotonic()
    found = probe()
    return found, time.monotonic() - start
