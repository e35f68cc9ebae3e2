"""SPRT ladders over real gRPC and Redis: pairs are scored by the first bot's points, the
test runs after every result, and a decision finishes the ladder and cancels what is still
running. The tests end each game through the referee's own ledger."""

from __future__ import annotations

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.protocol import keys
from arena.services.common.protocol.ladders import ResultRecord
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore
from arena.services.ladder.sprt import sprt_state

from arena.ratings import pentanomial, sprt
from arena.rpc import field_violations
from arena.v1 import common_pb2, ladder_pb2, match_pb2
from tests.ladder.conftest import (
    BLACK,
    DRAW,
    WHITE,
    LadderServer,
    create_ladder,
    finish_match,
    metadata,
    register_bots,
    standings,
    wait_for,
)

OTHELLO = common_pb2.GAME_KIND_OTHELLO
H0, H1 = ladder_pb2.SPRT_VERDICT_ACCEPT_H0, ladder_pb2.SPRT_VERDICT_ACCEPT_H1


def _test(*bots: str, **sprt_fields: float) -> ladder_pb2.LadderConfig:
    return ladder_pb2.LadderConfig(
        name="version test", game=common_pb2.GameSpec(kind=OTHELLO),
        bots=[common_pb2.BotRef(name=b) for b in bots], format=ladder_pb2.LADDER_FORMAT_SPRT,
        time_control=common_pb2.TimeControl(move_time_ms=50), seed=3,
        sprt=ladder_pb2.SprtConfig(**sprt_fields))  # type: ignore[arg-type]


def _first_bot_scores(client: redis.Redis, match_id: str, index: int, score: float) -> None:
    """End game ``index`` with the first bot scoring ``score`` (it is black in even games)."""
    first_is_black = index % 2 == 0
    winner = DRAW if score == 0.5 else BLACK if (score == 1.0) == first_is_black else WHITE
    finish_match(client, match_id, winner)


def _counted_pairs(server: LadderServer, ladder_id: str, pairs: int) -> ladder_pb2.SprtState:
    """The test once it counts ``pairs`` pairs."""
    wait_for(lambda: standings(server, ladder_id).ladder.sprt.pairs >= pairs, 15.0)
    return standings(server, ladder_id).ladder.sprt


def _play_pairs_until_decided(server: LadderServer, client: redis.Redis,
                              info: ladder_pb2.LadderInfo,
                              pair_scores: tuple[float, float]) -> ladder_pb2.LadderInfo:
    """End the games pair by pair (the first bot scoring ``pair_scores``), each pair once
    the test has counted the one before, until the test decides; then wait for the ladder
    to finish. Returns it as it finished."""
    pairs = 0
    verdict = ladder_pb2.SPRT_VERDICT_CONTINUE
    while verdict == ladder_pb2.SPRT_VERDICT_CONTINUE:
        assert 2 * pairs < info.games_total, "the test did not decide"
        for index, score in zip((2 * pairs, 2 * pairs + 1), pair_scores, strict=True):
            _first_bot_scores(client, info.match_ids[index], index, score)
        pairs += 1
        verdict = _counted_pairs(server, info.id, pairs).verdict
    wait_for(lambda: standings(server, info.id).ladder.status
             == ladder_pb2.LADDER_STATUS_FINISHED)
    final = standings(server, info.id).ladder
    assert final.sprt.pairs == pairs  # decided on the pair just played, nothing later
    return final


