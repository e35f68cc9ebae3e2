"""The ladder service over real gRPC and Redis, creating its games through a real referee;
the tests end the games through the referee's own ledger."""

from __future__ import annotations

import math
import threading
import time

import grpc
import pytest
import redis
from arena.clients import status_commands
from arena.clients.sdk import ArenaClient
from arena.services.common import paging
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import FINISHED_STREAM, LADDER_GROUP
from arena.services.common.protocol.ladders import LadderStore, created_ms
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore
from arena.services.ladder import ladders as ladders_module
from arena.services.ladder.ladders import Ladders, Plan

from arena.rpc import field_violations
from arena.v1 import common_pb2, ladder_pb2, match_pb2
from tests.ladder.conftest import (
    BLACK,
    DRAW,
    WHITE,
    LadderServer,
    Peers,
    create_ladder,
    fast_follower,
    finish_match,
    metadata,
    register_bots,
    standings,
    start_ladder_server,
    wait_for,
)
from tests.support.servers import client

OTHELLO = common_pb2.GAME_KIND_OTHELLO


def _config(*bots: str, **fields: object) -> ladder_pb2.LadderConfig:
    config = ladder_pb2.LadderConfig(
        name="test", game=common_pb2.GameSpec(kind=OTHELLO),
        bots=[common_pb2.BotRef(name=b) for b in bots],
        time_control=common_pb2.TimeControl(move_time_ms=50), seed=7,
    )
    for key, value in fields.items():
        if isinstance(value, common_pb2.TimeControl):
            config.time_control.CopyFrom(value)
        else:
            setattr(config, key, value)
    return config


