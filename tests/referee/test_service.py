"""The Referee gRPC service on a real server: create, get, list, watch, replay, trees, delete."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.auth import Principal, TokenStore
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import keys
from arena.services.common.server import build_server
from arena.services.referee import matches as referee_matches
from arena.services.referee.server import RefereeServicer

from arena.formats import parse_ggf, parse_psq, parse_replay, parse_transcript
from arena.games import PASS
from arena.rpc import field_violations
from arena.v1 import (
    bot_service_pb2,
    bots_pb2,
    common_pb2,
    match_pb2,
    referee_pb2,
    referee_pb2_grpc,
)
from tests.support.bots import (
    GOMOKU,
    OTHELLO,
    bot_server,
    builtin_bot,
    external_bot,
    first_legal,
    last_legal,
    match_config,
    replay_moves,
    wait_finished,
)

TOKENS = {"alice-t": Principal("alice", "user"), "bob-t": Principal("bob", "user"),
          "root-t": Principal("root", "admin")}


@pytest.fixture
def referee(redis_client: redis.Redis, cache_server: EmbeddedRedis, cache_client: redis.Redis,
            bots: BotVersions) -> Iterator[Callable[[str], referee_pb2_grpc.RefereeStub]]:
    handle = build_server(
        [lambda s: referee_pb2_grpc.add_RefereeServicer_to_server(
            RefereeServicer(redis_client, cache_server.client(), bots), s)],
        ["arena.v1.Referee"], tokens=TokenStore(TOKENS)).start()
    channel = grpc.insecure_channel(f"127.0.0.1:{handle.port}")

    def stub(token: str) -> Any:
        class Authed:
            def __getattr__(self, name: str) -> Any:
                method = getattr(referee_pb2_grpc.RefereeStub(channel), name)
                return lambda request, **kw: method(
                    request, metadata=[("authorization", f"Bearer {token}")], timeout=30, **kw)
        return Authed()

    yield stub
    channel.close()
    handle.stop(0)


def slow_first_legal(request: bot_service_pb2.GetMoveRequest) -> Any:
    time.sleep(0.02)
    return first_legal(request)


def test_create_watch_replay_list_delete(
    redis_client: redis.Redis, loops: Callable[..., Any], referee: Callable[[str], Any],
    peers: ArenaClient,
) -> None:
    loops(referees=1, workers=2)
    alice, bob, root = referee("alice-t"), referee("bob-t"), referee("root-t")
    with bot_server(slow_first_legal) as slow, bot_server(last_legal) as last:
        external_bot(peers, "slow", slow)
        external_bot(peers, "last", last)
        created = alice.CreateMatch(referee_pb2.CreateMatchRequest(
            config=match_config("slow", "last", opening=[19, 18], seed=7)))
        with pytest.raises(grpc.RpcError) as running:
            alice.DeleteMatch(referee_pb2.DeleteMatchRequest(match_id=created.id))
        time.sleep(0.4)  # join mid-game
        events = list(alice.WatchMatch(referee_pb2.WatchMatchRequest(match_id=created.id)))
        match = wait_finished(redis_client, created.id)
    assert running.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert 0 < match.moves[0].time_ms < 1000
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds[0] == "started" and kinds[-1] == "ended" and "started" not in kinds[1:]
    plies = [e.move.ply if e.WhichOneof("event") == "move" else getattr(e, "pass").ply
             for e in events[1:-1]]
    assert plies == list(range(len(match.moves)))
    assert [e.move.move.square for e in events if e.WhichOneof("event") == "move"] == [
        r.move.square for r in match.moves if r.move.square != PASS]
    assert events[-1].ended.result == match.result
    replay_moves(match)
    got = alice.GetMatch(referee_pb2.GetMatchRequest(match_id=created.id))
    assert got == match and got.owner == "alice"

    native = alice.GetReplay(referee_pb2.GetReplayRequest(match_id=match.id))
    replay = parse_replay(native.content)
    moves = [19, 18, *(r.move.square for r in match.moves)]
    assert [m.move for m in replay.moves] == moves
    assert replay.final_position().to_text() == match.moves[-1].position_after
    ggf = alice.GetReplay(referee_pb2.GetReplayRequest(
        match_id=match.id, format=referee_pb2.REPLAY_FORMAT_GGF))
    game = parse_ggf(ggf.content)
    assert [m.move for m in game.moves] == moves
    assert game.black == "slow v1" and game.white == "last v1"
    transcript = alice.GetReplay(referee_pb2.GetReplayRequest(
        match_id=match.id, format=referee_pb2.REPLAY_FORMAT_TRANSCRIPT))
    assert parse_transcript(transcript.content.strip()) == moves
    with pytest.raises(grpc.RpcError) as psq:
        alice.GetReplay(referee_pb2.GetReplayRequest(
            match_id=match.id, format=referee_pb2.REPLAY_FORMAT_PSQ))
    assert psq.value.code() == grpc.StatusCode.FAILED_PRECONDITION

    listed = alice.ListMatches(referee_pb2.ListMatchesRequest(
        bot_name="slow", status=match_pb2.MATCH_STATUS_FINISHED))
    assert [m.id for m in listed.matches] == [match.id]
    with pytest.raises(grpc.RpcError) as denied:
        bob.DeleteMatch(referee_pb2.DeleteMatchRequest(match_id=match.id))
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    root.DeleteMatch(referee_pb2.DeleteMatchRequest(match_id=match.id))
    with pytest.raises(grpc.RpcError) as gone:
        alice.GetMatch(referee_pb2.GetMatchRequest(match_id=match.id))
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND


def test_only_the_ladder_service_makes_a_ladder_s_games(
    referee: Callable[[str], Any], peers: ArenaClient
) -> None:
    """bob created a match with config.ladder_id set to alice's ladder: it was listed as
    one of her ladder's games (its page, `arena match list --ladder`). A user may not mark
    a match so; the ladder service (an admin token) does."""
    bob, root = referee("bob-t"), referee("root-t")
    external_bot(peers, "lx", "127.0.0.1:9")
    forged = match_config("lx", "lx", ladder_id="L1796115699688-47d37fbf")
    with pytest.raises(grpc.RpcError) as denied:
        bob.CreateMatch(referee_pb2.CreateMatchRequest(config=forged))
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "the ladder service creates its games" in (denied.value.details() or "")
    assert not bob.ListMatches(referee_pb2.ListMatchesRequest(
        ladder_id="L1796115699688-47d37fbf")).matches
    made = root.CreateMatch(referee_pb2.CreateMatchRequest(config=forged, owner="bob"))
    assert made.config.ladder_id == "L1796115699688-47d37fbf" and made.owner == "bob"


def test_a_listing_by_bot_takes_a_version_too(
    referee: Callable[[str], Any], peers: ArenaClient
) -> None:
    """Matches name their bots 'v@2', but ListMatches(bot_name='v@2') listed nothing (no
    bot is named so): NAME@VERSION lists that version's matches, NAME every version's."""
    alice = referee("alice-t")
    external_bot(peers, "v", "127.0.0.1:9")
    external_bot(peers, "w", "127.0.0.1:9")
    peers.update_bot("v", bots_pb2.BotSpec(
        name="v", game=OTHELLO, external=bots_pb2.ExternalEngine(address="127.0.0.1:10")))
    first = alice.CreateMatch(referee_pb2.CreateMatchRequest(
        config=match_config("v@1", "w"))).id
    second = alice.CreateMatch(referee_pb2.CreateMatchRequest(
        config=match_config("w", "v"))).id  # the latest: v@2

    def listed(bot_name: str) -> list[str]:
        return [m.id for m in alice.ListMatches(referee_pb2.ListMatchesRequest(
            bot_name=bot_name, summary_only=True)).matches]

    assert listed("v@1") == [first] and listed("v@2") == [second]
    assert listed("v") == [second, first] and listed("v@3") == []
    for bad in ("v@0", "v@", "@1", "v@x"):
        with pytest.raises(grpc.RpcError) as error:
            alice.ListMatches(referee_pb2.ListMatchesRequest(bot_name=bad))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, bad
        assert [v.field for v in field_violations(error.value)] == ["bot_name"]


PENDING, CANCELLED = match_pb2.MATCH_STATUS_PENDING, match_pb2.MATCH_STATUS_CANCELLED


def _pages(stub: Any, size: int,
           status: match_pb2.MatchStatus.ValueType = match_pb2.MATCH_STATUS_UNSPECIFIED,
           summary_only: bool = True) -> list[list[str]]:
    """The match ids of each page of a listing, followed by its tokens to the last page;
    bounded: a token that never ends fails the test instead of hanging it."""
    pages: list[list[str]] = []
    token = ""
    for _ in range(8):
        page = stub.ListMatches(referee_pb2.ListMatchesRequest(
            status=status, summary_only=summary_only,
            page=common_pb2.PageRequest(page_size=size, page_token=token)))
        pages.append([m.id for m in page.matches])
        token = page.next_page_token
        if not token:
            return pages
    raise AssertionError(f"no last page: {pages}")


def test_list_pages_newest_first_and_bad_requests(
    redis_client: redis.Redis, referee: Callable[[str], Any], peers: ArenaClient
) -> None:
    alice = referee("alice-t")
    external_bot(peers, "x", "127.0.0.1:9")
    ids = [alice.CreateMatch(referee_pb2.CreateMatchRequest(config=match_config("x", "x"))).id
           for _ in range(5)]
    for size, pages in ((2, [2, 2, 1]), (5, [5]), (1, [1] * 5)):
        listed = _pages(alice, size)
        seen = [match_id for page in listed for match_id in page]
        shapes = [len(page) for page in listed]
        # a page that holds the last match says so: no token leading to an empty page
        assert seen == sorted(ids, reverse=True) and shapes == pages, size
    # The same when the older matches are all filtered out: the page of the last two
    # pending ones is the last (a token used to lead to an empty page).
    oldest = sorted(ids)[:3]
    for match_id in oldest:
        alice.CancelMatch(referee_pb2.CancelMatchRequest(match_id=match_id, reason="test"))
    for size in (1, 2):
        listed = _pages(alice, size, PENDING, summary_only=size == 1)
        assert all(listed), (size, listed)
        pending = [match_id for page in listed for match_id in page]
        assert pending == sorted(set(ids) - set(oldest), reverse=True), size
        assert len(listed) == 2 // size, size
    bad = [
        (match_config("x", "nobody"), "config.white"),
        (match_config("x", "x", opening=[0]), "config.opening[0]"),
        (match_config("x", "x", move_time_ms=-5), "config.time_control.move_time_ms"),
        (match_config("x", "x", kind=GOMOKU), "config.black"),
        (match_config("x", "x", start_position="not a board"), "config.start_position"),
        # A finished game as the start: its opening (there is none) was blamed.
        (match_config("x", "x", start_position="X" * 64 + " O"), "config.start_position"),
    ]
    for config, field in bad:
        with pytest.raises(grpc.RpcError) as error:
            alice.CreateMatch(referee_pb2.CreateMatchRequest(config=config))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, config
        assert field in [v.field for v in field_violations(error.value)], (
            field, field_violations(error.value))
    assert [m.id for m in alice.ListMatches(referee_pb2.ListMatchesRequest(
        bot_name="x", summary_only=True)).matches] == sorted(ids, reverse=True)
    for name in ("\x00", "a\nb", " x", "x" * 100_000, "\u202e"):  # no bot is so named
        with pytest.raises(grpc.RpcError) as error:
            alice.ListMatches(referee_pb2.ListMatchesRequest(bot_name=name))
        assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, repr(name)
        assert [v.field for v in field_violations(error.value)] == ["bot_name"]


def test_a_full_page_looks_only_so_far_for_one_more_match(
    redis_client: redis.Redis, referee: Callable[[str], Any], peers: ArenaClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page of a rare filter used to read the whole index after it, on every call, to
    say whether more followed (3.3 s for 8 running matches among 20,000). It reads at most
    ``LOOK_AHEAD`` more; past them the token continues after the last one read."""
    monkeypatch.setattr(referee_matches, "LOOK_AHEAD", 2)
    alice = referee("alice-t")
    external_bot(peers, "x", "127.0.0.1:9")
    ids = sorted(alice.CreateMatch(referee_pb2.CreateMatchRequest(
        config=match_config("x", "x"))).id for _ in range(5))

    for match_id in (ids[4], ids[0]):  # newest first: cancelled, three pending, cancelled
        alice.CancelMatch(referee_pb2.CancelMatchRequest(match_id=match_id, reason="test"))
    # two pending within the look-ahead: the token continues after them, to the oldest
    assert _pages(alice, 1, CANCELLED) == [[ids[4]], [ids[0]]]
    alice.DeleteMatch(referee_pb2.DeleteMatchRequest(match_id=ids[0]))
    # nothing cancelled after the newest, but the look-ahead stops before the index's end
    assert _pages(alice, 1, CANCELLED) == [[ids[4]], []]


