"""The arena's retention: PruneMatches forgets the finished matches recorded before a time,
in bounded batches, and only those (a real referee and ladder service on real Redis; the
tests end the games through the referee's own ledger, so nothing runs by itself)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import grpc
import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.protocol.keys import ALL_MATCHES

from arena.errors import NotFoundError
from arena.rpc import field_violations
from arena.v1 import common_pb2, ladder_pb2, match_pb2, referee_pb2, referee_pb2_grpc
from tests.ladder.conftest import (
    BLACK,
    LadderServer,
    Peers,
    create_ladder,
    finish_match,
    metadata,
    register_bots,
    standings,
    wait_for,
)
from tests.support.servers import client

TRANSCRIPT = "f5 d6 c3 d3 c4"


def _ladder(*bots: str) -> ladder_pb2.LadderConfig:
    return ladder_pb2.LadderConfig(
        name="kept", game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        bots=[common_pb2.BotRef(name=b) for b in bots], games_per_pairing=2,
        time_control=common_pb2.TimeControl(move_time_ms=50), seed=3)


def _exists(admin: ArenaClient, match_id: str) -> bool:
    try:
        admin.get_match(match_id)
    except NotFoundError:
        return False
    return True


def test_prune_forgets_old_finished_matches_and_keeps_the_rest(
    peers: ArenaClient, ladder_peers: Peers, ladder_server: LadderServer,
    redis_client: redis.Redis,
) -> None:
    register_bots(peers, common_pb2.GAME_KIND_OTHELLO, "ann", "ben")
    admin = client(referee=ladder_peers.referee.target)
    imported = [admin.import_match(TRANSCRIPT).id for _ in range(3)]
    finished = create_ladder(ladder_server, _ladder("ann", "ben"))  # both games end
    for match_id in finished.match_ids:
        finish_match(redis_client, match_id, BLACK)
    running = create_ladder(ladder_server, _ladder("ann", "ben"))  # one game of two ends
    finish_match(redis_client, running.match_ids[0], BLACK)
    recent = create_ladder(ladder_server, _ladder("ann", "ben"))  # ends after the cutoff
    finish_match(redis_client, recent.match_ids[0], BLACK)
    wait_for(lambda: standings(ladder_server, finished.id).ladder.games_done == 2
             and standings(ladder_server, running.id).ladder.games_done == 1
             and standings(ladder_server, recent.id).ladder.games_done == 1)
    pending = admin.create_match(match_pb2.MatchConfig(
        game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO),
        black=common_pb2.BotRef(name="ann"), white=common_pb2.BotRef(name="ben"))).id
    time.sleep(0.01)
    cutoff = datetime.now(UTC)
    time.sleep(0.01)
    late = admin.import_match(TRANSCRIPT).id  # recorded after the cutoff
    finish_match(redis_client, recent.match_ids[1], BLACK)

    # A dry run counts; nothing goes.
    forgettable = [*imported, *finished.match_ids]
    assert admin.prune_matches(cutoff, dry_run=True) == (10, 5)
    assert admin.prune_matches(cutoff, keep_ladder_games=True, dry_run=True) == (10, 3)
    assert all(_exists(admin, m) for m in [*forgettable, late, pending])
    # One call examines at most its limit and says where to go on.
    with grpc.insecure_channel(ladder_peers.referee.target) as channel:
        request = referee_pb2.PruneMatchesRequest(limit=3, dry_run=True)
        request.before.FromDatetime(cutoff)
        first = referee_pb2_grpc.RefereeStub(channel).PruneMatches(
            request, metadata=metadata("admin-token"), timeout=10)
    assert first.examined == 3 and first.next_page_token
    # In batches of three.
    assert admin.prune_matches(cutoff, batch=3) == (10, 5)
    assert not any(_exists(admin, m) for m in forgettable)
    # Kept: the pending match; the games of a ladder still playing (the finished one's
    # result may not be counted yet) and of one whose last game ended after the cutoff
    # (a ladder's games go together); the match recorded after the cutoff.
    for match_id in [pending, *running.match_ids, *recent.match_ids, late]:
        assert _exists(admin, match_id)
    assert redis_client.zcard(ALL_MATCHES) == 6
    # The finished ladder's standings do not need its games.
    table = standings(ladder_server, finished.id)
    assert table.ladder.games_done == 2 and sum(row.games for row in table.rows) == 4
    assert admin.prune_matches(cutoff) == (5, 0)  # nothing more to forget
    admin.close()


def test_a_user_prunes_only_their_own_matches_and_bad_requests_are_refused_by_field(
    ladder_peers: Peers,
) -> None:
    """Pruning was for admins only; a user now frees room under their ``match_bytes`` quota
    with it, and only their own matches are examined."""
    channel = grpc.insecure_channel(ladder_peers.referee.target)
    stub = referee_pb2_grpc.RefereeStub(channel)
    now = referee_pb2.PruneMatchesRequest()
    now.before.GetCurrentTime()
    target = ladder_peers.referee.target
    with client(token="alice-token", referee=target) as alice, \
            client(token="bob-token", referee=target) as bob:
        mine = [alice.import_match(TRANSCRIPT).id for _ in range(2)]
        theirs = bob.import_match(TRANSCRIPT).id
        time.sleep(0.01)
        cutoff = datetime.now(UTC)
        assert alice.prune_matches(cutoff - timedelta(days=1)) == (0, 0)
        assert alice.prune_matches(cutoff, dry_run=True) == (2, 2)
        assert alice.prune_matches(cutoff) == (2, 2)
        assert not any(_exists(bob, m) for m in mine)
        assert _exists(alice, theirs)
        assert alice.prune_matches(cutoff) == (0, 0)
    cases = [
        (referee_pb2.PruneMatchesRequest(), "before"),
        (referee_pb2.PruneMatchesRequest(before=now.before, limit=-1), "limit"),
        (referee_pb2.PruneMatchesRequest(before=now.before, limit=10_001), "limit"),
        (referee_pb2.PruneMatchesRequest(before=now.before, page_token="made-up"),
         "page_token"),
    ]
    for request, field in cases:
        with pytest.raises(grpc.RpcError) as caught:
            stub.PruneMatches(request, metadata=metadata("admin-token"), timeout=10)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT, caught.value
        assert [v.field for v in field_violations(caught.value)] == [field]
    channel.close()
