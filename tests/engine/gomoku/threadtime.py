"""Where a thread's wall time went: running, waiting for a core, or blocked.

A search that holds the interpreter lock makes other Python threads *block* (sleep on
the lock) for as long as it runs. A busy machine makes threads *wait for a core*
instead (runnable, not running). Linux reports the second apart, per thread, in
``/proc/thread-self/schedstat`` (CPU time, run-queue wait, time slices), so
``wall - cpu - run-queue wait`` is the time a thread was blocked, whatever the load.
"""

from __future__ import annotations

import gc
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

SCHEDSTAT = Path("/proc/thread-self/schedstat")
STAT = Path("/proc/thread-self/stat")
TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")


def _read() -> tuple[int, int, int]:
    """(wall ns, CPU ns, run-queue wait ns) of the calling thread, now."""
    if not SCHEDSTAT.exists():
        raise RuntimeError(f"{SCHEDSTAT} is missing: this test needs Linux with schedstats")
    cpu, waited, _slices = (int(v) for v in SCHEDSTAT.read_text().split())
    return time.monotonic_ns(), cpu, waited


def _costs() -> dict[str, float]:
    """What the calling thread's CPU time went on, so far: page faults, user and system
    time (in ticks of the kernel's accounting, as ms), and the garbage collections run."""
    fields = STAT.read_text().rsplit(")", 1)[1].split()  # after "pid (comm)"
    minflt, majflt, utime, stime = (int(fields[i]) for i in (7, 9, 11, 12))
    return {"minor faults": minflt, "major faults": majflt, "user ms": utime * TICK_MS,
            "system ms": stime * TICK_MS,
            "collections": sum(gen["collections"] for gen in gc.get_stats())}


@dataclass
class ThreadTimes:
    """Wall, CPU and run-queue wait of one thread over one span, in seconds, and in
    ``costs`` where its CPU time went (``_costs``, as differences): a CPU time past what
    the work needs shows there as system time, faults or a collection."""

    wall: float = 0.0
    cpu: float = 0.0
    waited: float = 0.0
    costs: dict[str, float] = field(default_factory=dict)

    @property
    def blocked(self) -> float:
        """Neither running nor runnable: asleep, here on the interpreter lock."""
        return max(0.0, self.wall - self.cpu - self.waited)


class Span:
    """``with Span() as span:`` measures the calling thread between enter and exit."""

    def __enter__(self) -> ThreadTimes:
        self.times = ThreadTimes()
        self._costs = _costs()
        self._start = _read()
        return self.times

    def __exit__(self, *exc: object) -> None:
        end = _read()
        self.times.costs = {key: value - self._costs[key] for key, value in _costs().items()}
        wall, cpu, waited = (b - a for a, b in zip(self._start, end, strict=True))
        self.times.wall, self.times.cpu, self.times.waited = wall / 1e9, cpu / 1e9, waited / 1e9
