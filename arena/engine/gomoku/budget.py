"""A search's time budget: when it started, and when the kernels must stop.

``Limits.clock`` says what a time limit measures: wall time, or the CPU time of the
thread that searches (``time.thread_time_ns``). The kernels read the same clock (see
``clock.py``), so on a busy machine a CPU-clocked search gets all the computing it was
promised and cannot be made late by other processes.

The kernels stop ``stop_margin_ns`` before the limit, so that the whole call to
``choose_move`` (the set-up before the search, the last stretch of nodes before the
deadline is noticed, and packaging the result in Python) ends under the limit:

- ``STOP_MARGIN_MS``: the nodes between two clock polls (``control.POLL_NODES``, about
  0.5 ms) and the result's packaging (under 0.1 ms), with room to spare;
- ``STOP_MARGIN_SHARE`` of the limit, for slower machines.

A captured tree is read after the search, and that time is not the bot's
(``SearchResult.capture_ms``): the search gets its whole time with or without one.

The margin never exceeds half the limit. A CPU-clocked search therefore returns with
``cpu_ms`` under its limit; its wall time may be longer on a busy machine (the wall
clock stays the caller's outer guard). A wall-clocked search returns under its limit
unless the machine keeps it from running.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from arena.engine.api import Limits, now_ns
from arena.engine.gomoku.clock import CLOCK_IDS

STOP_MARGIN_MS = 2.0
STOP_MARGIN_SHARE = 0.02


def stop_margin_ns(time_ms: int) -> int:
    """How long before a ``time_ms`` limit the kernels stop (see the module docstring)."""
    margin = (STOP_MARGIN_MS + STOP_MARGIN_SHARE * time_ms) * 1_000_000
    return int(min(margin, time_ms * 500_000))


@dataclass(frozen=True)
class Budget:
    """The clocks' readings when a search started, and its limits."""

    limits: Limits
    wall_start: int
    cpu_start: int

    @classmethod
    def start(cls, limits: Limits) -> Budget:
        return cls(limits, time.monotonic_ns(), time.thread_time_ns())

    @property
    def clock_id(self) -> int:
        """The ``clock_gettime`` id of the clock the limits are measured on."""
        return CLOCK_IDS[self.limits.clock]

    @property
    def clock_start(self) -> int:
        return self.wall_start if self.limits.clock == "wall" else self.cpu_start

    def deadline(self) -> int:
        """When the kernels must stop, in ns on the limits' clock (0: no time limit)."""
        time_ms = self.limits.time_ms
        if time_ms is None:
            return 0
        return self.clock_start + time_ms * 1_000_000 - stop_margin_ns(time_ms)

    def soft_deadline(self, share: float) -> int:
        """When ``share`` of the limit is gone (0: no time limit), on the limits' clock."""
        if self.limits.time_ms is None:
            return 0
        return self.clock_start + int(share * self.limits.time_ms * 1_000_000)

    def elapsed_ms(self) -> float:
        """Wall time since the start."""
        return (time.monotonic_ns() - self.wall_start) / 1e6

    def cpu_ms(self) -> float:
        """This thread's CPU time since the start."""
        return (now_ns("cpu") - self.cpu_start) / 1e6
