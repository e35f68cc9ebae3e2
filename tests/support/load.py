"""A bounded CPU hog: the busy machine that tests of time limits need."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

_HOG = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"


@contextmanager
def cpu_hog(per_core: int = 1, seconds: float = 120.0,
            cores: set[int] | None = None) -> Iterator[int]:
    """Busy-loop ``per_core`` processes per core (of ``cores``, if given, and only on
    them; else of the machine) while the block runs; each stops by itself after
    ``seconds`` at the latest and is killed when the block ends. Yields how many."""
    code = _HOG.format(seconds=seconds)
    count = per_core * (len(cores) if cores else os.cpu_count() or 2)
    hogs = [subprocess.Popen([sys.executable, "-c", code],
                             preexec_fn=(lambda: os.sched_setaffinity(0, cores))
                             if cores else None)
            for _ in range(count)]
    try:
        time.sleep(0.2)  # let them start spinning
        yield len(hogs)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
