"""The delivery contract between referees and engine workers, over Redis Streams.

A job may be delivered more than once: every step here is safe to repeat.

Stream and key names are in ``keys``; how a consumer reads, reclaims and keeps entries
fresh is ``streams.StreamConsumer``.

* Match jobs (``MatchJob`` bytes under ``pb``) go to ``arena:stream:matches``, read by the
  consumer group ``referees``. A referee keeps its matches' entries fresh while it runs
  them; entries idle for longer than ``match_idle_ms`` belong to a dead referee and are
  taken over with XAUTOCLAIM.
* Move jobs (``MoveJob`` bytes) go to ``arena:stream:moves``, group ``workers``. A worker
  that picks a job up posts a ``started`` entry to ``arena:match:{id}:started``; its answer
  goes to the match's result stream ``arena:match:{id}:results``: one ``result`` entry (a
  ``MoveResult``, naming its ``started`` entry), or a ``dead`` entry when the job was
  dead-lettered. The referee computes the time a bot used from the two entries' IDs (Redis
  server timestamps), so the figure does not depend on which referee reads it or when;
  and it is woken once per move (``started`` entries live in their own stream).
* A job whose worker went quiet for longer than :func:`reclaim_idle_ms` (tied to the move's
  time budget) is claimed by another worker; after ``max_deliveries`` deliveries it goes to
  ``arena:stream:moves:dead`` instead and the referee adjudicates the game.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import (
    DEAD_STREAM,
    MOVE_STREAM,
    WORKER_GROUP,
)
from arena.services.common.protocol.streams import QUEUED, entry_ms, flat, text
from redis.client import Pipeline

from arena.v1 import engine_pb2

log = logging.getLogger(__name__)

OWNER = "referee"  # publishes the jobs and reads the answers
SHARED_WITH = ("worker",)  # takes the jobs and posts the answers

# Result streams outlive their match by this long, then expire (late duplicates included).
RESULTS_TTL_S = 7 * 24 * 3600
# Move jobs are kept this long past their deadline, then trimmed from the stream.
MOVE_JOB_RETENTION_MS = 3600 * 1000


@dataclass(frozen=True)
class DeliveryConfig:
    """Timeouts and bounds of the delivery model (environment: ``ARENA_<NAME>``)."""

    max_deliveries: int = 5
    min_reclaim_idle_ms: int = 2000
    reclaim_margin_ms: int = 1000
    heartbeat_ms: int = 500
    match_idle_ms: int = 10_000
    grace_ms: int = 200
    # How long a worker holds a job it took ahead of its current search before putting it
    # back in the queue for a free worker (0: never take one ahead).
    reserve_hold_ms: int = 100
    # A move that nobody answers for this long is adjudicated (no worker at all).
    stall_timeout_ms: int = 600_000
    # A protocol engine's move that no live match worker offers the build of for this
    # long ends the game void (every worker that had it stopped, or its files changed).
    unoffered_ms: int = 30_000
    # Moves of bots run on the worker (built-in and protocol engines) are timed by the CPU
    # time they use, the wall clock allowing this many times the limit (cpu_wall_guard_ms).
    cpu_clock: bool = True
    cpu_wall_factor: float = 4.0


# Added to the wall-clock guard of a move timed on CPU (see cpu_wall_guard_ms).
WALL_SLACK_MS = 2000


def cpu_wall_guard_ms(limit_ms: int, grace_ms: int, wall_factor: float) -> int:
    """How long a move timed on CPU may take on the wall clock: ``wall_factor`` times the
    limit, plus grace, plus ``WALL_SLACK_MS`` (scheduling stalls of an overloaded machine
    last up to seconds, whatever the limit). Past it the move is late anyway: a stuck
    worker or a sleeping engine still loses the move."""
    return int(max(1.0, wall_factor) * limit_ms) + grace_ms + WALL_SLACK_MS


def reclaim_idle_ms(time_budget_ms: int, config: DeliveryConfig) -> int:
    """How long a move job may sit silent before another worker takes it over.

    Live workers refresh their job every ``heartbeat_ms``, but a search that holds the
    interpreter lock may starve that refresh: a job is never reclaimed before its own time
    budget (plus a margin) could have run out.
    """
    return max(config.min_reclaim_idle_ms, time_budget_ms + config.reclaim_margin_ms)


def ask_still_wanted(pipe: Pipeline, job: engine_pb2.MoveJob) -> None:
    """Queue the two reads that tell whether ``job``'s ply still needs an answer (see
    ``still_wanted``) on ``pipe``."""
    pipe.exists(keys.match(job.match_id, "final"))
    pipe.llen(keys.match(job.match_id, "moves"))


def still_wanted(job: engine_pb2.MoveJob, final: int, recorded: int) -> bool:
    """False once the match is over (finished or cancelled) or the ply is recorded: the
    worker then stops its search and answers nothing."""
    return not final and recorded <= job.ply


def move_stream(job: engine_pb2.MoveJob) -> str:
    """The stream a move job goes to: its protocol engine's (read only by the workers that
    offer exactly that engine), or the one every match worker reads."""
    spec = job.bot.spec
    if spec.WhichOneof("engine") == "protocol":
        return keys.engine_stream(spec.protocol.engine, spec.protocol.checksum)
    return MOVE_STREAM


def move_job_fields(job: engine_pb2.MoveJob) -> dict[str, str | bytes]:
    """A move-job entry: the job, plus its match, ply and id in plain fields so that a
    worker's script can check and start it without decoding protobuf."""
    return {"pb": job.SerializeToString(), "match": job.match_id, "ply": str(job.ply),
            "job": job.job_id}


