"""A match from creation to its end with real referee and worker loops and real bots."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.protocol.keys import FINISHED_STREAM

from arena.v1 import match_pb2
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
