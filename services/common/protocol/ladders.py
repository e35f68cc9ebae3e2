"""Ladders in the durable Redis, and the atomic writes that schedule games and count results.

Key layout (see ``keys``): ``ladder`` (hash: ``info``, the ``LadderInfo`` as created, with
the bots resolved to exact versions; ``status``; counters ``games_done``, ``games_void``,
``games_total``, ``next_game``; ``sprt``, the final ``SprtState`` of an SPRT ladder that
reached a verdict; ``ended``, why the arena ended it; ``waiting``, why its next game could
not be created at the last try, present only while that holds and the ladder runs;
``closing``, ``closing_why``, ``closing_sprt``, present while its end is under way: see
``_BEGIN_END``), ``ladder_games`` (game index -> match id),
``ladder_members`` (match id -> game index), ``ladder_results`` (match id -> ``black,white,
score``, ``void`` for a game that produced no result), ``ladder_progress`` (stream),
``ALL_LADDERS``, ``RUNNING_LADDERS`` (kept by the scripts that keep each owner's set of
running ladders), ``LADDER_RESULTS_VERSION`` (raised by every count and deletion), and
``WAITING_LADDERS`` (the running ladders whose ``waiting`` is set, with their owners).

A ladder plays its games a few at a time: ``claim_games`` hands out the next game indices
while fewer than a bound are in flight; the ladder service creates each one's match through
the referee with an idempotency key made of the ladder and the index, then records it
(``record_game``). A service that dies between the two finds the index claimed but not
recorded (``unrecorded``) and creates it again: the key makes the referee return the same
match. A match id enters the results hash once, which makes counting exactly-once whatever
the number of deliveries or services. A game the referee refuses for now (the owner's quota
is full, no referee answers) stays claimed and unrecorded, and the refusal is kept as the
ladder's ``waiting`` (``set_waiting``: written only when it changes, with a ``waiting``
entry on the progress stream) until a game is created again or the ladder ends.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.indexes import OwnersIndex
from arena.services.common.protocol.requests import (
    REFUSED,
    CreateRequest,
    create_once,
    idempotent,
    made_for,
)

from arena.errors import NotFoundError
from arena.text import bounded, printable, shown
from arena.v1 import ladder_pb2

OWNER = "ladder"

PROGRESS_MAXLEN = 100_000
RUNNING = ladder_pb2.LADDER_STATUS_RUNNING
FINISHED = ladder_pb2.LADDER_STATUS_FINISHED
CANCELLED = ladder_pb2.LADDER_STATUS_CANCELLED
OPEN = (RUNNING, 0)  # a ladder's ``state`` while it runs and no end has begun
VOID = "void"
MAX_REPLAYS = 2  # a void game is played again at most this many times
MAX_WAITING_CHARS = 300  # of a ladder's ``waiting``: the referee's refusal, in one line


def new_ladder_id(now_ms: int) -> str:
    return f"L{now_ms:013d}-{secrets.token_hex(4)}"


LADDER_ID = re.compile(r"L[0-9]{13}-[0-9a-f]{8}")


def created_ms(ladder_id: str) -> int:
    """When the ladder of ``ladder_id`` (of ``LADDER_ID``'s form) was made, its score."""
    return int(ladder_id[1:14])


def now_ms() -> int:
    return int(time.time() * 1000)


# (idempotent) KEYS: ladder, all ladders, the owner's running ladders, the running ladders.
# ARGV: info bytes, games total, created ms, the running status, the most running ladders
# the owner may have (0: no limit). Refused (nothing written) when the owner has that many
# running already.
_CREATE_GUARD = """
local most = tonumber(ARGV[7])
if most > 0 and redis.call('SCARD', KEYS[4]) >= most then return '""" + REFUSED + """' end
"""
_CREATE = """
redis.call('HSET', KEYS[2], 'info', ARGV[3], 'status', ARGV[6], 'games_total', ARGV[4],
           'games_planned', ARGV[4], 'games_done', 0, 'games_void', 0, 'next_game', 0)
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[5], ARGV[1])
"""

# KEYS: ladder, games. ARGV: running, most games in flight, most to claim now.
# Hands out the next game indices while the ladder runs, is not ending, and fewer than
# ARGV[2] of its games are scheduled and not counted.
_CLAIM = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return {} end
if redis.call('HEXISTS', KEYS[1], 'closing') == 1 then return {} end
local total = tonumber(redis.call('HGET', KEYS[1], 'games_total'))
local nxt = tonumber(redis.call('HGET', KEYS[1], 'next_game'))
local done = tonumber(redis.call('HGET', KEYS[1], 'games_done'))
local claimed = {}
while nxt < total and nxt - done < tonumber(ARGV[2]) and #claimed < tonumber(ARGV[3]) do
  table.insert(claimed, nxt)
  nxt = nxt + 1
end
redis.call('HSET', KEYS[1], 'next_game', nxt)
return claimed
"""

# KEYS: an index of ladders (scored by creation time). ARGV: a ladder's creation time, its
# id, how many. The first ids of the index, newest first, older than that ladder (which
# need not be in it): those of the same millisecond are ordered by id, as the index does.
_PAGE_AFTER = """
local same = redis.call('ZCOUNT', KEYS[1], ARGV[1], ARGV[1])
local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[1], '-inf', 'LIMIT', 0,
                         tonumber(ARGV[3]) + same)
