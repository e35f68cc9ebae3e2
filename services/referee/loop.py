"""A referee process's background work: take match jobs, run them, keep them claimed.

Match jobs come from the ``referees`` consumer group: new ones with XREADGROUP, and those a
dead referee left behind with XAUTOCLAIM once they have been idle for ``match_idle_ms``.
Each match runs in its own thread (a match mostly waits for workers). A heartbeat keeps the
entries of running matches fresh so that no other referee takes them over; on shutdown the
entries of unfinished matches are released for another referee to resume at once.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from typing import Any

import redis
from arena.services.referee.delivery import (
    MATCH_STREAM,
    REFEREE_GROUP,
    DeliveryConfig,
    Heartbeat,
    ensure_group,
)
from arena.services.referee.runner import BotLookup, MatchRunner

from arena.v1 import engine_pb2

log = logging.getLogger(__name__)


def default_consumer_name(role: str) -> str:
    return f"{role}-{socket.gethostname()}-{os.getpid()}"


class RefereeLoop:
    """Runs up to ``max_matches`` matches at once; start() and stop()."""

    def __init__(self, client: redis.Redis, referee_id: str = "",
                 config: DeliveryConfig | None = None, max_matches: int = 64) -> None:
        self.client = client
        self.referee_id = referee_id or default_consumer_name("referee")
        self.config = config or DeliveryConfig.from_env()
        self.max_matches = max_matches
        self.stopping = threading.Event()
        self.runner = MatchRunner(client, self.config, self.stopping, BotLookup(client))
        self._heartbeat = Heartbeat(client, MATCH_STREAM, REFEREE_GROUP, self.referee_id)
        self._active: dict[str, str] = {}  # entry id -> match id
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._match_threads: set[threading.Thread] = set()

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> RefereeLoop:
        ensure_group(self.client, MATCH_STREAM, REFEREE_GROUP)
        for target, name in ((self._consume, "match-consumer"), (self._beat, "match-heartbeat")):
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop taking matches, let match threads notice, release what is unfinished."""
        self.stopping.set()
        deadline = time.monotonic() + timeout_s
        with self._lock:
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
        next_reclaim = 0.0
        while not self.stopping.is_set():
            try:
                free = self._free_slots()
                if free <= 0:
                    self.stopping.wait(0.05)
                    continue
                if time.monotonic() >= next_reclaim:
                    self._reclaim(free)
                    next_reclaim = time.monotonic() + self.config.match_idle_ms / 4000
                    free = self._free_slots()
                    if free <= 0:
                        continue
                reply: Any = self.client.xreadgroup(
                    REFEREE_GROUP, self.referee_id, {MATCH_STREAM: ">"}, count=free, block=500)
                for _stream, entries in reply or []:
                    for entry_id, fields in entries:
                        self._launch(entry_id.decode(), fields)
            except redis.ConnectionError as exc:
                log.warning("redis unavailable while taking match jobs: %s", exc)
                self.stopping.wait(1.0)

    def _reclaim(self, count: int) -> None:
        reply: Any = self.client.xautoclaim(
            MATCH_STREAM, REFEREE_GROUP, self.referee_id, self.config.match_idle_ms,
            start_id="0-0", count=count)
        for entry_id, fields in reply[1]:
            if fields:  # an entry deleted from the stream comes back without fields
                log.info("took over match job %s from an idle referee", entry_id.decode())
                self._launch(entry_id.decode(), fields)
            else:
                self.client.xack(MATCH_STREAM, REFEREE_GROUP, entry_id)

    def _launch(self, entry_id: str, fields: dict[bytes, bytes]) -> None:
        try:
            match_id = engine_pb2.MatchJob.FromString(fields.get(b"pb", b"")).match_id
        except Exception:  # protobuf raises DecodeError, but anything unreadable is garbage
            match_id = ""
        if not match_id:
            log.warning("dropping unreadable match job %s", entry_id)
            self.client.xack(MATCH_STREAM, REFEREE_GROUP, entry_id)
            return
        with self._lock:
            if entry_id in self._active or match_id in self._active.values():
                return  # already running here (a reclaim raced our own heartbeat)
            self._active[entry_id] = match_id
            thread = threading.Thread(target=self._run, args=(entry_id, match_id),
                                      name=f"match-{match_id}", daemon=True)
            self._match_threads.add(thread)
        thread.start()

    def _run(self, entry_id: str, match_id: str) -> None:
        finished = failed = False
        try:
            finished = self.runner.run(match_id)
        except Exception:
            # Left pending without heartbeat: retried after match_idle_ms, not in a hot loop.
            log.exception("match %s failed in this referee", match_id)
            failed = True
        finally:
            try:
                if finished:
                    self.client.xack(MATCH_STREAM, REFEREE_GROUP, entry_id)
                elif not failed:
                    self._heartbeat.release(entry_id)
            except redis.RedisError as exc:
                log.warning("could not settle match job %s: %s", entry_id, exc)
            with self._lock:
                self._active.pop(entry_id, None)
                self._match_threads.discard(threading.current_thread())

    def _beat(self) -> None:
        interval = max(self.config.heartbeat_ms, self.config.match_idle_ms // 4) / 1000
        while not self.stopping.wait(interval):
            with self._lock:
                entries = list(self._active)
            try:
                self._heartbeat.touch(entries)
            except redis.RedisError as exc:
                log.warning("match heartbeat failed: %s", exc)
