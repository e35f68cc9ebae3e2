"""Shares of a bounded resource: what each holder has open, against a total and a
per-holder share. The gRPC servers count live streams with it (``server.Gate``),
the web gateway its viewers' live pages (``web.live``), the analysis pool each user's
searches. ``FairSlots`` queues callers for a few slots in the order they came; ``Turns``
gives each holder a queue of its own (the gRPC servers' calls, per user)."""

from __future__ import annotations

import threading
import time
from collections import deque
from enum import Enum


class Refusal(Enum):
    SHARE = "the holder has its share open"
    TOTAL = "everything is taken"
    QUEUE = "as many callers as may wait already wait"
    LATE = "no slot came free in time"


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

    def acquire(self, timeout_s: float) -> Refusal | None:
        """Take a slot, waiting at most ``timeout_s`` seconds behind earlier callers. None
        when taken."""
        ticket = object()
        deadline = time.monotonic() + timeout_s
        with self._changed:
            self._queue.append(ticket)
            try:
                while self._queue[0] is not ticket or not self._free:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return Refusal.LATE
                    self._changed.wait(left)
                self._free -= 1
                return None
            finally:
                self._queue.remove(ticket)
                self._changed.notify_all()

    def release(self) -> None:
        with self._changed:
            self._free += 1
            self._changed.notify_all()


class Turns:
    """Each holder's calls in turn: at most its ``share`` run at once, more wait in the
    order they came (``FairSlots``, one per holder), at most ``waiting`` times the share of
    them and each at most its timeout; and of all holders together at most
    ``most_waiting`` wait (None: no such bound). A holder's line lives while it has calls
    running or waiting. The gRPC servers keep each user's unary calls with it
    (``server.Gate``), so that one user's many calls at once queue behind each other, not
    in front of everyone else's, and many users' lines cannot hold every thread."""

    def __init__(self, waiting: int, most_waiting: int | None = None) -> None:
        self.waiting = waiting
        self.most_waiting = most_waiting
        self._lock = threading.Lock()
        self._lines: dict[str, tuple[FairSlots, int]] = {}  # holder: its line, its callers
        self._waiting = 0  # of all lines: callers beyond their line's capacity

    def take(self, holder: str, share: int, timeout_s: float) -> Refusal | None:
        """Run one more call of ``holder``'s, after its earlier ones if ``share`` already
        run; None when it may run (then ``give_back`` when it ends). ``Refusal.TOTAL``
        when it would wait and the lines of all holders are full."""
        with self._lock:
            line, callers = self._lines.get(holder) or (FairSlots(share), 0)
            if callers >= line.capacity:  # it waits
                if callers - line.capacity >= self.waiting * line.capacity:
                    return Refusal.QUEUE
                if self.most_waiting is not None and self._waiting >= self.most_waiting:
                    return Refusal.TOTAL
                self._waiting += 1
            self._lines[holder] = (line, callers + 1)
        refusal = line.acquire(timeout_s)
        if refusal is not None:
            self._leave(holder)
        return refusal

    def give_back(self, holder: str) -> None:
        with self._lock:
            line = self._lines[holder][0]
        line.release()
        self._leave(holder)

    def _leave(self, holder: str) -> None:
        with self._lock:
            line, callers = self._lines[holder]
            if callers > line.capacity:
                self._waiting -= 1
            if callers == 1:
                del self._lines[holder]
            else:
                self._lines[holder] = (line, callers - 1)

    def holders(self) -> int:
        """How many holders have calls running or waiting."""
        with self._lock:
            return len(self._lines)