local older = {}
for _, id in ipairs(found) do
  if id < ARGV[2] and #older < tonumber(ARGV[3]) then table.insert(older, id) end
end
return older
"""

# The last writes of a ladder's end, shared by the scripts that end one: the local
# ``ladder``, ``progress``, ``waiting``, ``owners`` and ``running`` name its keys, ``id``
# and ``maxlen`` its id and the progress stream's bound, ``ended`` the status it ends with.
_ENDED = """
redis.call('HSET', ladder, 'status', ended)
redis.call('HDEL', ladder, 'waiting', 'closing', 'closing_why', 'closing_sprt')
redis.call('HDEL', waiting, id)
redis.call('SREM', owners, id)
redis.call('ZREM', running, id)
redis.call('XADD', progress, 'MAXLEN', '~', maxlen, '*', 'status', ended)
"""

# KEYS: ladder, members, results, progress, replays, results version, waiting ladders, the
# owner's running ladders, the running ladders.
# ARGV: match id, result record, running, finished, progress max length, 1 to replay a void
# game, the most replays of one game, ladder id.
# Returns 1 when counted, 0 when already counted, -1 for no such ladder, -2 for a match
# that is not one of the ladder's. A ladder that is ending (``closing``: see ``_BEGIN_END``)
# replays nothing and is not finished by its last count: its end does that.
_COUNT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local index = redis.call('HGET', KEYS[2], ARGV[1])
if not index then return -2 end
if redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[2]) == 0 then return 0 end
local open = redis.call('HGET', KEYS[1], 'status') == ARGV[3]
  and redis.call('HEXISTS', KEYS[1], 'closing') == 0
if string.sub(ARGV[2], -4) == 'void' then
  redis.call('HINCRBY', KEYS[1], 'games_void', 1)
  local planned = tonumber(redis.call('HGET', KEYS[1], 'games_planned'))
  local original = tonumber(index)
  if original >= planned then
    original = tonumber(redis.call('LINDEX', KEYS[5], original - planned))
  end
  local replays = redis.call('HINCRBY', KEYS[1], 'replays:' .. original, 1)
  if ARGV[6] == '1' and replays <= tonumber(ARGV[7]) and open then  -- none once it ends
    redis.call('RPUSH', KEYS[5], original)
    redis.call('HINCRBY', KEYS[1], 'games_total', 1)
  end
end
local done = redis.call('HINCRBY', KEYS[1], 'games_done', 1)
redis.call('INCR', KEYS[6])
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[5], '*', 'match_id', ARGV[1])
local total = tonumber(redis.call('HGET', KEYS[1], 'games_total'))
if done >= total and open then
  local ladder, progress, waiting, owners, running = KEYS[1], KEYS[4], KEYS[7], KEYS[8], KEYS[9]
  local id, maxlen, ended = ARGV[8], ARGV[5], ARGV[4]
""" + _ENDED + """
end
return 1
"""