def test_a_listing_of_unfinished_matches_reads_only_them(
    redis_client: redis.Redis, referee: Callable[[str], Any], peers: ArenaClient,
) -> None:
    """A page of the pending or running matches read every finished match's header
    after them when it could not be filled (166 ms for 8 running among 20,000 on every
    call): it reads the index of the unfinished ones, which a finish leaves. The matches
    an earlier version made are in their owner's set of unfinished matches only: the
    referee indexes them on its first such listing."""
    alice = referee("alice-t")
    external_bot(peers, "x", "127.0.0.1:9")
    made = [alice.CreateMatch(referee_pb2.CreateMatchRequest(config=match_config("x", "x"))).id
            for _ in range(3)]
    # 2,000 finished matches older than them, and one pending that an earlier version
    # made (not in the new index), written as those versions wrote them
    pipe = redis_client.pipeline(transaction=False)
    for i in range(2_000):
        match_id = f"{1_600_000_000_000 + i:013d}-{i:08x}"
        pipe.set(keys.match(match_id), match_pb2.Match(
            id=match_id, owner="alice", status=match_pb2.MATCH_STATUS_FINISHED)
            .SerializeToString())
        pipe.zadd(keys.ALL_MATCHES, {match_id: 0})
    older = "1500000000000-0000beef"
    pipe.set(keys.match(older), match_pb2.Match(id=older, owner="alice", status=PENDING)
             .SerializeToString())
    pipe.zadd(keys.ALL_MATCHES, {older: 0})
    pipe.sadd(keys.user("alice", "active"), older)
    pipe.execute()
    alice.CancelMatch(referee_pb2.CancelMatchRequest(match_id=made[0], reason="test"))

    def mgets() -> int:
        return int(redis_client.info("commandstats").get("cmdstat_mget", {}).get("calls", 0))

    before = mgets()
    assert _pages(alice, 16, PENDING) == [sorted([*made[1:], older], reverse=True)]
    assert mgets() - before == 1  # one batch of headers: none of the 2,001 finished ones
    assert _pages(alice, 2, CANCELLED) == [[made[0]]]
    for match_id in (*made[1:], older):
        alice.CancelMatch(referee_pb2.CancelMatchRequest(match_id=match_id, reason="test"))
    assert _pages(alice, 16, PENDING) == [[]]
    assert redis_client.zcard(keys.UNFINISHED_MATCHES) == 0


