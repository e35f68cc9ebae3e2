"""An engine worker's job loop. A move job may be delivered more than once: that is safe,
because the referee applies only the first answer for a (match, ply).

For each job: skip it if the match no longer needs it; dead-letter it if it was delivered
too often; otherwise post ``started`` (one script with the check), run the bot, store the
search tree if asked, post the result and acknowledge. The answering script also takes the
next waiting job and starts it, so a busy worker spends one round trip per move (each round
trip is a wake-up that a loaded machine makes slow). While a job runs a heartbeat keeps it
claimed. Jobs
of dead workers are taken over once they are idle past a timeout tied to their budget.
On stop, the current job gets ``finish_timeout_s`` to finish; past that its search is
stopped and the job is released for another worker instead of being answered.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.referee.delivery import (
    MOVE_STREAM,
    WORKER_GROUP,
    Answerer,
    DeliveryConfig,
    Heartbeat,
    JobStarter,
    dead_letter,
    ensure_group,
    reclaim_idle_ms,
)
from arena.services.referee.loop import default_consumer_name
from arena.services.worker.bots import BotRunner
from arena.services.worker.trees import store_tree, tree_to_proto

from arena.engine.api import StopFlag
from arena.v1 import engine_pb2

log = logging.getLogger(__name__)

_RECLAIM_EVERY_S = 0.5
_PENDING_SCAN = 50


@dataclass
class Delivery:
    entry_id: str
    fields: dict[bytes, bytes]
    deliveries: int
    started_as: str = ""  # the delivery tag when ``started`` is already posted ...
    started_id: str = ""  # ... and that started entry's ID


class WorkerLoop:
    """Consumes the move-job stream in the ``workers`` group; start() and stop()."""

    def __init__(self, client: redis.Redis, cache: redis.Redis | None, worker_id: str = "",
                 config: DeliveryConfig | None = None, runner: BotRunner | None = None) -> None:
        self.client = client
        self.cache = cache
        self.worker_id = worker_id or default_consumer_name("worker")
        self.config = config or DeliveryConfig.from_env()
        self.runner = runner or BotRunner(grace_ms=self.config.grace_ms)
        self.stopping = threading.Event()
        self.jobs_done = 0
        self._heartbeat = Heartbeat(client, MOVE_STREAM, WORKER_GROUP, self.worker_id)
        self._starter = JobStarter(client)
        self._answerer = Answerer(client, self.worker_id)
        self._current: str | None = None
        self._search_stop: StopFlag | None = None
        self._abandon = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._threads: list[threading.Thread] = []

    def start(self) -> WorkerLoop:
        ensure_group(self.client, MOVE_STREAM, WORKER_GROUP)
        for target, name in ((self._consume, "move-consumer"), (self._beat, "move-heartbeat")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, finish_timeout_s: float = 10.0) -> None:
        """Take no new job; let the current one finish, or stop and release it."""
        self.stopping.set()
        if not self._idle.wait(finish_timeout_s):
            log.warning("stopping mid-job: releasing %s for another worker", self._current)
            self._abandon.set()
            if self._search_stop is not None:
                self._search_stop.set()
            self._idle.wait(5.0)
        for thread in self._threads:
            thread.join(2.0)
        self.runner.close()

    # -- taking jobs -----------------------------------------------------------------------

    def _consume(self) -> None:
        next_reclaim = 0.0
        taken: Delivery | None = None  # a job taken with the previous answer
        while not self.stopping.is_set():
            try:
                delivery, taken = taken, None
                if delivery is None and time.monotonic() >= next_reclaim:
                    delivery = self._reclaim_one()
                    next_reclaim = time.monotonic() + _RECLAIM_EVERY_S
                if delivery is None:
                    self.runner.flush()  # queued cache stores go out before we wait
                    delivery = self._read_new()
                if delivery is not None and not self.stopping.is_set():
                    # Take the next job with this answer unless a reclaim scan is due.
                    taking = time.monotonic() < next_reclaim
                    taken = self._handle(delivery, taking)
                elif delivery is not None:
                    self._heartbeat.release(delivery.entry_id)
            except redis.ConnectionError as exc:
                log.warning("redis unavailable while taking move jobs: %s", exc)
                self.stopping.wait(1.0)
        if taken is not None:
            self._heartbeat.release(taken.entry_id)
        self.runner.flush()

    def _read_new(self) -> Delivery | None:
        reply: Any = self.client.xreadgroup(
            WORKER_GROUP, self.worker_id, {MOVE_STREAM: ">"}, count=1, block=250)
        for _stream, entries in reply or []:
            for entry_id, fields in entries:
                return Delivery(entry_id.decode(), fields, 1)
        return None

    def _reclaim_one(self) -> Delivery | None:
        """Claim one job whose worker went quiet for longer than the job's own timeout."""
        pending: Any = self.client.xpending_range(
            MOVE_STREAM, WORKER_GROUP, min="-", max="+", count=_PENDING_SCAN,
            idle=self.config.min_reclaim_idle_ms)
        for item in pending:
            entry_id = item["message_id"].decode()
            entries: Any = self.client.xrange(MOVE_STREAM, entry_id, entry_id)
            budget = 0
            if entries:
                budget = _budget_of(entries[0][1])
            timeout = reclaim_idle_ms(budget, self.config)
            if int(item["time_since_delivered"]) < timeout:
                continue
            claimed: Any = self.client.xclaim(MOVE_STREAM, WORKER_GROUP, self.worker_id, timeout,
                                         [entry_id])
            if not claimed:
                continue  # someone else was faster, or the job got fresh again
            claimed_id, fields = claimed[0]
            if not fields:  # trimmed from the stream: nothing to run
                self.client.xack(MOVE_STREAM, WORKER_GROUP, claimed_id)
                continue
            log.info("took over move job %s (idle %s ms, delivery %d)", entry_id,
                     item["time_since_delivered"], int(item["times_delivered"]) + 1)
            return Delivery(entry_id, fields, int(item["times_delivered"]) + 1)
        return None

    # -- running a job ---------------------------------------------------------------------

    def _handle(self, delivery: Delivery, take_next: bool = False) -> Delivery | None:
        """Run one job; returns the next job if it was taken along with the answer."""
        job = _parse_job(delivery.fields)
        if job is None:
            dead_letter(self.client, delivery.entry_id, delivery.fields, None,
                        "unreadable move job", delivery.deliveries)
            return None
        if delivery.deliveries > self.config.max_deliveries:
            dead_letter(self.client, delivery.entry_id, delivery.fields, job,
                        f"job delivered {delivery.deliveries} times without an answer",
                        delivery.deliveries)
            return None
        delivery_tag = delivery.started_as or secrets.token_hex(4)
        stale = job.deadline_unix_ms and time.time() * 1000 > job.deadline_unix_ms
        started_id = delivery.started_id
        if not stale and not started_id:
            # One round trip: is the ply still wanted? If so, post ``started`` right away.
            started_id = self._starter.start(job, delivery_tag, self.worker_id)
        if stale or not started_id:
            self.client.xack(MOVE_STREAM, WORKER_GROUP, delivery.entry_id)
            return None
        self._idle.clear()
        self._current = delivery.entry_id
        try:
            return self._run(delivery.entry_id, job, delivery_tag, started_id, take_next)
        finally:
            self._current = None
            self._search_stop = None
            self._idle.set()

    def _run(self, entry_id: str, job: engine_pb2.MoveJob, delivery: str, started_id: str,
             take_next: bool) -> Delivery | None:
        stop = StopFlag()
        self._search_stop = stop
        began = time.monotonic()
        answer = self.runner.run(job, stop)
        if self._abandon.is_set():
            self._heartbeat.release(entry_id)
            return None
        result = answer.result
        result.job_id, result.match_id, result.ply = job.job_id, job.match_id, job.ply
        result.worker_id = self.worker_id
        if answer.tree is not None and job.tree_node_budget > 0 and self.cache is not None:
            tree = tree_to_proto(job.position, answer.tree,
                                 truncated=len(answer.tree) >= job.tree_node_budget)
            try:
                store_tree(self.cache, job.match_id, job.ply, tree)
                result.tree_stored = True
            except redis.RedisError as exc:
                log.warning("could not store the tree of %s: %s", job.job_id, exc)
        result.worker_time_ms = int((time.monotonic() - began) * 1000)
        # One round trip answers, acknowledges and (if one waits) takes and starts the next.
        taken = self._answerer.answer(entry_id, job, delivery, result,
                                      take_next and not self.stopping.is_set(), started_id)
        self.jobs_done += 1
        self.runner.store(answer)  # queued after answering: the cache never delays a move
        if taken is None or taken.started < 0:
            return None
        if taken.started == 0:  # not checked by the script: the usual path
            return Delivery(taken.entry_id, taken.fields, 1)
        return Delivery(taken.entry_id, taken.fields, 1, taken.delivery, taken.started_id)

    def _beat(self) -> None:
        interval = self.config.heartbeat_ms / 1000
        while not (self.stopping.is_set() and self._idle.is_set()):
            time.sleep(interval)
            current = self._current
            if current is None:
                continue
            try:
                self._heartbeat.touch([current])
            except redis.RedisError as exc:
                log.warning("move heartbeat failed: %s", exc)


def _parse_job(fields: dict[bytes, bytes]) -> engine_pb2.MoveJob | None:
    try:
        job = engine_pb2.MoveJob.FromString(fields.get(b"pb", b""))
    except Exception:  # any undecodable payload is garbage, whatever protobuf raises
        return None
    return job if job.match_id and job.HasField("bot") else None


def _budget_of(fields: dict[bytes, bytes]) -> int:
    job = _parse_job(fields)
    return job.time_budget_ms if job is not None else 0
