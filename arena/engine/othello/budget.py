"""A search's time limit as the kernels read it: instants in ns on one clock.

The clock is the caller's choice (``Limits.clock``): ``wall`` (the monotonic clock) or
``cpu``, the CPU time of the thread that searches (``CLOCK_THREAD_CPUTIME_ID``, what
``time.thread_time_ns`` reads). Other processes on a busy machine slow the wall clock's
search down but do not advance its CPU clock, so a CPU-budgeted search reaches the same depth
and never runs out of time because of load it did not cause.

Every rule that shares out the limit is measured on that same clock: the hard stop, the
point past which iterative deepening starts no new iteration (``SOFT_TIME_SHARE``), and the
exact solver's part (``SOLVER_TIME_SHARE``).

The hard stop comes ``stop_margin_ns`` before the limit. Past the deadline a search still
runs until the kernels' next look at the clock (at most ``POLL_NODES`` nodes: about 0.3 ms
in the midgame, and a subtree of the solver's last 7 empties, rarely over 0.5 ms), then
unwinds and returns through Python (a few hundred microseconds, more with a captured tree).
``tests/engine/othello/test_cpu_clock.py`` measures the total against the margin.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.engine.api import Clock, now_ns
from arena.engine.othello._jit import CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID

# Past this share of its time limit, iterative deepening starts no new iteration.
SOFT_TIME_SHARE = 0.45
# The exact solver's share of the limit, when the position is within the bot's endgame
# empties; if it does not finish in it, the midgame search gets the rest.
SOLVER_TIME_SHARE = 0.6
# The hard stop's margin before the limit: a fixed part for the last poll and the epilogue,
# and a share of the limit, never more than half of it.
STOP_MARGIN_MS = 2.0
STOP_MARGIN_SHARE = 0.01

CLOCK_IDS: dict[str, int] = {"wall": CLOCK_MONOTONIC, "cpu": CLOCK_THREAD_CPUTIME_ID}


def stop_margin_ns(limit_ns: int) -> int:
    """How long before a limit of ``limit_ns`` a search stops."""
    return min(limit_ns // 2, int(STOP_MARGIN_MS * 1e6 + STOP_MARGIN_SHARE * limit_ns))


@dataclass(frozen=True)
class TimeBudget:
    """``limit_ns`` from ``started_ns`` on ``clock`` (``limit_ns`` 0: no time limit)."""

    clock: Clock
    started_ns: int
    limit_ns: int = 0

    @classmethod
    def start(cls, clock: Clock, time_ms: int | None) -> TimeBudget:
        """A budget of ``time_ms`` starting now (``None``: unlimited)."""
        if clock not in CLOCK_IDS:
            raise ValueError(f"unknown clock {clock!r}; one of {', '.join(CLOCK_IDS)}")
        limit = 0 if time_ms is None else max(1, time_ms) * 1_000_000
        return cls(clock, now_ns(clock), limit)

    @property
    def clock_id(self) -> int:
        """The kernels' id of the clock (``clock_gettime``'s)."""
        return CLOCK_IDS[self.clock]

    @property
    def hard_ns(self) -> int:
        """When the kernels stop at once (0: never)."""
        if not self.limit_ns:
            return 0
        return self.started_ns + self.limit_ns - stop_margin_ns(self.limit_ns)

    @property
    def soft_ns(self) -> int:
        """When iterative deepening starts no new iteration (0: never)."""
        return self.started_ns + int(SOFT_TIME_SHARE * self.limit_ns) if self.limit_ns else 0

    def share(self, fraction: float) -> TimeBudget:
        """The first ``fraction`` of this budget (the exact solver's part)."""
        return TimeBudget(self.clock, self.started_ns, int(fraction * self.limit_ns))

    def rest(self) -> TimeBudget:
        """What is left of this budget from now on (at least 1 ms)."""
        now = now_ns(self.clock)
        if not self.limit_ns:
            return TimeBudget(self.clock, now)
        left = max(1_000_000, self.started_ns + self.limit_ns - now)
        return TimeBudget(self.clock, now, left)
