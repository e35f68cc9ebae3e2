"""Move-job delivery: a dead worker's job is taken over; a job delivered too often is
dead-lettered and the game adjudicated; a garbage job never blocks the stream; an answer
starts the search at once,
while ``started`` and a job taken ahead follow in one round trip."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import keys
from arena.services.common.protocol.delivery import (
    MOVE_JOB_RETENTION_MS,
    JobStarter,
    move_stream_minid,
)
from arena.services.common.protocol.keys import DEAD_STREAM, MOVE_STREAM, WORKER_GROUP
from arena.services.common.protocol.ledger import Ledger
from arena.services.common.protocol.streams import StreamSet, ensure_group
from arena.services.referee.runner import MatchRunner
from arena.services.worker.consumer import WorkerLoop
from prometheus_client import REGISTRY

from arena.engine.othello import PRESETS
from arena.games import new_position
from arena.v1 import bot_service_pb2, common_pb2, engine_pb2, match_pb2
from tests.conftest import FAST, NewMatch, loopback_runner
from tests.support.bots import (
    OTHELLO,
    bot_server,
    builtin_bot,
    external_bot,
    first_legal,
    match_config,
    wait_finished,
)


def _take_and_die(client: redis.Redis, consumer: str) -> str:
    """A worker that reads a job and dies without answering."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reply: Any = client.xreadgroup(WORKER_GROUP, consumer, {MOVE_STREAM: ">"}, count=1,
                                       block=200)
        if reply:
            return str(reply[0][1][0][0].decode())
    raise TimeoutError("no move job was published")


def _runner(client: redis.Redis, bots: BotVersions,
            match_id: str) -> tuple[threading.Event, threading.Thread]:
    stop = threading.Event()
    thread = threading.Thread(target=MatchRunner(client, FAST, stop, bots).run,
                              args=(match_id,), daemon=True)
    thread.start()
    return stop, thread


def test_dead_workers_job_is_taken_over(redis_client: redis.Redis, redis_server: EmbeddedRedis,
                                        peers: ArenaClient, bots: BotVersions,
                                        new_match: NewMatch) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    with bot_server(first_legal) as address:
        external_bot(peers, "a", address)
        match = new_match(match_config("a", "a", move_time_ms=200), "me")
        stop, thread = _runner(redis_client, bots, match.id)
        entry = _take_and_die(redis_client, "doomed")
        loop = WorkerLoop(redis_server.client(), None, "rescuer", FAST,
                          loopback_runner(FAST)).start()
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
    # The dead worker, left with nothing, is no longer one of the group's consumers.
    consumers: Any = redis_client.xinfo_consumers(MOVE_STREAM, WORKER_GROUP)
    assert [c["name"].decode() for c in consumers] == ["rescuer"]
    started = [f for _, f in redis_client.xrange(keys.match(match.id, "started"))
               if f[b"kind"] == b"started" and f[b"ply"] == b"0"]
    assert len(started) == 1 and entry


def test_job_delivered_too_often_is_dead_lettered_and_adjudicated(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, peers: ArenaClient,
    bots: BotVersions, new_match: NewMatch,
) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    external_bot(peers, "a", "127.0.0.1:9")
    match = new_match(match_config("a", "a", move_time_ms=100), "me")
    stop, thread = _runner(redis_client, bots, match.id)
    entry = _take_and_die(redis_client, "doomed-0")
    for index in range(1, FAST.max_deliveries):  # each claim is one more delivery
        redis_client.xclaim(MOVE_STREAM, WORKER_GROUP, f"doomed-{index}", 0, [entry])
    redis_client.xadd(MOVE_STREAM, {"pb": b"\x08garbage"})  # unreadable: dead-lettered too
    loop = WorkerLoop(redis_server.client(), None, "last", FAST, loopback_runner(FAST)).start()
    try:
        done = wait_finished(redis_client, match.id, 30)
    finally:
        loop.stop(5)
        stop.set()
        thread.join(5)
    assert done.result.termination == match_pb2.TERMINATION_DEAD_LETTERED
    assert done.result.void and done.result.winner == common_pb2.COLOR_UNSPECIFIED
    assert done.result.forfeited == common_pb2.COLOR_UNSPECIFIED  # nobody's fault
    assert "delivered" in done.result.detail
    reasons = sorted(f[b"reason"] for _, f in redis_client.xrange(DEAD_STREAM))
    assert len(reasons) == 2 and b"unreadable move job" in reasons
    pending: Any = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 0


