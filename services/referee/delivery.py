"""The delivery protocol between referees and engine workers, over Redis Streams.

A job may be delivered more than once: every step here is safe to repeat.

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
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from arena.v1 import engine_pb2

log = logging.getLogger(__name__)

MATCH_STREAM = "arena:stream:matches"
REFEREE_GROUP = "referees"
MOVE_STREAM = "arena:stream:moves"
WORKER_GROUP = "workers"
DEAD_STREAM = "arena:stream:moves:dead"
FINISHED_STREAM = "arena:stream:finished"
# Result streams outlive their match by this long, then expire (late duplicates included).
RESULTS_TTL_S = 7 * 24 * 3600
# Move jobs are kept this long past their deadline, then trimmed from the stream.
MOVE_JOB_RETENTION_MS = 3600 * 1000
# Idle time given to a job released on purpose: large enough to be reclaimed at once.
RELEASED_IDLE_MS = 365 * 24 * 3600 * 1000


@dataclass(frozen=True)
class DeliveryConfig:
    """Timeouts and bounds of the delivery model (environment: ``ARENA_<NAME>``)."""

    max_deliveries: int = 5
    min_reclaim_idle_ms: int = 2000
    reclaim_margin_ms: int = 1000
    heartbeat_ms: int = 500
    match_idle_ms: int = 10_000
    grace_ms: int = 200
    # A move that nobody answers for this long is adjudicated (no worker at all).
    stall_timeout_ms: int = 600_000

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DeliveryConfig:
        env = os.environ if env is None else env
        values: dict[str, int] = {}
        for name in cls.__dataclass_fields__:
            raw = env.get(f"ARENA_{name.upper()}")
            if raw:
                try:
                    values[name] = int(raw)
                except ValueError as exc:
                    raise ValueError(f"ARENA_{name.upper()} must be an integer: {raw!r}") from exc
        return cls(**values)


def reclaim_idle_ms(time_budget_ms: int, config: DeliveryConfig) -> int:
    """How long a move job may sit silent before another worker takes it over.

    Live workers refresh their job every ``heartbeat_ms``, but a search that holds the
    interpreter lock may starve that refresh: a job is never reclaimed before its own time
    budget (plus a margin) could have run out.
    """
    return max(config.min_reclaim_idle_ms, time_budget_ms + config.reclaim_margin_ms)


def results_key(match_id: str) -> str:
    return f"arena:match:{match_id}:results"


def started_key(match_id: str) -> str:
    return f"arena:match:{match_id}:started"


def ensure_group(client: redis.Redis, stream: str, group: str) -> None:
    """Create the consumer group (and the stream) if it does not exist yet."""
    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def publish_match_job(client: redis.Redis, match_id: str) -> None:
    job = engine_pb2.MatchJob(match_id=match_id)
    client.xadd(MATCH_STREAM, {"pb": job.SerializeToString()})


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


def publish_move_job(client: redis.Redis, job: engine_pb2.MoveJob, minid: str = "") -> str:
    entry = client.xadd(MOVE_STREAM, move_job_fields(job),  # type: ignore[arg-type]
                        minid=minid or None, approximate=True)
    return _text(entry)


# Refresh only the entries this consumer still owns: a job taken over by another worker
# must not be pulled back by the heartbeat of a worker that was presumed dead.
_TOUCH_OWNED = """
local touched = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if p[1] and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    touched = touched + 1
  end
end
return touched
"""


class Heartbeat:
    """Keeps a consumer's pending entries fresh so they are not reclaimed."""

    def __init__(self, client: redis.Redis, stream: str, group: str, consumer: str) -> None:
        self._client = client
        self._script = client.register_script(_TOUCH_OWNED)
        self._stream, self._group, self._consumer = stream, group, consumer

    def touch(self, entry_ids: Sequence[str]) -> int:
        if not entry_ids:
            return 0
        touched = self._script(
            keys=[self._stream], args=[self._group, self._consumer, *entry_ids]
        )
        return int(touched)

    def release(self, entry_id: str) -> None:
        """Give a job back: mark it idle for ages so the next reclaim takes it at once."""
        self._client.execute_command(  # type: ignore[no-untyped-call]
            "XCLAIM", self._stream, self._group, self._consumer, 0, entry_id,
            "IDLE", RELEASED_IDLE_MS, "JUSTID",
        )


@dataclass(frozen=True)
class ResultEvent:
    """One entry of a match's result stream."""

    entry_id: str
    kind: str  # "started", "result" or "dead"
    ply: int
    job_id: str
    delivery: str
    worker_id: str
    result: engine_pb2.MoveResult | None = None
    detail: str = ""
    started_id: str = ""  # a result's ``started`` entry (in the match's started stream)

    @property
    def at_ms(self) -> int:
        """Server time of the entry (the ms part of its stream ID)."""
        return entry_ms(self.entry_id)