# An end in two steps, so that the games it cancels are counted before it shows: the
# first step (``_BEGIN_END``) marks the running ladder ``closing`` with the status it will
# end with, why the arena ends it and an SPRT verdict (no game is claimed or replayed
# after it); its games not over are then cancelled and counted; the second step (``_END``)
# sets the status, ``ended`` and ``sprt``, and writes the progress stream's ``status``
# entry, on which watches end. A service that dies between the two leaves the ladder
# running and closing: the next scheduling round of any service ends it as it began.
#
# KEYS: ladder, waiting ladders. ARGV: running, the status it ends with, why the arena
# ends it ('' if its owner does), the final SPRT state ('' for none), ladder id.
# Returns the status the ladder ends with (this end's, or that of an end begun before and
# not done), 0 if it is not running.
_BEGIN_END = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
local begun = redis.call('HGET', KEYS[1], 'closing')
if begun then return tonumber(begun) end
redis.call('HSET', KEYS[1], 'closing', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'closing_why', ARGV[3]) end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'closing_sprt', ARGV[4]) end
redis.call('HDEL', KEYS[1], 'waiting')
redis.call('HDEL', KEYS[2], ARGV[5])
return tonumber(ARGV[2])
"""

# KEYS: ladder, progress, waiting ladders, the owner's running ladders, the running
# ladders. ARGV: running, progress max length, ladder id.
# Returns 1 when the ladder was running and closing and has now ended, 0 otherwise.
_END = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
local ended = redis.call('HGET', KEYS[1], 'closing')
if not ended then return 0 end
local why = redis.call('HGET', KEYS[1], 'closing_why')
if why then redis.call('HSET', KEYS[1], 'ended', why) end
local sprt = redis.call('HGET', KEYS[1], 'closing_sprt')
if sprt then redis.call('HSET', KEYS[1], 'sprt', sprt) end
local ladder, progress, waiting, owners, running = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, maxlen = ARGV[3], ARGV[2]
""" + _ENDED + """
return 1
"""

# KEYS: ladder, progress, waiting ladders. ARGV: running, why its next game waits ('' for
# nothing), progress max length, ladder id, owner. Writes only a change, and only while the
# ladder runs and is not ending (an ending ladder waits for nothing); a change adds a
# ``waiting`` entry to the progress stream and enters or leaves the ladder in the waiting
# ladders. Returns 1 when it changed, 0 otherwise.
_SET_WAITING = """
if redis.call('HGET', KEYS[1], 'status') ~= ARGV[1] then return 0 end
if redis.call('HEXISTS', KEYS[1], 'closing') == 1 then return 0 end
local old = redis.call('HGET', KEYS[1], 'waiting') or ''
if old == ARGV[2] then return 0 end
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], 'waiting')
  redis.call('HDEL', KEYS[3], ARGV[4])
else
  redis.call('HSET', KEYS[1], 'waiting', ARGV[2])
  redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'waiting', ARGV[2])
return 1
"""

@dataclass(frozen=True)
class ResultRecord:
    """A counted game: bot indices and black's score (None for a void game)."""

    black: int
    white: int
    score: float | None

    def encode(self) -> str:
        score = VOID if self.score is None else f"{self.score:g}"
        return f"{self.black},{self.white},{score}"

    @classmethod
    def decode(cls, text: str) -> ResultRecord:
        black, white, score = text.split(",")
        return cls(int(black), int(white), None if score == VOID else float(score))


