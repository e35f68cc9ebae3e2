"""A match from creation to its end with real referee and worker loops and real bots."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.protocol.keys import FINISHED_STREAM
from prometheus_client import REGISTRY

from arena.games import PASS
from arena.v1 import bot_service_pb2, common_pb2, match_pb2
from tests.conftest import NewMatch
from tests.support.bots import (
    bot_server,
    external_bot,
    first_legal,
    last_legal,
    match_config,
    replay_moves,
    wait_finished,
)


def test_match_between_external_bots_completes(
    redis_client: redis.Redis, loops: Callable[..., Any], peers: ArenaClient, new_match: NewMatch
) -> None:
    loops(referees=1, workers=2)
    with bot_server(first_legal) as first, bot_server(last_legal) as last:
        external_bot(peers, "first", first)
        external_bot(peers, "last", last)
        match = new_match(match_config("first", "last", ladder_id="L1"))
        assert match.status == match_pb2.MATCH_STATUS_PENDING
        assert match.black.version == 1
        done = wait_finished(redis_client, match.id)
    assert done.result.termination == match_pb2.TERMINATION_NORMAL
    assert done.result.black_count + done.result.white_count > 4
    replay_moves(done)
    assert all(r.worker_id for r in done.moves if r.move.square != 64)
    finished = redis_client.xrange(FINISHED_STREAM)
    assert [(f[b"match_id"], f[b"ladder_id"]) for _, f in finished] == [
        (match.id.encode(), b"L1")]


def clocked_game(loops: Callable[..., Any], peers: ArenaClient, redis_client: redis.Redis,
                 new_match: NewMatch, move_s: float, game_time_ms: int, increment_ms: int = 0,
                 ) -> tuple[match_pb2.Match, list[bot_service_pb2.GetMoveRequest]]:
    """A game of an external bot against itself that takes ``move_s`` a move, with this
    game budget: the finished match, and every GetMove it was sent."""
    asked: list[bot_service_pb2.GetMoveRequest] = []

    def steady(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        asked.append(request)
        time.sleep(move_s)
        return first_legal(request)

    loops(referees=1, workers=1)
    with bot_server(steady) as address:
        external_bot(peers, "clocked", address)
        config = match_config("clocked", "clocked", move_time_ms=1000)
        config.time_control.game_time_ms = game_time_ms
        config.time_control.increment_ms = increment_ms
        return wait_finished(redis_client, new_match(config).id), asked


def test_external_bots_are_told_their_game_time_left(
    redis_client: redis.Redis, loops: Callable[..., Any], peers: ArenaClient, new_match: NewMatch
) -> None:
    """Each GetMove carries what is left of the side's game budget: the budget less the
    time the referee measured for that side's earlier moves."""
    done, asked = clocked_game(loops, peers, redis_client, new_match, 0.02, 60_000)
    assert done.result.termination == match_pb2.TERMINATION_NORMAL
    for request in asked:
        color = request.color
        used = sum(r.time_ms for r in done.moves if r.color == color and r.ply < request.ply)
        assert request.time_left_ms == 60_000 - used
    black = [r.time_left_ms for r in asked if r.color == common_pb2.COLOR_BLACK]
    assert black[0] == 60_000 and black[-1] < black[0] - 10 * 20  # it really counts down


@pytest.mark.parametrize("increment_ms", [0, 150])
def test_a_fischer_increment_is_added_after_each_move(
    redis_client: redis.Redis, loops: Callable[..., Any], peers: ArenaClient, new_match: NewMatch,
    increment_ms: int, caplog: pytest.LogCaptureFixture,
) -> None:
    """A bot taking 40 ms a move runs out of a 300 ms game budget within ten moves; with
    150 ms added after each of its moves it never does, and each GetMove is told the
    budget, plus the increments earned, less the time used."""
    forfeits = _forfeits_judged()
    with caplog.at_level(logging.WARNING, logger="arena.services.referee"):
        done, asked = clocked_game(loops, peers, redis_client, new_match, 0.04, 300,
                                   increment_ms)
    if not increment_ms:
        assert done.result.termination == match_pb2.TERMINATION_TIME_FORFEIT
        assert len(done.moves) < 2 * 10
        # Counted and logged as a forfeit, also where the clock ran out before the bot
        # was asked ('no game time left': an INFO line of the match's end alone).
        assert _forfeits_judged() == forfeits + 1
        assert [r.message for r in caplog.records if r.message.startswith("forfeit")] == [
            f"forfeit TERMINATION_TIME_FORFEIT: {done.result.detail}"], caplog.text
        return
    assert done.result.termination == match_pb2.TERMINATION_NORMAL, done.result
    assert len(done.moves) > 2 * 10
    for request in asked:
        earlier = [r for r in done.moves if r.color == request.color and r.ply < request.ply]
        made = sum(1 for r in earlier if r.move.square != PASS)
        used = sum(r.time_ms for r in earlier)
        assert request.time_left_ms == 300 + 150 * made - used


def _forfeits_judged() -> float:
    return REGISTRY.get_sample_value("arena_moves_judged_total",
                                     {"game": "othello", "verdict": "forfeit"}) or 0.0