def test_a_move_played_without_a_search_has_no_tree(
    redis_client: redis.Redis, loops: Callable[..., Any], referee: Callable[[str], Any],
    peers: ArenaClient,
) -> None:
    """International Othello's four centre squares are placed without a search: their
    moves were stored with empty trees, so the web's 'Search tree' link opened 'no node -1
    in this tree' and `arena match tree --ply 1` drew '0 nodes'. Such a move has no tree."""
    loops(referees=1, workers=1)
    alice = referee("alice-t")
    builtin_bot(peers, "intl", {"evaluator": "lab", "look_ahead": 0})
    config = match_config("intl", "intl", capture_trees=True, tree_node_budget=50)
    config.game.variant = "international"
    created = alice.CreateMatch(referee_pb2.CreateMatchRequest(config=config))
    match = wait_finished(redis_client, created.id, timeout_s=120)
    assert match.status == match_pb2.MATCH_STATUS_FINISHED, match.result
    assert [r.search.nodes for r in match.moves[:4]] == [0, 0, 0, 0]  # the centre
    assert [r.has_tree for r in match.moves] == [r.search.nodes > 0 for r in match.moves]
    with pytest.raises(grpc.RpcError) as missing:
        alice.GetSearchTree(referee_pb2.GetSearchTreeRequest(match_id=match.id, ply=0))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    tree = alice.GetSearchTree(referee_pb2.GetSearchTreeRequest(match_id=match.id, ply=4))
    assert tree.nodes and tree.nodes[0].parent == -1


