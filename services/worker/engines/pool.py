"""A worker's warm engine processes: one per engine spec (an engine with its options), kept
across moves and games. When the pool is full, the owner who holds the most processes
makes room: their least recently used is stopped (``EnginePool._make_room``).

A process is started on first use and replaced when a failure killed it (timeout, crash,
garbage, a limit), when it died between moves, or when it has used most of its lifetime
CPU seconds (so that the limit never lands in the middle of a move).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.services.worker.engines.catalog import EngineSpec
from arena.services.worker.engines.client import (
    EngineAnswer,
    PlayLimits,
    ProtocolClient,
    Stretch,
)
from arena.services.worker.engines.gomocup import GomocupClient
from arena.services.worker.engines.gtp import GtpClient
from arena.services.worker.engines.nboard import NboardClient
from arena.services.worker.engines.sandbox import Sandbox

CLIENTS: dict[str, type[ProtocolClient[Any]]] = {"nboard": NboardClient, "gtp": GtpClient,
                                                 "gomocup": GomocupClient}
DEFAULT_CAPACITY = 4
# A process past this share of its CPU seconds is replaced before its next move.
RECYCLE_CPU_SHARE = 0.9


@dataclass
class PoolStats:
    moves: int = 0  # moves asked for
    reused: int = 0  # moves a process that was already running answered
    starts: int = 0  # processes started
    restarts: int = 0  # of those, replacing one that failed or died
    evictions: int = 0  # stopped to make room
    recycled: int = 0  # replaced near their CPU-seconds limit

    @property
    def reuse_rate(self) -> float:
        return self.reused / self.moves if self.moves else 0.0


@dataclass
class _Slot:
    spec: EngineSpec
    client: ProtocolClient[Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    fresh: bool = False  # started by ``ready`` for the next move: not a reuse
    owner: str = ""  # whose move used it last (``MoveJob.owner``)
    # The engine's CPU share, kept across its processes: one started on a busy machine
    # is told the time its predecessor was; the first, from a probe of the load.
    stretch: Stretch | None = None


class EnginePool:
    """Plays moves with warm engine processes; ``close`` stops them all."""

    def __init__(self, sandbox: Sandbox | None = None, capacity: int = DEFAULT_CAPACITY
                 ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, got {capacity}")
        self.sandbox = sandbox if sandbox is not None else Sandbox()
        self.capacity = capacity
        self.stats = PoolStats()
        self._slots: OrderedDict[EngineSpec, _Slot] = OrderedDict()
        self._lock = threading.Lock()

    def ready(self, spec: EngineSpec, position_text: str = "",
              history: Sequence[int] = (), owner: str = "") -> None:
        """Start the engine now if no sound process is waiting, and set it up for the move
        in ``position_text`` if one is given (``ProtocolClient.set_up``; raises like
        ``play``): a worker calls this before a move's clock starts, so that starting an
        engine, its handshake and its set-up are never counted as the bot's time.
        ``owner``: whose move it is (the pool makes room among an owner's own first)."""
        slot = self._slot(spec, owner)
        with slot.lock:
            client = slot.client
            if client is None or not client.alive or self._worn_out(client):
                client = self._ready_client(slot)
                slot.fresh = True
            if position_text:
                client.set_up(position_text, history)

    def play(self, spec: EngineSpec, position_text: str, history: Sequence[int],
             limits: PlayLimits, owner: str = "") -> EngineAnswer:
        """The engine's move (see ``ProtocolClient.play``): raises ``EngineFailure``, or
        ``ValueError`` for a position the engine cannot be asked about."""
        slot = self._slot(spec, owner)
        with slot.lock:
            with self._lock:
                self.stats.moves += 1
            client = self._ready_client(slot)
            return client.play(position_text, history, limits)

    def _ready_client(self, slot: _Slot) -> ProtocolClient[Any]:
        client = slot.client
        if client is not None and client.alive and not self._worn_out(client):
            with self._lock:
                self.stats.reused += 0 if slot.fresh else 1
            slot.fresh = False
            return client
        if client is not None:
            worn_out = client.alive  # alive here means: past its CPU share
            client.close()
            with self._lock:
                if worn_out:
                    self.stats.recycled += 1
                else:
                    self.stats.restarts += 1
        slot.client = None
        if slot.stretch is None:  # before the engine starts: its start is no load
            slot.stretch = Stretch.probed()
        slot.client = CLIENTS[slot.spec.protocol].start(slot.spec, self.sandbox)
        slot.client.stretch = slot.stretch
        with self._lock:
            self.stats.starts += 1
        return slot.client

    @staticmethod
    def _worn_out(client: ProtocolClient[Any]) -> bool:
        used = client.process.cpu_seconds()
        return used >= RECYCLE_CPU_SHARE * client.spec.limits.cpu_s

    def _slot(self, spec: EngineSpec, owner: str) -> _Slot:
        with self._lock:
            slot = self._slots.get(spec)
            if slot is None:
                self._make_room(owner)
                slot = self._slots[spec] = _Slot(spec)
            self._slots.move_to_end(spec)
            slot.owner = owner
            return slot

    def _make_room(self, owner: str) -> None:
        """Stop processes that are not busy until there is room for one more of
        ``owner``'s (under the pool lock): the least recently used of the owner who holds
        the most, counting the one to come. Least recently used alone, one user cycling
        through bots that differ only in their options stopped everyone's warm engines:
        another user's next move then waited for a fresh start (a 300 ms match took 44.5 s
        instead of 13-18.6 s)."""
        held = Counter(slot.owner for slot in self._slots.values())
        held[owner] += 1
        # most held first; a stable sort keeps the least recently used first within each
        for spec, slot in sorted(self._slots.items(), key=lambda item: -held[item[1].owner]):
            if len(self._slots) < self.capacity:
                return
            if not slot.lock.acquire(blocking=False):
                continue
            try:
                if slot.client is not None:
                    slot.client.close()
                    self.stats.evictions += 1
                del self._slots[spec]
            finally:
                slot.lock.release()

    def stop_engine(self, name: str) -> None:
        """Stop the processes of engine ``name`` (with any options) that are not busy: its
        files changed on disk, so the build they run is no longer played (a busy one is
        refused its next move before it could play it)."""
        with self._lock:
            for spec, slot in list(self._slots.items()):
                if spec.name != name or not slot.lock.acquire(blocking=False):
                    continue
                try:
                    if slot.client is not None:
                        slot.client.close()
                    del self._slots[spec]
                finally:
                    slot.lock.release()

    def running(self) -> list[int]:
        """The pids of the engine processes alive now."""
        with self._lock:
            clients = [slot.client for slot in self._slots.values()]
        return [c.process.pid for c in clients if c is not None and c.alive]

    def close(self) -> None:
        with self._lock:
            slots, self._slots = list(self._slots.values()), OrderedDict()
        for slot in slots:
            with slot.lock:
                if slot.client is not None:
                    slot.client.close()
                    slot.client = None
