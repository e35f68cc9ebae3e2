"""The workers' fair shares (``services/worker/fair.py``) against a real Redis: what one
worker decides from the streams' pending lists and the workers' presence."""

from __future__ import annotations

import redis
from arena.services.common.protocol import keys, workers
from arena.services.common.protocol.delivery import post_result
from arena.services.common.protocol.keys import MOVE_STREAM, WORKER_GROUP
from arena.services.common.protocol.streams import ensure_group
from arena.services.worker.fair import FairShare

from arena.v1 import engine_pb2, status_pb2


def _present(client: redis.Redis, *worker_ids: str) -> None:
    with client.pipeline(transaction=False) as pipe:
        for worker_id in worker_ids:
            workers.advertise(pipe, status_pb2.WorkerInfo(worker_id=worker_id, pool="match"))
        pipe.execute()


def _publish(client: redis.Redis, owner: str, ply: int) -> engine_pb2.MoveJob:
    job = engine_pb2.MoveJob(job_id=f"m-{owner}/{ply}", match_id=f"m-{owner}", ply=ply,
                             owner=owner)
    client.xadd(MOVE_STREAM, {"pb": job.SerializeToString()})
    return job


def test_a_worker_that_joined_since_the_last_look_counts_as_holding(
        redis_client: redis.Redis) -> None:
    """worker-1 had looked at the live workers before worker-2 showed up (a stack's first
    second). worker-2 then took one of bob's jobs, and worker-1, reading bob's other job
    while alice wanted a worker, counted no worker on bob's (worker-2 was not among the
    live ones it knew) and took it: alice waited out two of bob's moves (20 s in a run of
    `make test`). A holder it does not know makes it look at the live workers again."""
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    _present(redis_client, "worker-1")
    fair = FairShare(redis_client, "worker-1")
    alice = _publish(redis_client, "alice", 0)
    assert not fair.hand_back(alice, [MOVE_STREAM])  # looks at the live workers: itself
    _present(redis_client, "worker-2")
    _publish(redis_client, "bob", 0)
    _publish(redis_client, "bob", 1)
    _publish(redis_client, "alice", 1)
    redis_client.xreadgroup(WORKER_GROUP, "worker-1", {MOVE_STREAM: ">"}, count=1)  # alice's 0
    redis_client.xreadgroup(WORKER_GROUP, "worker-2", {MOVE_STREAM: ">"}, count=1)  # bob's 0
    second = engine_pb2.MoveJob.FromString(redis_client.xreadgroup(
        WORKER_GROUP, "worker-1", {MOVE_STREAM: ">"}, count=1)[0][1][0][1][b"pb"])
    assert second.owner == "bob"
    assert fair.hand_back(second, [MOVE_STREAM])  # bob holds worker-2, alice waits
    assert fair.crowded  # so the job it runs next takes none ahead (it read as held)
    # bob alone: his job is taken, whoever holds his other one.
    alone = FairShare(redis_client, "worker-3")
    redis_client.delete(MOVE_STREAM)
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    _publish(redis_client, "bob", 2)
    assert not alone.hand_back(engine_pb2.MoveJob(owner="bob"), [MOVE_STREAM])
    assert not alone.crowded


def test_an_owner_whose_move_was_just_answered_still_wants_a_worker(
        redis_client: redis.Redis) -> None:
    """Between alice's answer and her next job (the referee records the move first) none of
    hers is pending or waiting. The mark that she just played was posted after her job's
    start, apart from the answer, and a worker reading bob's job in that gap could find
    her nowhere (a run of `make test` had alice wait out two of bob's moves). The answer's
    own transaction marks her now."""
    ensure_group(redis_client, MOVE_STREAM, WORKER_GROUP)
    _present(redis_client, "worker-1", "worker-2")
    for owner, ply in (("alice", 0), ("bob", 0), ("bob", 1)):
        _publish(redis_client, owner, ply)
    entry = redis_client.xreadgroup(WORKER_GROUP, "worker-1", {MOVE_STREAM: ">"}, count=1)
    alice_entry, fields = entry[0][1][0]
    alice = engine_pb2.MoveJob.FromString(fields[b"pb"])
    redis_client.xreadgroup(WORKER_GROUP, "worker-2", {MOVE_STREAM: ">"}, count=1)  # bob's 0
    post_result(redis_client, alice_entry.decode(), alice, "d", engine_pb2.MoveResult(),
                mark_owner=True)  # alice's answered; her next job is not published yet
    bob = engine_pb2.MoveJob.FromString(redis_client.xreadgroup(
        WORKER_GROUP, "worker-1", {MOVE_STREAM: ">"}, count=1)[0][1][0][1][b"pb"])
    assert FairShare(redis_client, "worker-1").hand_back(bob, [MOVE_STREAM])
    # An external bot's answer marks nobody: its call held no engine.
    redis_client.delete(keys.MOVE_OWNERS)
    post_result(redis_client, alice_entry.decode(), alice, "d", engine_pb2.MoveResult())
    assert not FairShare(redis_client, "worker-1").hand_back(bob, [MOVE_STREAM])
