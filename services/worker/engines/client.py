"""What every protocol client shares: the move limits, the answer, and the synchronous
``play`` that wakes the engine, asks for one move, checks it and puts the engine back to
sleep (python-chess's engine shape: a small protocol class behind a blocking facade).

The engine is stopped (SIGSTOP to every process of its control group, else of its process
group) whenever it is not asked for a move, so it never thinks on the opponent's time, and
every read and write has a deadline. A failure that leaves the process unsound (timeout,
garbage, crash, a limit) kills it; the pool starts a new one.

A move timed on CPU (``PlayLimits.cpu_ms``) is charged the engine's CPU time, but an engine
decides how long to think by its own, wall, clock: on a busy machine it would get less CPU
in its time and play weaker. So the client tells it more time, in proportion to the CPU
share its process had in its last moves (``Stretch``: told = limit / share, at most
``MAX_STRETCH`` times the limit), and should the machine quieten during the move, it holds
the engine (stopped the same way) once its CPU time reaches the limit, until the time it
was told has passed on the wall clock, so that it answers as soon as it runs again,
within its limit.
An idle machine changes nothing: the share is 1, the engine told its limit. Before an
engine's first move on a worker its share is probed: a thread kept busy for 50 ms, its CPU
time over the wall time (``Stretch.probed``).

The wall clock is only the outer guard of such a move, and the time the engine waited,
ready to run, for a CPU that other processes held is not its fault: the worker waits that
much longer for the answer (at most twice as long in all) and reports it
(``RunQueueWait``), and the referee's guard does not count it.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import ClassVar, Generic, Self, TypeVar

from arena.services.worker.engines.catalog import EngineSpec
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.process import EngineProcess
from arena.services.worker.engines.sandbox import Sandbox

from arena.engine.api import StopFlag
from arena.protocols.report import SearchReport
from arena.text import engine_notes

Request = TypeVar("Request")
MAX_STRETCH = 2.0  # the most time an engine is told, as a multiple of its move's limit
# A move shorter than this (running, not held) says little about the engine's CPU share.
SHARE_MIN_MS = 100.0
# The hold starts this much CPU time before the limit: the CPU time is looked at every
# 20 ms (``process.STOP_POLL_S``), and without a cgroup CPU account the kernel counts it
# in 10 ms steps.
HOLD_MARGIN_MS = 30
# How long a new engine's first share is probed (a busy thread's CPU over wall time), and
# the least it is taken to be (a stalled probe says nothing about the engine's share).
PROBE_S = 0.05
MIN_PROBED_SHARE = 0.1
# The most the wait for an answer timed on CPU is put back by the engine's run-queue
# delay, as a multiple of that wait: an engine kept off the CPU still loses in bounded
# time.
MAX_QUEUED_WAIT = 1.0


@dataclass(frozen=True)
class PlayLimits:
    """How long the engine may think on this move (python-chess's ``Limit``):
    ``move_time_ms`` is the hard limit (the engine is told it; the worker waits that plus
    the engine's grace), ``time_left_ms``/``game_time_ms`` the side's clock if the game
    has one, ``depth`` a depth cap for protocols that take one (NBoard). ``wait_ms``, if
    given, is how long the worker waits for the answer instead (a move timed on CPU: the
    engine may be kept off the CPU by a busy machine); ``stop`` ends the wait early."""

    move_time_ms: int
    time_left_ms: int | None = None
    game_time_ms: int | None = None
    depth: int | None = None
    wait_ms: int | None = None
    stop: StopFlag | None = field(default=None, compare=False)  # raised: answer no more
    cpu_ms: int | None = None  # a move timed on CPU: its limit in CPU time (see above)

    def __post_init__(self) -> None:
        if self.move_time_ms < 1:
            raise ValueError(f"move_time_ms must be at least 1, got {self.move_time_ms}")


@dataclass(frozen=True)
class EngineAnswer:
    """A move the rules allow, what the engine said about its search, how long it took
    (from the command to the answer), the CPU time it used meanwhile (all its processes
    and threads: ``EngineProcess.cpu_seconds``) and its other remarks (MESSAGE, status
    lines). A move timed on CPU also says the time the engine was told, how long it was
    held and how long it waited for a CPU (module docstring)."""

    move: int
    search: SearchReport
    elapsed_ms: float
    notes: tuple[str, ...] = ()
    cpu_ms: float = 0.0
    told_ms: int = 0
    held_ms: float = 0.0
    queued_ms: float = 0.0


class ProtocolClient(ABC, Generic[Request]):
    """One engine process spoken to in one protocol; see the module docstring."""

    goodbye: ClassVar[str]

    def __init__(self, spec: EngineSpec, process: EngineProcess) -> None:
        self.spec = spec
        self.process = process
        self._stop: StopFlag | None = None  # the current move's, while it is played
        self._budget: CpuBudget | None = None  # the current move's, if timed on CPU
        self._queued: RunQueueWait | None = None  # likewise
        self.stretch = Stretch()

    @classmethod
    def start(cls, spec: EngineSpec, sandbox: Sandbox) -> Self:
        """Start the engine and finish its handshake within ``startup_ms``."""
        try:
            sandboxed = sandbox.start(spec.command, spec.limits.sandbox(), dict(spec.env),
                                      spec.files)
        except OSError as exc:
            raise EngineFailure(FailureReason.START_FAILED,
                                f"cannot start {spec.command[0]}: {exc}") from None
        client = cls(spec, EngineProcess(sandboxed))
        deadline = time.monotonic() + spec.limits.startup_ms / 1000
        try:
            client._handshake(deadline)
        except EngineFailure as failure:
            client.close()
            raise EngineFailure(FailureReason.START_FAILED, f"handshake failed: {failure}",
                                failure.stderr_tail) from None
        client.process.settle(deadline)  # what it goes on with after answering is its start
        client.process.suspend()
        return client

    @property
    def alive(self) -> bool:
        return self.process.alive

    def set_up(self, position_text: str, history: Sequence[int]) -> None:
        """Tell the engine now what the move in ``position_text`` needs it told first (a
        Gomocup brain's ``START`` for a new size or rule): the worker calls this before it
        reports the move started, so that a set-up (Rapfi sizes its hash there) takes none
        of the move's time, on the CPU or on the wall clock. Raises like ``play``."""
        request = self._prepare(position_text, history)
        if self._answer_without_engine(request) is None and self._needs_set_up(request):
            with self._awake():  # woken only for a set-up: most moves have none
                self._drop_stale()
                self._settle()
                self._set_up_to_start(request)

    def play(self, position_text: str, history: Sequence[int], limits: PlayLimits
             ) -> EngineAnswer:
        """The engine's move in ``position_text`` (``history``: the moves that led there,
        possibly a suffix). Raises ``EngineFailure``; a bad request raises the rules'
        ``ValueError`` before the engine is disturbed."""
        self._stop = limits.stop
        try:
            with self._awake():
                return self._timed_move(position_text, history, limits)
        finally:
            self._stop = self._budget = self._queued = None

    @contextmanager
    def _awake(self) -> Iterator[None]:
        """The engine running (it wakes up while the request is prepared) for the block,
        suspended after it if it still lives; a failure that leaves it unsound ends it."""
        self.process.resume()
        try:
            yield
        except EngineFailure as failure:
            if failure.reason is FailureReason.STOPPED:
                self.process.close()  # busy thinking: killed at once, not asked to quit
            elif not failure.process_survives:
                self.close()
            raise
        finally:
            if self.process.alive:
                self.process.suspend()

    def _timed_move(self, position_text: str, history: Sequence[int], limits: PlayLimits
                    ) -> EngineAnswer:
        request = self._prepare(position_text, history)
        answer = self._answer_without_engine(request)
        if answer is None:
            self._drop_stale()
            self._settle()
            if self._needs_set_up(request):  # not the move's: its CPU is not charged
                self._set_up_to_start(request)
            cpu_before = self.process.cpu_seconds()
            told = limits
            if limits.cpu_ms:
                told = self.stretch.told(limits)
                self._budget = CpuBudget(self.process, cpu_before, limits.cpu_ms,
                                         time.monotonic() + told.move_time_ms / 1000)
                self._queued = RunQueueWait.start(
                    self.process, MAX_QUEUED_WAIT * self._wait_ms(limits))
            answer = self._play(request, told)
            cpu_ms = (self.process.cpu_seconds() - cpu_before) * 1000
            answer = replace(answer, cpu_ms=max(0.0, cpu_ms))
            if self._budget is not None and self._queued is not None:
                held_ms = self._budget.held_ms
                answer = replace(answer, told_ms=told.move_time_ms, held_ms=held_ms,
                                 queued_ms=self._queued.update())
                self.stretch.observe(answer.cpu_ms, answer.elapsed_ms - held_ms)
        return answer

    def _set_up_to_start(self, request: Request) -> None:
        """``_set_up``, as part of the engine's start: a set-up is outside every move's
        time and within ``startup_ms``, like a handshake (a Gomocup ``START`` is a brain's
        handshake for a board), so an engine that fails it, or is too slow, has failed to
        start (``START_FAILED``), not lost a move on time. A refusal (a board size it does
        not play) stays one, and so does a move that stopped being wanted meanwhile."""
        deadline = time.monotonic() + self.spec.limits.startup_ms / 1000
        try:
            self._set_up(request, deadline)
        except EngineFailure as failure:
            if failure.reason in (FailureReason.REFUSED, FailureReason.STOPPED):
                raise
            raise EngineFailure(FailureReason.START_FAILED, f"set-up failed: {failure}",
                                failure.stderr_tail) from None
        self.process.settle(deadline)  # what it goes on with after answering is its set-up
        self._heard_after_set_up(self.process.stale_lines())

    def close(self) -> None:
        self.process.close(self.goodbye)

    def deadline(self, limits: PlayLimits) -> float:
        return time.monotonic() + self._wait_ms(limits) / 1000

    def _wait_ms(self, limits: PlayLimits) -> int:
        return limits.wait_ms or limits.move_time_ms + self.spec.limits.grace_ms

    def read(self, deadline: float, waiting_for: str) -> str:
        """The next line, by ``deadline``; in a move timed on CPU, by ``deadline`` put back
        by the time the engine has waited for a CPU so far (``RunQueueWait``)."""
        return self.process.read_line(
            deadline, waiting_for, self._stop, self._budget.check if self._budget else None,
            self._queued.extension_s if self._queued else None)

    def send(self, lines: Sequence[str], deadline: float) -> None:
        self.process.send("\n".join(lines), deadline)

    def failure(self, reason: FailureReason, detail: str) -> EngineFailure:
        return self.process.failure(reason, detail)

    @staticmethod
    def notes(lines: list[str]) -> tuple[str, ...]:
        return tuple(engine_notes(lines))

    def _drop_stale(self) -> None:
        """Late output of an earlier answer must not be read as this one's."""
        self.process.start_answer()
        self.process.stale_lines()

    @abstractmethod
    def _handshake(self, deadline: float) -> None: ...

    @abstractmethod
    def _prepare(self, position_text: str, history: Sequence[int]) -> Request:
        """The request checked and put in the protocol's terms (raises ``ValueError``)."""

    def _answer_without_engine(self, request: Request) -> EngineAnswer | None:
        """The answer when there is nothing to ask (a forced pass), else ``None``."""
        return None

    def _settle(self) -> None:
        """Make sure the engine takes commands again before any is sent (outside the
        move's time); nothing to do by default."""

    def _needs_set_up(self, request: Request) -> bool:
        """Whether the engine must be told something before this request's move starts,
        outside the move's time (a Gomocup brain, of a new size or rule); never by
        default."""
        return False

    def _set_up(self, request: Request, deadline: float) -> None:
        """Tell the engine what ``_needs_set_up`` found it lacks, by ``deadline``."""

    def _heard_after_set_up(self, lines: list[str]) -> None:
        """What the engine printed after its set-up seemed done, read once it settled
        (none of it is a move's answer); dropped by default."""

    @abstractmethod
    def _play(self, request: Request, limits: PlayLimits) -> EngineAnswer: ...


@dataclass
class Stretch:
    """The CPU share an engine's process had in its recent moves, and the time it is told
    from it (see the module docstring)."""

    share: float = 1.0

    def told(self, limits: PlayLimits) -> PlayLimits:
        """``limits`` with the engine's time stretched, at most ``MAX_STRETCH`` times and
        at most half the time the worker waits for the answer (the referee's wall guard,
        which an operator may have set tighter), never below the limit."""
        most = MAX_STRETCH
        if limits.wait_ms:
            most = min(most, max(1.0, limits.wait_ms / 2 / limits.move_time_ms))
        factor = min(most, max(1.0, 1.0 / self.share))
        if factor == 1.0:
            return limits

        def stretched(ms: int | None) -> int | None:
            return None if ms is None else round(ms * factor)

        return replace(limits, move_time_ms=round(limits.move_time_ms * factor),
                       time_left_ms=stretched(limits.time_left_ms),
                       game_time_ms=stretched(limits.game_time_ms))

    @classmethod
    def probed(cls, probe_s: float = PROBE_S) -> Stretch:
        """A stretch for an engine that has not moved yet on this worker: the share a
        thread busy for ``probe_s`` of wall time gets on the machine now (a new engine's
        first move is told its time from the load at hand, not as on an idle machine)."""
        began, cpu = time.perf_counter(), time.thread_time()
        while (wall := time.perf_counter() - began) < probe_s:
            pass
        return cls(share=min(1.0, max(MIN_PROBED_SHARE, (time.thread_time() - cpu) / wall)))

    def observe(self, cpu_ms: float, running_ms: float) -> None:
        """A move's CPU time over the wall time it ran (time held not counted); the share
        follows the last moves, half each time."""
        if running_ms >= SHARE_MIN_MS:
            self.share = (self.share + max(cpu_ms, 1.0) / running_ms) / 2


@dataclass
class CpuBudget:
    """Holds an engine that reached its move's CPU limit until the wall time it was told
    has passed (once), then lets it run to answer (see the module docstring)."""

    process: EngineProcess
    cpu_before: float  # the process's CPU seconds when the move began
    cpu_ms: int
    release_at: float  # monotonic: when the time the engine was told runs out
    held_at: float | None = None
    held_ms: float = 0.0
    spent: bool = False  # held and released: not again

    def check(self) -> None:
        now = time.monotonic()
        if self.held_at is not None:
            if now >= self.release_at:
                self.process.resume()
                self.held_ms += (now - self.held_at) * 1000
                self.held_at, self.spent = None, True
        elif not self.spent and now < self.release_at:
            used_ms = (self.process.cpu_seconds() - self.cpu_before) * 1000
            if used_ms >= self.cpu_ms - HOLD_MARGIN_MS:
                self.process.hold()
                self.held_at = now


@dataclass
class RunQueueWait:
    """How long an engine has waited in its move, ready to run, for a CPU that other
    processes held: the kernel's run-queue delay of its threads
    (``EngineProcess.run_queue_delays``). A move timed on CPU is not to blame for it on
    the wall clock: the worker waits that much longer for the answer (at most
    ``most_ms`` longer), and reports it (``MoveResult.queued_ms``), which the referee's
    wall guard does not count.

    With several threads it is the delay of the thread that waited most. A sum would
    count a wall time in which N threads waited N times, past the move's own wall time; no
    one thread waits longer than the move lasts, and for an engine of one thread it is
    exactly its wait. It also counts what an engine's threads wait for one another when
    it runs more of them than it gets cores, but a thread waits for a sibling only while
    that sibling runs, and that is CPU time the move is charged: within its CPU limit.

    It is read when the move begins and when it ends, and in between only once the
    worker's deadline has passed (at every look from then on, every ``STOP_POLL_S``): a
    read costs some 0.2-0.5 ms, and most moves end well before. So a thread that ends
    during the move takes its wait since the last read with it (the engine is credited
    less, never more; engines keep their search threads from move to move). The kernel
    adds a wait to a thread's count when the thread gets a CPU, so a wait under way is
    seen only then: the worker's deadline may lag by it, which the wall guard's slack
    (``WALL_SLACK_MS``, 2 s) absorbs; the answer's figure, read after the engine printed
    it, has it all."""

    process: EngineProcess
    most_ms: float  # the most the worker's wait is put back by
    began_at: float  # monotonic, when the move began
    began: dict[int, int]  # each thread's delay (ns) when the move began
    ms: float = 0.0  # the delay so far

    @classmethod
    def start(cls, process: EngineProcess, most_ms: float) -> RunQueueWait:
        return cls(process, most_ms, time.monotonic(), process.run_queue_delays())

    def update(self) -> float:
        """The delay so far (ms): never less than last seen, never more than the wall
        time since the move began. A thread new since then counts from its start."""
        delays = self.process.run_queue_delays()
        most = max((ns - self.began.get(tid, 0) for tid, ns in delays.items()), default=0)
        wall_ms = (time.monotonic() - self.began_at) * 1000
        self.ms = min(max(self.ms, most / 1e6), wall_ms)
        return self.ms

    def extension_s(self) -> float:
        """How far the wait for the answer is put back now (seconds)."""
        return min(self.update(), self.most_ms) / 1000
