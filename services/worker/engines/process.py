"""Talking to a sandboxed engine process one line at a time, with a deadline on every read
and write: a hung, silent or flooding engine never blocks the worker.

What the engine prints on stderr is read along the way and its last lines kept (a crash
report quotes them). When the process ends, how it ended becomes a typed failure: killed
by the kernel at its memory cap, out of CPU seconds, past its file size limit, out of
memory under ``RLIMIT_AS`` (its own message says so), or a plain crash.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable

from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.sandbox import SandboxedProcess, stat_fields

from arena.engine.api import StopFlag

STDERR_TAIL_LINES = 20
_TAIL_LINE_CHARS = 300
_READ_CHUNK = 1 << 16
_EXIT_WAIT_S = 0.5
# What an engine's runtime says when an allocation fails under RLIMIT_AS, or a write
# past RLIMIT_FSIZE fails (where SIGXFSZ is ignored, as Python does).
_OUT_OF_MEMORY_WORDS = ("memoryerror", "bad_alloc", "cannot allocate memory", "out of memory")
_FILE_TOO_LARGE_WORDS = ("file too large",)
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# How long a suspension waits for an engine that just answered to go idle (a pondering
# engine never does: it is stopped after this anyway).
SETTLE_S = 0.05
# How long an engine that has started or been set up is watched to be settled, and the
# share of that time it may compute (``EngineProcess.settle``): a thread may pause between
# steps of its work, and a thread at work computes nearly all the time.
SETTLED_S = 0.02
IDLE_SHARE = 0.25
# How often a read waiting for a move looks at the job's stop flag.
STOP_POLL_S = 0.02


class EngineProcess:
    """Line I/O with one engine process; see the module docstring."""

    def __init__(self, sandboxed: SandboxedProcess) -> None:
        self.sandboxed = sandboxed
        popen = sandboxed.popen
        assert popen.stdin and popen.stdout and popen.stderr
        self._in, self._out, self._err = (popen.stdin.fileno(), popen.stdout.fileno(),
                                          popen.stderr.fileno())
        for fd in (self._in, self._out, self._err):
            os.set_blocking(fd, False)
        self._poll = select.poll()
        self._poll.register(self._out, select.POLLIN)
        self._poll.register(self._err, select.POLLIN)
        self._partial = {self._out: bytearray(), self._err: bytearray()}
        self._lines: deque[str] = deque()
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._output_cap = sandboxed.limits.output_kb << 10
        self._answer_bytes = 0
        self._ended: EngineFailure | None = None
        self.suspended = False

    @property
    def pid(self) -> int:
        return self.sandboxed.pid

    @property
    def alive(self) -> bool:
        return (self._ended is None and self.sandboxed.popen.poll() is None
                and not self.sandboxed.engine_ended())

    # -- lines ----------------------------------------------------------------------------

    def send(self, text: str, deadline: float) -> None:
        """Write ``text`` and a newline, waiting at most until ``deadline`` (monotonic)."""
        data = memoryview((text + "\n").encode())
        while data:
            try:
                written = os.write(self._in, data)
                data = data[written:]
            except BlockingIOError:
                self._wait_writable(deadline)
            except (BrokenPipeError, ConnectionResetError):
                raise self._ending() from None

    def _wait_writable(self, deadline: float) -> None:
        poll = select.poll()
        poll.register(self._in, select.POLLOUT)
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not poll.poll(_ms(remaining)):
            raise self.failure(FailureReason.TIMEOUT, "does not read its input")

    def read_line(self, deadline: float, waiting_for: str, stop: StopFlag | None = None,
                  tick: Callable[[], None] | None = None,
                  put_back: Callable[[], float] | None = None) -> str:
        """The next line the engine prints; ``EngineFailure`` if none comes by
        ``deadline``, the engine ends, it prints more than its output limit, or ``stop``
        is raised meanwhile (looked at every ``STOP_POLL_S``, when ``tick`` is called
        too). Once ``deadline`` has passed, ``put_back`` (asked at every look from then
        on) says by how many seconds it is put back."""
        while not self._lines:
            if stop is not None and stop.is_set():
                raise self.failure(FailureReason.STOPPED, f"stopped waiting for {waiting_for}")
            if tick is not None:
                tick()
            remaining = deadline - time.monotonic()
            if remaining <= 0 and put_back is not None:
                remaining += put_back()
            if remaining <= 0:
                raise self.failure(FailureReason.TIMEOUT, f"no {waiting_for} in time")
            if stop is not None or tick is not None or put_back is not None:
                remaining = min(remaining, STOP_POLL_S)
            for fd, _mask in self._poll.poll(_ms(remaining)):
                self._read(fd)
        return self._lines.popleft()

    def stale_lines(self) -> list[str]:
        """Lines already printed and not read (late output of an earlier answer)."""
        for fd, _mask in self._poll.poll(0):
            self._read(fd)
        lines, self._lines = list(self._lines), deque()
        return lines

    def start_answer(self) -> None:
        """Start counting the output of a new answer against the output limit."""
        self._answer_bytes = 0

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, _READ_CHUNK)
        except BlockingIOError:
            return
        if not data:
            self._poll.unregister(fd)
            if fd == self._out:
                raise self._ending()
            return
        self._answer_bytes += len(data)
        if self._answer_bytes > self._output_cap:
            raise self.failure(FailureReason.OUTPUT_LIMIT,
                               f"printed more than {self._output_cap >> 10} KiB for one answer")
        self._take(fd, data)

    def _take(self, fd: int, data: bytes) -> None:
        partial = self._partial[fd]
        partial += data
        *complete, rest = partial.split(b"\n")
        self._partial[fd] = bytearray(rest)
        for raw in complete:
            line = raw.decode("utf-8", "replace").rstrip("\r")
            if fd == self._out:
                self._lines.append(line)
            else:
                self.stderr_tail.append(line[:_TAIL_LINE_CHARS])

    # -- failures ---------------------------------------------------------------------------

    def failure(self, reason: FailureReason, detail: str) -> EngineFailure:
        return EngineFailure(reason, detail, list(self.stderr_tail))

    def _ending(self) -> EngineFailure:
        """Why the engine ended (it closed its output): computed once, then repeated."""
        if self._ended is None:
            popen = self.sandboxed.popen
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=_EXIT_WAIT_S)
            self._drain_stderr()
            self._ended = self._classify_exit(popen.returncode)
        return self._ended

    def _drain_stderr(self) -> None:
        try:
            while data := os.read(self._err, _READ_CHUNK):
                self._take(self._err, data)
        except OSError:
            pass
        if self._partial[self._err]:
            self._take(self._err, b"\n")

    def _classify_exit(self, code: int | None) -> EngineFailure:
        limits, cgroup = self.sandboxed.limits, self.sandboxed.cgroup
        said = " ".join(self.stderr_tail).lower()
        if cgroup is not None and cgroup.oom_kills() > 0:
            return self.failure(FailureReason.MEMORY_LIMIT, "killed by the kernel at its "
                                f"memory limit ({limits.memory_mb} MiB)")
        if code == -signal.SIGXCPU:
            return self.failure(FailureReason.CPU_LIMIT,
                                f"used up its {limits.cpu_s} CPU seconds")
        failed = code is not None and code != 0
        too_large = failed and any(w in said for w in _FILE_TOO_LARGE_WORDS)
        if code == -signal.SIGXFSZ or too_large:
            return self.failure(FailureReason.OUTPUT_LIMIT,
                                f"wrote a file past {limits.output_kb} KiB")
        if failed and any(w in said for w in _OUT_OF_MEMORY_WORDS):
            return self.failure(FailureReason.MEMORY_LIMIT,
                                f"ran out of memory under its {limits.memory_mb} MiB limit")
        if code is None:
            return self.failure(FailureReason.CRASH, "closed its output")
        if code < 0:
            return self.failure(FailureReason.CRASH,
                                f"killed by {signal.Signals(-code).name}")
        return self.failure(FailureReason.CRASH, f"exited with code {code}")

    # -- lifetime ---------------------------------------------------------------------------

    def suspend(self) -> None:
        """Stop the engine (``SandboxedProcess.stop``): it must not think on the
        opponent's time.

        An engine may still have bookkeeping to do after it printed its move (Rapfi clears
        its "thinking" flag after, and ignores a command that arrives before): stopped in
        the middle of it, it would miss the next command. So the stop waits, at most
        ``SETTLE_S``, until none of the engine's threads is running.
        """
        if self.suspended:
            return
        deadline = time.monotonic() + SETTLE_S
        while self._running() and time.monotonic() < deadline:
            time.sleep(0.0002)
        self.hold()

    def settle(self, deadline: float) -> None:
        """Wait until the engine has stopped computing, at most until ``deadline``
        (monotonic; past it, the rest is charged to the move). An engine may go on after
        what the client took for the end of its handshake or set-up: work in a thread of
        its own, or commands still queued (Rapfi 0.43 answers an ``INFO`` key it does not
        know with ``ERROR``, which the Gomocup set-up takes for the answer to its
        ``ABOUT``, and then sizes its hash: 0.5 to 2.4 s of CPU time). That work is the
        engine's start, not its first move's: the move's CPU time is counted from here.
        Settled means no thread running or waiting to run, before and after ``SETTLED_S``
        in which it used less than ``IDLE_SHARE`` of that time (a pondering engine's
        ticks, a heartbeat thread, are idle)."""
        while time.monotonic() < deadline:
            if self._running():
                time.sleep(0.001)
                continue
            used, since = self.cpu_seconds(), time.monotonic()
            time.sleep(SETTLED_S)
            spent = self.cpu_seconds() - used
            if not self._running() and spent < IDLE_SHARE * (time.monotonic() - since):
                return

    def hold(self) -> None:
        """Stop the engine at once, in the middle of its thinking (``resume`` lets it go
        on)."""
        self.sandboxed.stop()
        self.suspended = True

    def _running(self) -> bool:
        """True if a thread of the engine process is running or waiting to run."""
        try:
            tasks = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            return False
        for task in tasks:
            fields = stat_fields(f"/proc/{self.pid}/task/{task}/stat")
            if fields is not None and fields[0] == b"R":
                return True
        return False

    def resume(self) -> None:
        if self.suspended:
            self.sandboxed.go_on()
            self.suspended = False

    def cpu_seconds(self) -> float:
        """CPU time the engine has used so far: every process of its control group where
        it has a CPU account; else its own process's and that of the children it waited
        for (0 if it cannot be read). A search run in a child process is not free."""
        if self.sandboxed.cgroup is not None:
            used = self.sandboxed.cgroup.cpu_seconds()
            if used is not None:
                return used
        fields = stat_fields(f"/proc/{self.pid}/stat")
        if fields is None:
            return 0.0
        return sum(int(field) for field in fields[11:15]) / _CLOCK_TICKS

    def run_queue_delays(self) -> dict[int, int]:
        """How long each thread of the engine has waited so far, ready to run, for a CPU
        (the kernel's run-queue delay: ``/proc/<pid>/task/<tid>/schedstat``, its second
        field, in nanoseconds), by thread id; empty where the kernel does not say. The
        threads of every process of its control group where it has one; else of its own
        process only (finding the rest of its process group means reading all of
        ``/proc``, some 2 ms); this read costs some 0.2-0.5 ms for an engine of three
        processes (one in its view: ``view.py``)."""
        cgroup = self.sandboxed.cgroup
        processes = cgroup.pids(one_group=True) if cgroup is not None else {self.pid}
        delays: dict[int, int] = {}
        for pid in processes:
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue  # gone
            for task in tasks:
                queued = queued_ns(f"{pid}/task/{task}")
                if queued is not None:
                    delays[int(task)] = queued
        return delays

    def close(self, goodbye: str | None = None, wait_s: float = 0.3) -> None:
        """Ask the engine to quit (``goodbye``), then kill whatever is left of it."""
        if goodbye is not None and self.alive:
            self.resume()
            try:
                self.send(goodbye, time.monotonic() + wait_s)
                self.sandboxed.popen.wait(timeout=wait_s)
            except (EngineFailure, subprocess.TimeoutExpired):
                pass
        self.suspended = False
        self.sandboxed.kill_all()
        self.sandboxed.release()


def queued_ns(task: str = "thread-self") -> int | None:
    """How long a thread has waited so far, ready to run, for a CPU (the kernel's
    run-queue delay in nanoseconds: the second field of ``/proc/<task>/schedstat``, where
    ``task`` is ``thread-self`` or ``<pid>/task/<tid>``), or None where the kernel does not
    say or the thread is gone."""
    try:
        with open(f"/proc/{task}/schedstat", "rb") as stat:
            return int(stat.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000 + 0.999))