def test_create_ladder_queues_colour_swapped_matches_with_openings(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben", "cat")
    info = create_ladder(ladder_server, _config("ann", "ben", "cat", games_per_pairing=4,
                                          opening_suite="othello-balanced-2"))
    assert info.status == ladder_pb2.LADDER_STATUS_RUNNING and info.owner == "alice"
    assert info.games_total == len(info.match_ids) == 3 * 4
    assert [b.version for b in info.config.bots] == [1, 1, 1]  # resolved to exact versions
    matches = [MatchStore(redis_client).header(m) for m in info.match_ids]
    assert all(m.config.ladder_id == info.id for m in matches)
    assert {len(m.config.opening) for m in matches} == {2}
    games = {(m.black.name, m.white.name, tuple(m.config.opening)) for m in matches}
    assert len(games) == 12  # each (colours, opening) once
    for black, white, opening in games:
        assert (white, black, opening) in games  # ... and its colour-swapped twin
    assert redis_client.xlen("arena:stream:matches") == 12


def test_a_request_id_serves_its_own_ladder_again_and_refuses_another(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    """A request_id used again for other bots answered with the first ladder, as if the
    second had been made; now ALREADY_EXISTS names the ladder the key made, and nothing
    is created. The same request again still gets its ladder."""
    register_bots(peers, OTHELLO, "ann", "ben", "cat")
    first = create_ladder(ladder_server, _config("ann", "ben"), request_id="form-1")
    again = create_ladder(ladder_server, _config("ann", "ben"), request_id="form-1")
    assert again.id == first.id
    with pytest.raises(grpc.RpcError) as refused:
        create_ladder(ladder_server, _config("ann", "cat"), request_id="form-1")
    assert refused.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert refused.value.details() == (f"request_id 'form-1' already made ladder {first.id} "
                                       "with different settings; use a new request_id")
    assert redis_client.zcard("arena:ladders") == 1
    assert redis_client.xlen("arena:stream:matches") == len(first.match_ids)
    # Another user's key of the same name is theirs.
    assert create_ladder(ladder_server, _config("ann", "cat"), token="bob-token",
                         request_id="form-1").owner == "bob"
    # A bot of it retired since: a new ladder of it is refused, but the retry of the
    # first request still gets its ladder (it was judged as new, and refused).
    peers.retire_bot("ben")
    with pytest.raises(grpc.RpcError) as retired:
        create_ladder(ladder_server, _config("ann", "ben"))
    assert retired.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert create_ladder(ladder_server, _config("ann", "ben"), request_id="form-1").id == \
        first.id


@pytest.mark.parametrize(
    ("config", "field"),
    [
        (_config("ann"), "config.bots"),
        # Its games were counted from a list of its pairings first: 2,000 bots took 200 MB
        # to refuse, 100,000 (1.3 MB of request) got the service killed for its memory.
        (_config(*["ann"] * 2_000), "config.bots"),
        (_config("ann", "nobody"), "config.bots[1]"),
        (_config("ann", "ann"), "config.bots[1]"),
        (_config("ann", "ben", opening_suite="gomoku-balanced15"), "config.opening_suite"),
        (_config("ann", "ben", opening_suite="nope"), "config.opening_suite"),
        # int() refuses 5,000 digits; its ValueError came back naming no field.
        (_config("ann", "ben", opening_suite="othello-balanced-" + "9" * 5_000),
         "config.opening_suite"),
        (_config("ann", "ben", games_per_pairing=-2), "config.games_per_pairing"),
        (_config("ann", "ben", games_per_pairing=50_000), "config.games_per_pairing"),
        (_config("ann", "ben", games_per_pairing=2**31 - 1), "config.games_per_pairing"),
        (_config("ann", "ben", time_control=common_pb2.TimeControl(move_time_ms=-5)),
         "config.time_control.move_time_ms"),
        (_config("ann", "ben", time_control=common_pb2.TimeControl(increment_ms=100)),
         "config.time_control.increment_ms"),  # an increment to no game budget
        (_config("ann", "ben", time_control=common_pb2.TimeControl(game_time_ms=9000,
                                                                   increment_ms=-1)),
         "config.time_control.increment_ms"),
    ],
)
def test_bad_ladders_are_invalid_arguments_with_fields(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis,
    config: ladder_pb2.LadderConfig, field: str,
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    with pytest.raises(grpc.RpcError) as caught:
        create_ladder(ladder_server, config)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in [v.field for v in field_violations(caught.value)]
    assert redis_client.zcard("arena:ladders") == 0  # nothing half-created


def test_standings_match_recorded_results_and_the_closed_form_elo(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=10))
    outcomes = [BLACK, WHITE, DRAW, BLACK, BLACK, WHITE, BLACK, DRAW, BLACK, WHITE]
    ann_points = 0.0
    for done, (match_id, winner) in enumerate(zip(info.match_ids, outcomes, strict=True), 1):
        match = finish_match(redis_client, match_id, winner)
        ann_is_black = match.black.name == "ann"
        points = {BLACK: float(ann_is_black), WHITE: float(not ann_is_black), DRAW: 0.5}
        ann_points += points[winner]
        if done == 5:  # a table read halfway is no table kept for the end
            wait_for(lambda: standings(ladder_server, info.id).ladder.games_done == 5)
            assert [row.games for row in standings(ladder_server, info.id).rows] == [5, 5]
    wait_for(lambda: standings(ladder_server, info.id).ladder.games_done == 10)
    table = standings(ladder_server, info.id)
    assert table.ladder.status == ladder_pb2.LADDER_STATUS_FINISHED
    rows = {row.bot.name: row for row in table.rows}
    assert rows["ann"].wins + rows["ann"].draws / 2 == ann_points
    assert rows["ann"].draws == rows["ben"].draws == 2
    assert rows["ann"].wins == rows["ben"].losses and rows["ann"].games == 10
    assert rows["ann"].score_pct == pytest.approx(10 * ann_points)
    # One virtual draw (the default prior): the MLE difference is the logit of the
    # shrunk score, in Elo.
    shrunk = (ann_points + 0.5) / 11
    expected = 400 * math.log10(shrunk / (1 - shrunk))
    assert rows["ann"].elo - rows["ben"].elo == pytest.approx(expected, abs=1e-6)
    assert rows["ann"].elo == pytest.approx(-rows["ben"].elo)
    assert rows["ann"].elo_low < rows["ann"].elo < rows["ann"].elo_high
    pair = {(h.bot, h.opponent): h for h in table.head_to_head}
    assert pair[("ann@v1", "ben@v1")].wins == rows["ann"].wins
    assert pair[("ann@v1", "ben@v1")].bot_ref.name == "ann"
    assert pair[("ann@v1", "ben@v1")].los + pair[("ben@v1", "ann@v1")].los == pytest.approx(1)


def test_each_result_counts_once_however_often_it_is_delivered(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=4))
    for match_id in info.match_ids[:2]:
        finish_match(redis_client, match_id, BLACK)
        for _ in range(3):  # repeated deliveries of the same finished event
            redis_client.xadd(FINISHED_STREAM, {"match_id": match_id, "ladder_id": info.id})
    # A bogus event for a match the ladder does not own changes nothing either.
    redis_client.xadd(FINISHED_STREAM, {"match_id": "nope", "ladder_id": info.id})
    wait_for(lambda: redis_client.xpending(FINISHED_STREAM, LADDER_GROUP)["pending"] == 0
              and standings(ladder_server, info.id).ladder.games_done == 2)
    time.sleep(0.2)
    table = standings(ladder_server, info.id)
    assert table.ladder.games_done == 2
    assert sum(row.games for row in table.rows) == 4  # two games, seen from both sides


def test_concurrent_followers_count_each_result_once(
    peers: ArenaClient, redis_server: EmbeddedRedis, ladder_server: LadderServer,
    redis_client: redis.Redis, ladder_peers: Peers,
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben", "cat")
    info = create_ladder(ladder_server, _config("ann", "ben", "cat", games_per_pairing=2))
    followers = [ladder_peers.follower(redis_server.client(), f"extra-{i}") for i in range(4)]
    for follower in followers:
        follower.start()
    try:
        for match_id in info.match_ids:
            finish_match(redis_client, match_id, WHITE)
            redis_client.xadd(FINISHED_STREAM, {"match_id": match_id, "ladder_id": info.id})
        # Every follower also reconciles at once: racing the stream readers.
        threads = [threading.Thread(target=f.reconcile_running) for f in followers]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        wait_for(lambda: standings(ladder_server, info.id).ladder.status
                  == ladder_pb2.LADDER_STATUS_FINISHED)
    finally:
        for follower in followers:
            follower.stop()
    table = standings(ladder_server, info.id)
    assert table.ladder.games_done == 6
    assert sum(row.losses for row in table.rows) == 6


def test_a_restarted_service_resumes_and_counts_each_result_once(
    peers: ArenaClient, redis_client: redis.Redis, ladder_peers: Peers,
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    first = start_ladder_server(ladder_peers, fast_follower("ladder-a"))
    info = create_ladder(first, _config("ann", "ben", games_per_pairing=6))
    for match_id in info.match_ids[:2]:
        finish_match(redis_client, match_id, BLACK)
    wait_for(lambda: standings(first, info.id).ladder.games_done == 2)
    first.stop()
    # While no ladder service runs, two more games end; then a consumer named like the
    # stopped service takes two entries and dies before acknowledging them.
    for match_id in info.match_ids[2:4]:
        finish_match(redis_client, match_id, WHITE)
    taken = redis_client.xreadgroup(LADDER_GROUP, "ladder-a", {FINISHED_STREAM: ">"}, count=2)
    assert len(taken[0][1]) == 2
    second = start_ladder_server(ladder_peers, fast_follower("ladder-a"))
    try:
        wait_for(lambda: standings(second, info.id).ladder.games_done == 4)
        for match_id in info.match_ids[4:]:
            finish_match(redis_client, match_id, DRAW)
        wait_for(lambda: standings(second, info.id).ladder.status
                  == ladder_pb2.LADDER_STATUS_FINISHED)
        table = standings(second, info.id)
        assert table.ladder.games_done == 6
        assert sorted((r.wins, r.draws, r.losses) for r in table.rows) == [(2, 2, 2), (2, 2, 2)]
        assert redis_client.xpending(FINISHED_STREAM, LADDER_GROUP)["pending"] == 0
    finally:
        second.stop()


def test_stale_entries_of_a_vanished_consumer_are_reclaimed(
    peers: ArenaClient, redis_server: EmbeddedRedis, ladder_server: LadderServer,
    redis_client: redis.Redis, ladder_peers: Peers,
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=2))
    ladder_server.stop()  # the shared fixture's service, out of the way
    for match_id in info.match_ids:
        finish_match(redis_client, match_id, BLACK)
    redis_client.xreadgroup(LADDER_GROUP, "gone-for-good", {FINISHED_STREAM: ">"}, count=10)
    config = fast_follower("survivor")
    config.reclaim_idle_ms = 100
    survivor = ladder_peers.follower(redis_server.client(), config=config)
    time.sleep(0.15)
    assert survivor.poll_once() == 2
    assert survivor.ladders.store.get(info.id).status == ladder_pb2.LADDER_STATUS_FINISHED


def test_reconcile_counts_results_whose_events_were_lost(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis,
    ladder_peers: Peers,
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=2))
    ladder_server.stop()
    for match_id in info.match_ids:
        finish_match(redis_client, match_id, BLACK)
    redis_client.delete(FINISHED_STREAM)  # the events are gone
    follower = ladder_peers.follower(redis_client)
    assert follower.reconcile_running() == 2
    assert follower.reconcile_running() == 0
    assert follower.ladders.store.get(info.id).games_done == 2


def test_watch_streams_progress_until_the_ladder_ends(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=4))
    seen: list[ladder_pb2.LadderProgress] = []
    stream = ladder_server.stub.WatchLadder(
        ladder_pb2.WatchLadderRequest(ladder_id=info.id), timeout=30, metadata=metadata())
    reader = threading.Thread(target=lambda: seen.extend(stream))
    reader.start()
    wait_for(lambda: len(seen) >= 1)
    for match_id in info.match_ids:
        finish_match(redis_client, match_id, WHITE)
    reader.join(20)
    assert not reader.is_alive()
    assert seen[0].ladder.games_done == 0 and not seen[0].finished_match_id
    finished = [p.finished_match_id for p in seen if p.finished_match_id]
    assert sorted(finished) == sorted(info.match_ids)
    assert seen[-1].ladder.status == ladder_pb2.LADDER_STATUS_FINISHED
    assert seen[-1].ladder.games_done == 4
    assert redis_client.zcard(keys.RUNNING_LADDERS) == 0  # its last count took it out
    # An event carries the ladder's counters, not its match ids: with them, a ladder of
    # 20,000 games sent each watcher 20,000 events of up to 20,000 ids each. Its
    # standings still list every game.
    assert [len(p.ladder.match_ids) for p in seen] == [0] * len(seen)
    assert standings(ladder_server, info.id).ladder.match_ids == info.match_ids


