"""Processes followed by a pidfd, not by their number.

This machine's ``pid_max`` is 32,768 and a test suite's servers start thousands of
threads, whose ids come from the same numbers: a pid freed by a process that ended can be
handed out again within seconds, and ``kill(pid, 0)`` then answers for whatever holds the
number now. A pidfd, taken while the process runs, names that process and no other (CI once
reported a worker of a killed ``arena up`` as left running)."""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Mapping


class Watched:
    """One process, from the moment it is watched: ``alive()`` is false once it ended
    (a zombie too), even if its pid now belongs to another."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        try:
            self._fd = os.pidfd_open(pid)
        except ProcessLookupError:
            self._fd = -1  # ended already

    def alive(self) -> bool:
        if self._fd < 0:
            return False
        readable, _, _ = select.select([self._fd], [], [], 0)
        return not readable  # a pidfd turns readable when its process ends

    def kill(self) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._fd, signal.SIGKILL)

    def __del__(self) -> None:
        if self._fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)


def watch_all(pids: Mapping[str, int]) -> dict[str, Watched]:
    return {name: Watched(int(pid)) for name, pid in pids.items()}


def wait_gone(processes: Mapping[str, Watched], within_s: float) -> list[str]:
    """The names of those still running after at most ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while any(p.alive() for p in processes.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [name for name, p in processes.items() if p.alive()]
