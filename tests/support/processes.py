"""Waiting for processes to end, each named by its stamp (``arena.services.common.pids``):
its pid and start time, taken while it runs. A pid alone is handed out again once the
counter comes round (``pid_max`` 32,768 here; the suite moves it by up to some 80 a second),
and ``kill(pid, 0)`` then answers for the new holder."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from arena.services.common import pids


def stamp_all(numbers: Mapping[str, int]) -> dict[str, str]:
    return {name: pids.stamp(int(pid)) for name, pid in numbers.items()}


def wait_gone(stamps: Mapping[str, str], within_s: float) -> list[str]:
    """The names of those still running after at most ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while any(pids.running(s) for s in stamps.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [name for name, s in stamps.items() if pids.running(s)]


def wait_for_file(path: Path, process: subprocess.Popen[Any], timeout_s: float = 60,
                  output: Callable[[], object] = lambda: "") -> None:
    """Wait until ``process`` writes ``path`` (its ready file, say); fails at once if the
    process ends first, with its ``output`` as the reason."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert process.poll() is None, output()
        assert time.monotonic() < deadline, f"no {path.name} within {timeout_s:.0f} s"
        time.sleep(0.05)


def signal_when_ready(script: str, ready: Path, signum: int = signal.SIGTERM,
                      timeout_s: float = 30) -> tuple[int, str]:
    """Run ``python -c script ready``, send ``signum`` once it has written ``ready``, and
    return its exit status and its stderr."""
    process = subprocess.Popen([sys.executable, "-c", script, str(ready)],
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for_file(ready, process)
        process.send_signal(signum)
        _, err = process.communicate(timeout=timeout_s)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, err