def test_a_clearly_stronger_bot_is_accepted_and_the_rest_cancelled(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "new", "old")
    info = create_ladder(ladder_server, _test("new", "old", elo0=0, elo1=200, max_games=40))
    assert info.games_total == 40 and info.config.games_per_pairing == 40
    assert info.config.sprt.alpha == 0.05 and info.config.sprt.beta == 0.05  # defaults
    assert info.sprt.verdict == ladder_pb2.SPRT_VERDICT_CONTINUE and info.sprt.pairs == 0
    final = _play_pairs_until_decided(ladder_server, redis_client, info, (1.0, 1.0))
    played = 2 * final.sprt.pairs
    expected = sprt(pentanomial([2.0] * (played // 2)), 0, 200)
    assert final.sprt.verdict == H1 and final.sprt.pairs == played // 2
    assert final.sprt.llr == pytest.approx(expected.llr) and final.sprt.llr >= expected.upper_bound
    assert list(final.sprt.pentanomial) == [0, 0, 0, 0, played // 2]
    assert (final.sprt.wins, final.sprt.draws, final.sprt.losses) == (played, 0, 0)
    assert played == 16  # 8 perfect pairs decide 0 against 200 Elo (see test_sprt)
    store = MatchStore(redis_client)

    def statuses() -> list[int]:
        return [store.header(match_id).status for match_id in final.match_ids]

    # Its games still in flight were cancelled and counted (void) before it showed
    # FINISHED, so the finished ladder's counts are final; they change nothing.
    assert set(statuses()[played:]) == {match_pb2.MATCH_STATUS_CANCELLED}
    assert statuses()[:played] == [match_pb2.MATCH_STATUS_FINISHED] * played
    assert (final.games_done, final.games_void) == (40, 40 - played)
    again = standings(ladder_server, info.id).ladder
    assert again.sprt == final.sprt and again.status == ladder_pb2.LADDER_STATUS_FINISHED
    assert (again.games_done, again.games_total) == (40, 40)  # no void game replayed
    assert redis_client.zcard(keys.RUNNING_LADDERS) == 0  # the verdict took it out


def test_a_weaker_bot_is_rejected(peers: ArenaClient, ladder_server: LadderServer,
                                  redis_client: redis.Redis) -> None:
    register_bots(peers, OTHELLO, "new", "old")
    info = create_ladder(ladder_server, _test("new", "old", elo0=-100, elo1=100, max_games=60))
    # Each pair: the new bot loses one game and draws the other (0.5 of 2 points).
    final = _play_pairs_until_decided(ladder_server, redis_client, info, (0.0, 0.5))
    assert final.sprt.verdict == H0 and list(final.sprt.pentanomial)[1] == final.sprt.pairs
    assert final.sprt.llr <= final.sprt.lower_bound


def test_the_maximum_ends_a_test_without_a_verdict(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "new", "old")
    info = create_ladder(ladder_server, _test("new", "old", max_games=3))  # rounded up to 4
    assert info.games_total == 4
    for index, match_id in enumerate(info.match_ids):
        _first_bot_scores(redis_client, match_id, index, 0.5)
    wait_for(lambda: standings(ladder_server, info.id).ladder.status
              == ladder_pb2.LADDER_STATUS_FINISHED)
    final = standings(ladder_server, info.id).ladder
    assert final.sprt.verdict == ladder_pb2.SPRT_VERDICT_CONTINUE
    assert final.sprt.pairs == 2 and list(final.sprt.pentanomial) == [0, 0, 2, 0, 0]


def test_watch_and_list_show_the_test(peers: ArenaClient, ladder_server: LadderServer,
                                      redis_client: redis.Redis) -> None:
    register_bots(peers, OTHELLO, "new", "old")
    info = create_ladder(ladder_server, _test("new", "old", elo0=0, elo1=300, max_games=20))
    stream = ladder_server.stub.WatchLadder(ladder_pb2.WatchLadderRequest(ladder_id=info.id),
                                            timeout=30, metadata=metadata())
    for index, match_id in enumerate(info.match_ids[:12]):
        _first_bot_scores(redis_client, match_id, index, 1.0)
    seen = list(stream)
    assert seen[-1].ladder.sprt.verdict == H1
    pairs = [p.ladder.sprt.pairs for p in seen]
    assert pairs == sorted(pairs) and pairs[-1] >= 5  # the LLR moved with every pair
    listed = ladder_server.stub.ListLadders(ladder_pb2.ListLaddersRequest(), timeout=10,
                                            metadata=metadata())
    assert listed.ladders[0].sprt.verdict == H1


@pytest.mark.parametrize(("bots", "fields", "field"), [
    (("new", "old", "other"), {}, "config.bots"),
    (("new", "old"), {"elo0": 5, "elo1": 0}, "config.sprt.elo1"),
    (("new", "old"), {"alpha": 0.7}, "config.sprt"),
    (("new", "old"), {"max_games": 30_000}, "config.sprt.max_games"),
    # rounded up to even before it was checked, 2**31 - 1 overflowed its field: 'Value out
    # of range: 2147483648', naming no field
    (("new", "old"), {"max_games": 2**31 - 1}, "config.sprt.max_games"),
    # NaN passed 'elo1 <= elo0' (false both ways), and the test's standings and every
    # ladder listing then failed ("mean nan is outside the outcome range").
    (("new", "old"), {"elo0": float("nan")}, "config.sprt.elo0"),
    (("new", "old"), {"elo1": float("nan")}, "config.sprt.elo1"),
    (("new", "old"), {"elo1": float("inf")}, "config.sprt.elo1"),
    (("new", "old"), {"elo0": -1e308, "elo1": 5}, "config.sprt.elo0"),
])
def test_tests_that_cannot_run_are_refused_by_field(
    peers: ArenaClient, ladder_server: LadderServer, bots: tuple[str, ...],
    fields: dict[str, float], field: str
) -> None:
    register_bots(peers, OTHELLO, "new", "old", "other")
    with pytest.raises(grpc.RpcError) as refused:
        create_ladder(ladder_server, _test(*bots, **fields))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in [violation.field for violation in field_violations(refused.value)]


def test_an_sprt_config_on_a_round_robin_is_refused(peers: ArenaClient,
                                                     ladder_server: LadderServer) -> None:
    register_bots(peers, OTHELLO, "new", "old")
    config = _test("new", "old", elo1=10)
    config.format = ladder_pb2.LADDER_FORMAT_ROUND_ROBIN
    with pytest.raises(grpc.RpcError) as refused:
        create_ladder(ladder_server, config)
    assert "config.sprt" in [v.field for v in field_violations(refused.value)]


def test_pairs_with_a_void_game_do_not_count() -> None:
    config = _test("new", "old", elo0=0, elo1=5, alpha=0.05, beta=0.05)
    members = {f"m{i}": i for i in range(8)}
    results = {
        "m0": ResultRecord(0, 1, 1.0), "m1": ResultRecord(1, 0, 0.5),  # pair 0: 1.5 points
        "m2": ResultRecord(0, 1, 0.0), "m3": ResultRecord(1, 0, None),  # pair 1: void game
        "m4": ResultRecord(0, 1, 0.5),                                   # pair 2: incomplete
        "m6": ResultRecord(0, 1, 0.0), "m7": ResultRecord(1, 0, 1.0),   # pair 3: 0 points
        "stranger": ResultRecord(0, 1, 1.0),                            # not a member
    }
    state = sprt_state(config, members, results)
    assert state.pairs == 2 and list(state.pentanomial) == [1, 0, 0, 1, 0]
    assert (state.wins, state.draws, state.losses) == (1, 1, 2)
    assert state.llr == pytest.approx(sprt(pentanomial([1.5, 0.0]), 0, 5).llr)


def test_a_replayed_void_game_completes_its_pair(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "new", "old")
    config = _test("new", "old", max_games=4)
    config.replay_void = True
    info = create_ladder(ladder_server, config)
    _void(redis_client, info.match_ids[0])  # the infrastructure ended game 0: it is replayed
    wait_for(lambda: len(standings(ladder_server, info.id).ladder.match_ids) == 5)
    replay = standings(ladder_server, info.id).ladder.match_ids[4]
    assert MatchStore(redis_client).header(replay).config.black.name == "new"  # game 0 again
    _first_bot_scores(redis_client, info.match_ids[1], 1, 1.0)
    assert _counted_pairs(ladder_server, info.id, 0).pairs == 0  # game 0 has no result yet
    _first_bot_scores(redis_client, replay, 0, 0.5)
    state = _counted_pairs(ladder_server, info.id, 1)
    assert list(state.pentanomial) == [0, 0, 0, 1, 0]  # 0.5 (the replay) + 1 (game 1)


def _void(client: redis.Redis, match_id: str) -> None:
    match = MatchStore(client).header(match_id)
    match.status = match_pb2.MATCH_STATUS_CANCELLED
    match.result.CopyFrom(match_pb2.MatchResult(termination=match_pb2.TERMINATION_CANCELLED,
                                                void=True))
    assert Ledger(client).finish(match, 0)
