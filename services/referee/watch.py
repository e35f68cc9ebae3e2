"""WatchMatch: the events recorded so far, then every new one until the match ends.

Each match has a stream of ``MatchEvent`` bytes (started, moves, passes, ended) written in
the same atomic steps as the records themselves, so a watcher that joins mid-game reads the
history with the same cursor it then blocks on: nothing is missed or seen twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import redis
from arena.services.common.protocol import keys
from arena.services.common.protocol.ledger import move_event
from arena.services.common.protocol.matches import FINISHED_STATES, MatchStore

from arena.games import game
from arena.v1 import match_pb2

MAX_WATCH_S = 24 * 3600


def watch_match(
    client: redis.Redis, match_id: str, is_active: Callable[[], bool], block_ms: int = 1000
) -> Iterator[match_pb2.MatchEvent]:
    store = MatchStore(client)
    store.header(match_id)  # NOT_FOUND before the stream starts
    cursor = "0"
    give_up = time.monotonic() + MAX_WATCH_S
    while is_active() and time.monotonic() < give_up:
        stream = keys.match(match_id, "events")
        reply: Any = client.xread({stream: cursor}, count=200, block=block_ms)
        if not reply:
            if cursor == "0" and store.header(match_id).status in FINISHED_STATES:
                yield from _synthesized(store.get(match_id))  # events expired or were lost
                return
            continue
        for _stream, entries in reply:
            for entry_id, fields in entries:
                cursor = entry_id.decode()
                event = match_pb2.MatchEvent.FromString(fields[b"pb"])
                yield event
                if event.WhichOneof("event") == "ended":
                    return


def _synthesized(match: match_pb2.Match) -> Iterator[match_pb2.MatchEvent]:
    header = match_pb2.Match()
    header.CopyFrom(match)
    del header.moves[:]
    yield match_pb2.MatchEvent(match_id=match.id, started=match_pb2.MatchStarted(match=header))
    played = game(match.config.game.kind)
    for record in match.moves:
        yield move_event(match.id, record, played.is_pass(record.move.square))
    yield match_pb2.MatchEvent(match_id=match.id, ended=match_pb2.MatchEnded(result=match.result))
