"""The only writes of game state, each one atomic and each one safe to repeat.

Two referees may run the same match for a while (a slow one presumed dead and its
replacement). Every write therefore says which ply it expects to write: a move record is
appended only if exactly ``ply`` records exist, and the result only once and only after
exactly the moves it was judged on. A write that loses the race returns False and the
caller re-reads the recorded moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.delivery import RESULTS_TTL_S, move_job_fields, move_stream
from arena.services.common.protocol.keys import (
    FINISHED_STREAM,
    MATCH_STREAM,
    MOVE_STREAM,
    REFEREE_GROUP,
)
from arena.services.common.protocol.limits import CHARGE_LUA
from arena.services.common.protocol.matches import FINISHED_MAXLEN, byte_counters
from arena.services.common.protocol.streams import flat

from arena.v1 import engine_pb2, match_pb2

OWNER = "referee"


def match_keys(match_id: str, *parts: keys.MatchPart) -> list[str]:
    """The keys of one match a script touches, in the order of its KEYS."""
    return [keys.match(match_id, part) for part in parts]

# Every write below counts what it adds to the match (its header's growth, its records
# and events) against its owner's ``match_bytes`` (see ``matches``): ``charge`` takes the
# owner's byte counter and the match's, the last two KEYS of each script.

# KEYS: match, final, events, byte counters. ARGV: running match bytes, started event bytes.
_START = CHARGE_LUA + """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
local grown = string.len(ARGV[1]) - redis.call('STRLEN', KEYS[1])
redis.call('SET', KEYS[1], ARGV[1])
if redis.call('XLEN', KEYS[3]) == 0 then
  redis.call('XADD', KEYS[3], '*', 'pb', ARGV[2])
  grown = grown + string.len(ARGV[2])
end
charge(KEYS[4], KEYS[5], grown)
return 1
"""

# KEYS: moves, events, final, move-job stream, byte counters.
# ARGV: the number of records expected before this write, 1 to record a move (0: none),
# the record and its event, the move-job stream's trim point, then the fields of the job
# to publish (none: no job). Every move job is published by this script, in the same step as
# the record before it when there is one: a job is never published for a ply that is
# already recorded or a match that is over, and recording a move and asking for the next
# costs one round trip.
_WRITE_PLY = CHARGE_LUA + """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
if ARGV[2] == '1' then
  redis.call('RPUSH', KEYS[1], ARGV[3])
  redis.call('XADD', KEYS[2], '*', 'pb', ARGV[4])
  charge(KEYS[5], KEYS[6], string.len(ARGV[3]) + string.len(ARGV[4]))
end
if #ARGV > 5 then
  redis.call('XADD', KEYS[4], 'MINID', '~', ARGV[5], '*', unpack(ARGV, 6))
end
return 1
"""

# The owner's parked match jobs wait in a sorted set scored by their match's creation time
# (microseconds), so they start in the order the owner made them, however the referees'
# threads happen to park them. ``upgrade`` turns a list of parked jobs (as stored before
# the sorted set) into the set, ahead of any other. ``hand_on`` hands the owner's slot on:
# the oldest parked job goes back to the match stream.
_HAND_ON = """
local function upgrade(parked)
  if redis.call('TYPE', parked).ok ~= 'list' then return end
  local jobs = redis.call('LRANGE', parked, 0, -1)
  redis.call('DEL', parked)
  for i, job in ipairs(jobs) do redis.call('ZADD', parked, i, job) end
end
local function hand_on(parked, stream)
  upgrade(parked)
  local job = redis.call('ZPOPMIN', parked)[1]
  if job then redis.call('XADD', stream, '*', 'pb', job) end
end
"""

# KEYS: match, final, moves, events, finished stream, results stream, the owner's active
# set, running set and parked jobs, the match stream, byte counters, the unfinished
# matches' index.
# ARGV: plies judged (-1: any, for a cancellation), finished match bytes, ended event
# bytes, match id, ladder id, results ttl, the finished stream's length (roughly). A
# cancellation also wakes the referee that runs the match, which waits on the results
# stream. The owner's next parked match may start.
_FINISH = _HAND_ON + CHARGE_LUA + """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if ARGV[1] ~= '-1' and redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[2], '1')
local grown = string.len(ARGV[2]) - redis.call('STRLEN', KEYS[1]) + string.len(ARGV[3])
redis.call('SET', KEYS[1], ARGV[2])
redis.call('XADD', KEYS[4], '*', 'pb', ARGV[3])
charge(KEYS[11], KEYS[12], grown)
redis.call('XADD', KEYS[5], 'MAXLEN', '~', ARGV[7], '*', 'match_id', ARGV[4], 'ladder_id',
           ARGV[5], 'pb', ARGV[2])
if ARGV[1] == '-1' then
  redis.call('XADD', KEYS[6], '*', 'kind', 'cancelled', 'ply', redis.call('LLEN', KEYS[3]))
  redis.call('EXPIRE', KEYS[6], ARGV[6])
end
redis.call('SREM', KEYS[7], ARGV[4])
redis.call('ZREM', KEYS[13], ARGV[4])
if redis.call('SREM', KEYS[8], ARGV[4]) == 1 then hand_on(KEYS[9], KEYS[10]) end
return 1
"""

# KEYS: the match's final flag, the owner's running set and parked jobs, the match stream,
# the owner's byte counter.
# ARGV: match id, the owner's running cap (0: none), the referees' group, the job's entry,
# the job's bytes, the match's creation time in microseconds, the owner's match_bytes (0:
# none).
# Returns 'run' (play it), 'over' (finished: drop it, and hand the slot on), 'full' (not
# started and its owner's matches take match_bytes or more: the caller cancels it, and
# the turn passes on) or 'parked' (the owner has cap matches running: the job waits with
# the parked ones, acknowledged). A match once started plays to its end.
_ADMIT = _HAND_ON + """
if redis.call('EXISTS', KEYS[1]) == 1 then
  hand_on(KEYS[3], KEYS[4])  -- it may have been parked: its turn passes to the next
  return 'over'
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 'run' end
local limit = tonumber(ARGV[7])
if limit > 0 and tonumber(redis.call('GET', KEYS[5]) or '0') >= limit then
  hand_on(KEYS[3], KEYS[4])
  return 'full'
