"""A worker's start-up heap is frozen: a collection that falls due in a bot's move (the
collector runs in whichever thread allocates) scans what came after, not the engines and
services loaded at start-up, which a move timed on CPU would be charged for."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json
from arena.services.common.config import Config
from arena.services.worker.server import freeze_heap, warm_up

warm_up(Config.load("worker", []))
freeze_heap()
print(json.dumps({"frozen": gc.get_freeze_count(), "scanned": len(gc.get_objects())}))
"""


def test_a_warmed_up_worker_leaves_no_start_up_object_to_the_collector() -> None:
    """In a process of its own, as a worker starts: ``warm_up`` and ``freeze_heap`` are
    what the worker's ``create_service`` runs before it takes a job."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    heap = json.loads(done.stdout.splitlines()[-1])
    # Both engines and the worker's modules: some 150,000 objects, none left to scan.
    assert heap["frozen"] > 50_000, heap
    assert heap["scanned"] < 0.01 * heap["frozen"], heap
