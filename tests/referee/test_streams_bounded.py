"""The durable Redis keeps what is still to do, not every job ever queued: a match job is
deleted once its match is over (the referees' group is the match stream's only reader), and
the finished-matches stream keeps about FINISHED_MAXLEN entries. Before, both kept about
half a kilobyte for every match ever played, after the match itself was pruned."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.auth import Principal
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import ledger as ledger_module
from arena.services.common.protocol.keys import FINISHED_STREAM, MATCH_STREAM, REFEREE_GROUP
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore
from arena.services.common.quotas import Quota
from arena.services.referee.loop import RefereeLoop
from arena.services.referee.matches import cancel_match

from arena.v1 import engine_pb2
from tests.conftest import FAST, NewMatch
from tests.support.bots import builtin_bot, match_config, wait_finished

LAB = {"evaluator": "lab", "look_ahead": 0}


def test_a_match_job_is_deleted_once_its_match_is_over(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, loops: Callable[..., Any],
    peers: ArenaClient, bots: BotVersions, new_match: NewMatch,
) -> None:
    """With one match at once for its owner, two of three wait parked (their jobs leave
    the stream then, and come back when their turn comes)."""
    for name in ("quick-a", "quick-b"):
        builtin_bot(peers, name, LAB)
    loops(referees=0, workers=2)
    referee = RefereeLoop(redis_server.client(), bots, "referee-capped", FAST,
                          quota_of=lambda owner: Quota(running_matches=1)).start()
    try:
        matches = [new_match(match_config("quick-a", "quick-b", move_time_ms=2000))
                   for _ in range(3)]
        for match in matches:
            assert wait_finished(redis_client, match.id).result.termination
    finally:
        referee.stop()
    assert redis_client.xlen(MATCH_STREAM) == 0


def test_the_finished_stream_keeps_about_so_many_entries(
    redis_client: redis.Redis, bots: BotVersions, new_match: NewMatch,
    peers: ArenaClient, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger_module, "FINISHED_MAXLEN", 1)
    for name in ("quick-a", "quick-b"):
        builtin_bot(peers, name, LAB)
    store, ledger = MatchStore(redis_client), Ledger(redis_client)
    admin = Principal("root", "admin")
    for _ in range(250):  # each match ends cancelled: one finished entry each
        match = new_match(match_config("quick-a", "quick-b"))
        cancel_match(store, ledger, bots, match.id, admin)
    # Trimming is rough (whole blocks of entries at a time): well under 250 are left.
    assert 1 <= redis_client.xlen(FINISHED_STREAM) < 150


def test_a_job_read_while_stopping_is_handed_back_at_once(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, bots: BotVersions,
) -> None:
    """A stopping referee hands its matches back at the end of the stream; its own read,
    blocked since before the stop, could take one of them and start it after the stop had
    counted the threads to wait for: the process left, and the match waited for the idle
    take-over (a minute by default; `test_system` saw it once)."""
    referee = RefereeLoop(redis_server.client(), bots, "referee-stopping", FAST)
    referee.jobs.ensure_group()
    job = engine_pb2.MatchJob(match_id="some-match").SerializeToString()
    redis_client.xadd(MATCH_STREAM, {"pb": job})
    (entry,) = referee.jobs.read(1)
    referee.stop()
    referee._launch(entry)  # what the blocked read does with it
    assert referee.active_matches == []
    assert redis_client.xpending(MATCH_STREAM, REFEREE_GROUP)["pending"] == 0
    (again,) = redis_client.xrange(MATCH_STREAM)
    assert again[0].decode() != entry.entry_id and again[1] == {b"pb": job}
