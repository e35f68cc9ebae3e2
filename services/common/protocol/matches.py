"""Matches in the durable Redis: stored at creation, read by id, listed by index, deleted.

Key layout: ``keys.match``, ``keys.match_moves``, ``keys.match_events``,
``keys.match_final`` and the indexes ``keys.match_index`` (by bot, ladder, game and owner:
sorted sets of ids, all scores 0, so they sort by id; ids start with the creation time in
milliseconds, so reverse lexical order is newest first and page tokens are plain ids),
``keys.ALL_MATCHES`` and ``keys.UNFINISHED_MATCHES`` (a match is in it from its creation
until the ledger finishes it). Game state changes only through ``ledger``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.indexes import OwnersIndex
from arena.services.common.protocol.keys import FINISHED_STREAM, MATCH_STREAM
from arena.services.common.protocol.limits import (
    CHARGE_LUA,
    FITS_LUA,
    counted_bytes,
    over_bytes,
)
from arena.services.common.protocol.requests import (
    REFUSED,
    CreateRequest,
    create_once,
    idempotent,
    made_for,
)
from arena.services.common.protocol.trees import delete_trees

from arena.errors import NotFoundError, ResourceExhaustedError
from arena.text import shown
from arena.v1 import engine_pb2, match_pb2

OWNER = "referee"

FINISHED_STATES = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)
UNFINISHED_STATES = (match_pb2.MATCH_STATUS_PENDING, match_pb2.MATCH_STATUS_RUNNING)

# The finished-matches stream keeps about this many entries. The ladder service counts a
# result within seconds, and its reconcile counts any whose entry it never read.
FINISHED_MAXLEN = 100_000
# The most match headers read in one round trip (``MatchStore.headers``).
HEADER_BATCH = 200


def new_match_id(now_ms: int | None = None) -> str:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{now_ms:013d}-{secrets.token_hex(4)}"


def byte_counters(match: match_pb2.Match) -> list[str]:
    """The byte counters a write of ``match`` adds to: its owner's and its own."""
    return [keys.owner_match_bytes(match.owner), keys.match(match.id, "bytes")]


def index_keys(match: match_pb2.Match, every: bool = False) -> list[str]:
    """The indexes listing ``match``. An imported record's players name no bot: it is
    never listed under a bot's name (anyone could otherwise put a made-up game in any
    bot's history). ``every``: the bots' too, whatever the match (to forget it from each
    index an earlier version may have put it in)."""
    found = [keys.ALL_MATCHES, keys.match_index("game", match.config.game.kind),
             keys.match_index("owner", match.owner)]
    if every or not match.imported_from:
        found += [keys.match_index("bot", match.black.name),
                  keys.match_index("bot", match.white.name)]
    if match.config.ladder_id:
        found.append(keys.match_index("ladder", match.config.ladder_id))
    return list(dict.fromkeys(found))


# The bytes a match takes (its header, moves and events) count against its owner's
# ``match_bytes`` quota as they are written: by these scripts and the ledger's (with
# ``CHARGE_LUA``), in the owner's counter and in the match's own ``bytes`` counter, which
# deleting the match gives back. A new match, played or imported, is refused before
# anything is written if its first bytes would take its owner past the limit (and one made
# while there was room is cancelled at its start if the limit is taken by then: the
# ledger's ``_ADMIT``).

# Before ``match_bytes`` only imports were counted, in a counter of their own
# (``keys.owner_import_bytes``) and with no counter per match: the scripts that read an
# owner's counter first add that one into it (the guard below too, refusing or not: the
# carry changes no count, only where it is kept).
_CARRY_LUA = """
local function carry(old, counter)
  local bytes = redis.call('GET', old)
  if bytes then
    redis.call('INCRBY', counter, bytes)
    redis.call('DEL', old)
  end
end
"""

# The guard of both creates. KEYS[5]: the owner's counter, KEYS[7] their old one. ARGV[3]:
# the header, ARGV[5]: the limit (0: none), from ARGV[6]: move records (an import's).
_FITS = FITS_LUA + CHARGE_LUA + _CARRY_LUA + """
carry(KEYS[7], KEYS[5])
local size = string.len(ARGV[3])
for i = 6, #ARGV do size = size + string.len(ARGV[i]) end
if not fits(KEYS[5], size, tonumber(ARGV[5])) then return '""" + REFUSED + """' end
"""