class LadderStore:
    """Reads and writes ladders; every write that several services may race on is atomic."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._create = idempotent(client, _CREATE, _CREATE_GUARD)
        self._claim = client.register_script(_CLAIM)
        self._count = client.register_script(_COUNT)
        self._begin_end = client.register_script(_BEGIN_END)
        self._end = client.register_script(_END)
        self._set_waiting = client.register_script(_SET_WAITING)
        self._page_after = client.register_script(_PAGE_AFTER)
        self._running = OwnersIndex(client, keys.RUNNING_LADDERS, "ladders", keys.ALL_LADDERS)

    def made_for(self, request: CreateRequest) -> str:
        """The id of the ladder the same create request made ("" if none);
        AlreadyExistsError if a different request used its key."""
        return made_for(self.client, request)

    def create(self, info: ladder_pb2.LadderInfo, created_ms: int,
               request: CreateRequest | None = None, most_running: int = 0) -> str:
        """Store a new running ladder with no game scheduled yet; returns its id, the id
        the same ``request`` created earlier (AlreadyExistsError if a different one used
        its key), or ``REFUSED`` when its owner already has ``most_running`` running
        ladders (0: no limit)."""
        return create_once(self._create, request, info.id,
                           [keys.ladder(info.id), keys.ALL_LADDERS,
                            keys.user(info.owner, "ladders"), keys.RUNNING_LADDERS],
                           [info.SerializeToString(), info.games_total, created_ms, RUNNING,
                            most_running])

    def delete(self, ladder_id: str, owner: str, request: CreateRequest | None = None) -> None:
        """Forget a ladder entirely (its creation failed half-way), and the ``request``'s
        key that names it."""
        with self.client.pipeline(transaction=True) as pipe:
            if request and request.key:
                pipe.delete(request.key)
            pipe.zrem(keys.ALL_LADDERS, ladder_id)
            pipe.zrem(keys.RUNNING_LADDERS, ladder_id)
            pipe.hdel(keys.WAITING_LADDERS, ladder_id)
            pipe.srem(keys.user(owner, "ladders"), ladder_id)
            pipe.delete(*(keys.ladder(ladder_id, part) for part in
                          ("", "games", "members", "results", "progress", "replays")))
            pipe.incr(keys.LADDER_RESULTS_VERSION)
            pipe.execute()

    def claim_games(self, ladder_id: str, in_flight: int, most: int) -> list[int]:
        """The next game indices to schedule (see the module docstring)."""
        claimed: Any = self._claim(keys=[keys.ladder(ladder_id), keys.ladder(ladder_id, "games")],
                                   args=[RUNNING, in_flight, most])
        return [int(index) for index in claimed]

    def record_game(self, ladder_id: str, index: int, match_id: str) -> tuple[int, int]:
        """Record game ``index``'s match; returns the ladder's ``state`` then, read in the
        same transaction ((0, 0) if it is gone)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hsetnx(keys.ladder(ladder_id, "games"), str(index), match_id)
            pipe.hset(keys.ladder(ladder_id, "members"), match_id, str(index))
            pipe.hmget(keys.ladder(ladder_id), _STATE_FIELDS)
            *_, state = pipe.execute()
        return _state(state)

    def unrecorded(self, ladder_id: str) -> list[int]:
        """Game indices handed out whose match was never recorded (a service died)."""
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hget(keys.ladder(ladder_id), "next_game")
            pipe.hkeys(keys.ladder(ladder_id, "games"))
            handed, recorded = pipe.execute()
        have = {int(index) for index in recorded}
        return [index for index in range(int(handed or 0)) if index not in have]

    def games(self, ladder_id: str) -> dict[int, str]:
        """Game index -> match id of the games scheduled so far."""
        raw: Any = self.client.hgetall(keys.ladder(ladder_id, "games"))
        return {int(index): match_id.decode() for index, match_id in raw.items()}

    def get(self, ladder_id: str, with_games: bool = True) -> ladder_pb2.LadderInfo:
        """The ladder with its current status, counters and, ``with_games``, match ids (in
        game order: as many as the ladder has games, up to 20,000, so a caller that does not
        show them leaves them out)."""
        with self.client.pipeline(transaction=False) as pipe:
            pipe.hgetall(keys.ladder(ladder_id))
            if with_games:
                pipe.hgetall(keys.ladder(ladder_id, "games"))
            fields, *games = pipe.execute()
        return _decode_info(ladder_id, fields, games[0] if games else {})

    def snapshot(self, ladder_id: str) -> tuple[ladder_pb2.LadderInfo, bytes]:
        """The ladder without its match ids and the id of the newest progress entry its
        state includes, read in one transaction: following the progress stream after that
        id then neither repeats a counted result nor misses one (a count writes the state
        and its entry atomically).
        """
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hgetall(keys.ladder(ladder_id))
            pipe.xrevrange(keys.ladder(ladder_id, "progress"), count=1)
            fields, newest = pipe.execute()
        last: bytes = newest[0][0] if newest else b"0-0"
        return _decode_info(ladder_id, fields, {}), last

    def status(self, ladder_id: str) -> int:
        raw = self.client.hget(keys.ladder(ladder_id), "status")
        if raw is None:
            raise NotFoundError(f"no ladder {shown(ladder_id)}")
        return int(raw)

    def count(self, ladder_id: str, owner: str, match_id: str, record: ResultRecord,
              replay_void: bool = False) -> int:
        """Count one result once: 1 counted now, 0 counted before, -1 no ladder, -2 not
        one of this ladder's matches."""
        ladder_keys = [keys.ladder(ladder_id, part)
                       for part in ("", "members", "results", "progress", "replays")]
        ladder_keys += [keys.LADDER_RESULTS_VERSION, keys.WAITING_LADDERS,
                        keys.user(owner, "ladders"), keys.RUNNING_LADDERS]
        args: list[str | int] = [match_id, record.encode(), RUNNING, FINISHED, PROGRESS_MAXLEN,
                                 int(replay_void), MAX_REPLAYS, ladder_id]
        return int(self._count(keys=ladder_keys, args=args))

    def original_index(self, ladder_id: str, index: int, planned: int) -> int:
        """The planned game a game index plays (itself, or the game it replays)."""
        if index < planned:
            return index
        original = self.client.lindex(keys.ladder(ladder_id, "replays"), index - planned)
        if original is None:
            raise NotFoundError(f"ladder {ladder_id} has no game {index}")
        return int(original)

    def running_of(self, owner: str) -> int:
        """How many of ``owner``'s ladders run (the ``running_ladders`` quota's count)."""
        return int(self.client.scard(keys.user(owner, "ladders")))

    def begin_end(self, ladder_id: str, ended: int, why: str = "",
                  final: ladder_pb2.SprtState | None = None) -> int:
        """The first step of a running ladder's end (see ``_BEGIN_END``): it will end with
        status ``ended``; ``why``: the arena ends it (kept as its ``ended_because``, one line
        like a ``waiting``), not its owner; ``final``: an SPRT ladder's verdict. Returns the
        status it ends with: ``ended``, or that of an end begun before; 0 if it is not
        running."""
        return int(self._begin_end(
            keys=[keys.ladder(ladder_id), keys.WAITING_LADDERS],
            args=[RUNNING, ended, waiting_text(why) if why else "",
                  final.SerializeToString() if final else "", ladder_id]))

    def end(self, ladder_id: str, owner: str) -> bool:
        """The last step of an end begun by ``begin_end``; False if none was begun (or it
        was done already)."""
        return int(self._end(keys=self._ending_keys(ladder_id, owner), args=[
            RUNNING, PROGRESS_MAXLEN, ladder_id])) == 1

    def state(self, ladder_id: str) -> tuple[int, int]:
        """The ladder's status, and the status it will end with once an end has begun (0
        if none has), in one read: ``OPEN`` while it runs and no end has begun."""
        state = self.client.hmget(keys.ladder(ladder_id), _STATE_FIELDS)
        if state[0] is None:
            raise NotFoundError(f"no ladder {shown(ladder_id)}")
        return _state(state)

    def set_waiting(self, ladder_id: str, owner: str, why: str) -> bool:
        """Keep ``why`` the running ladder of ``owner`` waits for its next game ('' clears
        it), made one printable line of at most ``MAX_WAITING_CHARS``; True if that changed
        it (nothing is written otherwise)."""
        return int(self._set_waiting(keys=self._ending_keys(ladder_id, owner)[:3], args=[
            RUNNING, waiting_text(why), PROGRESS_MAXLEN, ladder_id, owner])) == 1

    def waiting_of(self, owners: set[str]) -> list[str]:
        """The running ladders of any of ``owners`` that wait for their next game."""
        return sorted(ladder_id for ladder_id, owner in self.waiting_owners().items()
                      if owner in owners)

    def waiting_owners(self) -> dict[str, str]:
        """Each running ladder that waits for its next game, and its owner."""
        raw: Any = self.client.hgetall(keys.WAITING_LADDERS)
        return {ladder_id.decode(): owner.decode(errors="replace")
                for ladder_id, owner in raw.items()}

    @staticmethod
    def _ending_keys(ladder_id: str, owner: str) -> list[str]:
        return [keys.ladder(ladder_id), keys.ladder(ladder_id, "progress"),
                keys.WAITING_LADDERS, keys.user(owner, "ladders"), keys.RUNNING_LADDERS]

    def planned_games(self, ladder_id: str) -> dict[str, int]:
        """Match id -> the planned game it plays, for the games scheduled so far (a replay
        of a void game plays the game it replays)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hgetall(keys.ladder(ladder_id, "members"))
            pipe.hget(keys.ladder(ladder_id), "games_planned")
            pipe.lrange(keys.ladder(ladder_id, "replays"), 0, -1)
            members, planned, replays = pipe.execute()
        originals = [int(original) for original in replays]

        def planned_game(index: int) -> int:
            return index if planned is None or index < int(planned) else \
                originals[index - int(planned)]

        return {match_id.decode(): planned_game(int(index)) for match_id, index in members.items()}

    def results(self, ladder_id: str) -> dict[str, ResultRecord]:
        raw: Any = self.client.hgetall(keys.ladder(ladder_id, "results"))
        return {key.decode(): ResultRecord.decode(value.decode()) for key, value in raw.items()}

    def uncounted(self, ladder_id: str) -> list[str]:
        """Match ids of the ladder whose result is not counted yet, in game order."""
        counted = set(_texts(self.client.hkeys(keys.ladder(ladder_id, "results"))))
        games = self.games(ladder_id)
        return [games[index] for index in sorted(games) if games[index] not in counted]

    def all_ids(self) -> list[str]:
        """Every ladder's id, oldest first."""
        return _texts(self.client.zrange(keys.ALL_LADDERS, 0, -1))

    def running_ids(self) -> list[str]:
        """Every running ladder's id (an ending one's too), oldest first."""
        return _texts(self.client.zrange(self.running_index(), 0, -1))

    def results_version(self) -> int | None:
        """A number that changes whenever any ladder counts a game or is deleted (None
        before the first): equal twice, no ladder's results changed in between."""
        raw: Any = self.client.get(keys.LADDER_RESULTS_VERSION)
        return None if raw is None else int(raw)

    def games_done(self, ids: list[str]) -> list[int | None]:
        """Each ladder's count of games done (None for a ladder that is gone), in one
        round trip."""
        return [None if done is None else int(done)
                for done in self._field_of_each(ids, "games_done")]

    def configs(self, ids: list[str]) -> dict[str, ladder_pb2.LadderConfig]:
        """The configs of those of ``ids`` that exist, in one round trip."""
        raw = self._field_of_each(ids, "info")
        return {ladder_id: ladder_pb2.LadderInfo.FromString(info).config
                for ladder_id, info in zip(ids, raw, strict=True) if info is not None}

    def results_of(self, ids: list[str]) -> dict[str, list[ResultRecord]]:
        """The counted results of each of ``ids``, in one round trip."""
        with self.client.pipeline(transaction=False) as pipe:
            for ladder_id in ids:
                pipe.hvals(keys.ladder(ladder_id, "results"))
            replies = pipe.execute()
        return {ladder_id: [ResultRecord.decode(value.decode()) for value in values]
                for ladder_id, values in zip(ids, replies, strict=True)}

    def _field_of_each(self, ids: list[str], field: str) -> list[Any]:
        with self.client.pipeline(transaction=False) as pipe:
            for ladder_id in ids:
                pipe.hget(keys.ladder(ladder_id), field)
            replies: list[Any] = pipe.execute()
        return replies

    def page(self, after: str, size: int, running_only: bool = False
             ) -> tuple[list[str], bool]:
        """Ladder ids newest first, older than the ladder ``after`` ("" for the newest;
        it need not exist any more), ``running_only``: of the running ladders; the flag
        says whether more follow. A ladder's id begins with its creation time, its score
        in both indexes, so the ids' order is the indexes' order: a ladder that ends
        between two pages of the running ones shifts nothing (an offset skipped one)."""
        index = self.running_index() if running_only else keys.ALL_LADDERS
        if not after:
            decoded = _texts(self.client.zrevrange(index, 0, size))
            return decoded[:size], len(decoded) > size
        found: Any = self._page_after(keys=[index],
                                      args=[created_ms(after), after, size + 1])
        decoded = _texts(found)
        return decoded[:size], len(decoded) > size

    def running_index(self) -> str:
        """The index of the running ladders (``indexes.OwnersIndex``: the first call in a
        process adds those an earlier version made)."""
        return self._running.key()


