"""Follows finished matches and counts the ones that belong to ladders.

The referee appends ``{match_id, ladder_id}`` to ``arena:stream:finished`` when a match
ends. Every ladder service reads that stream through the consumer group ``ladders``, so
each entry goes to one of them, and acknowledges an entry only after its result is
counted. A delivery may repeat (a service dies after counting, before acknowledging; a
stale entry is reclaimed by another service): counting is idempotent (see
``LadderStore.count``), so a repeated delivery changes nothing.

Restart: the consumer name is stable (``--worker-id`` or ``ladder-<host>``), so a restarted
service first re-reads the entries it had been given but not acknowledged; entries held by
a consumer that never came back are reclaimed with XAUTOCLAIM after ``reclaim_idle_ms``.
The group starts at the beginning of the stream, so results finished while no ladder
service ran are counted too; ``reconcile`` runs now and then as a last safety net for
entries lost entirely (a trimmed stream).
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import redis
from arena.services.ladder.ladders import count_match, reconcile
from arena.services.ladder.store import LadderStore
from arena.services.referee.matches import MatchStore

from arena.errors import NotFoundError
from arena.v1 import ladder_pb2

log = logging.getLogger(__name__)

FINISHED_STREAM = "arena:stream:finished"
LADDER_GROUP = "ladders"


def default_consumer_name() -> str:
    return f"ladder-{socket.gethostname()}"


@dataclass
class FollowerConfig:
    consumer: str = field(default_factory=default_consumer_name)
    block_ms: int = 1000
    batch: int = 50
    reclaim_idle_ms: int = 60_000
    reconcile_every_s: float = 30.0
    unknown_match_grace_ms: int = 60_000


class ResultFollower:
    """Reads the finished-matches stream and counts ladder results; see the module doc."""

    def __init__(self, client: redis.Redis, config: FollowerConfig | None = None) -> None:
        self.client = client
        self.config = config or FollowerConfig()
        self.store = LadderStore(client)
        self.matches = MatchStore(client)
        self._configs: dict[str, ladder_pb2.LadderConfig] = {}  # immutable: safe to cache
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- lifecycle ----------------------------------------------------------------------

    def start(self) -> ResultFollower:
        self.ensure_group()
        self._thread = threading.Thread(target=self._run, name="ladder-follower", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def ensure_group(self) -> None:
        try:
            self.client.xgroup_create(FINISHED_STREAM, LADDER_GROUP, id="0", mkstream=True)
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    def _run(self) -> None:
        last_reconcile = 0.0
        while not self._stop.is_set():
            try:
                if time.monotonic() - last_reconcile >= self.config.reconcile_every_s:
                    self.reconcile_running()
                    last_reconcile = time.monotonic()
                self.poll_once()
            except redis.RedisError:
                log.exception("ladder follower: Redis error; retrying in a second")
                self._stop.wait(1.0)

    # --- one round ------------------------------------------------------------------------

    def poll_once(self) -> int:
        """Handle this consumer's unacknowledged entries, reclaimed stale ones, then new
        ones (blocking up to ``block_ms``); returns how many entries were handled."""
        handled = self._handle_batch(self._read("0"))
        handled += self._handle_batch(self._reclaim())
        handled += self._handle_batch(self._read(">", block=True))
        return handled

    def _read(self, from_id: str, block: bool = False) -> list[tuple[Any, Mapping[bytes, bytes]]]:
        reply: Any = self.client.xreadgroup(
            LADDER_GROUP,
            self.config.consumer,
            {FINISHED_STREAM: from_id},
            count=self.config.batch,
            block=self.config.block_ms if block else None,
        )
        entries: list[tuple[Any, Mapping[bytes, bytes]]] = []
        for _stream, items in reply or []:
            # A pending entry deleted from the stream comes back with no fields.
            entries.extend((entry_id, fields or {}) for entry_id, fields in items)
        return entries

    def _reclaim(self) -> list[tuple[Any, Mapping[bytes, bytes]]]:
        reply: Any = self.client.xautoclaim(
            FINISHED_STREAM,
            LADDER_GROUP,
            self.config.consumer,
            min_idle_time=self.config.reclaim_idle_ms,
            start_id="0-0",
            count=self.config.batch,
        )
        return [(entry_id, fields or {}) for entry_id, fields in reply[1]]

    def _handle_batch(self, entries: list[tuple[Any, Mapping[bytes, bytes]]]) -> int:
        for entry_id, fields in entries:
            outcome = self.handle(fields)
            # -2: the ladder does not list the match (yet: CreateLadder records a match id
            # just after creating the match). Keep the entry pending for a while, so the
            # next round sees it again, rather than drop a result that is about to count.
            if outcome == -2 and _age_ms(entry_id) < self.config.unknown_match_grace_ms:
                continue
            self.client.xack(FINISHED_STREAM, LADDER_GROUP, entry_id)
        return len(entries)

    def handle(self, fields: Mapping[bytes, bytes]) -> int:
        """Count the entry's match if it is a ladder's; the return value is ``count``'s, or
        0 for entries that are not about a ladder."""
        ladder_id = fields.get(b"ladder_id", b"").decode()
        match_id = fields.get(b"match_id", b"").decode()
        if not ladder_id or not match_id:
            return 0
        config = self._config(ladder_id)
        if config is None:
            return -1
        try:
            match = self.matches.header(match_id)
        except NotFoundError:
            return 0
        if match.config.ladder_id != ladder_id:
            return -2
        return count_match(self.store, config, match)

    def _config(self, ladder_id: str) -> ladder_pb2.LadderConfig | None:
        if ladder_id not in self._configs:
            try:
                self._configs[ladder_id] = self.store.get(ladder_id).config
            except NotFoundError:
                return None
        return self._configs[ladder_id]

    def reconcile_running(self) -> int:
        return sum(reconcile(self.store, ladder_id) for ladder_id in self.store.running_ids())


def _age_ms(entry_id: Any) -> int:
    """Milliseconds since a stream entry was added (its id starts with the add time)."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)
    return int(time.time() * 1000) - int(text.split("-")[0])
