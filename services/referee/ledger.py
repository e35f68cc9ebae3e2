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
from arena.services.referee.delivery import FINISHED_STREAM, MOVE_STREAM, move_job_fields
from arena.services.referee.matches import events_key, final_key, match_key, moves_key

from arena.v1 import engine_pb2, match_pb2

# KEYS: match, final, events. ARGV: running match bytes, started event bytes.
_START = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if redis.call('XLEN', KEYS[3]) == 0 then redis.call('XADD', KEYS[3], '*', 'pb', ARGV[2]) end
return 1
"""

# KEYS: moves, events, final, move-job stream. ARGV: ply, record bytes, event bytes, then
# the move-job stream's trim point and the next ply's move-job entry fields (none: no job).
# Publishing the next job in the same script saves a round trip per move, and a job is never
# published for a ply whose record lost a race.
_APPEND = """
if redis.call('EXISTS', KEYS[3]) == 1 then return -1 end
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('XADD', KEYS[2], '*', 'pb', ARGV[3])
if #ARGV > 4 then
  redis.call('XADD', KEYS[4], 'MINID', '~', ARGV[4], '*', unpack(ARGV, 5))
end
return 1
"""

# KEYS: match, final, moves, events, finished stream.
# ARGV: plies judged, finished match bytes, ended event bytes, match id, ladder id.
_FINISH = """
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[2], '1')
redis.call('SET', KEYS[1], ARGV[2])
redis.call('XADD', KEYS[4], '*', 'pb', ARGV[3])
redis.call('XADD', KEYS[5], '*', 'match_id', ARGV[4], 'ladder_id', ARGV[5])
return 1
"""


@dataclass
class Ledger:
    client: redis.Redis

    def __post_init__(self) -> None:
        self._start = self.client.register_script(_START)
        self._append = self.client.register_script(_APPEND)
        self._finish = self.client.register_script(_FINISH)

    def start(self, running: match_pb2.Match) -> bool:
        """Store the RUNNING header and the started event (once); False if finished."""
        event = match_pb2.MatchEvent(
            match_id=running.id, started=match_pb2.MatchStarted(match=running))
        done = self._start(
            keys=[match_key(running.id), final_key(running.id), events_key(running.id)],
            args=[running.SerializeToString(), event.SerializeToString()],
        )
        return int(done) == 1

    def append(self, match_id: str, record: match_pb2.MoveRecord, is_pass: bool,
               next_job: engine_pb2.MoveJob | None = None, minid: str = "0-0") -> bool:
        """Record ply ``record.ply``; False if that ply is already recorded or the game over.

        ``next_job`` is published on the move-job stream only if the record was written,
        trimming the stream's entries older than ``minid`` (roughly).
        """
        if is_pass:
            event = match_pb2.MatchEvent(match_id=match_id)
            getattr(event, "pass").CopyFrom(match_pb2.PassEvent(ply=record.ply,
                                                               color=record.color))
        else:
            event = match_pb2.MatchEvent(match_id=match_id, move=record)
        job_fields = [] if next_job is None else [
            minid, *(part for pair in move_job_fields(next_job).items() for part in pair)]
        done = self._append(
            keys=[moves_key(match_id), events_key(match_id), final_key(match_id), MOVE_STREAM],
            args=[record.ply, record.SerializeToString(), event.SerializeToString(),
                  *job_fields],
        )
        return int(done) == 1

    def finish(self, finished: match_pb2.Match, plies: int) -> bool:
        """Write the result after exactly ``plies`` records; False if another write won."""
        event = match_pb2.MatchEvent(
            match_id=finished.id, ended=match_pb2.MatchEnded(result=finished.result))
        done = self._finish(
            keys=[match_key(finished.id), final_key(finished.id), moves_key(finished.id),
                  events_key(finished.id), FINISHED_STREAM],
            args=[plies, finished.SerializeToString(), event.SerializeToString(), finished.id,
                  finished.config.ladder_id],
        )
        return int(done) == 1
