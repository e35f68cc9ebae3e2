"""Every forfeit reason, with its detail, while other matches run on unaffected."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.embedded_redis import free_port

from arena.formats import parse_replay
from arena.records import export
from arena.v1 import common_pb2, match_pb2, referee_pb2
from tests.conftest import NewMatch
from tests.support.bots import (
    bot_server,
    crash,
    external_bot,
    first_legal,
    illegal_after,
    late,
    match_config,
    no_move,
    replay_moves,
    wait_finished,
)

EXPECTED = {
    "illegal": match_pb2.TERMINATION_ILLEGAL_MOVE,
    "garbage": match_pb2.TERMINATION_MALFORMED_ANSWER,
    "empty": match_pb2.TERMINATION_MALFORMED_ANSWER,
    "late": match_pb2.TERMINATION_TIME_FORFEIT,
    "crash": match_pb2.TERMINATION_BOT_CRASHED,
    "gone": match_pb2.TERMINATION_BOT_UNREACHABLE,
}


def test_each_bad_bot_forfeits_with_its_reason_and_good_matches_finish(
    redis_client: redis.Redis, loops: Callable[..., Any], peers: ArenaClient, new_match: NewMatch
) -> None:
    loops(referees=2, workers=3)
    behaviours: dict[str, Any] = {"illegal": illegal_after(4), "garbage": "garbage",
                                  "empty": no_move, "late": late, "crash": crash}
    with ExitStack() as stack:
        good = stack.enter_context(bot_server(first_legal))
        external_bot(peers, "good", good)
        for name, behaviour in behaviours.items():
            external_bot(peers, name, stack.enter_context(bot_server(behaviour)))
        external_bot(peers, "gone", f"127.0.0.1:{free_port()}")
        bad = {name: new_match(match_config("good", name, move_time_ms=300),
                                  "me").id for name in EXPECTED}
        fine = [new_match(match_config("good", "good"), "me").id
                for _ in range(2)]
        results = {name: wait_finished(redis_client, match_id) for name, match_id in bad.items()}
        normal = [wait_finished(redis_client, match_id) for match_id in fine]
    for name, match in results.items():
        assert match.result.termination == EXPECTED[name], (name, match.result)
        assert match.result.forfeited == common_pb2.COLOR_WHITE
        assert match.result.winner == common_pb2.COLOR_BLACK
        assert match.result.detail
        replay_moves(match)
        replay = parse_replay(export(match, referee_pb2.REPLAY_FORMAT_NATIVE).content)
        assert replay.forfeit is not None and "white forfeited" in replay.forfeit
        assert replay.metadata["termination"] == match_pb2.Termination.Name(EXPECTED[name])
    assert "illegal" in results["illegal"].result.detail
    assert len(results["illegal"].moves) == 5  # white plays legally at plies 1 and 3, not at 5
    for match in normal:
        assert match.result.termination == match_pb2.TERMINATION_NORMAL
        replay_moves(match)