def test_gomoku_engine_match_with_trees_and_psq(
    redis_client: redis.Redis, loops: Callable[..., Any], referee: Callable[[str], Any],
    peers: ArenaClient,
) -> None:
    loops(referees=1, workers=2)
    alice = referee("alice-t")
    builtin_bot(peers, "sharp", {"evaluator": "sharpmoku", "depth": 1}, GOMOKU)
    config = match_config("sharp", "sharp", kind=GOMOKU, capture_trees=True,
                          tree_node_budget=50, opening=[112, 113, 98])
    config.game.board_size = 9
    config.opening[:] = [40, 41, 31]
    created = alice.CreateMatch(referee_pb2.CreateMatchRequest(config=config))
    match = wait_finished(redis_client, created.id, timeout_s=120)
    assert match.result.termination in (match_pb2.TERMINATION_NORMAL,
                                        match_pb2.TERMINATION_BOARD_FULL)
    replay_moves(match)
    # a forced reply is played without a search (0 nodes), and has no tree
    assert [r.has_tree for r in match.moves] == [r.search.nodes > 0 for r in match.moves]
    tree = alice.GetSearchTree(referee_pb2.GetSearchTreeRequest(match_id=match.id, ply=0))
    assert tree.root.text == match.start_position
    assert 0 < len(tree.nodes) <= 50 and tree.nodes[0].parent == -1
    psq = alice.GetReplay(referee_pb2.GetReplayRequest(
        match_id=match.id, format=referee_pb2.REPLAY_FORMAT_PSQ))
    assert parse_psq(psq.content).move_indices() == [40, 41, 31, *(r.move.square
                                                                   for r in match.moves)]
    with pytest.raises(grpc.RpcError) as missing:
        alice.GetSearchTree(referee_pb2.GetSearchTreeRequest(match_id=match.id, ply=999))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
