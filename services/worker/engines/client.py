"""What every protocol client shares: the move limits, the answer, and the synchronous
``play`` that wakes the engine, asks for one move, checks it and puts the engine back to
sleep (python-chess's engine shape: a small protocol class behind a blocking facade).

The engine is suspended (SIGSTOP) whenever it is not asked for a move, so it never thinks
on the opponent's time, and every read and write has a deadline. A failure that leaves the
process unsound (timeout, garbage, crash, a limit) kills it; the pool starts a new one.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar, Generic, Self, TypeVar

from arena.services.worker.engines.catalog import EngineSpec
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.process import EngineProcess
from arena.services.worker.engines.sandbox import Sandbox

from arena.engine.api import StopFlag
from arena.protocols.report import SearchReport

_NOTES_KEPT = 20
Request = TypeVar("Request")


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

    def __post_init__(self) -> None:
        if self.move_time_ms < 1:
            raise ValueError(f"move_time_ms must be at least 1, got {self.move_time_ms}")


@dataclass(frozen=True)
class EngineAnswer:
    """A move the rules allow, what the engine said about its search, how long it took
    (from the command to the answer), the CPU time its process used meanwhile (all its
    threads; 10 ms steps) and its other remarks (MESSAGE, status lines)."""

    move: int
    search: SearchReport
    elapsed_ms: float
    notes: tuple[str, ...] = ()
    cpu_ms: float = 0.0


class ProtocolClient(ABC, Generic[Request]):
    """One engine process spoken to in one protocol; see the module docstring."""

    goodbye: ClassVar[str]

    def __init__(self, spec: EngineSpec, process: EngineProcess) -> None:
        self.spec = spec
        self.process = process
        self._stop: StopFlag | None = None  # the current move's, while it is played

    @classmethod
    def start(cls, spec: EngineSpec, sandbox: Sandbox) -> Self:
        """Start the engine and finish its handshake within ``startup_ms``."""
        try:
            sandboxed = sandbox.start(spec.command, spec.limits.sandbox(), dict(spec.env))
        except OSError as exc:
            raise EngineFailure(FailureReason.START_FAILED,
                                f"cannot start {spec.command[0]}: {exc}") from None
        client = cls(spec, EngineProcess(sandboxed))
        try:
            client._handshake(time.monotonic() + spec.limits.startup_ms / 1000)
        except EngineFailure as failure:
            client.close()
            raise EngineFailure(FailureReason.START_FAILED, f"handshake failed: {failure}",
                                failure.stderr_tail) from None
        client.process.suspend()
        return client

    @property
    def alive(self) -> bool:
        return self.process.alive

    def play(self, position_text: str, history: Sequence[int], limits: PlayLimits
             ) -> EngineAnswer:
        """The engine's move in ``position_text`` (``history``: the moves that led there,
        possibly a suffix). Raises ``EngineFailure``; a bad request raises the rules'
        ``ValueError`` before the engine is disturbed."""
        self.process.resume()  # it wakes up while the request is prepared
        self._stop = limits.stop
        try:
            request = self._prepare(position_text, history)
            answer = self._answer_without_engine(request)
            if answer is None:
                self._drop_stale()
                self._ready(request)  # a set-up is not the move's: its CPU is not charged
                cpu_before = self.process.cpu_seconds()
                answer = self._play(request, limits)
                cpu_ms = (self.process.cpu_seconds() - cpu_before) * 1000
                answer = replace(answer, cpu_ms=max(0.0, cpu_ms))
        except EngineFailure as failure:
            if failure.reason is FailureReason.STOPPED:
                self.process.close()  # busy thinking: killed at once, not asked to quit
            elif not failure.process_survives:
                self.close()
            raise
        finally:
            self._stop = None
            if self.process.alive:
                self.process.suspend()
        return answer

    def close(self) -> None:
        self.process.close(self.goodbye)

    def deadline(self, limits: PlayLimits) -> float:
        wait_ms = limits.wait_ms or limits.move_time_ms + self.spec.limits.grace_ms
        return time.monotonic() + wait_ms / 1000

    def read(self, deadline: float, waiting_for: str) -> str:
        return self.process.read_line(deadline, waiting_for, self._stop)

    def send(self, lines: Sequence[str], deadline: float) -> None:
        self.process.send("\n".join(lines), deadline)

    def failure(self, reason: FailureReason, detail: str) -> EngineFailure:
        return self.process.failure(reason, detail)

    @staticmethod
    def notes(lines: list[str]) -> tuple[str, ...]:
        return tuple(lines[-_NOTES_KEPT:])

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

    def _ready(self, request: Request) -> None:
        """What the engine must be told before this request's move starts, outside the
        move's time (a Gomocup brain's set-up for a new size or rule); nothing by default."""

    @abstractmethod
    def _play(self, request: Request, limits: PlayLimits) -> EngineAnswer: ...
