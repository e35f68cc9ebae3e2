"""A worker asked to stop (SIGTERM: a scale-down, a rollout) finishes its job if it can;
past its finish timeout it stops the search and hands the job back, unanswered, and
another worker answers it."""

from __future__ import annotations

import time
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.protocol import keys

from tests.conftest import Loops, NewMatch
from tests.support.bots import bot_server, external_bot, first_legal, match_config


def slow(request: Any) -> Any:
    time.sleep(1.5)
    return first_legal(request)


def _entries(client: redis.Redis, match_id: str, part: keys.MatchPart) -> list[Any]:
    found: Any = client.xrange(keys.match(match_id, part))
    return list(found)


def test_a_stopping_worker_hands_its_job_to_another(
        loops: Loops, new_match: NewMatch, peers: ArenaClient,
        redis_client: redis.Redis) -> None:
    with bot_server(slow) as address:
        external_bot(peers, "slow", address)
        _, (first,) = loops(referees=1, workers=1)
        match = new_match(match_config("slow", "slow", move_time_ms=5000))
        deadline = time.monotonic() + 30
        while not _entries(redis_client, match.id, "started"):
            assert time.monotonic() < deadline, "no worker started the first move"
            time.sleep(0.02)
        first.stop(finish_timeout_s=0.2)  # the bot takes 1.5 s: too long to finish
        assert _entries(redis_client, match.id, "results") == []  # handed back, unanswered
        _, (second,) = loops(referees=0, workers=1)
        while not _entries(redis_client, match.id, "results"):
            assert time.monotonic() < deadline, "nobody answered the handed-back job"
            time.sleep(0.05)
        (_, fields), *_ = _entries(redis_client, match.id, "results")
        assert fields[b"kind"] == b"result" and fields[b"ply"] == b"0"
        assert fields[b"worker"] == second.worker_id.encode()
