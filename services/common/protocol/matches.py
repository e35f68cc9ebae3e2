"""Matches in the durable Redis: stored at creation, read by id, listed by index, deleted.

Key layout: ``keys.match``, ``keys.match_moves``, ``keys.match_events``,
``keys.match_final`` and the indexes ``keys.match_index`` (by bot, ladder, game and owner:
sorted sets of ids, all scores 0, so they sort by id; ids start with the creation time in
milliseconds, so reverse lexical order is newest first and page tokens are plain ids).
Game state changes only through ``ledger``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.keys import MATCH_STREAM
from arena.services.common.protocol.limits import FITS_LUA, over_bytes
from arena.services.common.protocol.requests import REFUSED, create_once, idempotent, made_for
from arena.services.common.protocol.trees import delete_trees

from arena.errors import NotFoundError
from arena.v1 import engine_pb2, match_pb2

OWNER = "referee"

FINISHED_STATES = (match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED)


def new_match_id(now_ms: int | None = None) -> str:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{now_ms:013d}-{secrets.token_hex(4)}"


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


# (idempotent) KEYS: match, match stream, the owner's active set, indexes...
# ARGV: match bytes, match job bytes. Stores a new match, indexes it, counts it among its
# owner's unfinished matches and queues it for a referee.
_CREATE = """
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[4], ARGV[1])
for i = 5, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
redis.call('XADD', KEYS[3], '*', 'pb', ARGV[4])
"""

# (idempotent) KEYS: match, final, moves, the owner's imported bytes, indexes... ARGV:
# match bytes, the owner's limit (0: none), move records... Stores a match that is already
# over (an imported record): header, moves and the final mark at once, indexed, its bytes
# counted against its owner's; no job is queued and nothing about it changes afterwards.
# Refused before anything is written if the owner's bytes would pass the limit.
# The guard (``_FITS``) counts the size; the body, run after it, counts it in.
_FITS = FITS_LUA + """
local size = string.len(ARGV[3])
for i = 5, #ARGV do size = size + string.len(ARGV[i]) end
if not fits(KEYS[5], size, tonumber(ARGV[4])) then return '""" + REFUSED + """' end
"""
_STORE_FINISHED = """
redis.call('SET', KEYS[2], ARGV[3])
redis.call('SET', KEYS[3], '1')
for i = 5, #ARGV do redis.call('RPUSH', KEYS[4], ARGV[i]) end
redis.call('INCRBY', KEYS[5], size)
for i = 6, #KEYS do redis.call('ZADD', KEYS[i], 0, ARGV[1]) end
"""

# KEYS: match, moves, events, final, results, started, the owner's imported bytes ('' for
# a played match), indexes... ARGV: match id. Forgets a match at once; an imported one
# gives its bytes back to its owner (once: a second delete finds nothing).
_DELETE = """
if KEYS[7] ~= '' and redis.call('EXISTS', KEYS[1]) == 1 then
  local size = redis.call('STRLEN', KEYS[1])
  for _, record in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    size = size + string.len(record)
  end
  if redis.call('DECRBY', KEYS[7], size) < 0 then redis.call('SET', KEYS[7], 0) end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
