"""An engine worker's job loop. A move job may be delivered more than once: that is safe,
because the referee applies only the first answer for a (match, ply).

Two threads share the work so that no Redis round trip sits between two searches:

* the engine thread takes a job (one taken ahead, a reclaimed one, or a blocking read),
  dead-letters it if it was delivered too often, and runs the bot at once;
* the poster thread, meanwhile, posts ``started`` for it (or, if the match no longer needs
  the ply, acknowledges it and stops the search) and takes the next waiting job ahead in
  the same round trip; when the search ends it stores the search tree if asked and posts
  the result with the acknowledgement.

A job taken ahead is held for at most ``reserve_hold_ms``: if the current search is still
running then, it goes back to the queue, where a free worker gets it at once. A heartbeat
keeps the current job and the one taken ahead claimed. Jobs of dead workers are taken over
once they are idle past a timeout tied to their budget. On stop, the current job gets
``finish_timeout_s`` to finish; past that its search is stopped and the job is released for
another worker instead of being answered.
"""

from __future__ import annotations

import logging
import queue
import secrets
import threading
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
from arena.services.common import metrics
from arena.services.common.protocol import workers
from arena.services.common.protocol.delivery import (
    DeliveryConfig,
    JobStarter,
    ask_still_wanted,
    dead_letter,
    post_result,
    reclaim_idle_ms,
    still_wanted,
)
from arena.services.common.protocol.keys import ENGINE_STREAMS, MOVE_STREAM, WORKER_GROUP
from arena.services.common.protocol.streams import (
    QUEUED,
    StreamConsumer,
    StreamSet,
    consumer_name,
    start_threads,
)
from arena.services.common.protocol.trees import store_tree
from arena.services.worker import telemetry
from arena.services.worker.bots import BotAnswer, BotRunner
from arena.services.worker.fair import HANDED_BACK_WAIT_S, FairShare
from arena.services.worker.trees import tree_to_proto

from arena.engine.api import StopFlag
from arena.v1 import engine_pb2

log = logging.getLogger(__name__)

_RECLAIM_EVERY_S = 0.5
_FORGET_EVERY_S = 10.0  # how often the groups' consumers of workers gone are removed
_PENDING_SCAN = 50
_SETTLE_WAIT_S = 1.0  # how long the engine thread waits for the poster to start a job
# With every call slot in flight, an external bot's job goes back to its stream; while
# they stay full, the engine thread waits twice as long after each such hand-back, up to
# this, or until a call ends (a job that goes straight back was read ~50 times a second).
_IO_SLOTS_WAIT_MAX_S = 0.1


@dataclass
class Delivery:
    entry_id: str
    fields: dict[bytes, bytes]
    deliveries: int
    taken_at: float = 0.0  # monotonic time it was taken ahead (0: taken to run)
    stream: str = MOVE_STREAM  # where it came from: the common stream or an engine's
    _job: engine_pb2.MoveJob | None = field(default=None, init=False, repr=False)

    @property
    def job(self) -> engine_pb2.MoveJob | None:
        """The job its fields hold (None: unreadable), decoded once."""
        if self._job is None:
            self._job = _parse_job(self.fields)
        return self._job


@dataclass
class Running:
    """A job the engine thread runs; the poster fills in how its start went."""

    delivery: Delivery
    job: engine_pb2.MoveJob
    tag: str  # the delivery tag of its ``started`` and ``result`` entries
    stop: StopFlag = field(default_factory=StopFlag)
    settled: threading.Event = field(default_factory=threading.Event)
    started_id: str = ""
    unwanted: bool = False  # its ply is recorded or its match over: acknowledged, unanswered
    span: Any = None  # its trace span (telemetry), when the move is traced
    since: float = field(default_factory=time.time)


def _not_here(answer: BotAnswer) -> bool:
    """This worker no longer has what the job needs (``WORKER_FAULT``: its build of the
    job's protocol engine changed on disk, and that engine's stream is read no more): the
    job goes back for a worker that has the build. If none does, the referee ends the game
    void (``MatchRunner._await``)."""
    return answer.result.error == engine_pb2.MOVE_ERROR_WORKER_FAULT


