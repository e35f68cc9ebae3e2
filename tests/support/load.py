"""A bounded CPU hog: the busy machine that tests of time limits need, and the machine to
one test process at a time for the tests that make it busy or measure how busy it is.

`make test` runs two test processes at once. A hog in one and a measurement of CPU shares
in the other would each see the other's load (a probe of a quiet machine read a third of
a core), so both take ``machine_to_myself``, an exclusive lock between the test processes
(reentrant within one).
"""

from __future__ import annotations

import fcntl
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_LOCK = Path(tempfile.gettempdir()) / f"arena-tests-machine-{os.getuid()}.lock"
_held = threading.local()


@contextmanager
def machine_to_myself() -> Iterator[None]:
    """While the block runs, no other test process is in such a block (a ``flock`` on a
    file every test process opens); nested blocks of one thread take it once."""
    depth = getattr(_held, "depth", 0)
    if depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth = depth
        return
    with open(_LOCK, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            fcntl.flock(handle, fcntl.LOCK_UN)

_HOG = "import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass\n"


@contextmanager
def cpu_hog(per_core: int = 1, seconds: float = 120.0,
            cores: set[int] | None = None, own_sessions: bool = False) -> Iterator[int]:
    """Busy-loop ``per_core`` processes per core (of ``cores``, if given, and only on
    them; else of the machine) while the block runs; each stops by itself after
    ``seconds`` at the latest and is killed when the block ends. Yields how many.

    With ``own_sessions`` each hog is a session of its own, as other people's programs
    are: the kernel's autogroups (``sched_autogroup_enabled``) share a core between
    sessions first, so hogs in this process's session take no more of it from an engine
    (a session of its own) than one hog does."""
    code = _HOG.format(seconds=seconds)
    count = per_core * (len(cores) if cores else os.cpu_count() or 2)
    with machine_to_myself():
        hogs = [subprocess.Popen([sys.executable, "-c", code],
                                 preexec_fn=(lambda: os.sched_setaffinity(0, cores))
                                 if cores else None, start_new_session=own_sessions)
                for _ in range(count)]
        try:
            time.sleep(0.2)  # let them start spinning
            yield len(hogs)
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Leave the objects alive now to no garbage collection while the block runs, as a
    worker does once it has loaded its engines (``services.worker.server.freeze_heap``).

    A full collection runs in whichever thread allocates when it falls due. In a test
    process that has imported every test module it scans some 370,000 objects, about
    250 ms of CPU time (a worker's 150,000, some 70 ms): a search timed on its thread's
    CPU clock that ended on time would be charged for it, far past its stop margin."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()