def waiting_text(why: str) -> str:
    """``why`` as a ladder's ``waiting``: one line of printable characters (a message may
    carry an engine's or a remote service's words), cut to ``MAX_WAITING_CHARS``."""
    return bounded(printable(" ".join(why.split())), MAX_WAITING_CHARS)


def _decode_info(ladder_id: str, fields: Any, games: Any) -> ladder_pb2.LadderInfo:
    if not fields:
        raise NotFoundError(f"no ladder {shown(ladder_id)}")
    info = ladder_pb2.LadderInfo.FromString(fields[b"info"])
    info.status = int(fields[b"status"])  # type: ignore[assignment]
    info.games_done = int(fields[b"games_done"])
    info.games_void = int(fields.get(b"games_void", 0))
    info.games_total = int(fields[b"games_total"])  # grows when void games are replayed
    if b"sprt" in fields:
        info.sprt.ParseFromString(fields[b"sprt"])
    # Written only while the ladder runs, cleared by the scripts that end it.
    info.waiting = fields.get(b"waiting", b"").decode(errors="replace")
    info.ended_because = fields.get(b"ended", b"").decode(errors="replace")
    ordered = sorted((int(index), match_id.decode()) for index, match_id in games.items())
    info.match_ids.extend(match_id for _index, match_id in ordered)
    return info


_STATE_FIELDS = ["status", "closing"]


def _state(fields: Any) -> tuple[int, int]:
    """A ladder's ``state`` from its ``_STATE_FIELDS`` ((0, 0) for a ladder that is gone)."""
    status, ending = fields
    return int(status or 0), int(ending or 0)


def _texts(replies: Any) -> list[str]:
    """Decode a list reply (this client returns bytes)."""
    return [raw.decode() for raw in replies]