# (idempotent) KEYS: match, match stream, the owner's active set, the owner's byte counter,
# the match's, the owner's old counter, indexes (the unfinished matches' among them)...
# ARGV: match bytes, match job bytes, the limit. Stores a new match, counts its header,
# indexes it, counts it among its owner's unfinished matches and queues it for a referee.
_CREATE = """
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[1])
charge(KEYS[5], KEYS[6], size)
for i = 8, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
redis.call('XADD', KEYS[3], '*', 'pb', ARGV[4])
"""

# (idempotent) KEYS: match, final, moves, the owner's byte counter, the match's, the owner's
# old counter, indexes...
# ARGV: match bytes, '' (no job), the limit, move records... Stores a match that is already
# over (an imported record): header, moves and the final mark at once, indexed, its bytes
# counted; no job is queued and nothing about it changes afterwards.
_STORE_FINISHED = """
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], '1')
for i = 6, #ARGV do redis.call('RPUSH', KEYS[4], ARGV[i]) end
charge(KEYS[5], KEYS[6], size)
for i = 8, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
"""

# KEYS: match, moves, events, final, results, started, bytes, the owner's byte counter,
# their old one, indexes... ARGV: match id, '1' if imported. Forgets a match at once and
# gives its bytes back to its owner (once: a second delete finds nothing). A match stored
# before matches had a ``bytes`` counter was counted only if it was imported (its header
# and moves).
_DELETE = _CARRY_LUA + """
carry(KEYS[9], KEYS[8])
local size = tonumber(redis.call('GET', KEYS[7]) or '-1')
if size < 0 then
  size = 0
  if ARGV[2] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then
    size = redis.call('STRLEN', KEYS[1])
    for _, record in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
      size = size + string.len(record)
    end
  end
end
if size ~= 0 and redis.call('DECRBY', KEYS[8], size) < 0 then redis.call('SET', KEYS[8], 0) end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
for i = 10, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
"""

