"""A referee process's background work: take match jobs, run them, keep them claimed.

Match jobs come from the ``referees`` consumer group: new ones with XREADGROUP, and those a
dead referee left behind with XAUTOCLAIM once they have been idle for ``match_idle_ms``.
Each match runs in its own thread (a match mostly waits for workers). A heartbeat keeps the
entries of running matches fresh so that no other referee takes them over; on shutdown the
jobs of unfinished matches go back to the end of the stream, where another referee takes
them at once and resumes them from what is recorded.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import redis
from arena.services.common.peers import BotVersions
from arena.services.common.protocol import referees
from arena.services.common.protocol.delivery import DeliveryConfig
from arena.services.common.protocol.keys import MATCH_STREAM, REFEREE_GROUP
from arena.services.common.protocol.streams import (
    Entry,
    StreamConsumer,
    consumer_name,
    start_threads,
)
from arena.services.common.quotas import UNLIMITED, Quota
from arena.services.referee.runner import MatchRunner

from arena.v1 import engine_pb2

log = logging.getLogger(__name__)


class RefereeLoop:
    """Runs up to ``max_matches`` matches at once; start() and stop()."""

    def __init__(self, client: redis.Redis, bots: BotVersions, referee_id: str = "",
                 config: DeliveryConfig | None = None, max_matches: int = 64,
                 quota_of: Callable[[str], Quota] = lambda owner: UNLIMITED) -> None:
        self.client = client
        self.referee_id = consumer_name("referee", referee_id)
        self.config = config or DeliveryConfig()
        self.max_matches = max_matches
        self.stopping = threading.Event()
        self.runner = MatchRunner(client, self.config, self.stopping, bots, quota_of)
        self.jobs = StreamConsumer(client, MATCH_STREAM, REFEREE_GROUP, self.referee_id,
                                   sole_group=True)
        self._active: dict[str, str] = {}  # entry id -> match id
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._match_threads: set[threading.Thread] = set()
        self.started_ms = 0  # this run's start, on Redis's clock (``referees``)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> RefereeLoop:
        try:  # before the first read: every job this run takes is delivered after it
            self.started_ms = referees.clock_ms(self.client)
        except redis.RedisError:  # nothing is delivered before Redis answers
            self.started_ms = int(time.time() * 1000)
        self._threads = start_threads((self._consume, "match-consumer"),
                                      (self._beat, "match-heartbeat"))
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop taking matches, let match threads notice, release what is unfinished."""
        deadline = time.monotonic() + timeout_s
        with self._lock:  # no match thread starts after this (``_launch``)
            self.stopping.set()
            threads = [*self._threads, *self._match_threads]
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

    @property
    def active_matches(self) -> list[str]:
        with self._lock:
            return list(self._active.values())

    # -- taking jobs -----------------------------------------------------------------------

    def _free_slots(self) -> int:
        with self._lock:
            return self.max_matches - len(self._active)

    def _consume(self) -> None:
        if not self.jobs.wait_for_group(self.stopping):
            return
        next_reclaim = 0.0
        while not self.stopping.is_set():
            try:
                free = self._free_slots()
                if free <= 0:
                    self.stopping.wait(0.05)
                    continue
                if time.monotonic() >= next_reclaim:
                    for entry in self.jobs.reclaim(self.config.match_idle_ms, free):
                        log.info("took over match job %s from an idle referee", entry.entry_id)
                        self._launch(entry)
                    next_reclaim = time.monotonic() + self.config.match_idle_ms / 4000
                    gone = self.jobs.forget_gone(referees.present(self.client))
                    if gone:
                        log.info("forgot referees gone: %s", ", ".join(gone))
                    free = self._free_slots()
                    if free <= 0:
                        continue
                for entry in self.jobs.read(free, block_ms=500):
                    self._launch(entry)
            except redis.RedisError as exc:  # a timeout too: the thread must outlive a stall
                log.warning("redis unavailable while taking match jobs: %s", exc)
                self.stopping.wait(1.0)

    def _launch(self, entry: Entry) -> None:
        try:
            match_id = engine_pb2.MatchJob.FromString(entry.fields.get(b"pb", b"")).match_id
        except Exception:  # protobuf raises DecodeError, but anything unreadable is garbage
            match_id = ""
        if not match_id:  # garbage, or an entry trimmed from the stream
            log.warning("dropping unreadable match job %s", entry.entry_id)
            self.jobs.ack(entry.entry_id)
            return
        with self._lock:
            if entry.entry_id in self._active or match_id in self._active.values():
                return  # already running here (a reclaim raced our own heartbeat)
        if not self.stopping.is_set() and not self._admitted(entry.entry_id, match_id):
            return
        with self._lock:
            stopping = self.stopping.is_set()
            if not stopping:
                self._active[entry.entry_id] = match_id
                thread = threading.Thread(target=self._run, args=(entry.entry_id, match_id),
                                          name=f"match-{match_id}", daemon=True)
                self._match_threads.add(thread)
                thread.start()  # under the lock: ``stop`` joins only started threads
        if stopping:
            # Read by a read that began before the stop (a requeue by this very referee's
            # stopping matches wakes it): handed back at once, or it would wait for the
            # idle take-over once this process is gone.
            self.jobs.requeue(entry.entry_id, entry.fields)

    def _admitted(self, entry_id: str, match_id: str) -> bool:
        """Admit the match under its owner's quota here, in the order the jobs are read
        (``MatchRunner.admit``); a job that is not to run now is acknowledged."""
        try:
            if self.runner.admit(match_id, entry_id):
                return True
            self.jobs.ack(entry_id)
        except redis.RedisError:
            raise  # the consumer waits out the stall; the job stays pending, retried later
        except Exception:
            # Left pending without heartbeat: retried after match_idle_ms, not in a hot loop.
            log.exception("match %s could not be admitted in this referee", match_id)
        return False

    def _run(self, entry_id: str, match_id: str) -> None:
        finished = failed = False
        try:
            finished = self.runner.run(match_id)
        except Exception:
            # Left pending without heartbeat: retried after match_idle_ms, not in a hot loop.
            log.exception("match %s failed in this referee", match_id)
            failed = True
        finally:
            # No longer running here before it is handed back: this referee's own read may
            # take the new entry at once, and took it for a match still running here (left
            # pending, for the idle take-over a minute later) instead of handing it back.
            with self._lock:
                self._active.pop(entry_id, None)
            try:
                if finished:
                    self.jobs.ack(entry_id)
                elif not failed:  # stopping: another referee resumes it at once
                    job = engine_pb2.MatchJob(match_id=match_id).SerializeToString()
                    self.jobs.requeue(entry_id, {b"pb": job})
            except redis.RedisError as exc:
                log.warning("could not settle match job %s: %s", entry_id, exc)
            with self._lock:
                self._match_threads.discard(threading.current_thread())

    def _beat(self) -> None:
        """Keep the running matches' entries fresh and this referee present (three missed
        beats and it counts as gone); a referee that stops leaves at once."""
        interval = max(self.config.heartbeat_ms, self.config.match_idle_ms // 4) / 1000
        while True:
            with self._lock:
                entries = list(self._active)
            try:
                with self.client.pipeline(transaction=False) as pipe:
                    self.jobs.touch(entries, pipe)
                    referees.advertise(pipe, self.referee_id, int(3000 * interval),
                                       self.started_ms)
                    pipe.execute()
            except redis.RedisError as exc:
                log.warning("match heartbeat failed: %s", exc)
            if self.stopping.wait(interval):
                break
        try:
            referees.retire(self.client, self.referee_id)
        except redis.RedisError as exc:  # its presence ends by itself
            log.warning("could not leave the referees' list: %s", exc)