def entry_ms(entry_id: str) -> int:
    """Server time of a stream entry: the ms part of its ID."""
    return int(entry_id.split("-", 1)[0])


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _job_fields(kind: str, job: engine_pb2.MoveJob, delivery: str, worker_id: str) -> Any:
    return {"kind": kind, "ply": str(job.ply), "job": job.job_id, "delivery": delivery,
            "worker": worker_id}


# KEYS: the match's moves, final flag and started stream. ARGV: ply, ttl, started fields.
# Checks that the ply is still wanted and posts ``started`` in one round trip; returns the
# started entry's ID, or false.
_START_IF_NEEDED = """
if redis.call('EXISTS', KEYS[2]) == 1 then return false end
if redis.call('LLEN', KEYS[1]) > tonumber(ARGV[1]) then return false end
local id = redis.call('XADD', KEYS[3], '*', unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[3], ARGV[2])
return id
"""


class JobStarter:
    """Posts ``started`` for a job unless its match is over or its ply already recorded."""

    def __init__(self, client: redis.Redis) -> None:
        self._script = client.register_script(_START_IF_NEEDED)

    def start(self, job: engine_pb2.MoveJob, delivery: str, worker_id: str) -> str:
        """The ``started`` entry's ID; "" when the job is no longer needed."""
        # matches.py imports this module; its key helpers are imported here, not at the top.
        from arena.services.referee.matches import final_key, moves_key

        fields = _job_fields("started", job, delivery, worker_id)
        flat = [part for pair in fields.items() for part in pair]
        started = self._script(
            keys=[moves_key(job.match_id), final_key(job.match_id), started_key(job.match_id)],
            args=[job.ply, RESULTS_TTL_S, *flat])
        return _text(started) if started else ""


def post_started(
    client: redis.Redis, job: engine_pb2.MoveJob, delivery: str, worker_id: str
) -> str:
    """Post ``started`` unconditionally; returns its entry ID."""
    key = started_key(job.match_id)
    with client.pipeline(transaction=False) as pipe:
        pipe.xadd(key, _job_fields("started", job, delivery, worker_id))
        pipe.expire(key, RESULTS_TTL_S)
        started, _ = pipe.execute()
    return _text(started)


def _result_fields(job: engine_pb2.MoveJob, delivery: str, result: engine_pb2.MoveResult,
                   started_id: str) -> Any:
    fields = _job_fields("result", job, delivery, result.worker_id)
    fields["pb"] = result.SerializeToString()
    if started_id:
        fields["started"] = started_id
    return fields


def post_result(
    client: redis.Redis, entry_id: str, job: engine_pb2.MoveJob, delivery: str,
    result: engine_pb2.MoveResult, started_id: str = "",
) -> None:
    """Answer and acknowledge in one transaction: an answered job is never re-run."""
    key = results_key(job.match_id)
    fields = _result_fields(job, delivery, result, started_id)
    with client.pipeline(transaction=True) as pipe:
        pipe.xadd(key, fields)
        pipe.expire(key, RESULTS_TTL_S)
        pipe.xack(MOVE_STREAM, WORKER_GROUP, entry_id)
        pipe.execute()


# Answer a job and take the next one in one round trip (each round trip is a wake-up of
# the worker, which a busy machine makes expensive). Atomic like post_result; then a
# non-blocking XREADGROUP, and for the job read, the same check and ``started`` entry as
# _START_IF_NEEDED. The next job's keys come from its entry's plain fields, so they are
# not declared: fine on one Redis server (the arena's), not on a cluster.
# KEYS: result stream, move-job stream. ARGV: group, consumer, entry to ack, ttl, the next
# job's delivery tag, key prefix, moves suffix, final suffix, started suffix, the result
# entry's fields. Returns false, or {entry id, fields, 1 started | 0 not checked | -1 gone,
# started entry ID}.
_ANSWER_AND_TAKE = """
redis.call('XADD', KEYS[1], '*', unpack(ARGV, 10))
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('XACK', KEYS[2], ARGV[1], ARGV[3])
local got = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1,
                       'STREAMS', KEYS[2], '>')
if not got then return false end
local entry = got[1][2][1]
local f = {}
for i = 1, #entry[2], 2 do f[entry[2][i]] = entry[2][i + 1] end
if not (f['match'] and f['ply'] and f['job'] and tonumber(f['ply'])) then
  return {entry[1], entry[2], 0, ''}
end
local base = ARGV[6] .. f['match']
if redis.call('EXISTS', base .. ARGV[8]) == 1
    or redis.call('LLEN', base .. ARGV[7]) > tonumber(f['ply']) then
  redis.call('XACK', KEYS[2], ARGV[1], entry[1])
  return {entry[1], entry[2], -1, ''}
end
local started = redis.call('XADD', base .. ARGV[9], '*', 'kind', 'started', 'ply', f['ply'],
                           'job', f['job'], 'delivery', ARGV[5], 'worker', ARGV[2])
redis.call('EXPIRE', base .. ARGV[9], ARGV[4])
return {entry[1], entry[2], 1, started}
"""