def _publish_first_jobs(client: redis.Redis, bots: BotVersions, new_match: NewMatch, bot: str,
                        count: int) -> list[tuple[match_pb2.Match, engine_pb2.MoveJob]]:
    """``count`` matches of ``bot`` with the job of their first ply published (no referee)."""
    out = []
    for _ in range(count):
        match = new_match(match_config(bot, bot))
        bot_version = bots.get(common_pb2.BotRef(name=bot, version=1))
        job = engine_pb2.MoveJob(
            job_id=f"{match.id}/0/x", match_id=match.id, ply=0, game=OTHELLO, bot=bot_version,
            position=common_pb2.Position(game=common_pb2.GameSpec(kind=OTHELLO),
                                         text=new_position("othello").to_text()),
            time_budget_ms=5000)
        assert Ledger(client).ask(job)
        out.append((match, job))
    return out


def _results(client: redis.Redis, match_id: str) -> list[dict[bytes, bytes]]:
    return [f for _, f in client.xrange(keys.match(match_id, "results"))]


@contextmanager
def _calls_then_a_builtin_move(
        client: redis.Redis, peers: ArenaClient, bots: BotVersions, new_match: NewMatch,
        behaviour: Callable[[bot_service_pb2.GetMoveRequest], bot_service_pb2.GetMoveResponse],
        count: int) -> Iterator[tuple[list[match_pb2.Match], match_pb2.Match]]:
    """``count`` matches whose first move is an external bot's (``behaviour``, served
    while the body runs), then one whose first move is a built-in bot's: their first jobs
    published in that order, no worker yet."""
    ensure_group(client, MOVE_STREAM, WORKER_GROUP)
    builtin_bot(peers, "quick", {"evaluator": "lab", "look_ahead": 0})
    with bot_server(behaviour) as address:
        external_bot(peers, "remote", address)
        calls = _publish_first_jobs(client, bots, new_match, "remote", count)
        ((quick, _),) = _publish_first_jobs(client, bots, new_match, "quick", 1)
        yield [match for match, _ in calls], quick


def _answered(client: redis.Redis, matches: list[match_pb2.Match], within_s: float,
              why: str) -> None:
    """Wait until each match has a result posted; fail with ``why`` after ``within_s``."""
    deadline = time.monotonic() + within_s
    while not all(_results(client, match.id) for match in matches):
        assert time.monotonic() < deadline, why
        time.sleep(0.02)


def test_start_posts_started_and_takes_the_next_job_ahead_unstarted(
    redis_client: redis.Redis, peers: ArenaClient, bots: BotVersions, new_match: NewMatch,
) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    external_bot(peers, "a", "127.0.0.1:9")
    (first, job1), (second, job2) = _publish_first_jobs(redis_client, bots, new_match, "a", 2)
    reply: Any = redis_client.xreadgroup(WORKER_GROUP, "w", {MOVE_STREAM: ">"}, count=1)
    entry = reply[0][1][0][0].decode()
    starter = JobStarter(redis_client, "w")
    started = starter.start(entry, job1, "d1", reserve=True)
    assert started.started_id and started.ahead is not None
    assert engine_pb2.MoveJob.FromString(started.ahead[1][b"pb"]) == job2
    (posted,) = redis_client.xrange(keys.match(first.id, "started"))
    assert posted[0].decode() == started.started_id and posted[1][b"worker"] == b"w"
    assert redis_client.xrange(keys.match(second.id, "started")) == []  # taken ahead, not started
    pending: Any = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 2
    # Without a job waiting nothing is taken ahead; a job whose ply got recorded meanwhile
    # is acknowledged and never started.
    Ledger(redis_client).append(second, match_pb2.MoveRecord(ply=0), is_pass=False)
    gone = starter.start(started.ahead[0], job2, "d2", reserve=True)
    assert gone.started_id == "" and gone.ahead is None
    assert redis_client.xrange(keys.match(second.id, "started")) == []
    pending = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 1  # only the first job, until it is answered


def test_a_job_no_longer_needed_is_stopped_and_never_answered(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, peers: ArenaClient,
    bots: BotVersions, new_match: NewMatch,
) -> None:
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    with bot_server(first_legal) as address:
        external_bot(peers, "a", address)
        ((match, _job),) = _publish_first_jobs(redis_client, bots, new_match, "a", 1)
        Ledger(redis_client).append(match, match_pb2.MoveRecord(ply=0), is_pass=False)
        loop = WorkerLoop(redis_server.client(), None, "w", FAST, loopback_runner(FAST)).start()
        try:
            deadline = time.monotonic() + 10
            while redis_client.xpending(MOVE_STREAM, WORKER_GROUP)["pending"] or \
                    redis_client.xinfo_groups(MOVE_STREAM)[0]["last-delivered-id"] == b"0-0":
                assert time.monotonic() < deadline, "the job was never acknowledged"
                time.sleep(0.02)
            time.sleep(0.2)  # an answer would be posted by now
        finally:
            loop.stop(5)
    assert _results(redis_client, match.id) == []
    assert redis_client.xrange(keys.match(match.id, "started")) == []
    assert loop.jobs_done == 0


