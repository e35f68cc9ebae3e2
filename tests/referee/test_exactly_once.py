"""Results may arrive twice, late or out of order: the first valid one per ply is applied."""

from __future__ import annotations

import threading
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.peers import BotVersions
from arena.services.common.protocol.delivery import post_result, post_started
from arena.services.common.protocol.keys import MOVE_STREAM, WORKER_GROUP
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.matches import MatchStore
from arena.services.common.protocol.streams import ensure_group
from arena.services.referee.runner import MatchRunner

from arena.games import PASS, position_from_text
from arena.v1 import common_pb2, engine_pb2, match_pb2
from tests.conftest import FAST, NewMatch
from tests.support.bots import external_bot, match_config


def _next_job(client: redis.Redis) -> tuple[str, engine_pb2.MoveJob]:
    reply: Any = client.xreadgroup(WORKER_GROUP, "by-hand", {MOVE_STREAM: ">"}, count=1,
                                   block=10_000)
    assert reply, "the referee published no move job"
    entry_id, fields = reply[0][1][0]
    return entry_id.decode(), engine_pb2.MoveJob.FromString(fields[b"pb"])


def _answer(client: redis.Redis, entry: str, job: engine_pb2.MoveJob, move: int,
            ply: int | None = None) -> None:
    sent = engine_pb2.MoveJob()
    sent.CopyFrom(job)
    if ply is not None:
        sent.ply = ply
    started = post_started(client, sent, "d", "by-hand")
    result = engine_pb2.MoveResult(job_id=sent.job_id, match_id=sent.match_id, ply=sent.ply,
                                   move=common_pb2.Move(square=move), worker_id="by-hand")
    post_result(client, entry, sent, "d", result, started)


def test_duplicate_late_and_early_results_change_nothing(
        redis_client: redis.Redis, peers: ArenaClient, bots: BotVersions,
        new_match: NewMatch) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    external_bot(peers, "a", "127.0.0.1:9")
    external_bot(peers, "b", "127.0.0.1:9")
    match = new_match(match_config("a", "b"), "me")
    stop = threading.Event()
    runner = MatchRunner(redis_client, FAST, stop, bots)
    thread = threading.Thread(target=runner.run, args=(match.id,), daemon=True)
    thread.start()
    chosen: list[int] = []
    previous: tuple[str, engine_pb2.MoveJob, int] | None = None
    for _ in range(12):
        entry, job = _next_job(redis_client)
        legal = position_from_text("othello", job.position.text).legal_moves()
        assert legal != [PASS]
        _answer(redis_client, entry, job, legal[-1], ply=job.ply + 1)  # early: not asked yet
        _answer(redis_client, entry, job, legal[0])  # the first valid answer
        _answer(redis_client, entry, job, legal[0])  # the same answer delivered twice
        _answer(redis_client, entry, job, legal[-1])  # a different, later answer
        if previous is not None:
            _answer(redis_client, previous[0], previous[1], previous[2])  # late, old ply
        chosen.append(legal[0])
        previous = (entry, job, legal[-1])
    _next_job(redis_client)  # the referee asked for the next ply: the 12 are recorded
    stop.set()
    thread.join(5)
    records = MatchStore(redis_client).records(match.id)
    assert [r.ply for r in records] == list(range(len(records)))
    assert [r.move.square for r in records if r.move.square != PASS] == chosen


def test_five_concurrent_writes_of_one_ply_apply_once(
        redis_client: redis.Redis, peers: ArenaClient, new_match: NewMatch) -> None:
    external_bot(peers, "a", "127.0.0.1:9")
    match = new_match(match_config("a", "a"), "me")
    ledger = Ledger(redis_client)
    outcomes: list[bool] = []
    barrier = threading.Barrier(5)

    def write(square: int) -> None:
        record = match_pb2.MoveRecord(ply=0, move=common_pb2.Move(square=square))
        # Each writer would publish the next ply's job with its record: only the winner may.
        job = engine_pb2.MoveJob(job_id=f"{match.id}/1/{square}", match_id=match.id, ply=1)
        barrier.wait()
        outcomes.append(ledger.append(match, record, is_pass=False, next_job=job))

    threads = [threading.Thread(target=write, args=(sq,)) for sq in (19, 26, 37, 44, 19)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == [False, False, False, False, True]
    (record,) = MatchStore(redis_client).records(match.id)
    jobs = redis_client.xrange(MOVE_STREAM)
    assert [f[b"job"] for _, f in jobs] == [f"{match.id}/1/{record.move.square}".encode()]
    finished = match_pb2.Match()
    finished.CopyFrom(match)
    assert not ledger.finish(finished, plies=0)  # judged on 0 plies, but 1 is recorded
    assert ledger.finish(finished, plies=1)
    assert not ledger.finish(finished, plies=1)  # only once
    assert not ledger.append(match, match_pb2.MoveRecord(ply=1), is_pass=False)
