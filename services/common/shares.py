"""Shares of a bounded resource: what each holder has open, against a total and a
per-holder share. The gRPC servers count live streams with it (``server.StreamGate``),
the web gateway its viewers' live pages (``web.live``), the analysis pool each user's
searches. ``FairSlots`` queues callers for a few slots in the order they came."""

from __future__ import annotations

import threading
import time
from collections import deque
from enum import Enum


class Refusal(Enum):
    SHARE = "the holder has its share open"
    TOTAL = "everything is taken"


class Shares:
    """What each holder has open, at most its share, and all together at most ``total``
    (None: no total; the holders' shares are the only bound)."""

    def __init__(self, total: int | None = None) -> None:
        self.total = total
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}

    def take(self, holder: str, share: int) -> Refusal | None:
        """Count one more for ``holder`` (at most ``share`` at once); None when taken."""
        with self._lock:
            held = self._held.get(holder, 0)
            if held >= share:
                return Refusal.SHARE
            if self.total is not None and sum(self._held.values()) >= self.total:
                return Refusal.TOTAL
            self._held[holder] = held + 1
            return None

    def give_back(self, holder: str) -> None:
        with self._lock:
            held = self._held.pop(holder) - 1
            if held:
                self._held[holder] = held


class FairSlots:
    """``capacity`` slots handed out first come, first served: a caller that waits is
    never overtaken by one that came later (``threading.Semaphore`` lets a newcomer take a
    slot freed while others wait). The analysis pool uses it, beside a per-user share of
    ``Shares``, so that a user who asks again the moment their search ends queues behind
    those already waiting."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._free = capacity
        self._queue: deque[object] = deque()
        self._changed = threading.Condition()

    def acquire(self, timeout_s: float) -> bool:
        """Take a slot, waiting at most ``timeout_s`` seconds behind earlier callers."""
        ticket = object()
        deadline = time.monotonic() + timeout_s
        with self._changed:
            self._queue.append(ticket)
            try:
                while self._queue[0] is not ticket or not self._free:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._changed.wait(left)
                self._free -= 1
                return True
            finally:
                self._queue.remove(ticket)
                self._changed.notify_all()

    def release(self) -> None:
        with self._changed:
            self._free += 1
            self._changed.notify_all()