def test_a_job_taken_ahead_goes_back_to_a_free_worker_when_the_search_runs_long(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, peers: ArenaClient,
    bots: BotVersions, new_match: NewMatch,
) -> None:
    """One worker takes two jobs (one ahead) of a bot whose search takes 1.2 s; a second
    worker, started after both were taken, must get the second job once it was held for
    ``reserve_hold_ms``, and answer it while the first worker is still searching."""
    thinker = {**PRESETS["arena-strong"], "time_ms": 1200}  # deep: the clock ends it
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    config = replace(FAST, reserve_hold_ms=200, min_reclaim_idle_ms=60_000)
    builtin_bot(peers, "thinker", thinker)
    (first, _), (second, _) = _publish_first_jobs(redis_client, bots, new_match, "thinker", 2)
    loops = [WorkerLoop(redis_server.client(), None, "busy", config,
                        loopback_runner(config)).start()]
    try:
        deadline = time.monotonic() + 20
        while redis_client.xpending(MOVE_STREAM, WORKER_GROUP)["pending"] < 2:
            assert time.monotonic() < deadline, "the busy worker never took a job ahead"
            time.sleep(0.01)
        loops.append(WorkerLoop(redis_server.client(), None, "free", config,
                                loopback_runner(config)).start())
        while len(_results(redis_client, first.id)) + len(
                _results(redis_client, second.id)) < 2:
            assert time.monotonic() < deadline, "the jobs were not answered"
            time.sleep(0.02)
    finally:
        for loop in loops:
            loop.stop(5)
    (one,) = _results(redis_client, first.id)
    (two,) = _results(redis_client, second.id)
    assert one[b"worker"] == b"busy" and two[b"worker"] == b"free"
    pending: Any = redis_client.xpending(MOVE_STREAM, WORKER_GROUP)
    assert pending["pending"] == 0


