"""The live picture of the arena (``Status.GetStatus``), and the queue figures one referee
exports to Prometheus.

Both read the same things from Redis: the move and match streams' consumer groups (depth,
lag, the oldest waiting job, running matches; the move streams are the common one and one
per protocol engine build), the dead letters, the workers' presence keys
(``protocol/workers``) and the finished-matches stream (throughput, recent forfeits).
Every referee answers GetStatus; only the referee that holds the exporter lease exports
the queue figures (``QueueCollector``), so that each figure has one source.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator
from typing import Any

import grpc
import redis
from arena.services.common.auth import current_principal
from arena.services.common.logs import bot_name
from arena.services.common.protocol import queues, referees, workers
from arena.services.common.protocol.keys import (
    DEAD_STREAM,
    FINISHED_STREAM,
    MATCH_STREAM,
    MOVE_STREAM,
    REFEREE_GROUP,
    WORKER_GROUP,
    engine_of_stream,
)
from arena.services.common.protocol.matches import MatchStore
from arena.services.common.server import check_health
from google.protobuf import timestamp_pb2
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from arena.errors import FieldViolation, InvalidArgumentError
from arena.v1 import common_pb2, status_pb2, status_pb2_grpc

log = logging.getLogger(__name__)

WINDOW_S = 300  # throughput and forfeits "in the last minutes"
LEASE_TTL_MS = 30_000  # a silent exporter (not scraped, or dead) is replaced after this


def _queue(figures: queues.GroupFigures) -> status_pb2.QueueStatus:
    engine, build = engine_of_stream(figures.stream)
    return status_pb2.QueueStatus(
        stream=figures.stream, group=figures.group, length=figures.length,
        pending=figures.pending, lag=figures.lag, oldest_waiting_ms=figures.oldest_waiting_ms,
        consumers=figures.consumers, engine=engine, build=build)


def _all_moves(common: queues.GroupFigures, engines: list[queues.GroupFigures]
               ) -> status_pb2.QueueStatus:
    """The move queue as a whole: the common stream's figures and every protocol engine
    stream's. A protocol bot's moves wait on its engine's stream, never the common one, so
    without them ``arena status`` said ``move queue: 0 waiting, 0 running`` while moves
    waited (or ran) there, as /metrics showed."""
    total = _queue(common)
    for figures in engines:
        total.length += figures.length
        total.pending += figures.pending
        total.lag += figures.lag
        total.oldest_waiting_ms = max(total.oldest_waiting_ms, figures.oldest_waiting_ms)
    return total


def _forfeit(finished: queues.Finished) -> status_pb2.ForfeitSummary:
    match, result = finished.match, finished.match.result
    loser = match.black if result.forfeited == common_pb2.COLOR_BLACK else match.white
    stamp = timestamp_pb2.Timestamp()
    stamp.FromMilliseconds(finished.at_ms)
    return status_pb2.ForfeitSummary(
        match_id=match.id, ladder_id=match.config.ladder_id, termination=result.termination,
        detail=result.detail, bot=bot_name(loser), finished_at=stamp)


def _for_users(status: status_pb2.ArenaStatus) -> None:
    """What a user is shown of the machines: not the workers' hosts and process ids nor the
    services' addresses, which are the operator's (any token was shown them)."""
    for worker in status.workers:
        worker.ClearField("host")
        worker.ClearField("pid")
    for service in status.services:
        service.ClearField("address")


class StatusServicer(status_pb2_grpc.StatusServicer):
    """GetStatus: what this referee sees of the whole arena (reads only)."""

    def __init__(self, client: redis.Redis, referee_id: str, store: MatchStore,
                 registry: str = "", credentials: grpc.ChannelCredentials | None = None
                 ) -> None:
        self.client, self.referee_id, self.registry = client, referee_id, registry
        self.store = store  # the referee's: its index of unfinished matches is filled once
        self.credentials = credentials  # TLS to the registry, as the referee calls it

    def GetStatus(self, request: status_pb2.GetStatusRequest,
                  context: Any) -> status_pb2.ArenaStatus:
        if request.forfeits < 0:  # a slice of them from the end, all but the last few
            raise InvalidArgumentError.for_fields([FieldViolation(
                "forfeits", f"must be 0 (the default, {queues.FORFEITS_SHOWN}) or more")])
        now_ms = int(time.time() * 1000)
        status = status_pb2.ArenaStatus(referee=self.referee_id, window_s=WINDOW_S)
        status.at.FromMilliseconds(now_ms)
        moves = queues.group_figures(self.client, MOVE_STREAM, WORKER_GROUP, now_ms)
        engines = [queues.group_figures(self.client, stream, WORKER_GROUP, now_ms)
                   for stream in queues.engine_streams(self.client)]
        matches = queues.group_figures(self.client, MATCH_STREAM, REFEREE_GROUP, now_ms)
        status.moves.CopyFrom(_all_moves(moves, engines))
        status.engine_moves.extend(_queue(figures) for figures in engines)
        status.matches.CopyFrom(_queue(matches))
        status.matches_running = matches.pending
        # The rest of the unfinished matches: neither in the stream nor held by a referee.
        unfinished = self.client.zcard(self.store.unfinished_index())
        status.matches_waiting = max(0, unfinished - matches.pending - matches.lag)
        status.dead_letters = queues.stream_length(self.client, DEAD_STREAM)
        idle, held = matches.idle_ms or {}, matches.held or {}
        present = referees.present(self.client, now_ms)
        earlier = referees.held_before_restart(
            self.client, {name: count for name, count in held.items() if name in present})
        for name in sorted(present | set(idle)):
            left = earlier.get(name, 0)  # by its run before a restart: not running
            status.referees.add(name=name, up=name in present, idle_ms=idle.get(name, 0),
                                running=held.get(name, 0) - left, awaiting_takeover=left)
        status.workers.extend(workers.alive(self.client, now_ms))
        status.cache_probes = sum(w.cache_probes for w in status.workers)
        status.cache_hits = sum(w.cache_hits for w in status.workers)
        self._finished(status, now_ms, request.forfeits or queues.FORFEITS_SHOWN)
        if self.registry:
            status.services.add(name="registry", address=self.registry,
                                up=check_health(self.registry, timeout_s=1.0,
                                                credentials=self.credentials))
        if not current_principal().is_admin:
            _for_users(status)
        return status

    def _finished(self, status: status_pb2.ArenaStatus, now_ms: int, shown: int) -> None:
        recent = queues.recent_finished(self.client, 0, queues.FORFEIT_SCAN)
        window = [f for f in recent if f.at_ms >= now_ms - WINDOW_S * 1000]
        status.matches_finished = len(window)
        status.forfeits_in_window = sum(1 for f in window if f.match.result.forfeited)
        forfeits = [f for f in recent if f.match.result.forfeited]
        status.recent_forfeits.extend(_forfeit(f) for f in forfeits[:shown])


class QueueCollector(Collector):
    """Queue depths, lag, the oldest waiting job, dead letters, live workers and Redis
    memory, exported by whichever referee holds the exporter lease (taken or renewed at
    each scrape; another referee takes over once it lapses)."""

    def __init__(self, client: redis.Redis, cache: redis.Redis | None, holder: str) -> None:
        self.client, self.cache, self.holder = client, cache, holder

    def describe(self) -> Iterable[Metric]:
        return []  # collected at scrape time only, never when registered

    def collect(self) -> Iterator[Metric]:
        held = GaugeMetricFamily("arena_queue_exporter", "1 on the referee exporting the "
                                 "queue figures (it holds the lease)")
        try:
            holding = queues.hold_lease(self.client, self.holder, LEASE_TTL_MS)
            figures = list(self._figures()) if holding else []
        except redis.RedisError as exc:
            log.warning("queue figures unavailable: %s", exc)
            holding, figures = False, []
        held.add_metric([], 1.0 if holding else 0.0)
        yield held
        yield from figures

    def _figures(self) -> Iterator[Metric]:
        now_ms = int(time.time() * 1000)
        depth = GaugeMetricFamily("arena_stream_length", "entries in a job stream",
                                  labels=["stream"])
        lag = GaugeMetricFamily("arena_stream_group_lag", "entries not yet delivered to the "
                                "consumer group", labels=["stream", "group"])
        pending = GaugeMetricFamily("arena_stream_group_pending", "entries delivered and not "
                                    "yet acknowledged", labels=["stream", "group"])
        oldest = GaugeMetricFamily("arena_stream_oldest_waiting_seconds", "age of the oldest "
                                   "entry waiting for a consumer", labels=["stream", "group"])
        engines = [(stream, WORKER_GROUP) for stream in queues.engine_streams(self.client)]
        for stream, group in ((MOVE_STREAM, WORKER_GROUP), (MATCH_STREAM, REFEREE_GROUP),
                              *engines):
            found = queues.group_figures(self.client, stream, group, now_ms)
            depth.add_metric([stream], found.length)
            lag.add_metric([stream, group], found.lag)
            pending.add_metric([stream, group], found.pending)
            oldest.add_metric([stream, group], found.oldest_waiting_ms / 1000)
        for stream in (DEAD_STREAM, FINISHED_STREAM):
            depth.add_metric([stream], queues.stream_length(self.client, stream))
        yield from (depth, lag, pending, oldest)
        alive = GaugeMetricFamily("arena_workers_alive",
                                  "match workers (not analysts) whose presence key is live")
        alive.add_metric([], sum(1 for w in workers.alive(self.client, now_ms)
                                 if w.pool != "analysis"))
        yield alive
        yield from self._memory()

    def _memory(self) -> Iterator[Metric]:
        used = GaugeMetricFamily("arena_redis_memory_used_bytes", "Redis memory in use",
                                 labels=["redis"])
        limit = GaugeMetricFamily("arena_redis_memory_max_bytes", "Redis maxmemory (0: no "
                                  "limit)", labels=["redis"])
        read = GaugeMetricFamily("arena_redis_memory_read", "1 when the exporter read this "
                                 "Redis's memory at the scrape, 0 when it could not",
                                 labels=["redis"])
        for name, client in (("durable", self.client), ("cache", self.cache)):
            if client is None:
                continue
            try:  # one Redis unreadable (the cache down) costs its own figures, no others
                in_use, most = queues.memory(client)
            except redis.RedisError as exc:
                log.warning("memory of the %s Redis unavailable: %s", name, exc)
                read.add_metric([name], 0.0)
                continue
            read.add_metric([name], 1.0)
            used.add_metric([name], in_use)
            limit.add_metric([name], most)
        yield from (used, limit, read)