def move_stream_minid(stall_timeout_ms: int, now_ms: int | None = None) -> str:
    """The oldest move-job entry ID worth keeping: the stream is trimmed to it (roughly) on
    every publish, so it does not grow forever in the durable Redis. Older jobs are past
    their deadline (workers drop them unrun), with an hour's margin."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{max(0, now_ms - stall_timeout_ms - MOVE_JOB_RETENTION_MS)}-0"


@dataclass(frozen=True)
class ResultEvent:
    """One entry of a match's result stream."""

    entry_id: str
    kind: str  # "started", "result", "dead" or "cancelled" (the match, by CancelMatch)
    ply: int
    job_id: str
    delivery: str
    worker_id: str
    result: engine_pb2.MoveResult | None = None
    detail: str = ""
    started_id: str = ""  # a result's ``started`` entry (in the match's started stream)
    queued_id: str = ""  # a result's job entry in the move-job stream

    @property
    def at_ms(self) -> int:
        """Server time of the entry (the ms part of its stream ID)."""
        return entry_ms(self.entry_id)


def _job_fields(kind: str, job: engine_pb2.MoveJob, delivery: str, worker_id: str) -> Any:
    return {"kind": kind, "ply": str(job.ply), "job": job.job_id, "delivery": delivery,
            "worker": worker_id}


# KEYS: the match's moves, final flag and started stream; the move-job stream.
# ARGV: ply, ttl, group, consumer, the job's entry, reserve (1/0), started fields.
# Checks that the ply is still wanted and posts ``started``, or acknowledges the job (no
# one needs it any more); then, if asked, takes the next waiting job ahead without
# starting it. One round trip; returns {started entry ID or false, {entry ID, fields} or
# false}.
_START_AND_RESERVE = """
local id = false
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('LLEN', KEYS[1]) <= tonumber(ARGV[1]) then
  id = redis.call('XADD', KEYS[3], '*', unpack(ARGV, 7))
  redis.call('EXPIRE', KEYS[3], ARGV[2])
else
  redis.call('XACK', KEYS[4], ARGV[3], ARGV[5])
end
local ahead = false
if ARGV[6] == '1' then
  local got = redis.call('XREADGROUP', 'GROUP', ARGV[3], ARGV[4], 'COUNT', 1,
                         'STREAMS', KEYS[4], '>')
  if got then ahead = got[1][2][1] end
end
return {id, ahead}
"""


@dataclass(frozen=True)
class Started:
    """What :meth:`JobStarter.start` did: the ``started`` entry's ID ("" if the job was no
    longer needed and got acknowledged), and the job taken ahead, if any."""

    started_id: str
    ahead: tuple[str, dict[bytes, bytes]] | None


class JobStarter:
    """Starts a worker's job: posts ``started`` unless its match is over or its ply already
    recorded (then acknowledges it), and optionally takes the next job ahead."""

    def __init__(self, client: redis.Redis, worker_id: str) -> None:
        self._script = client.register_script(_START_AND_RESERVE)
        self._worker_id = worker_id

    def start(self, entry_id: str, job: engine_pb2.MoveJob, delivery: str,
              reserve: bool = False, stream: str = MOVE_STREAM) -> Started:
        """``stream``: the job's (a job taken ahead comes from the same one)."""
        fields = _job_fields("started", job, delivery, self._worker_id)
        reply: Any = self._script(
            keys=[keys.match(job.match_id, "moves"), keys.match(job.match_id, "final"),
                  keys.match(job.match_id, "started"), stream],
            args=[job.ply, RESULTS_TTL_S, WORKER_GROUP, self._worker_id, entry_id,
                  int(reserve), *flat(fields)])
        started, ahead = reply
        taken = None
        if ahead:
            raw = ahead[1]
            taken = (text(ahead[0]), {raw[i]: raw[i + 1] for i in range(0, len(raw), 2)})
        return Started(text(started) if started else "", taken)