def test_cancel_list_and_permissions(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    older = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=2))
    newer = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=2), "bob-token")
    stub = ladder_server.stub
    listing = stub.ListLadders(ladder_pb2.ListLaddersRequest(
        page=common_pb2.PageRequest(page_size=1)), timeout=10, metadata=metadata())
    assert [found.id for found in listing.ladders] == [newer.id] and listing.next_page_token
    rest = stub.ListLadders(ladder_pb2.ListLaddersRequest(page=common_pb2.PageRequest(
        page_size=1, page_token=listing.next_page_token)), timeout=10, metadata=metadata())
    assert [found.id for found in rest.ladders] == [older.id] and not rest.next_page_token
    assert not listing.ladders[0].match_ids and not rest.ladders[0].match_ids  # see watch
    assert rest.ladders[0].games_total == 2
    # A token is base64 of a tag and a cursor, so anyone can make one: a cursor of '²'
    # passed isdigit and failed int() ("invalid literal for int()").
    forged = paging.encode_page_token("\u00b2")
    with pytest.raises(grpc.RpcError) as caught:
        stub.ListLadders(ladder_pb2.ListLaddersRequest(page=common_pb2.PageRequest(
            page_token=forged)), timeout=10, metadata=metadata())
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "is not a token this server issued" in (caught.value.details() or "")

    # A referee has started the first game; the second has not begun.
    running = MatchStore(redis_client).header(newer.match_ids[0])
    running.status = match_pb2.MATCH_STATUS_RUNNING
    assert Ledger(redis_client).start(running)
    cancel = ladder_pb2.CancelLadderRequest(ladder_id=newer.id)
    with pytest.raises(grpc.RpcError) as caught:
        stub.CancelLadder(cancel, timeout=10, metadata=metadata("alice-token"))
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    cancelled = stub.CancelLadder(cancel, timeout=10, metadata=metadata("bob-token"))
    assert cancelled.status == ladder_pb2.LADDER_STATUS_CANCELLED
    # Both games end cancelled, the running one too: void, out of the standings.
    assert (cancelled.games_done, cancelled.games_void) == (2, 2)
    # They were counted before the end showed: the progress stream's ``status`` entry,
    # on which every watch ends, comes after their counts.
    progress = redis_client.xrange(keys.ladder(newer.id, "progress"))
    assert [sorted(fields) for _id, fields in progress] == \
        [[b"match_id"], [b"match_id"], [b"status"]]
    for match_id in newer.match_ids:
        ended = MatchStore(redis_client).header(match_id)
        assert ended.status == match_pb2.MATCH_STATUS_CANCELLED and ended.result.void
        assert f"ladder {newer.id} cancelled" in ended.result.detail
        assert not Ledger(redis_client).start(ended)  # a referee would now skip it
    with pytest.raises(grpc.RpcError) as caught:
        stub.CancelLadder(cancel, timeout=10, metadata=metadata("admin-token"))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    watch = list(stub.WatchLadder(ladder_pb2.WatchLadderRequest(ladder_id=newer.id),
                                  timeout=10, metadata=metadata()))
    assert [p.ladder.status for p in watch] == [ladder_pb2.LADDER_STATUS_CANCELLED]
    # The referee that ran the first game can no longer end it with a result.
    running.status = match_pb2.MATCH_STATUS_FINISHED
    running.result.CopyFrom(match_pb2.MatchResult(
        winner=BLACK, termination=match_pb2.TERMINATION_NORMAL))
    assert not Ledger(redis_client).finish(running, 0)
    assert sum(row.games for row in standings(ladder_server, newer.id).rows) == 0
    assert standings(ladder_server, newer.id).ladder.status == ladder_pb2.LADDER_STATUS_CANCELLED
    for missing in ("GetStandings", "CancelLadder"):
        request_type = {"GetStandings": ladder_pb2.GetStandingsRequest,
                        "CancelLadder": ladder_pb2.CancelLadderRequest}[missing]
        with pytest.raises(grpc.RpcError) as caught:
            getattr(stub, missing)(request_type(ladder_id="L0-none"), timeout=10,
                                   metadata=metadata())
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    with pytest.raises(grpc.RpcError) as caught:
        stub.ListLadders(ladder_pb2.ListLaddersRequest(), timeout=10)
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_an_end_begun_by_a_service_that_died_is_carried_out_by_the_next_round(
    peers: ArenaClient, ladder_server: LadderServer, ladder_peers: Peers,
    redis_client: redis.Redis
) -> None:
    """A ladder ends in two steps: it stops taking games, its games not over are cancelled
    and counted, then its status shows the end. A service that dies between them leaves
    it running but ending: it starts no game and replays no void one, and the next
    scheduling round (here the one the ladder service runs after counting a game) carries
    the end out as it began."""
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=4,
                                                replay_void=True))
    dead = ladder_peers.ladders(redis_client)
    assert dead.store.begin_end(info.id, ladders_module.CANCELLED, "the arena stops") == \
        ladders_module.CANCELLED
    # A second begin is the same end: a verdict does not replace a cancel.
    assert dead.store.begin_end(info.id, ladders_module.FINISHED) == ladders_module.CANCELLED
    ending = standings(ladder_server, info.id).ladder
    assert ending.status == ladder_pb2.LADDER_STATUS_RUNNING and not ending.ended_because
    assert dead.store.claim_games(info.id, 64, 64) == []
    finish_match(redis_client, info.match_ids[0], WHITE, void=True)
    wait_for(lambda: standings(ladder_server, info.id).ladder.status
             == ladder_pb2.LADDER_STATUS_CANCELLED)
    ended = standings(ladder_server, info.id).ladder
    assert ended.ended_because == "the arena stops"
    # Its games were counted before it showed the end; the void one was not played again.
    assert (ended.games_done, ended.games_void, ended.games_total) == (4, 4, 4)
    assert {MatchStore(redis_client).header(m).status for m in info.match_ids[1:]} == \
        {match_pb2.MATCH_STATUS_CANCELLED}
    assert redis_client.zcard(keys.RUNNING_LADDERS) == 0
    assert not redis_client.hexists(keys.ladder(info.id), "closing")
    with pytest.raises(grpc.RpcError) as caught:
        ladder_server.stub.CancelLadder(ladder_pb2.CancelLadderRequest(ladder_id=info.id),
                                        timeout=10, metadata=metadata())
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_a_game_that_finished_just_before_its_ladder_ended_is_counted_before_the_end_shows(
    peers: ArenaClient, ladder_peers: Peers, redis_client: redis.Redis
) -> None:
    """A game can finish while its ladder is being cancelled, its result not counted yet
    (the finish's stream entry is on its way to the follower): the referee refuses to
    cancel it. Its result is counted then, before the end shows, as the cancelled games
    are (it was left to the follower, after the end)."""
    register_bots(peers, OTHELLO, "ann", "ben")
    server = start_ladder_server(ladder_peers)
    try:
        info = create_ladder(server, _config("ann", "ben", games_per_pairing=4))
    finally:
        server.stop()  # no follower counts the finish below
    finish_match(redis_client, info.match_ids[0], WHITE)
    ladders = ladder_peers.ladders(redis_client)
    assert ladders.end(info.id, "alice")
    ended = ladders.info(info.id)
    assert ended.status == ladder_pb2.LADDER_STATUS_CANCELLED
    assert (ended.games_done, ended.games_void) == (4, 3)
    assert ladders.store.results(info.id)[info.match_ids[0]].score is not None


