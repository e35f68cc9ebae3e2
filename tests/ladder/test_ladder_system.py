"""System test: a small ladder on the real stack (registry, referee, ladder, workers as
processes, real Redis), with the ladder service killed and restarted mid-ladder.

Checks: standings equal the results the referee recorded, the ratings equal an
independent brute-force maximisation of the likelihood, and a restart counts every
result exactly once and still finishes the ladder.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from arena.services.common.launcher import Launcher

from arena.games import PASS
from arena.v1 import (
    bots_pb2,
    common_pb2,
    ladder_pb2,
    ladder_pb2_grpc,
    match_pb2,
    referee_pb2,
    referee_pb2_grpc,
    registry_pb2,
    registry_pb2_grpc,
)
from tests.support.stacks import launcher, stack_channel

pytestmark = pytest.mark.slow
OTHELLO = common_pb2.GAME_KIND_OTHELLO
BOTS = {"rookie": "lab-beginner", "cadet": "lab-intermediate", "kay": "kreversi-default"}


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Launcher]:
    with launcher(home=tmp_path / "arena", workers=2) as running:
        yield running


def _wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _brute_force_elo(players: int, games: list[tuple[int, int, float]]) -> list[float]:
    """Coordinate-wise golden-section ascent of the likelihood written game by game (with
    the service's one virtual draw per pair that met), then centred on 0."""
    met = {(min(a, b), max(a, b)) for a, b, _ in games}

    def loglik(r: list[float]) -> float:
        total = 0.0
        for a, b, s in games + [(a, b, 0.5) for a, b in met]:
            p = 1 / (1 + 10 ** ((r[b] - r[a]) / 400))
            total += s * math.log(p) + (1 - s) * math.log(1 - p)
        return total

    ratings = [0.0] * players
    for _ in range(40):
        for i in range(players):
            low, high = -2000.0, 2000.0
            for _ in range(80):
                m1, m2 = low + (high - low) * 0.382, low + (high - low) * 0.618
                left = [*ratings[:i], m1, *ratings[i + 1 :]]
                right = [*ratings[:i], m2, *ratings[i + 1 :]]
                low, high = (m1, high) if loglik(left) < loglik(right) else (low, m2)
            ratings[i] = (low + high) / 2
    mean = sum(ratings) / players
    return [r - mean for r in ratings]


def _counted(stack: Launcher, ladder_id: str) -> int:
    """Results counted so far, read straight from Redis (no ladder service is running)."""
    client = redis.Redis.from_url(stack.redis_url)
    try:
        return int(client.hget(f"arena:ladder:{ladder_id}", "games_done") or 0)
    finally:
        client.close()


def _auth(stack: Launcher) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {stack.admin_token}"),)


def _register(stack: Launcher, bots: dict[str, str]) -> None:
    with stack_channel(stack, stack.target("registry")) as channel:
        registry = registry_pb2_grpc.BotRegistryStub(channel)
        for name, preset in bots.items():
            spec = bots_pb2.BotSpec(name=name, game=OTHELLO)
            registry.RegisterBot(registry_pb2.RegisterBotRequest(spec=spec, from_preset=preset),
                                 timeout=30, metadata=_auth(stack))


def _create_ladder(stack: Launcher, bots: list[str], games_per_pairing: int, move_time_ms: int
                   ) -> ladder_pb2.LadderInfo:
    config = ladder_pb2.LadderConfig(
        name="system", game=common_pb2.GameSpec(kind=OTHELLO),
        bots=[common_pb2.BotRef(name=name) for name in bots],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=games_per_pairing,
        opening_suite="othello-balanced", seed=11,
        time_control=common_pb2.TimeControl(move_time_ms=move_time_ms),
    )
    with stack_channel(stack, stack.target("ladder")) as channel:
        info: ladder_pb2.LadderInfo = ladder_pb2_grpc.LadderStub(channel).CreateLadder(
            ladder_pb2.CreateLadderRequest(config=config), timeout=30, metadata=_auth(stack))
    return info


def _standings(stack: Launcher, ladder_id: str) -> ladder_pb2.Standings:
    with stack_channel(stack, stack.target("ladder")) as channel:
        reply: ladder_pb2.Standings = ladder_pb2_grpc.LadderStub(channel).GetStandings(
            ladder_pb2.GetStandingsRequest(ladder_id=ladder_id), timeout=30,
            metadata=_auth(stack))
        return reply


def _finished_matches(stack: Launcher, ladder_id: str, timeout_s: float) -> list[match_pb2.Match]:
    """The ladder's matches once it has finished."""
    _wait_for(lambda: _standings(stack, ladder_id).ladder.status
              == ladder_pb2.LADDER_STATUS_FINISHED, timeout_s, "the ladder to finish")
    match_ids = list(_standings(stack, ladder_id).ladder.match_ids)
    with stack_channel(stack, stack.target("referee")) as channel:
        referee = referee_pb2_grpc.RefereeStub(channel)
        return [referee.GetMatch(referee_pb2.GetMatchRequest(match_id=m), timeout=30,
                                 metadata=_auth(stack)) for m in match_ids]


def test_a_ladder_rerun_with_a_new_bot_replays_the_old_games_from_the_cache(
        stack: Launcher) -> None:
    """A bot joins and the ladder is re-run: the games between the others are played again
    move for move (same seeds, KReversi's random ties included), every move of them answered
    by the shared cache, while the newcomer's games are searched."""
    bots = {"rookie": "lab-beginner", "kay": "kreversi-default", "cadet": "lab-intermediate"}
    _register(stack, bots)
    # A clock that never decides a move: every search reaches its depth.
    first = _finished_matches(stack, _create_ladder(stack, ["rookie", "kay"], 2, 30_000).id,
                              180)
    # The newcomer comes first, so every old game has another index in the new ladder.
    rerun = _finished_matches(stack, _create_ladder(stack, ["cadet", "rookie", "kay"], 2,
                                                    30_000).id, 180)

    def key(match: match_pb2.Match) -> tuple[str, str, tuple[int, ...]]:
        return match.black.name, match.white.name, tuple(match.config.opening)

    def moves(match: match_pb2.Match) -> list[int]:
        return [r.move.square for r in match.moves]

    again = {key(m): m for m in rerun}
    assert len(first) == 2 and len(rerun) == 6
    for old in first:
        new = again[key(old)]
        assert new.config.seed == old.config.seed and moves(new) == moves(old)
        missed = [r.ply for r in new.moves if r.move.square != PASS and not r.search.cache_hit]
        assert not missed, (key(old), missed)
    # The newcomer was never seen: its moves are searched (but for positions it met in an
    # earlier game of this ladder, as the same opening with the same colour).
    newcomer = [r.search.cache_hit for m in rerun for r in m.moves if r.move.square != PASS
                and (m.black.name, m.white.name)[r.color - common_pb2.COLOR_BLACK] == "cadet"]
    assert newcomer.count(False) > len(newcomer) // 2


def test_small_ladder_survives_a_ladder_restart(stack: Launcher) -> None:
    _register(stack, BOTS)
    info = _create_ladder(stack, list(BOTS), 4, 500)
    assert info.games_total == 12

    # Kill the ladder service hard once the first result is in, then start a new one.
    _wait_for(lambda: _standings(stack, info.id).ladder.games_done >= 1, 120, "a first result")
    stack.kill("ladder")
    done_at_kill = _counted(stack, info.id)
    print(f"ladder service killed with {done_at_kill} of 12 results counted")
    assert done_at_kill < 12  # the kill really happened mid-ladder
    stack.restart("ladder")
    matches = _finished_matches(stack, info.id, 180)
    table = _standings(stack, info.id)
    assert table.ladder.games_done == 12 and table.ladder.games_void == 0
    assert all(m.status == match_pb2.MATCH_STATUS_FINISHED for m in matches)
    names = list(BOTS)
    record = {name: [0, 0, 0] for name in names}  # wins, draws, losses from the referee
    games: list[tuple[int, int, float]] = []
    for match in matches:
        black, white = match.black.name, match.white.name
        score = {common_pb2.COLOR_BLACK: 1.0, common_pb2.COLOR_WHITE: 0.0}.get(
            match.result.winner, 0.5)
        games.append((names.index(black), names.index(white), score))
        record[black][{1.0: 0, 0.5: 1, 0.0: 2}[score]] += 1
        record[white][{0.0: 0, 0.5: 1, 1.0: 2}[score]] += 1
    rows = {row.bot.name: row for row in table.rows}
    for name in names:
        assert [rows[name].wins, rows[name].draws, rows[name].losses] == record[name]
        assert rows[name].games == 8
    expected = _brute_force_elo(3, games)
    for index, name in enumerate(names):
        assert rows[name].elo == pytest.approx(expected[index], abs=0.5)
    # Each pairing played two openings, each with both colours.
    for a, b in itertools.combinations(names, 2):
        pair = [m for m in matches if {m.black.name, m.white.name} == {a, b}]
        assert len(pair) == 4
        seen = {(m.black.name, tuple(m.config.opening)) for m in pair}
        openings = {tuple(m.config.opening) for m in pair}
        assert len(openings) == 2 and seen == {(x, o) for x in (a, b) for o in openings}