for i = 8, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
"""


@dataclass
class MatchStore:
    """Creation, reading and deletion of matches (the ledger writes game state)."""

    client: redis.Redis

    def __post_init__(self) -> None:
        self._create = idempotent(self.client, _CREATE)
        self._store_finished = idempotent(self.client, _STORE_FINISHED, guard=_FITS)
        self._delete = self.client.register_script(_DELETE)

    def create(self, match: match_pb2.Match, request_id: str = "") -> str:
        """Store ``match`` and queue it for a referee; returns its id, or the id of the
        match an earlier call with the same ``request_id`` (per owner) created."""
        request = keys.request("match", match.owner, request_id) if request_id else ""
        job = engine_pb2.MatchJob(match_id=match.id).SerializeToString()
        return create_once(self._create, request, match.id,
                           [keys.match(match.id), MATCH_STREAM, keys.user(match.owner, "active"),
                            *index_keys(match)],
                           [match.SerializeToString(), job])

    def unfinished(self, owner: str) -> int:
        """How many of ``owner``'s matches are pending, parked or running."""
        return int(self.client.scard(keys.user(owner, "active")))

    def store_finished(self, match: match_pb2.Match, request_id: str = "",
                       limit: int = 0) -> str:
        """Store a finished ``match`` with its moves (an imported record); returns its id,
        or the id an earlier call with the same ``request_id`` (per owner) stored.
        ResourceExhaustedError if its owner's imported matches would pass ``limit`` bytes
        (0: no limit)."""
        request = keys.request("match-import", match.owner, request_id) if request_id else ""
        header = match_pb2.Match()
        header.CopyFrom(match)
        del header.moves[:]
        payloads = [header.SerializeToString(),
                    *(record.SerializeToString() for record in match.moves)]
        made = create_once(self._store_finished, request, match.id,
                           [keys.match(match.id), keys.match(match.id, "final"),
                            keys.match(match.id, "moves"), keys.owner_import_bytes(match.owner),
                            *index_keys(match)],
                           [payloads[0], limit, *payloads[1:]])
        if made == REFUSED:
            raise over_bytes(self.client, keys.owner_import_bytes(match.owner), "import_bytes",
                             limit, match.owner, "imported matches", sum(map(len, payloads)),
                             "delete some with `arena match delete`")
        return made

    def made_for(self, owner: str, request_id: str,
                 kind: Literal["match", "match-import"] = "match") -> str:
        """The id of the match a create (or import) request with this key made ("" if
        none)."""
        return made_for(self.client, keys.request(kind, owner, request_id))

    def header(self, match_id: str) -> match_pb2.Match:
        payload: Any = self.client.get(keys.match(match_id))
        if payload is None:
            raise NotFoundError(f"no match {match_id!r}")
        return match_pb2.Match.FromString(payload)

    def records(self, match_id: str) -> list[match_pb2.MoveRecord]:
        raw: Any = self.client.lrange(keys.match(match_id, "moves"), 0, -1)
        return [match_pb2.MoveRecord.FromString(item) for item in raw]

    def get(self, match_id: str) -> match_pb2.Match:
        """The match with its moves so far."""
        # Read the moves first: a header that says FINISHED then always has every move.
        records = self.records(match_id)
        match = self.header(match_id)
        if match.status in FINISHED_STATES:
            records = self.records(match_id)
        match.moves.extend(records)
        return match

    def ids(self, index: str, after: str = "", batch: int = 200) -> Iterator[str]:
        """Match ids of an index, newest first, strictly older than ``after``."""
        upper = f"({after}" if after else "+"
        while True:
            found: Any = self.client.zrevrangebylex(index, upper, "-", start=0, num=batch)
            for raw in found:
                yield raw.decode()
            if len(found) < batch:
                return
            upper = f"({found[-1].decode()}"

    def headers(self, index: str, after: str = "",
                ) -> Iterator[tuple[str, match_pb2.Match | None]]:
        """``ids`` with each match's header (None: deleted since the id was read)."""
        for match_id in self.ids(index, after):
            try:
                yield match_id, self.header(match_id)
            except NotFoundError:
                yield match_id, None

    def delete(self, match: match_pb2.Match, cache: redis.Redis | None) -> None:
        """Forget a finished match: header, moves, events, streams, indexes and trees."""
        plies = [record.ply for record in self.records(match.id) if record.has_tree]
        counted = keys.owner_import_bytes(match.owner) if match.imported_from else ""
        self._delete(keys=[keys.match(match.id), keys.match(match.id, "moves"),
                           keys.match(match.id, "events"), keys.match(match.id, "final"),
                           keys.match(match.id, "results"), keys.match(match.id, "started"),
                           counted, *index_keys(match, every=True)], args=[match.id])
        if cache is not None:
            delete_trees(cache, match.id, plies)