class _EndedMeanwhile:
    """The referee, reached by a ladder service while another service ends the ladder:
    the end is carried out whole while the ladder's next game is being created."""

    def __init__(self, sdk: ArenaClient, other: Ladders) -> None:
        self.sdk, self.other, self.ladder_id = sdk, other, ""

    def __getattr__(self, name: str) -> object:
        return getattr(self.sdk, name)

    def create_match(self, config: match_pb2.MatchConfig, request_id: str = "",
                     owner: str = "") -> match_pb2.Match:
        if config.ladder_id == self.ladder_id:
            assert self.other.end(config.ladder_id, owner)
            self.ladder_id = ""  # once
        return self.sdk.create_match(config, request_id=request_id, owner=owner)


def test_a_game_created_while_its_ladder_ended_is_called_off(
    peers: ArenaClient, ladder_peers: Peers, redis_client: redis.Redis
) -> None:
    """A round that read the ladder as running creates its next game; meanwhile another
    service ends the ladder, cancelling the games it knows of. The new game was left
    pending, to be played for nothing and counted after the end showed; the round now
    reads, as it records the game, that the ladder is no longer open, and calls it off.
    The other game the round had claimed is then not created (it was, and at once called
    off)."""
    register_bots(peers, OTHELLO, "ann", "ben")
    sdk = ladder_peers.client()
    referee = _EndedMeanwhile(sdk, ladder_peers.ladders(redis_client))
    ladders = Ladders(LadderStore(redis_client), referee,  # type: ignore[arg-type]
                      BotVersions(sdk), in_flight=2)
    info = ladders.create(_config("ann", "ben", games_per_pairing=4), "alice")
    for match_id in ladders.store.games(info.id).values():  # room for the next two
        ladders.count(finish_match(redis_client, match_id, WHITE))
    referee.ladder_id = info.id
    assert ladders.schedule(info.id) == 1
    games = ladders.store.games(info.id)
    assert len(games) == 3
    assert MatchStore(redis_client).header(games[2]).status == (
        match_pb2.MATCH_STATUS_CANCELLED)
    assert ladders.store.uncounted(info.id) == []
    ended = ladders.info(info.id)
    assert ended.status == ladder_pb2.LADDER_STATUS_CANCELLED
    assert (ended.games_done, ended.games_void) == (3, 1)