def test_slow_external_bots_never_hold_the_engine(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, peers: ArenaClient,
    bots: BotVersions, new_match: NewMatch,
) -> None:
    """Three external bots that think for seconds, then a built-in bot's job: one worker
    answers the built-in move at once, while the three calls still wait."""
    def sleepy(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        time.sleep(3)
        return first_legal(request)

    with _calls_then_a_builtin_move(redis_client, peers, bots, new_match, sleepy, 3) as (
            slow, quick):
        loop = WorkerLoop(redis_server.client(), None, "w", FAST, loopback_runner(FAST)).start()
        try:
            _answered(redis_client, [quick], 2.5, "the built-in move waited for the calls")
            assert all(not _results(redis_client, match.id) for match in slow)
            _answered(redis_client, slow, 10, "the external calls were not answered")
        finally:
            loop.stop(5)


def test_an_external_job_past_the_io_slots_goes_back_and_never_holds_the_engine(
    redis_client: redis.Redis, redis_server: EmbeddedRedis, peers: ArenaClient,
    bots: BotVersions, new_match: NewMatch,
) -> None:
    """One call in flight at a time (``io_slots`` 1), two external bots' jobs, then a
    built-in bot's: the second external job goes back to the queue and the built-in move
    is answered while the first call still waits. The thread that runs the searches
    used to wait for the slot, holding everyone's built-in moves until the call ended.
    While the slot stays full, the job waiting for it is handed back at most about ten
    times a second, not read again after each 20 ms (some 50 times a second)."""
    released = threading.Event()

    def held(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
        released.wait(20)
        return first_legal(request)

    with _calls_then_a_builtin_move(redis_client, peers, bots, new_match, held, 2) as (
            calls, quick):
        before = total_handed_back("io_slots")
        loop = WorkerLoop(redis_server.client(), None, "w", FAST, loopback_runner(FAST),
                          io_slots=1).start()
        try:
            _answered(redis_client, [quick], 10, "the built-in move waited for a call slot")
            assert not any(_results(redis_client, match.id) for match in calls)
            assert total_handed_back("io_slots") > before
            before, began = total_handed_back("io_slots"), time.monotonic()
            time.sleep(2)
            window = time.monotonic() - began
            assert not any(_results(redis_client, match.id) for match in calls)
            assert total_handed_back("io_slots") - before <= window / 0.1 + 6
            released.set()
            _answered(redis_client, calls, 10, "the external calls were not answered")
        finally:
            released.set()
            loop.stop(5)


def total_handed_back(reason: str) -> float:
    return REGISTRY.get_sample_value("arena_move_jobs_handed_back_total",
                                     {"reason": reason}) or 0.0


def test_move_stream_is_trimmed_past_the_jobs_retention(redis_client: redis.Redis) -> None:
    for ms in range(1, 251):  # jobs published long ago (IDs are server times in ms)
        redis_client.xadd(MOVE_STREAM, {"pb": b""}, id=f"{ms}-0")
    job = engine_pb2.MoveJob(job_id="m/0/x", match_id="m", ply=0)
    now_ms = FAST.stall_timeout_ms + MOVE_JOB_RETENTION_MS + 200
    assert move_stream_minid(FAST.stall_timeout_ms, now_ms) == "200-0"
    assert Ledger(redis_client).ask(job, move_stream_minid(FAST.stall_timeout_ms, now_ms))
    kept = [int(entry_id.split(b"-")[0]) for entry_id, _ in redis_client.xrange(MOVE_STREAM)]
    # Trimming is approximate (whole stream nodes go): some old entries may stay, but none
    # at or after the trim point is lost and the stream no longer holds every old job.
    assert len(kept) < 251 and set(range(200, 251)) <= set(kept)


def test_only_consumers_gone_and_holding_nothing_are_forgotten(
        redis_client: redis.Redis) -> None:
    """Each worker or referee reads under a name of its own, so every restart left one
    more name in the group (and in `arena status`) for good. Names of processes not
    present that hold no entry are removed; one holding an entry stays until it is taken
    over, as do the present and the reader itself, on every stream of the set."""
    engine = keys.engine_stream("brain", "ab" * 32)
    jobs = StreamSet(redis_client, [MOVE_STREAM, engine], WORKER_GROUP, "worker-me")
    for stream in (MOVE_STREAM, engine):
        ensure_group(redis_client, stream, WORKER_GROUP)
        for name in ("worker-me", "worker-alive", "worker-gone"):
            redis_client.xgroup_createconsumer(stream, WORKER_GROUP, name)
    redis_client.xadd(engine, {"pb": b"a move"})
    redis_client.xreadgroup(WORKER_GROUP, "worker-dead", {engine: ">"}, count=1)

    def names(stream: str) -> list[str]:
        found: Any = redis_client.xinfo_consumers(stream, WORKER_GROUP)
        return sorted(c["name"].decode() for c in found)

    assert sorted(jobs.forget_gone({"worker-alive"})) == ["worker-gone", "worker-gone"]
    assert names(MOVE_STREAM) == ["worker-alive", "worker-me"]
    assert names(engine) == ["worker-alive", "worker-dead", "worker-me"]
    jobs.only({MOVE_STREAM, engine})
    assert jobs.reclaim_each(0, lambda fields: 0, 10) is not None  # taken over: now ours
    gone = jobs.forget_gone(set())
    assert sorted(gone) == ["worker-alive", "worker-alive", "worker-dead"]
    assert names(MOVE_STREAM) == names(engine) == ["worker-me"]


def test_a_stream_set_reads_and_takes_over_only_the_streams_it_is_told(
        redis_client: redis.Redis) -> None:
    """A worker whose build of an engine changed reads that build's stream no more, nor
    takes over its jobs, until told again (``StreamSet.only``): its jobs are left for the
    workers that have the build."""
    engine = keys.engine_stream("brain", "ab" * 32)
    jobs = StreamSet(redis_client, [MOVE_STREAM, engine], WORKER_GROUP, "worker-x")
    for stream in (MOVE_STREAM, engine):
        ensure_group(redis_client, stream, WORKER_GROUP)
    waiting = redis_client.xadd(engine, {"pb": b"a move of the brain"}).decode()
    jobs.only({MOVE_STREAM})
    assert jobs.read_one(block_ms=100) is None
    # Left by a dead worker of the build: not taken over either.
    redis_client.xreadgroup(WORKER_GROUP, "worker-dead", {engine: ">"}, count=1)
    assert jobs.reclaim_each(0, lambda fields: 0, 10) is None
    jobs.only({MOVE_STREAM, engine})
    found = jobs.reclaim_each(0, lambda fields: 0, 10)
    assert found is not None and found[0] == engine and found[1].entry_id == waiting
