"""Move-job delivery: a dead worker's job is taken over; a job delivered too often is
dead-lettered and the game adjudicated; a garbage job never blocks the stream; an answer
takes and starts the next job in the same round trip."""

from __future__ import annotations

import threading
import time
from typing import Any

import redis
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.referee.delivery import (
    DEAD_STREAM,
    MOVE_JOB_RETENTION_MS,
    MOVE_STREAM,
    WORKER_GROUP,
    Answerer,
    ensure_group,
    move_stream_minid,
    publish_move_job,
    results_key,
    started_key,
)
from arena.services.referee.ledger import Ledger
from arena.services.referee.matches import create_match
from arena.services.referee.runner import MatchRunner
from arena.services.worker.consumer import WorkerLoop

from arena.v1 import common_pb2, engine_pb2, match_pb2
from tests.referee.conftest import FAST
from tests.referee.support import bot_server, external_bot, first_legal, match_config, wait_finished


def _take_and_die(client: redis.Redis, consumer: str) -> str:
    """A worker that reads a job and dies without answering."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reply: Any = client.xreadgroup(WORKER_GROUP, consumer, {MOVE_STREAM: ">"}, count=1,
                                       block=200)
        if reply:
            return str(reply[0][1][0][0].decode())
    raise TimeoutError("no move job was published")


def _runner(client: redis.Redis, match_id: str) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=MatchRunner(client, FAST, stop).run, args=(match_id,),
                              daemon=True)
    thread.start()
    return stop, thread


def test_dead_workers_job_is_taken_over(redis_client: redis.Redis,
                                        redis_server: EmbeddedRedis) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    with bot_server(first_legal) as address:
        external_bot(redis_client, "a", address)
        match = create_match(redis_client, match_config("a", "a", move_time_ms=200), "me")
        stop, thread = _runner(redis_client, match.id)
        entry = _take_and_die(redis_client, "doomed")
        loop = WorkerLoop(redis_server.client(), None, "rescuer", FAST).start()
        try:
            done = wait_finished(redis_client, match.id, 30)
        finally:
            loop.stop(5)
            stop.set()
            thread.join(5)
    assert done.result.termination == match_pb2.TERMINATION_NORMAL
    assert done.moves[0].worker_id == "rescuer"
    pending: Any = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 0
    started = [f for _, f in redis_client.xrange(started_key(match.id))
               if f[b"kind"] == b"started" and f[b"ply"] == b"0"]
    assert len(started) == 1 and entry


def test_job_delivered_too_often_is_dead_lettered_and_adjudicated(
    redis_client: redis.Redis, redis_server: EmbeddedRedis
) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    external_bot(redis_client, "a", "127.0.0.1:9")
    match = create_match(redis_client, match_config("a", "a", move_time_ms=100), "me")
    stop, thread = _runner(redis_client, match.id)
    entry = _take_and_die(redis_client, "doomed-0")
    for index in range(1, FAST.max_deliveries):  # each claim is one more delivery
        redis_client.xclaim(MOVE_STREAM, WORKER_GROUP, f"doomed-{index}", 0, [entry])
    redis_client.xadd(MOVE_STREAM, {"pb": b"\x08garbage"})  # unreadable: dead-lettered too
    loop = WorkerLoop(redis_server.client(), None, "last", FAST).start()
    try:
        done = wait_finished(redis_client, match.id, 30)
    finally:
        loop.stop(5)
        stop.set()
        thread.join(5)
    assert done.result.termination == match_pb2.TERMINATION_DEAD_LETTERED
    assert done.result.forfeited == common_pb2.COLOR_BLACK
    assert "delivered" in done.result.detail
    reasons = sorted(f[b"reason"] for _, f in redis_client.xrange(DEAD_STREAM))
    assert len(reasons) == 2 and b"unreadable move job" in reasons
    pending: Any = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 0


def test_answer_takes_and_starts_the_next_job_or_drops_a_recorded_one(
    redis_client: redis.Redis,
) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    external_bot(redis_client, "a", "127.0.0.1:9")
    first, second = (create_match(redis_client, match_config("a", "a"), "me") for _ in "12")
    jobs = [engine_pb2.MoveJob(job_id=f"{m.id}/0/x", match_id=m.id, ply=0)
            for m in (first, second)]
    for job in jobs:
        publish_move_job(redis_client, job)
    reply: Any = redis_client.xreadgroup(WORKER_GROUP, "w", {MOVE_STREAM: ">"}, count=1)
    entry = reply[0][1][0][0].decode()
    answerer = Answerer(redis_client, "w")
    result = engine_pb2.MoveResult(move=common_pb2.Move(square=19), worker_id="w")
    taken = answerer.answer(entry, jobs[0], "d0", result, take_next=True)
    assert taken is not None and taken.started == 1
    assert engine_pb2.MoveJob.FromString(taken.fields[b"pb"]) == jobs[1]
    kinds = [(i, f[b"kind"], f[b"delivery"]) for i, f in redis_client.xrange(
        started_key(second.id))]
    assert kinds == [(taken.started_id.encode(), b"started", taken.delivery.encode())]
    assert redis_client.xrange(results_key(second.id)) == []  # no wake-up for the referee
    assert [f[b"kind"] for _, f in redis_client.xrange(results_key(first.id))] == [b"result"]
    # A job whose ply got recorded meanwhile is acknowledged, never started or run.
    Ledger(redis_client).append(first.id, match_pb2.MoveRecord(ply=0), is_pass=False)
    publish_move_job(redis_client, jobs[0])
    gone = answerer.answer(taken.entry_id, jobs[1], taken.delivery, result, take_next=True,
                           started_id=taken.started_id)
    assert gone is not None and gone.started == -1
    assert redis_client.xrange(started_key(first.id)) == []
    (answered,) = [f for _, f in redis_client.xrange(results_key(second.id))]
    assert answered[b"started"] == taken.started_id.encode()  # the referee times from it
    pending: Any = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 0
    assert answerer.answer(gone.entry_id, jobs[0], "d2", result, take_next=True) is None


def test_move_stream_is_trimmed_past_the_jobs_retention(redis_client: redis.Redis) -> None:
    for ms in range(1, 251):  # jobs published long ago (IDs are server times in ms)
        redis_client.xadd(MOVE_STREAM, {"pb": b""}, id=f"{ms}-0")
    job = engine_pb2.MoveJob(job_id="m/0/x", match_id="m", ply=0)
    now_ms = FAST.stall_timeout_ms + MOVE_JOB_RETENTION_MS + 200
    assert move_stream_minid(FAST.stall_timeout_ms, now_ms) == "200-0"
    publish_move_job(redis_client, job, move_stream_minid(FAST.stall_timeout_ms, now_ms))
    kept = [int(entry_id.split(b"-")[0]) for entry_id, _ in redis_client.xrange(MOVE_STREAM)]
    # Trimming is approximate (whole stream nodes go): some old entries may stay, but none
    # at or after the trim point is lost and the stream no longer holds every old job.
    assert len(kept) < 251 and set(range(200, 251)) <= set(kept)
