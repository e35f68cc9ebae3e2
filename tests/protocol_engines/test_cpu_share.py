"""A wall-clock engine timed on CPU gets its CPU time on a busy machine: a real engine
process that the test lets run only half the time (stopped and continued every 10 ms, as a
core shared with one other busy process would run it, whatever else the machine does).

The fake engine thinks, as engines do, until 90 % of the time it was told has passed on
the wall clock. Told its limit, it would use half its CPU time; the client tells it more
in proportion to the CPU share it had (``client.Stretch``), and should the machine quieten
in the middle of a move, holds it at its limit until the time it was told has run out
(``client.CpuBudget``), so that it answers within its CPU limit.

Marked ``alone``: ``make test`` runs them after its parallel run, with no other test
process beside them. What the other process ran changed the engine's share under the
test's own (in one CI run the move that should have had a whole core got too little of
one to reach its limit, and was never held)."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import NamedTuple

import pytest
from arena.services.worker.engines.client import PlayLimits, Stretch
from arena.services.worker.engines.sandbox import Sandbox
from prometheus_client import REGISTRY

from arena.games import GomokuBoard
from tests.protocol_engines.conftest import FakeSpec, gomoku_job, hosted, sandboxed_pids
from tests.support.load import cpu_hog, machine_to_myself

pytestmark = pytest.mark.alone

LIMIT_MS = 400
GRACE_MS = 60  # the hold's margin and the kernel's 10 ms steps: well inside a match's grace
SLICE_S = 0.01


@pytest.fixture(autouse=True)
def _machine_to_myself() -> Iterator[None]:
    """These tests measure CPU shares: no other test process's hog while they run."""
    with machine_to_myself():
        yield


class HalfTime:
    """Stops and continues processes in turn, ``SLICE_S`` each, until stopped."""

    def __init__(self, pids: list[int]) -> None:
        self.pids, self.done = pids, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _signal(self, signum: int) -> None:
        for pid in self.pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def _run(self) -> None:
        while not self.done.is_set():
            self._signal(signal.SIGSTOP)
            time.sleep(SLICE_S)
            self._signal(signal.SIGCONT)
            time.sleep(SLICE_S)

    def stop(self) -> None:
        self.done.set()
        self.thread.join()
        self._signal(signal.SIGCONT)


class Move(NamedTuple):
    cpu_ms: float  # the engine's CPU time in the move
    wall_ms: float  # from the question to the answer
    stretch: float  # the time it was told over its limit


def test_a_wall_clock_engine_gets_its_cpu_time_when_it_runs_half_the_time(
        sandbox: Sandbox, fake_spec: FakeSpec, no_orphans: None) -> None:
    """Through the worker's engine host, as a match's move jobs timed on CPU reach it."""
    spec = fake_spec("gomocup", "wallclock", "90")
    host, bot = hosted(spec, sandbox)
    board = GomokuBoard(15, "freestyle")

    def sample(name: str) -> float:
        return REGISTRY.get_sample_value(name, {"engine": spec.name, "pool": "match"}) or 0.0

    def move() -> Move:
        job = gomoku_job(bot, board, LIMIT_MS)
        stretched = sample("arena_protocol_engine_time_stretch_sum")
        result = host.play(job)
        assert result.HasField("move"), result
        board.push(result.move.square)
        return Move(float(result.cpu_ms), result.search.time_ms,
                    sample("arena_protocol_engine_time_stretch_sum") - stretched)

    held, told = sample("arena_protocol_engine_held_total"), \
        sample("arena_protocol_engine_time_stretch_sum")
    half = None
    try:
        move()  # the process starts
        half = HalfTime(sandboxed_pids())
        shared = [move() for _ in range(6)]
        half.stop()
        half = None
        # A new process (the last one died), told what its predecessor was, for half the
        # CPU, and it has all it can get.
        for pid in sandboxed_pids():
            with contextlib.suppress(ProcessLookupError):  # gone with the one killed first
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while host.pool.running():  # as the pool sees it: the next move starts another
            assert time.monotonic() < deadline, "the killed engine did not end"
            time.sleep(0.01)
        after = move()
    finally:
        if half is not None:
            half.stop()
        host.close()
    # Its first move at half time had less than its CPU time (about half of it); from
    # then on it is told more, in proportion to the share it had, at most twice its limit,
    # and takes that time. An engine thinks by the wall clock: its CPU time is the wall
    # time it takes times the share the machine gives it, so more time told is more CPU
    # time at any share. What it was told and took is checked, not the CPU times across
    # moves: the share itself changes with what else the machine runs (in one CI run,
    # beside make test's other process, the CPU time stayed flat over six moves, as it
    # does when the share falls while the time told grows).
    assert shared[0].cpu_ms < 0.75 * LIMIT_MS, shared
    assert all(m.stretch > 1.0 for m in shared[1:]), shared
    assert all(m.stretch >= 1.5 for m in shared[3:]), shared
    # The fake engine thinks until 90 % of what it was told has passed on the wall clock
    # (less a margin: the client stamps the question's time once it has written it, and
    # on a busy machine the engine may start before that).
    assert all(m.wall_ms >= 0.85 * m.stretch * LIMIT_MS for m in shared), shared
    assert all(m.cpu_ms <= LIMIT_MS + GRACE_MS for m in shared), shared
    # Told about twice its limit, and running all the time: held at its limit until that
    # time ran out, then it answered at once (unheld it would have used 0.9 x told, about
    # 700 ms; told its limit, as a new process was before, it would not have been held).
    assert after.cpu_ms <= LIMIT_MS + GRACE_MS, (shared, after)
    # Operators see it: the time told over the limit of each move (8 moves, at least 1
    # each, more than 1.5 for the last four) and the move held.
    assert sample("arena_protocol_engine_time_stretch_sum") - told >= 4 + 4 * 1.5
    assert sample("arena_protocol_engine_held_total") - held >= 1