def test_the_running_ladders_are_listed_however_many_ended_after_them(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    """`arena status` read the newest 200 ladders and kept the running ones: a ladder that
    ran for days dropped out of it once 200 newer ones had ended. A listing of the running
    ladders reads an index of them. One an earlier version made is in its owner's set
    only: the service indexes it on its first such listing."""
    register_bots(peers, OTHELLO, "ann", "ben")
    config = _config("ann", "ben", games_per_pairing=2)
    old = create_ladder(ladder_server, config)
    redis_client.zrem(keys.RUNNING_LADDERS, old.id)  # as an earlier version stored it
    running = create_ladder(ladder_server, config, "bob-token")
    ended = [create_ladder(ladder_server, config) for _ in range(3)]
    for ladder in ended:
        ladder_server.stub.CancelLadder(ladder_pb2.CancelLadderRequest(ladder_id=ladder.id),
                                        timeout=10, metadata=metadata())
    sdk = client(token="alice-token", ladder=ladder_server.server.target)
    newest = [ladder.id for ladder in sdk.iter_ladders(limit=2)]
    assert newest == [ended[2].id, ended[1].id]
    assert [eta.ladder.id for eta in status_commands.running_ladders(sdk, time.time(), 2)] \
        == [running.id, old.id]
    pages = []
    token = ""
    for _ in range(4):  # bounded: a token that never ends fails the test
        page = sdk.list_ladders(page_size=1, page_token=token, running_only=True)
        pages.append([ladder.id for ladder in page.ladders])
        token = page.next_page_token
        for ladder in page.ladders:  # it ends between two pages
            ladder_server.stub.CancelLadder(ladder_pb2.CancelLadderRequest(
                ladder_id=ladder.id), timeout=10, metadata=metadata("admin-token"))
        if not token:
            break
    # The next page goes on after the ladder the last one showed (by offset, it skipped
    # the old ladder: the first place was now the old ladder's).
    assert pages == [[running.id], [old.id]]
    assert not list(sdk.iter_ladders(running_only=True))
    assert redis_client.zcard(keys.RUNNING_LADDERS) == 0


def test_void_games_finish_the_ladder_but_stay_out_of_the_standings(
    peers: ArenaClient, ladder_server: LadderServer, redis_client: redis.Redis
) -> None:
    register_bots(peers, OTHELLO, "ann", "ben")
    info = create_ladder(ladder_server, _config("ann", "ben", games_per_pairing=2))
    finish_match(redis_client, info.match_ids[0], BLACK)
    ledger_match = MatchStore(redis_client).header(info.match_ids[1])
    ledger_match.status = match_pb2.MATCH_STATUS_CANCELLED
    ledger_match.result.termination = match_pb2.TERMINATION_CANCELLED
    assert Ledger(redis_client).finish(ledger_match, 0)
    wait_for(lambda: standings(ladder_server, info.id).ladder.status
              == ladder_pb2.LADDER_STATUS_FINISHED)
    table = standings(ladder_server, info.id)
    assert table.ladder.games_void == 1 and table.ladder.games_done == 2
    assert sum(row.games for row in table.rows) == 2


def test_a_service_keeps_the_plans_of_its_recent_ladders_only(
    peers: ArenaClient, ladder_peers: Peers, redis_client: redis.Redis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A plan (a ladder's bots and openings) was kept for every ladder a service ever
    scheduled, for as long as it ran. Now the most recent PLANS_KEPT; an older ladder's
    plan is made again from the store when one of its games is scheduled or recorded."""
    monkeypatch.setattr(ladders_module, "PLANS_KEPT", 2)
    register_bots(peers, OTHELLO, "ann", "ben")
    ladders = ladder_peers.ladders(redis_client)
    made = [ladders.create(_config("ann", "ben", games_per_pairing=2, name=f"l{n}"), "alice")
            for n in range(3)]
    assert list(ladders._plans) == [made[1].id, made[2].id]
    again = ladders.plan(made[0].id)
    assert again.match_config(1) == Plan(made[0].id, "alice", made[0].config).match_config(1)
    assert list(ladders._plans) == [made[2].id, made[0].id]
    for match_id in made[0].match_ids:  # its results are recorded as ever
        finish_match(redis_client, match_id, BLACK)
        assert ladders.count(MatchStore(redis_client).header(match_id)) == 1
    assert ladders.info(made[0].id).games_done == 2


def test_a_gauntlets_head_to_head_holds_only_the_pairs_that_meet(
    peers: ArenaClient, ladder_server: LadderServer
) -> None:
    """A gauntlet's field never meets itself: its pairs were listed 0-0-0 (each with a
    likelihood of superiority), which the crosstables showed as played without a result."""
    register_bots(peers, OTHELLO, "ann", "ben", "cat")
    config = _config("ann", "ben", "cat", games_per_pairing=2)
    config.format = ladder_pb2.LADDER_FORMAT_GAUNTLET
    info = create_ladder(ladder_server, config)
    pairs = {(h.bot, h.opponent) for h in standings(ladder_server, info.id).head_to_head}
    assert pairs == {("ann@v1", "ben@v1"), ("ben@v1", "ann@v1"),
                     ("ann@v1", "cat@v1"), ("cat@v1", "ann@v1")}


def test_pages_of_ladders_made_in_one_millisecond_miss_none_and_repeat_none(
        redis_client: redis.Redis) -> None:
    """A page token names the last ladder shown; the next page starts after it in the
    index's order, which is creation time then id. Twelve ladders of one millisecond (more
    than a page reads past them) and two around them, a page of 1 at a time, then of 5."""
    store = LadderStore(redis_client)
    made = 1_700_000_000_000
    ids = [f"L{made:013d}-{index:08x}" for index in range(12)]
    ids += [f"L{made - 1:013d}-ffffffff", f"L{made + 1:013d}-00000000"]
    redis_client.zadd(keys.ALL_LADDERS, {ladder_id: created_ms(ladder_id) for ladder_id in ids})
    newest_first = sorted(ids, reverse=True)
    for size in (1, 5):
        seen: list[str] = []
        after = ""
        for _ in range(len(ids) + 1):  # bounded: a cursor that never ends fails the test
            page, more = store.page(after, size)
            seen += page
            if not more:
                break
            after = page[-1]
        assert seen == newest_first
    # From a ladder no longer in the index (deleted) too.
    assert store.page(ids[5], 3) == ([ids[4], ids[3], ids[2]], True)
    redis_client.zrem(keys.ALL_LADDERS, ids[5])
    assert store.page(ids[5], 3) == ([ids[4], ids[3], ids[2]], True)