end
local cap = tonumber(ARGV[2])
if cap == 0 or redis.call('SCARD', KEYS[2]) < cap then
  redis.call('SADD', KEYS[2], ARGV[1])
  return 'run'
end
upgrade(KEYS[3])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[5])
redis.call('XACK', KEYS[4], ARGV[3], ARGV[4])
return 'parked'
"""


def move_event(match_id: str, record: match_pb2.MoveRecord, is_pass: bool) -> match_pb2.MatchEvent:
    """The event a recorded move adds to the match's event stream."""
    if not is_pass:
        return match_pb2.MatchEvent(match_id=match_id, move=record)
    event = match_pb2.MatchEvent(match_id=match_id)
    getattr(event, "pass").CopyFrom(match_pb2.PassEvent(ply=record.ply, color=record.color))
    return event


@dataclass
class Ledger:
    """The referee's writes of game state (see the module docstring)."""

    client: redis.Redis

    def __post_init__(self) -> None:
        self._start = self.client.register_script(_START)
        self._write_ply = self.client.register_script(_WRITE_PLY)
        self._finish = self.client.register_script(_FINISH)
        self._admit = self.client.register_script(_ADMIT)

    def admit(self, match: match_pb2.Match, cap: int, entry_id: str, byte_cap: int) -> str:
        """May a referee start (or resume) ``match`` now? ``run``, ``over``, ``full`` or
        ``parked`` (see ``_ADMIT``; ``cap`` is the owner's running-matches quota,
        ``byte_cap`` their match_bytes, 0 for none)."""
        job = engine_pb2.MatchJob(match_id=match.id).SerializeToString()
        decision = self._admit(
            keys=[keys.match(match.id, "final"), keys.user(match.owner, "running"),
                  keys.user(match.owner, "parked"), MATCH_STREAM,
                  keys.owner_match_bytes(match.owner)],
            args=[match.id, cap, REFEREE_GROUP, entry_id, job,
                  match.created_at.ToMicroseconds(), byte_cap])
        return decision.decode() if isinstance(decision, bytes) else str(decision)

    def start(self, running: match_pb2.Match) -> bool:
        """Store the RUNNING header and the started event (once); False if finished."""
        event = match_pb2.MatchEvent(
            match_id=running.id, started=match_pb2.MatchStarted(match=running))
        done = self._start(
            keys=[*match_keys(running.id, "", "final", "events"), *byte_counters(running)],
            args=[running.SerializeToString(), event.SerializeToString()],
        )
        return int(done) == 1

    def append(self, match: match_pb2.Match, record: match_pb2.MoveRecord, is_pass: bool,
               next_job: engine_pb2.MoveJob | None = None, minid: str = "0-0") -> bool:
        """Record ply ``record.ply`` of ``match``; False if that ply is already recorded or
        the game over.

        ``next_job`` is published only if the record was written, trimming the move-job
        stream's entries older than ``minid`` (roughly).
        """
        event = move_event(match.id, record, is_pass)
        return self._write(match.id, record.ply, (record.SerializeToString(),
                                                  event.SerializeToString()), next_job, minid,
                           byte_counters(match))

    def ask(self, job: engine_pb2.MoveJob, minid: str = "0-0") -> bool:
        """Publish the job for ply ``job.ply`` if that ply is the next one to record and the
        match is not over (a match's first move, or one resumed by another referee)."""
        return self._write(job.match_id, job.ply, None, job, minid, ["", ""])

    def _write(self, match_id: str, expected: int, record: tuple[bytes, bytes] | None,
               job: engine_pb2.MoveJob | None, minid: str, counters: list[str]) -> bool:
        written: list[bytes | int] = [1, *record] if record is not None else [0, b"", b""]
        job_fields = [] if job is None else [minid, *flat(move_job_fields(job))]
        done = self._write_ply(
            keys=[*match_keys(match_id, "moves", "events", "final"),
                  MOVE_STREAM if job is None else move_stream(job), *counters],
            args=[expected, *written, *job_fields],
        )
        return int(done) == 1

    def finish(self, finished: match_pb2.Match, plies: int | None) -> bool:
        """Write the result after exactly ``plies`` records (None: whatever is recorded, a
        cancellation); False if another write won. The finished header also goes to the
        finished-matches stream, which the ladder service follows, and a cancellation to
        the match's results stream, which wakes its referee and stops its workers."""
        event = match_pb2.MatchEvent(
            match_id=finished.id, ended=match_pb2.MatchEnded(result=finished.result))
        header = match_pb2.Match()
        header.CopyFrom(finished)
        del header.moves[:]
        done = self._finish(
            keys=[*match_keys(finished.id, "", "final", "moves", "events"), FINISHED_STREAM,
                  keys.match(finished.id, "results"), keys.user(finished.owner, "active"),
                  keys.user(finished.owner, "running"), keys.user(finished.owner, "parked"),
                  MATCH_STREAM, *byte_counters(finished), keys.UNFINISHED_MATCHES],
            args=[-1 if plies is None else plies, header.SerializeToString(),
                  event.SerializeToString(), finished.id, finished.config.ladder_id,
                  RESULTS_TTL_S, FINISHED_MAXLEN],
        )
        return int(done) == 1