def test_a_new_engine_on_a_busy_machine_is_told_more_from_its_first_move(
        sandbox: Sandbox, fake_spec: FakeSpec, no_orphans: None) -> None:
    """Its first move used to be told its limit whatever the load (the share started at
    1): now the share is probed before the engine starts. Here this thread shares one core
    with two busy processes (60 s at most), so it gets about a third of it."""
    spec = fake_spec("gomocup", "wallclock", "90")
    host, bot = hosted(spec, sandbox)
    board = GomokuBoard(15, "freestyle")
    job = gomoku_job(bot, board, LIMIT_MS)
    stretch = ("arena_protocol_engine_time_stretch_sum", {"engine": spec.name, "pool": "match"})
    told = REGISTRY.get_sample_value(*stretch) or 0.0
    core = {min(os.sched_getaffinity(0))}
    cores = os.sched_getaffinity(0)
    try:
        with cpu_hog(per_core=2, seconds=60, cores=core):
            os.sched_setaffinity(0, core)  # this thread only (Linux): it asks for the move
            try:
                result = host.play(job)
                busy = Stretch.probed(0.3).share  # the probe on the shared core: ~1/3
            finally:
                os.sched_setaffinity(0, cores)
    finally:
        host.close()
    assert result.HasField("move"), result
    # Told about twice its limit (at most 2x) on its very first move, not its limit.
    assert (REGISTRY.get_sample_value(*stretch) or 0.0) - told >= 1.5
    # Probed afresh once the hog is gone: more of a core than on the shared one (a quiet
    # machine gives ~1; relative, so that other work on the machine does not fail it).
    quiet = Stretch.probed(0.3).share
    assert quiet > 1.2 * busy, (quiet, busy)


def test_the_time_told_stays_within_the_wait_for_the_answer() -> None:
    limits = PlayLimits(1000, wait_ms=4 * 1000 + 300 + 2000, cpu_ms=1000)
    assert Stretch(share=1.0).told(limits) == limits  # an idle machine: nothing changes
    assert Stretch(share=2.0).told(limits) == limits  # two threads: never less than its limit
    assert Stretch(share=0.8).told(limits).move_time_ms == 1250
    assert Stretch(share=0.1).told(limits).move_time_ms == 2000  # at most twice the limit
    # An operator's tighter wall guard (ARENA_CPU_WALL_FACTOR 1): at most half the wait.
    tight = PlayLimits(1000, wait_ms=1000 + 300 + 2000, cpu_ms=1000)
    assert Stretch(share=0.1).told(tight).move_time_ms == 1650
    clock = PlayLimits(1000, time_left_ms=30_000, game_time_ms=60_000, cpu_ms=1000)
    told = Stretch(share=0.5).told(clock)  # a game's clock is stretched alike
    assert (told.move_time_ms, told.time_left_ms, told.game_time_ms) == (2000, 60_000, 120_000)
