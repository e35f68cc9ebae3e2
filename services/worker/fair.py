"""Fair shares of the match workers between the owners whose moves they play.

The move queue is first come, first served, and a user's ``running_matches`` bounds their
moves in flight, not how long each holds a worker: two matches at 60 s a move held both
workers of a two-worker arena, and another user's 300 ms moves waited behind them for a
minute each. So each worker, before it runs a job it read (its engine thread's: an
external bot's call does not hold the engine), asks whether the job's owner already
holds their share of the live match workers while another owner, under theirs, wants one:
then it hands the job back to the end of its stream and reads again.

An owner wants a worker while a worker runs their move, a move of theirs waits in the
stream, or a worker took one in the last ``RECENT_MS`` (their next move is a moment away:
the referee records the last one and publishes the next). The share is the live match
workers divided by those owners, at least one. An owner alone on the arena uses every
worker; a job taken over from a dead worker is run whoever owns it.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import redis
from arena.services.common.protocol import keys, workers
from arena.services.common.protocol.keys import WORKER_GROUP
from arena.services.common.protocol.streams import text
from google.protobuf.message import DecodeError

from arena.v1 import engine_pb2

RECENT_MS = 1500
PEEK = 64  # waiting entries of a stream looked at for their owners
HANDED_BACK_WAIT_S = 0.02  # after a job handed back, before the next read


class FairShare:
    """One worker's side of the sharing (see the module docstring)."""

    def __init__(self, client: redis.Redis, worker_id: str) -> None:
        self.client, self.worker_id = client, worker_id

    def hand_back(self, job: engine_pb2.MoveJob, stream: str) -> bool:
        """Whether this worker should hand ``job`` (read from ``stream``) back rather than
        run it: its owner holds their share of the workers and another owner wants one."""
        if not job.owner:
            return False
        now_ms = int(time.time() * 1000)
        live = {w.worker_id for w in workers.alive(self.client, now_ms)
                if w.pool != "analysis"}
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.WORKERS_BUSY)
            pipe.zrangebyscore(keys.MOVE_OWNERS, now_ms - RECENT_MS, "+inf")
            taken, recent = pipe.execute()
        gone = [worker for worker in taken if text(worker) not in live]
        if gone:  # workers that died running a move
            self.client.hdel(keys.WORKERS_BUSY, *gone)
        busy = Counter(text(owner) for worker, owner in taken.items()
                       if text(worker) in live and text(worker) != self.worker_id)
        wanting = {job.owner, *busy, *(text(owner) for owner in recent)}
        if busy[job.owner] == 0 and len(wanting) == 1:
            return False  # the first of its owner's, or nobody else about: no need to look
        wanting |= self._waiting(stream)
        share = max(1, len(live) // len(wanting))
        return busy[job.owner] >= share and any(
            busy[other] < share for other in wanting if other != job.owner)

    def _waiting(self, stream: str) -> set[str]:
        """The owners of the first ``PEEK`` jobs of ``stream`` no worker has read yet."""
        try:
            groups: Any = self.client.xinfo_groups(stream)
        except redis.ResponseError:  # no stream yet
            return set()
        last = next((text(g["last-delivered-id"]) for g in groups
                     if text(g["name"]) == WORKER_GROUP), None)
        if last is None:
            return set()
        entries: Any = self.client.xrange(stream, f"({last}", "+", count=PEEK)
        owners = set()
        for _entry_id, fields in entries:
            try:
                owner = engine_pb2.MoveJob.FromString(fields.get(b"pb", b"")).owner
            except DecodeError:  # an unreadable job: its reader dead-letters it
                continue
            if owner:
                owners.add(owner)
        return owners

    def running(self, job: engine_pb2.MoveJob) -> None:
        """This worker's engine now runs ``job``."""
        if not job.owner:
            return
        now_ms = int(time.time() * 1000)
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hset(keys.WORKERS_BUSY, self.worker_id, job.owner)
            pipe.zadd(keys.MOVE_OWNERS, {job.owner: now_ms})
            pipe.zremrangebyscore(keys.MOVE_OWNERS, "-inf", now_ms - 60_000)
            pipe.execute()

    def idle(self) -> None:
        """This worker's engine runs no job now."""
        self.client.hdel(keys.WORKERS_BUSY, self.worker_id)
