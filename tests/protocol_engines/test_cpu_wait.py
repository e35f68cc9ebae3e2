"""A protocol engine's move timed on CPU is not lost to the time it waited for a CPU that
other processes held: the worker waits that much longer for its answer, and tells the
referee (``MoveResult.queued_ms``), whose wall-clock guard does not count it. As for a
built-in search (``tests/worker/test_cpu_wait.py``), with a real engine process whose
core is shared with six busy processes, each a session of its own as other people's
programs are.

Marked ``alone``: six busy processes on one core for some seconds would slow whatever
another test process runs there."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pytest
from arena.services.common.protocol.delivery import cpu_wall_guard_ms
from arena.services.referee.judge import MoveClock
from arena.services.worker.engines.sandbox import Sandbox

from arena.games import GomokuBoard
from tests.protocol_engines.conftest import FakeSpec, gomoku_job, hosted, sandboxed_pids
from tests.support.load import cpu_hog, machine_to_myself

pytestmark = pytest.mark.alone

LIMIT_MS = 1000
GRACE_MS = 300
BURN_MS = 700  # the engine's CPU time for its move: within its limit, and never held
WALL_FACTOR = 1.0  # the tightest wall guard an operator may set: 1 x limit + grace + 2 s


@pytest.fixture(autouse=True)
def _machine_to_myself() -> Iterator[None]:
    with machine_to_myself():
        yield


def pin(pids: list[int], cores: set[int]) -> None:
    """Every thread of ``pids`` on ``cores`` only (an affinity is a thread's own)."""
    for pid in pids:
        for task in os.listdir(f"/proc/{pid}/task"):
            os.sched_setaffinity(int(task), cores)


def test_an_engine_kept_off_the_cpu_past_the_wall_guard_still_plays(
        sandbox: Sandbox, fake_spec: FakeSpec, no_orphans: None) -> None:
    """The engine computes 700 ms of CPU time for its move, on a core it gets about a
    seventh of: some 5 s on the wall, past the 3.3 s guard. The worker used to stop
    waiting at the guard and kill it (a time forfeit); now the wait is put back by what
    the engine waited for the CPU, and the referee does not count that wait either."""
    spec = fake_spec("gomocup", "burn", str(BURN_MS), grace_ms=GRACE_MS)
    host, bot = hosted(spec, sandbox)
    job = gomoku_job(bot, GomokuBoard(15, "freestyle"), LIMIT_MS)
    core = {min(os.sched_getaffinity(0))}
    try:
        assert host.ready(job) is None  # started and set up before the move's time
        pin(sandboxed_pids(), core)
        with cpu_hog(per_core=6, seconds=60, cores=core, own_sessions=True):
            began = time.monotonic()
            result = host.play(job, cpu_wall_factor=WALL_FACTOR)
            wall_ms = round((time.monotonic() - began) * 1000)
    finally:
        host.close()
    guard = cpu_wall_guard_ms(LIMIT_MS, GRACE_MS, WALL_FACTOR)
    assert result.HasField("move"), (wall_ms, result)
    # What the test is about: past the guard on the wall, within the limit on the CPU.
    assert wall_ms > guard and 0 < result.cpu_ms <= LIMIT_MS + GRACE_MS, (wall_ms, result)
    # Reported, never more than the move's wall time, and enough to bring it within the
    # guard: the referee plays the move.
    assert wall_ms - guard < result.queued_ms <= wall_ms, (wall_ms, result)
    clock = MoveClock(LIMIT_MS, GRACE_MS, cpu=True, wall_factor=WALL_FACTOR)
    assert clock.late(wall_ms, result) is None
