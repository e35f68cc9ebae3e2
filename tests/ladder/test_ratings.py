"""The arena's rating list (``GetRatings``) over real gRPC and Redis: the ladders of two
users, their games ended through the referee's own ledger."""

from __future__ import annotations

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient

from arena.ratings import Game, Row, compute_standings
from arena.rpc import field_violations
from arena.v1 import common_pb2, ladder_pb2
from tests.ladder.conftest import (
    BLACK,
    DRAW,
    WHITE,
    LadderServer,
    create_ladder,
    finish_match,
    metadata,
    register_bots,
    wait_for,
)

OTHELLO = common_pb2.GAME_KIND_OTHELLO
GOMOKU = common_pb2.GAME_KIND_GOMOKU
INTERNATIONAL = common_pb2.GameSpec(kind=OTHELLO, variant="international")


def _ladder(server: LadderServer, token: str, *bots: str, games: int = 4,
            spec: common_pb2.GameSpec | None = None,
            clock: common_pb2.TimeControl | None = None) -> ladder_pb2.LadderInfo:
    config = ladder_pb2.LadderConfig(
        game=spec or common_pb2.GameSpec(kind=OTHELLO),
        bots=[common_pb2.BotRef(name=b) for b in bots], games_per_pairing=games,
        time_control=clock or common_pb2.TimeControl(move_time_ms=50), seed=3)
    return create_ladder(server, config, token)


def _ratings(server: LadderServer, spec: common_pb2.GameSpec, token: str = "bob-token",
             clock: common_pb2.TimeControl | None = None) -> ladder_pb2.Ratings:
    reply: ladder_pb2.Ratings = server.stub.GetRatings(
        ladder_pb2.GetRatingsRequest(game=spec, clock=clock), timeout=10,
        metadata=metadata(token))
    return reply


def _play(client: redis.Redis, info: ladder_pb2.LadderInfo, winners: list[int],
          played: list[tuple[str, str, float]]) -> None:
    """End the ladder's games with ``winners`` in order; note (black, white, black's score)
    of each game with a result."""
    for match_id, winner in zip(info.match_ids, winners, strict=False):
        match = finish_match(client, match_id, winner)
        played.append((match.black.name, match.white.name,
                       {BLACK: 1.0, WHITE: 0.0, DRAW: 0.5}[winner]))


def _counted(server: LadderServer, info: ladder_pb2.LadderInfo, done: int) -> None:
    def counted() -> bool:
        reply = server.stub.GetStandings(ladder_pb2.GetStandingsRequest(ladder_id=info.id),
                                         timeout=10, metadata=metadata())
        return bool(reply.ladder.games_done == done)

    wait_for(counted)


def _expected(played: list[tuple[str, str, float]]) -> dict[str, tuple[float, int]]:
    """Bot -> (Elo, games) from one fit over every game, by the standings' own code."""
    return {name: (row.elo, row.record.games) for name, row in _table(played).items()}


def _table(played: list[tuple[str, str, float]]) -> dict[str, Row]:
    names = sorted({name for game in played for name in game[:2]})
    index = {name: i for i, name in enumerate(names)}
    table = compute_standings(len(names), [Game(index[b], index[w], s) for b, w, s in played])
    return {names[row.player]: row for row in table.rows}