@dataclass
class MatchStore:
    """Creation, reading and deletion of matches (the ledger writes game state)."""

    client: redis.Redis

    def __post_init__(self) -> None:
        self._create = idempotent(self.client, _CREATE, guard=_FITS)
        self._store_finished = idempotent(self.client, _STORE_FINISHED, guard=_FITS)
        self._delete = self.client.register_script(_DELETE)
        self._unfinished = OwnersIndex(self.client, keys.UNFINISHED_MATCHES, "active",
                                       keys.ALL_MATCHES)

    def create(self, match: match_pb2.Match, request: CreateRequest | None = None,
               limit: int = 0) -> str:
        """Store ``match`` and queue it for a referee; returns its id, or the id of the
        match the same ``request`` created earlier (AlreadyExistsError if a different one
        used its key). ResourceExhaustedError if its header would take its owner's matches
        past ``limit`` bytes (0: no limit)."""
        job = engine_pb2.MatchJob(match_id=match.id).SerializeToString()
        header = match.SerializeToString()
        made = create_once(self._create, request, match.id,
                           [keys.match(match.id), MATCH_STREAM, keys.user(match.owner, "active"),
                            *byte_counters(match), keys.owner_import_bytes(match.owner),
                            *index_keys(match), keys.UNFINISHED_MATCHES],
                           [header, job, limit])
        if made == REFUSED:
            raise self._over(match.owner, limit, len(header))
        return made

    def _over(self, owner: str, limit: int, size: int) -> ResourceExhaustedError:
        return over_bytes(self.client, keys.owner_match_bytes(owner), "match_bytes", limit,
                          owner, "matches", size,
                          "delete some with `arena match delete` or `arena match prune`")

    def running(self, owner: str) -> int:
        """How many of ``owner``'s matches a referee admitted and runs."""
        return int(self.client.scard(keys.user(owner, "running")))

    def stored_bytes(self, owner: str) -> int:
        """What ``owner``'s matches take (their ``match_bytes`` counter)."""
        return counted_bytes(self.client, keys.owner_match_bytes(owner))

    def unfinished(self, owner: str) -> int:
        """How many of ``owner``'s matches are pending, parked or running."""
        return int(self.client.scard(keys.user(owner, "active")))

    def store_finished(self, match: match_pb2.Match, request: CreateRequest | None = None,
                       limit: int = 0) -> str:
        """Store a finished ``match`` with its moves (an imported record); returns its id,
        or the id the same ``request`` stored earlier (AlreadyExistsError if a different one
        used its key). ResourceExhaustedError if its owner's matches would pass ``limit``
        bytes (0: no limit)."""
        header = match_pb2.Match()
        header.CopyFrom(match)
        del header.moves[:]
        payloads = [header.SerializeToString(),
                    *(record.SerializeToString() for record in match.moves)]
        made = create_once(self._store_finished, request, match.id,
                           [keys.match(match.id), keys.match(match.id, "final"),
                            keys.match(match.id, "moves"), *byte_counters(match),
                            keys.owner_import_bytes(match.owner), *index_keys(match)],
                           [payloads[0], "", limit, *payloads[1:]])
        if made == REFUSED:
            raise self._over(match.owner, limit, sum(map(len, payloads)))
        return made

    def made_for(self, request: CreateRequest) -> str:
        """The id of the match the same create (or import) request made ("" if none);
        AlreadyExistsError if a different request used its key."""
        return made_for(self.client, request)

    def header(self, match_id: str) -> match_pb2.Match:
        payload: Any = self.client.get(keys.match(match_id))
        if payload is None:
            raise NotFoundError(f"no match {shown(match_id)}")
        return match_pb2.Match.FromString(payload)

    def records(self, match_id: str) -> list[match_pb2.MoveRecord]:
        raw: Any = self.client.lrange(keys.match(match_id, "moves"), 0, -1)
        return [match_pb2.MoveRecord.FromString(item) for item in raw]

    def get(self, match_id: str) -> match_pb2.Match:
        """The match with its moves so far: header and moves read in one transaction, so
        they agree (a header that says FINISHED has every move)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.get(keys.match(match_id))
            pipe.lrange(keys.match(match_id, "moves"), 0, -1)
            payload, raw = pipe.execute()
        if payload is None:
            raise NotFoundError(f"no match {shown(match_id)}")
        match = match_pb2.Match.FromString(payload)
        match.moves.extend(match_pb2.MoveRecord.FromString(item) for item in raw)
        return match

    def headers(self, index: str, after: str = "", first: int = HEADER_BATCH,
                ) -> Iterator[tuple[str, match_pb2.Match | None]]:
        """The match ids of an index, newest first, strictly older than ``after``, each
        with its header (None: deleted since the id was read). Read in batches, each one
        range of the index and one MGET of their headers: ``first`` (what the caller
        expects to need), then twice as many each time, up to ``HEADER_BATCH``."""
        upper = f"({after}" if after else "+"
        batch = max(1, min(first, HEADER_BATCH))
        while True:
            found: Any = self.client.zrevrangebylex(index, upper, "-", start=0, num=batch)
            if not found:
                return
            ids = [raw.decode() for raw in found]
            payloads: Any = self.client.mget([keys.match(match_id) for match_id in ids])
            for match_id, payload in zip(ids, payloads, strict=True):
                yield match_id, None if payload is None else match_pb2.Match.FromString(payload)
            if len(found) < batch:
                return
            upper = f"({ids[-1]}"
            batch = min(2 * batch, HEADER_BATCH)

    def unfinished_index(self) -> str:
        """The index of the unfinished matches (``indexes.OwnersIndex``: the first call in
        a process adds those an earlier version made)."""
        return self._unfinished.key()

    def delete(self, match: match_pb2.Match, cache: redis.Redis | None) -> None:
        """Forget a finished match: header, moves, events, streams, indexes and trees."""
        plies = [record.ply for record in self.records(match.id) if record.has_tree]
        self._delete(keys=[keys.match(match.id), keys.match(match.id, "moves"),
                           keys.match(match.id, "events"), keys.match(match.id, "final"),
                           keys.match(match.id, "results"), keys.match(match.id, "started"),
                           keys.match(match.id, "bytes"), keys.owner_match_bytes(match.owner),
                           keys.owner_import_bytes(match.owner),
                           *index_keys(match, every=True)],
                     args=[match.id, "1" if match.imported_from else ""])
        if cache is not None:
            delete_trees(cache, match.id, plies)

    def announce_deleted(self, owner: str, deleted: int) -> None:
        """Say on the finished-matches stream that ``deleted`` matches of ``owner`` are gone
        (an entry with ``owner`` and ``deleted``, no ``match_id``): their bytes are given
        back, and the ladder service, which follows that stream, tries the owner's waiting
        ladders again at once (one may wait for room under ``match_bytes``) instead of at
        its next check of every ladder. Called once per owner and call, after the
        deletions."""
        self.client.xadd(FINISHED_STREAM, {"owner": owner, "deleted": deleted},
                         maxlen=FINISHED_MAXLEN, approximate=True)
