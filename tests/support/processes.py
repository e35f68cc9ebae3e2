"""Waiting for processes to end, each named by its stamp (``arena.services.common.pids``):
its pid and start time, taken while it runs. A pid alone is handed out again once the
counter comes round (``pid_max`` 32,768 here; the suite moves it by up to some 80 a second),
and ``kill(pid, 0)`` then answers for the new holder."""

from __future__ import annotations

import time
from collections.abc import Mapping

from arena.services.common import pids


def stamp_all(numbers: Mapping[str, int]) -> dict[str, str]:
    return {name: pids.stamp(int(pid)) for name, pid in numbers.items()}


def wait_gone(stamps: Mapping[str, str], within_s: float) -> list[str]:
    """The names of those still running after at most ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while any(pids.running(s) for s in stamps.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [name for name, s in stamps.items() if pids.running(s)]
