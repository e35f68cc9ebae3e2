"""A bounded CPU hog: busy processes, one per core, that stop by themselves."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Each hog spins until this many seconds have passed, in case nobody stops it.
HOG_LIFETIME_S = 60


@contextmanager
def cpu_hog(processes: int | None = None) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Keep every core busy while the block runs; the hogs are killed at its end."""
    count = processes or os.cpu_count() or 2
    spin = (f"import time\nend = time.monotonic() + {HOG_LIFETIME_S}\n"
            "while time.monotonic() < end:\n    pass\n")
    hogs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(count)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