def post_started(
    client: redis.Redis, job: engine_pb2.MoveJob, delivery: str, worker_id: str
) -> str:
    """Post ``started`` unconditionally; returns its entry ID."""
    key = keys.match(job.match_id, "started")
    with client.pipeline(transaction=False) as pipe:
        pipe.xadd(key, _job_fields("started", job, delivery, worker_id))
        pipe.expire(key, RESULTS_TTL_S)
        started, _ = pipe.execute()
    return text(started)


def _result_fields(job: engine_pb2.MoveJob, delivery: str, result: engine_pb2.MoveResult,
                   started_id: str, queued_id: str) -> Any:
    fields = _job_fields("result", job, delivery, result.worker_id)
    fields["pb"] = result.SerializeToString()
    fields[QUEUED] = queued_id  # the job's entry: when it first entered the queue
    if started_id:
        fields["started"] = started_id
    return fields


def post_result(
    client: redis.Redis, entry_id: str, job: engine_pb2.MoveJob, delivery: str,
    result: engine_pb2.MoveResult, started_id: str = "", stream: str = MOVE_STREAM,
    queued_id: str = "", mark_owner: bool = False,
) -> None:
    """Answer and acknowledge (on the job's ``stream``) in one transaction: an answered job
    is never re-run. ``queued_id``: the entry the job first entered the queue as, if it was
    handed back to the queue since (default ``entry_id``). ``mark_owner``: a worker's engine
    played it (and the worker's throttle allows), so its owner is marked as having just
    played (``keys.MOVE_OWNERS``) in the same transaction: the job leaves the pending
    list, where the workers' shares saw its owner hold a worker, at the moment the mark
    says their next move is on its way."""
    key = keys.match(job.match_id, "results")
    fields = _result_fields(job, delivery, result, started_id, queued_id or entry_id)
    with client.pipeline(transaction=True) as pipe:
        pipe.xadd(key, fields)
        pipe.expire(key, RESULTS_TTL_S)
        pipe.xack(stream, WORKER_GROUP, entry_id)
        if mark_owner and job.owner:
            now_ms = int(time.time() * 1000)
            pipe.zadd(keys.MOVE_OWNERS, {job.owner: now_ms})
            pipe.zremrangebyscore(keys.MOVE_OWNERS, "-inf", now_ms - 60_000)
        pipe.execute()


def dead_letter(
    client: redis.Redis, entry_id: str, raw: Mapping[bytes, bytes],
    job: engine_pb2.MoveJob | None, reason: str, deliveries: int, stream: str = MOVE_STREAM,
) -> None:
    """Move a job to the dead-letter stream and tell its referee (if the job names one)."""
    with client.pipeline(transaction=True) as pipe:
        pipe.xadd(DEAD_STREAM, {
            "pb": raw.get(b"pb", b""), "entry": entry_id, "reason": reason,
            "deliveries": str(deliveries), "stream": stream,
        })
        pipe.xack(stream, WORKER_GROUP, entry_id)
        if job is not None and job.match_id:
            key = keys.match(job.match_id, "results")
            fields = _job_fields("dead", job, "", "")
            fields["detail"] = reason
            pipe.xadd(key, fields)
            pipe.expire(key, RESULTS_TTL_S)
        pipe.execute()
    log.warning("dead-lettered move job %s after %d deliveries: %s", entry_id, deliveries, reason)


def parse_result_entry(entry_id: Any, fields: Mapping[bytes, bytes]) -> ResultEvent | None:
    """A result-stream entry, or None for an entry that is not ours (logged, skipped)."""
    try:
        kind = fields[b"kind"].decode()
        result = None
        if kind == "result":
            result = engine_pb2.MoveResult.FromString(fields[b"pb"])
        elif kind not in ("started", "dead", "cancelled"):
            raise ValueError(f"unknown kind {kind!r}")
        return ResultEvent(
            entry_id=text(entry_id), kind=kind, ply=int(fields[b"ply"]),
            job_id=fields.get(b"job", b"").decode(),
            delivery=fields.get(b"delivery", b"").decode(),
            worker_id=fields.get(b"worker", b"").decode(), result=result,
            detail=fields.get(b"detail", b"").decode(errors="replace"),
            started_id=fields.get(b"started", b"").decode(),
            queued_id=fields.get(QUEUED, b"").decode(),
        )
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        log.warning("skipping malformed result entry %s: %s", text(entry_id), exc)
        return None


def read_results(
    client: redis.Redis, match_id: str, after: str, block_ms: int
) -> tuple[str, list[ResultEvent]]:
    """Entries after ``after`` (waiting up to ``block_ms``); returns the new cursor too."""
    stream = keys.match(match_id, "results")
    reply: Any = client.xread({stream: after}, count=100, block=max(1, block_ms))
    events: list[ResultEvent] = []
    cursor = after
    for _stream, entries in reply or []:
        for entry_id, fields in entries:
            cursor = text(entry_id)
            event = parse_result_entry(entry_id, fields)
            if event is not None:
                events.append(event)
    return cursor, events