class WorkerLoop:
    """Consumes the move-job stream, and the streams of the protocol engines it offers
    (``engine_streams``), in the ``workers`` group; start() and stop()."""

    def __init__(self, client: redis.Redis, cache: redis.Redis | None, worker_id: str = "",
                 config: DeliveryConfig | None = None, runner: BotRunner | None = None,
                 io_slots: int = 16, engine_streams: Sequence[str] = (),
                 offered_streams: Callable[[], Collection[str]] | None = None) -> None:
        self.client = client
        self.cache = cache
        self.worker_id = consumer_name("worker", worker_id)
        self.config = config or DeliveryConfig()
        self.runner = runner or BotRunner(grace_ms=self.config.grace_ms)
        self.stopping = threading.Event()
        self.jobs_done = 0
        self.jobs = StreamSet(client, [MOVE_STREAM, *engine_streams], WORKER_GROUP,
                              self.worker_id)
        # Of ``engine_streams``, those of the builds this worker still has (asked before
        # each read): a build whose files changed is not read (``EngineHost``).
        self._offered_streams = offered_streams
        self._starter = JobStarter(client, self.worker_id)
        self.fair = FairShare(client, self.worker_id)
        self._tasks: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._lock = threading.Lock()
        self._ahead: Delivery | None = None  # a job taken ahead, not started
        self._running: dict[str, Running] = {}  # by entry id: the engine's job, external calls
        self._io_slots = threading.BoundedSemaphore(max(1, io_slots))
        self._slot_freed = threading.Event()  # a call ended (or the loop stops)
        self._slots_full = 0  # external jobs handed back in a row for want of a call slot
        self._abandon = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._threads: list[threading.Thread] = []

    @property
    def current_job(self) -> tuple[engine_pb2.MoveJob, float] | None:
        """The oldest job running now and when it was taken (unix time), if any."""
        running = min(self._running_now(), key=lambda r: r.since, default=None)
        return (running.job, running.since) if running is not None else None

    def start(self) -> WorkerLoop:
        self._threads = start_threads((self._consume, "move-consumer"),
                                      (self._post, "move-poster"), (self._beat, "move-heartbeat"))
        return self

    def stop(self, finish_timeout_s: float = 10.0) -> None:
        """Take no new job; let the running ones finish, or stop and release them."""
        self.stopping.set()
        self._slot_freed.set()
        if not self._idle.wait(finish_timeout_s):
            running = self._running_now()
            log.warning("stopping mid-job: releasing %s for other workers",
                        ", ".join(r.delivery.entry_id for r in running))
            self._abandon.set()
            for job in running:
                job.stop.set()
            self._idle.wait(5.0)
        for thread in self._threads:
            thread.join(2.0)
        self.runner.close()

    # -- the engine thread: taking and running jobs ------------------------------------------

    def _consume(self) -> None:
        try:
            self.runner.warm_thread()  # this thread runs the searches
            self._take_and_run()
        finally:  # even if this thread fails: the poster ends once everything is posted
            self._tasks.put(self._give_back_ahead)
            self._tasks.put(None)
            self.runner.flush()

    def _take_and_run(self) -> None:
        if not self.jobs.wait_for_groups(self.stopping):
            return
        self._announce_engine_streams()
        next_reclaim = next_forget = 0.0
        last: Running | None = None  # the job run last (its start may take a job ahead)
        while not self.stopping.is_set():
            try:
                if self._offered_streams is not None:
                    self.jobs.only({MOVE_STREAM, *self._offered_streams()})
                delivery = None
                if time.monotonic() >= next_reclaim:
                    delivery = reclaimed = self._reclaim_one()
                    next_reclaim = time.monotonic() + _RECLAIM_EVERY_S
                    # a job taken over may have been its worker's last
                    if delivery is not None or time.monotonic() >= next_forget:
                        self._forget_gone()
                        next_forget = time.monotonic() + _FORGET_EVERY_S
                if delivery is None:
                    reclaimed = None  # a job taken over is run whoever owns it
                    delivery = self._take_ahead(last)
                if delivery is None:
                    self.runner.flush()  # queued cache stores go out before we wait
                    delivery = self._read_new()
                if delivery is None or (delivery is not reclaimed
                                        and self._handed_back(delivery)):
                    continue
                if self.stopping.is_set():
                    if delivery.taken_at:  # back to the slot: given back with the rest
                        with self._lock:
                            self._ahead = delivery
                    else:
                        self._queue(delivery).release(delivery.entry_id)
                    return
                last = self._handle(delivery) or last
            except redis.RedisError as exc:  # a timeout too: the thread must outlive a stall
                log.warning("redis unavailable while taking move jobs: %s", exc)
                self.stopping.wait(1.0)

    def _take_ahead(self, last: Running | None) -> Delivery | None:
        if last is not None:
            last.settled.wait(_SETTLE_WAIT_S)  # its start may still be taking one ahead
        with self._lock:
            ahead, self._ahead = self._ahead, None
        return ahead

    def _queue(self, delivery: Delivery) -> StreamConsumer:
        return self.jobs[delivery.stream]

    def _handed_back(self, delivery: Delivery) -> bool:
        """Hand the job back to the end of its stream if its owner holds their share of
        the workers while another owner wants one (``fair``); True if it was."""
        job = delivery.job
        if job is None or self.runner.is_external(job):
            return False
        try:
            if not self.fair.hand_back(job, list(self.jobs.consumers)):
                return False
        except redis.RedisError as exc:  # the sharing is a courtesy: the job runs
            log.warning("could not weigh the workers' shares: %s", exc)
            return False
        self._hand_back(delivery, job, "fair_share")
        self.stopping.wait(HANDED_BACK_WAIT_S)
        return True

    def _hand_back(self, delivery: Delivery, job: engine_pb2.MoveJob, reason: str) -> None:
        """Back to the end of its stream, unstarted, for this worker's next reads or
        another's (``telemetry.handed_back``'s reasons)."""
        fields = dict(delivery.fields)
        fields.setdefault(QUEUED, delivery.entry_id.encode())  # its wait counts from there
        self._queue(delivery).requeue(delivery.entry_id, fields)
        telemetry.handed_back(job, reason)

    def _call_slot(self, delivery: Delivery, job: engine_pb2.MoveJob) -> bool:
        """Take a call slot for an external bot's job, or hand the job back and wait a
        while (``_IO_SLOTS_WAIT_MAX_S``); True if the slot is taken."""
        self._slot_freed.clear()  # before the try: a call ending after it wakes the wait
        if self._io_slots.acquire(blocking=False):
            self._slots_full = 0
            return True
        self._hand_back(delivery, job, "io_slots")
        self._slot_freed.wait(min(_IO_SLOTS_WAIT_MAX_S,
                                  HANDED_BACK_WAIT_S * 2 ** min(self._slots_full, 8)))
        self._slots_full += 1
        return False

    def _read_new(self) -> Delivery | None:
        found = self.jobs.read_one(block_ms=250)
        if found is None:
            return None
        stream, entry = found
        return Delivery(entry.entry_id, entry.fields, 1, stream=stream)

    def _forget_gone(self) -> None:
        """Workers gone (no presence) that hold no job leave the groups' consumer lists."""
        gone = self.jobs.forget_gone(set(workers.present(self.client)))
        if gone:
            log.info("forgot workers gone: %s", ", ".join(sorted(set(gone))))

    def _reclaim_one(self) -> Delivery | None:
        """Claim one job whose worker went quiet for longer than the job's own timeout."""
        found = self.jobs.reclaim_each(
            self.config.min_reclaim_idle_ms,
            lambda fields: reclaim_idle_ms(_budget_of(fields), self.config), _PENDING_SCAN)
        if found is None:
            return None
        stream, entry = found
        if not entry.fields:  # trimmed from the stream: nothing to run
            self.jobs[stream].ack(entry.entry_id)
            return None
        log.info("took over move job %s (delivery %d)", entry.entry_id, entry.deliveries)
        return Delivery(entry.entry_id, entry.fields, entry.deliveries, stream=stream)

    def _handle(self, delivery: Delivery) -> Running | None:
        """Run one job and hand its answer to the poster; returns it if it ran. A built-in
        engine searches on this thread; an external bot's call waits on a thread of its own
        (at most ``io_slots`` at once), so a slow bot far away never holds the engine. With
        every call in flight, an external bot's job goes back to the end of the queue: this
        thread waiting for a call to end held the engine from everyone's built-in bots."""
        job = delivery.job
        if job is None:
            dead_letter(self.client, delivery.entry_id, delivery.fields, None,
                        "unreadable move job", delivery.deliveries, delivery.stream)
            telemetry.dead_lettered(metrics.DEAD_UNREADABLE)
            return None
        if delivery.deliveries > self.config.max_deliveries:
            dead_letter(self.client, delivery.entry_id, delivery.fields, job,
                        f"job delivered {delivery.deliveries} times without an answer",
                        delivery.deliveries, delivery.stream)
            telemetry.dead_lettered(metrics.DEAD_TOO_OFTEN)
            return None
        if job.deadline_unix_ms and time.time() * 1000 > job.deadline_unix_ms:
            self._queue(delivery).ack(delivery.entry_id)
            telemetry.dropped("expired")
            return None
        external = self.runner.is_external(job)
        if external and not self._call_slot(delivery, job):
            return None
        running = Running(delivery, job, secrets.token_hex(4),
                          span=telemetry.taken(job, delivery.deliveries, bool(delivery.taken_at)))
        with self._lock:
            self._running[delivery.entry_id] = running
            self._idle.clear()
        if not external:
            self._run(running, reserve=True)
            return running

        def call() -> None:
            try:
                self._run(running, reserve=False)
            finally:
                self._io_slots.release()
                self._slot_freed.set()

        threading.Thread(target=call, name=f"call-{job.job_id}", daemon=True).start()
        return running

    def _run(self, running: Running, reserve: bool) -> None:
        """Run the job's bot; the poster posts its start and then its answer."""
        try:
            failed = self.runner.ready(running.job)  # a protocol engine starting up
            if failed is not None and _not_here(failed):
                running.settled.set()
                self._release(running)
                return
            if failed is not None:  # it could not: answered as is, never started
                running.settled.set()
                self._tasks.put(lambda: self._answer(running, failed))
                return
            # The search starts now; ``started`` (or the news that the ply is no longer
            # wanted, which stops the search) follows one round trip later.
            reserve = (reserve and self.config.reserve_hold_ms > 0 and not self.stopping.is_set()
                       and not self.fair.crowded)
            self._tasks.put(lambda: self._start(running, reserve))
            began = time.monotonic()
            with telemetry.searching(running.span, running.job):
                answer = self.runner.run(running.job, running.stop)
            if self._abandon.is_set() or _not_here(answer):
                self._release(running)
                return
            # At least 1: the referee reads 0 as not timed (``judge.MoveClock.late``).
            answer.result.worker_time_ms = max(1, int((time.monotonic() - began) * 1000))
            self._tasks.put(lambda: self._answer(running, answer))
            self.runner.store(answer)  # queued after answering: the cache never delays a move
        finally:
            with self._lock:
                self._running.pop(running.delivery.entry_id, None)
                if not self._running:
                    self._idle.set()

    def _release(self, running: Running) -> None:
        """Give the job back unanswered, for another worker to take at once."""
        self._queue(running.delivery).release(running.delivery.entry_id)
        telemetry.released(running.span)

    def _announce_engine_streams(self) -> None:
        """Name this worker's engine streams where the queue exporter looks for them."""
        streams = [stream for stream in self.jobs.consumers if stream != MOVE_STREAM]
        if not streams:
            return
        try:
            self.client.sadd(ENGINE_STREAMS, *streams)
        except redis.RedisError as exc:  # figures only: the moves do not depend on it
            log.warning("could not list the engine streams for the exporter: %s", exc)

    def _running_now(self) -> list[Running]:
        with self._lock:
            return list(self._running.values())

    # -- the poster thread -------------------------------------------------------------------

    def _post(self) -> None:
        hold_s = self.config.reserve_hold_ms / 1000
        while True:
            with self._lock:
                ahead = self._ahead
            timeout = None if ahead is None else max(0.0, ahead.taken_at + hold_s
                                                     - time.monotonic())
            try:
                task = self._tasks.get(timeout=timeout)
            except queue.Empty:
                self._give_back_ahead()
                continue
            if task is None:
                return
            try:
                task()
            except redis.RedisError as exc:
                log.warning("could not post to redis: %s", exc)
            except Exception:  # a bug here must not stop the worker from answering others
                log.exception("posting failed")

    def _start(self, running: Running, reserve: bool) -> None:
        try:
            with self._lock:
                reserve = reserve and self._ahead is None
            began = time.perf_counter()
            stream = running.delivery.stream
            started = self._starter.start(running.delivery.entry_id, running.job, running.tag,
                                          reserve, stream)
            telemetry.started(running.delivery.entry_id, started.started_id,
                              time.perf_counter() - began)
            running.started_id = started.started_id
            if not started.started_id:
                running.unwanted = True
                running.stop.set()
            if started.ahead is not None:
                entry_id, fields = started.ahead
                with self._lock:
                    self._ahead = Delivery(entry_id, fields, 1, time.monotonic(), stream)
        finally:
            running.settled.set()

    def _answer(self, running: Running, answer: BotAnswer) -> None:
        """Store the tree if asked, then answer and acknowledge (unless no longer wanted;
        a job whose start failed is still answered: the referee then times it by the
        worker's clock)."""
        if running.unwanted:
            telemetry.dropped("unwanted", running.span)
            return
        job, result = running.job, answer.result
        result.job_id, result.match_id, result.ply = job.job_id, job.match_id, job.ply
        result.worker_id = self.worker_id
        # A move played without a search (International Othello's centre squares) has an
        # empty tree: none is stored, so the move has none to show.
        if answer.tree and job.tree_node_budget > 0 and self.cache is not None:
            tree = tree_to_proto(job.position, answer.tree, truncated=answer.tree_truncated)
            try:
                store_tree(self.cache, job.match_id, job.ply, tree)
                result.tree_stored = True
            except redis.RedisError as exc:
                log.warning("could not store the tree of %s: %s", job.job_id, exc)
        with telemetry.posting(running.span):
            post_result(self.client, running.delivery.entry_id, job, running.tag, result,
                        running.started_id, running.delivery.stream,
                        running.delivery.fields.get(QUEUED, b"").decode(),
                        mark_owner=not self.runner.is_external(job) and self.fair.mark_due(job))
        self.jobs_done += 1
        telemetry.answered(job, answer, running.span)

    def _give_back_ahead(self) -> None:
        """The job taken ahead goes back to the queue (held too long, or stopping)."""
        with self._lock:
            ahead, self._ahead = self._ahead, None
        if ahead is not None:
            self._queue(ahead).requeue(ahead.entry_id, ahead.fields)

    def _beat(self) -> None:
        """Keep the current job and the one taken ahead claimed; stop the search of a job
        whose ply is no longer wanted (recorded elsewhere, or its match cancelled)."""
        interval = self.config.heartbeat_ms / 1000
        while not (self.stopping.is_set() and self._idle.is_set()):
            time.sleep(interval)
            running, ahead = self._running_now(), self._ahead
            owned: dict[str, list[str]] = {}
            for delivery in [r.delivery for r in running] + ([ahead] if ahead else []):
                owned.setdefault(delivery.stream, []).append(delivery.entry_id)
            try:
                with self.client.pipeline(transaction=False) as pipe:
                    for stream, entry_ids in owned.items():
                        self.jobs[stream].touch(entry_ids, pipe)
                    for job in running:
                        ask_still_wanted(pipe, job.job)
                    replies = pipe.execute()
            except redis.RedisError as exc:
                log.warning("move heartbeat failed: %s", exc)
                continue
            answers = replies[len(owned):]
            for index, job in enumerate(running):
                if not still_wanted(job.job, *answers[2 * index: 2 * index + 2]):
                    self._drop(job)

    def _drop(self, running: Running) -> None:
        """Stop a search nobody needs any more; its job is acknowledged, not answered."""
        if running.unwanted:
            return
        log.info("stopping the search of %s: its ply is no longer wanted", running.job.job_id)
        running.unwanted = True
        running.stop.set()
        try:
            self._queue(running.delivery).ack(running.delivery.entry_id)
        except redis.RedisError as exc:
            log.warning("could not acknowledge %s: %s", running.job.job_id, exc)


def _parse_job(fields: dict[bytes, bytes]) -> engine_pb2.MoveJob | None:
    try:
        job = engine_pb2.MoveJob.FromString(fields.get(b"pb", b""))
    except Exception:  # any undecodable payload is garbage, whatever protobuf raises
        return None
    return job if job.match_id and job.HasField("bot") else None


def _budget_of(fields: dict[bytes, bytes]) -> int:
    job = _parse_job(fields)
    return job.time_budget_ms if job is not None else 0
