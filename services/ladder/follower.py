"""Follows finished matches, counts the ladders' results, and keeps the ladders' games
coming.

The referee's ledger appends every finished match (its header, result included) to the
finished-matches stream. Every ladder service reads that stream through the consumer group
``ladders``, so each entry goes to one of them, and acknowledges an entry only after its
result is counted. A delivery may repeat (a service dies after counting, before
acknowledging; a stale entry is reclaimed by another service): counting is idempotent, so
a repeated delivery changes nothing. After each batch the ladders whose games finished get
their next games, and so do the waiting ladders (``LadderInfo.waiting``) of the owners of
any match that finished or of matches deleted (the referee adds an entry with ``owner``
and ``deleted`` after DeleteMatch and PruneMatches): a ladder held back by its owner's
quota goes on as soon as one of the owner's other matches ends, or as soon as the owner
makes room under ``match_bytes``, not at the next check. Now and then every running ladder
is checked against the referee (``Ladders.reconcile``) as a last safety net for entries
lost entirely.

Restart: the consumer name is stable (``--instance`` or ``ladder-<host>``), so a restarted
service first re-reads the entries it had been given but not acknowledged; entries held by
a consumer that never came back are reclaimed after ``reclaim_idle_ms``. The group starts
at the beginning of the stream, so results finished while no ladder service ran count too.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

import redis
from arena.services.common.protocol.keys import FINISHED_STREAM, LADDER_GROUP
from arena.services.common.protocol.streams import (
    Entry,
    StreamConsumer,
    consumer_name,
    entry_age_ms,
)
from arena.services.ladder.ladders import Ladders
from google.protobuf.message import DecodeError

from arena.errors import ArenaError, InvalidArgumentError, NotFoundError
from arena.v1 import match_pb2

log = logging.getLogger(__name__)


@dataclass
class FollowerConfig:
    consumer: str = ""
    block_ms: int = 1000
    batch: int = 50
    reclaim_idle_ms: int = 60_000
    reconcile_every_s: float = 30.0
    unknown_match_grace_ms: int = 60_000


class ResultFollower:
    """Reads the finished-matches stream, counts ladder results, schedules next games."""

    def __init__(self, client: redis.Redis, ladders: Ladders,
                 config: FollowerConfig | None = None) -> None:
        self.ladders = ladders
        self.config = config or FollowerConfig()
        consumer = consumer_name("ladder", self.config.consumer, stable=True)
        self.finished = StreamConsumer(client, FINISHED_STREAM, LADDER_GROUP, consumer)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> ResultFollower:
        self._thread = threading.Thread(target=self._run, name="ladder-follower", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def _run(self) -> None:
        if not self.finished.wait_for_group(self._stop):
            return
        last_reconcile = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() - last_reconcile >= self.config.reconcile_every_s:
                    self.reconcile_running()
                    last_reconcile = time.monotonic()
                self.poll_once()
            except (redis.RedisError, ArenaError) as exc:
                log.warning("ladder follower: %s; retrying in a second", exc)
                self._stop.wait(1.0)

    def poll_once(self) -> int:
        """Handle this consumer's unacknowledged entries, reclaimed stale ones, then new
        ones (blocking up to ``block_ms``); returns how many entries were handled."""
        entries = self.finished.read(self.config.batch, pending=True)
        entries += self.finished.reclaim(self.config.reclaim_idle_ms, self.config.batch)
        entries += self.finished.read(self.config.batch, block_ms=self.config.block_ms)
        ladders = {ladder_id for entry in entries if (ladder_id := self.handle(entry))}
        owners = {owner for entry in entries if (owner := _owner(entry))}
        if owners:
            ladders.update(self.ladders.store.waiting_of(owners))
        self.ladders.schedule_each(sorted(ladders))
        return len(entries)

    def handle(self, entry: Entry) -> str:
        """Count the entry's match if it is a ladder's, then acknowledge it; returns the
        ladder id ("" for a match that is not a ladder's)."""
        ladder_id = entry.fields.get(b"ladder_id", b"").decode(errors="replace")
        match = self._match(entry) if ladder_id else None
        if match is not None and self.ladders.count(match) == -2 and \
                entry_age_ms(entry.entry_id) < self.config.unknown_match_grace_ms:
            # The ladder does not list the match yet: its service records a game just
            # after the referee creates it. Keep the entry pending; the next round sees it.
            return ""
        self.finished.ack(entry.entry_id)
        return ladder_id

    def _match(self, entry: Entry) -> match_pb2.Match | None:
        """The finished match an entry announces (None: garbage, or a match that is gone)."""
        payload = entry.fields.get(b"pb")
        try:
            if payload:
                return match_pb2.Match.FromString(payload)
            # An entry written before the header travelled with it: ask the referee.
            return self.ladders.referee.get_match(
                entry.fields.get(b"match_id", b"").decode(errors="replace"))
        except (NotFoundError, InvalidArgumentError, DecodeError) as exc:
            log.warning("skipping finished-match entry %s: %s", entry.entry_id, exc)
            return None

    def reconcile_running(self) -> int:
        running = self.ladders.store.running_ids()
        counted = sum(self.ladders.reconcile(ladder_id) for ladder_id in running)
        self.ladders.schedule_each(running)
        return counted


def _owner(entry: Entry) -> str:
    """The owner of the match an entry announces finished, or of the matches it announces
    deleted ("" if the entry does not say)."""
    deleted_by = entry.fields.get(b"owner")
    if deleted_by is not None:
        return deleted_by.decode(errors="replace")
    try:
        return match_pb2.Match.FromString(entry.fields.get(b"pb", b"")).owner
    except DecodeError:
        return ""