@dataclass(frozen=True)
class TakenJob:
    """A job taken along with an answer: its entry, and whether it is already started
    (1, under ``delivery``), was not checked (0) or is no longer needed (-1, acked)."""

    entry_id: str
    fields: dict[bytes, bytes]
    started: int
    delivery: str
    started_id: str


class Answerer:
    """Posts a worker's answers; optionally takes (and starts) the next job in the same
    round trip."""

    def __init__(self, client: redis.Redis, worker_id: str) -> None:
        from arena.services.referee.matches import final_key, moves_key

        self._client = client
        self._worker_id = worker_id
        self._script = client.register_script(_ANSWER_AND_TAKE)
        prefix, moves = moves_key("\0").split("\0")
        final_prefix, final = final_key("\0").split("\0")
        started_prefix, started = started_key("\0").split("\0")
        assert prefix == final_prefix == started_prefix, "match keys share one prefix"
        self._layout = [prefix, moves, final, started]

    def answer(self, entry_id: str, job: engine_pb2.MoveJob, delivery: str,
               result: engine_pb2.MoveResult, take_next: bool,
               started_id: str = "") -> TakenJob | None:
        if not take_next:
            post_result(self._client, entry_id, job, delivery, result, started_id)
            return None
        fields = _result_fields(job, delivery, result, started_id)
        flat = [part for pair in fields.items() for part in pair]
        tag = secrets.token_hex(4)
        reply: Any = self._script(
            keys=[results_key(job.match_id), MOVE_STREAM],
            args=[WORKER_GROUP, self._worker_id, entry_id, RESULTS_TTL_S, tag,
                  *self._layout, *flat])
        if not reply:
            return None
        raw = reply[1]
        entry_fields = {raw[i]: raw[i + 1] for i in range(0, len(raw), 2)}
        return TakenJob(_text(reply[0]), entry_fields, int(reply[2]), tag, _text(reply[3]))


def dead_letter(
    client: redis.Redis, entry_id: str, raw: Mapping[bytes, bytes],
    job: engine_pb2.MoveJob | None, reason: str, deliveries: int,
) -> None:
    """Move a job to the dead-letter stream and tell its referee (if the job names one)."""
    with client.pipeline(transaction=True) as pipe:
        pipe.xadd(DEAD_STREAM, {
            "pb": raw.get(b"pb", b""), "entry": entry_id, "reason": reason,
            "deliveries": str(deliveries),
        })
        pipe.xack(MOVE_STREAM, WORKER_GROUP, entry_id)
        if job is not None and job.match_id:
            key = results_key(job.match_id)
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
        elif kind not in ("started", "dead"):
            raise ValueError(f"unknown kind {kind!r}")
        return ResultEvent(
            entry_id=_text(entry_id), kind=kind, ply=int(fields[b"ply"]),
            job_id=fields.get(b"job", b"").decode(),
            delivery=fields.get(b"delivery", b"").decode(),
            worker_id=fields.get(b"worker", b"").decode(), result=result,
            detail=fields.get(b"detail", b"").decode(errors="replace"),
            started_id=fields.get(b"started", b"").decode(),
        )
    except (KeyError, ValueError, UnicodeDecodeError) as exc:
        log.warning("skipping malformed result entry %s: %s", _text(entry_id), exc)
        return None


def read_results(
    client: redis.Redis, match_id: str, after: str, block_ms: int
) -> tuple[str, list[ResultEvent]]:
    """Entries after ``after`` (waiting up to ``block_ms``); returns the new cursor too."""
    reply: Any = client.xread({results_key(match_id): after}, count=100, block=max(1, block_ms))
    events: list[ResultEvent] = []
    cursor = after
    for _stream, entries in reply or []:
        for entry_id, fields in entries:
            cursor = _text(entry_id)
            event = parse_result_entry(entry_id, fields)
            if event is not None:
                events.append(event)
    return cursor, events