def test_the_list_pools_the_ladders_of_both_users(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben", "cat", "dan", "eve")
    register_bots(peers, GOMOKU, "gus", "hal")
    alices = _ladder(ladder_server, "alice-token", "ann", "ben", games=6)
    bobs = _ladder(ladder_server, "bob-token", "ben", "cat", games=4)
    apart = _ladder(ladder_server, "bob-token", "dan", "eve", games=2)
    gomoku = _ladder(ladder_server, "alice-token", "gus", "hal", games=2,
                     spec=common_pb2.GameSpec(kind=GOMOKU))
    other_variant = _ladder(ladder_server, "alice-token", "ann", "cat", games=2,
                            spec=INTERNATIONAL)
    connected: list[tuple[str, str, float]] = []
    _play(redis_client, alices, [BLACK, BLACK, WHITE, DRAW, BLACK, WHITE], connected)
    _play(redis_client, bobs, [WHITE, DRAW, BLACK, BLACK], connected)
    separate: list[tuple[str, str, float]] = []
    _play(redis_client, apart, [BLACK, DRAW], separate)
    _play(redis_client, gomoku, [BLACK, WHITE], [])
    _play(redis_client, other_variant, [BLACK, BLACK], [])
    for info in (alices, bobs, apart, gomoku, other_variant):
        _counted(ladder_server, info, len(info.match_ids))

    ratings = _ratings(ladder_server, common_pb2.GameSpec(kind=OTHELLO))
    assert (ratings.game.variant, ratings.game.board_size) == ("standard", 8)
    assert (ratings.games, ratings.ladders, ratings.pools) == (12, 3, 2)
    rows = {row.standing.bot.name: row for row in ratings.rows}
    assert sorted(rows) == ["ann", "ben", "cat", "dan", "eve"]  # not the other game's bots
    for pool, played in ((1, connected), (2, separate)):
        for name, row in _table(played).items():
            assert rows[name].pool == pool
            line = rows[name].standing
            assert line.elo == pytest.approx(row.elo, abs=1e-6)
            assert (line.elo_low, line.elo_high) == pytest.approx(
                (row.elo_low, row.elo_high), abs=1e-6)
            assert line.games == row.record.games
        ranked = sorted((row.standing for row in ratings.rows if row.pool == pool),
                        key=lambda line: line.rank)
        assert [line.rank for line in ranked] == list(range(1, len(ranked) + 1))
        assert [line.elo for line in ranked] == sorted((line.elo for line in ranked),
                                                       reverse=True)
    assert (rows["ben"].ladders, rows["ben"].opponents) == (2, 2)
    # ann's other ladder is of another variant
    assert (rows["ann"].ladders, rows["ann"].opponents) == (1, 1)
    ann = rows["ann"].standing
    assert ann.wins + ann.draws + ann.losses == 6

    assert [row.standing.bot.name for row in _ratings(ladder_server, INTERNATIONAL).rows] == \
        ["ann", "cat"]
    gomoku_list = _ratings(ladder_server, common_pb2.GameSpec(kind=GOMOKU, board_size=15))
    assert {row.standing.bot.name for row in gomoku_list.rows} == {"gus", "hal"}
    assert _ratings(ladder_server, common_pb2.GameSpec(kind=GOMOKU, board_size=19)).rows == []


def test_the_list_follows_new_games_and_leaves_out_void_ones(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = _ladder(ladder_server, "alice-token", "ann", "ben", games=6)
    played: list[tuple[str, str, float]] = []
    _play(redis_client, info, [BLACK, WHITE], played)
    _counted(ladder_server, info, 2)
    first = _ratings(ladder_server, common_pb2.GameSpec(kind=OTHELLO))
    assert first.games == 2
    assert _ratings(ladder_server, common_pb2.GameSpec(kind=OTHELLO)) == first  # kept
    # No ladder counted a game since (the store's results version has not moved), so a read
    # does not sweep the ladders again: a count changed behind the store's back goes unseen.
    header = f"arena:ladder:{info.id}"
    redis_client.hset(header, "games_done", 0)
    try:
        assert _ratings(ladder_server, common_pb2.GameSpec(kind=OTHELLO)) == first
    finally:
        redis_client.hset(header, "games_done", 2)
    finish_match(redis_client, info.match_ids[2], BLACK, void=True)
    remaining = ladder_pb2.LadderInfo(match_ids=info.match_ids[3:])
    _play(redis_client, remaining, [BLACK, BLACK, DRAW], played)
    _counted(ladder_server, info, 6)
    later = _ratings(ladder_server, common_pb2.GameSpec(kind=OTHELLO))
    assert later.games == 5  # the void game has no result
    rows = {row.standing.bot.name: row.standing for row in later.rows}
    for name, (elo, games) in _expected(played).items():
        assert rows[name].elo == pytest.approx(elo, abs=1e-6) and rows[name].games == games


def _clock(move: int, budget: int = 0, increment: int = 0) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(move_time_ms=move, game_time_ms=budget,
                                  increment_ms=increment)


def test_a_list_per_clock_keeps_the_ladders_of_that_clock(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben", "cat")
    blitz = _ladder(ladder_server, "alice-token", "ann", "ben", games=4, clock=_clock(50))
    budget = _ladder(ladder_server, "bob-token", "ben", "cat", games=2,
                     clock=_clock(200, 60_000, 500))
    default = _ladder(ladder_server, "bob-token", "ann", "cat", games=2,
                      clock=_clock(0, 0, 0))  # the default move time: 1,000 ms
    played: dict[str, list[tuple[str, str, float]]] = {}
    for info, winners in ((blitz, [BLACK, BLACK, WHITE, DRAW]), (budget, [BLACK, WHITE]),
                          (default, [WHITE, WHITE])):
        _play(redis_client, info, winners, played.setdefault(info.id, []))
        _counted(ladder_server, info, len(info.match_ids))
    othello = common_pb2.GameSpec(kind=OTHELLO)

    pooled = _ratings(ladder_server, othello)
    assert not pooled.HasField("clock") and pooled.games == 8 and pooled.pools == 1
    assert [((c.clock.move_time_ms, c.clock.game_time_ms, c.clock.increment_ms), c.games,
             c.ladders) for c in pooled.clocks] == [
        ((50, 0, 0), 4, 1), ((200, 60_000, 500), 2, 1), ((1000, 0, 0), 2, 1)]

    for clock, info in ((_clock(50), blitz), (_clock(200, 60_000, 500), budget),
                        (_clock(1000), default), (_clock(0), default)):
        one = _ratings(ladder_server, othello, clock=clock)
        assert one.clock.move_time_ms == (clock.move_time_ms or 1000)
        assert one.clocks == pooled.clocks  # every clock, whichever was asked for
        assert (one.games, one.ladders) == (len(played[info.id]), 1)
        rows = {row.standing.bot.name: row.standing for row in one.rows}
        for name, (elo, games) in _expected(played[info.id]).items():
            assert rows[name].elo == pytest.approx(elo, abs=1e-6) and rows[name].games == games
        assert len(rows) == 2
    nothing = _ratings(ladder_server, othello, clock=_clock(50, 60_000))
    assert (nothing.games, list(nothing.rows), len(nothing.clocks)) == (0, [], 3)


@pytest.mark.parametrize(
    "clock", [_clock(-1), _clock(50, -5), _clock(50, 60_000, -1), _clock(50, 0, 100)])
def test_a_clock_no_ladder_could_have_is_an_invalid_argument(
    ladder_server: LadderServer, clock: common_pb2.TimeControl
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        _ratings(ladder_server, common_pb2.GameSpec(kind=OTHELLO), clock=clock)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in field_violations(caught.value)] == ["clock"]


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (common_pb2.GameSpec(), "game.kind"),  # no game
        (common_pb2.GameSpec(kind=77), "game.kind"),
        (common_pb2.GameSpec(kind=OTHELLO, variant="nope"), "game.variant"),
        (common_pb2.GameSpec(kind=OTHELLO, board_size=10), "game.board_size"),
        (common_pb2.GameSpec(kind=GOMOKU, board_size=-15), "game.board_size"),
        (common_pb2.GameSpec(kind=GOMOKU, variant="x" * 100_000), "game.variant"),
    ],
)
def test_a_game_arena_does_not_host_is_an_invalid_argument(
    ladder_server: LadderServer, spec: common_pb2.GameSpec, field: str
) -> None:
    """The refusal names the part of the game at fault (it said 'game' for each)."""
    with pytest.raises(grpc.RpcError) as caught:
        _ratings(ladder_server, spec)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert [v.field for v in field_violations(caught.value)] == [field]
