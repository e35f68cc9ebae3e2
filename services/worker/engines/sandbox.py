"""Starting engine processes inside the protections the machine allows.

Every engine process gets, whatever the machine:

- its own session and process group (stopping it kills the whole group), and the
  parent-death signal (SIGKILL if the worker dies);
- resource limits: CPU seconds, open files, the size of files it writes, no core dumps;
- a private working directory (``HOME`` and ``TMPDIR`` too), removed when it stops, or
  when the next worker on the machine starts if its worker died first;
- a small environment: ``PATH``, the sandbox marker, one thread for numeric libraries.

And where the machine lets the worker (root, or unprivileged user namespaces; writable
cgroups), also:

- a view of the filesystem of its own (``view.py``): the system's programs and libraries,
  Python, its own files and its working folder, read-only but the folder; run as an
  unprivileged user of a user namespace;
- a process namespace of its own: it sees (in its own ``/proc``) and signals only its own
  processes, not the worker's or the other engines';
- no network: a new, empty network namespace (not even loopback is up);
- a control group per engine: a memory cap on resident memory (the kernel kills past it
  and says so), a process cap, and a kill that reaches processes that left the group.
  Without cgroups, memory is capped by ``RLIMIT_AS`` (virtual memory: give margin) and
  processes by ``RLIMIT_NPROC`` (per user; root ignores it).

``Protections.describe()`` says which of these are active; a worker logs it at start.
Processes are started from one long-lived thread because the parent-death signal fires
when the thread that forked a child ends, not the process.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import itertools
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from queue import Queue
from typing import TypeVar

from arena.services.worker.engines.cgroups import (
    PREFIX,
    EngineCgroup,
    Hierarchy,
    find_hierarchies,
    name_prefix,
    sweep_stale,
    worker_gone,
)
from arena.services.worker.engines.view import HELPERS, View, command_paths, plan_view

MARKER = "ARENA_ENGINE_SANDBOX"
_CLONE_NEWNET = 0x40000000
_CLONE_NEWUSER = 0x10000000
_PR_SET_PDEATHSIG = 1
_PASSED_ENV = ("PATH", "LD_LIBRARY_PATH", "NUMBA_CACHE_DIR", "TZ")
_ONE_THREAD_ENV = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
_LIBC = ctypes.CDLL(None, use_errno=True)
_REPORT_BYTES = 500
T = TypeVar("T")


@dataclass(frozen=True)
class SandboxLimits:
    """What one engine process may use. ``cpu_s`` counts over the process's whole life
    (a warm engine plays many moves); ``output_kb`` caps both what it prints for one
    answer and the size of any file it writes."""

    memory_mb: int = 1024
    cpu_s: int = 3600
    open_files: int = 64
    processes: int = 32
    output_kb: int = 1024


@dataclass(frozen=True)
class Protections:
    """What this machine lets the sandbox do (see the module docstring)."""

    network_flags: int = 0  # the namespaces each engine is unshared into (0: none)
    network_note: str = ""
    cgroups: Mapping[str, Hierarchy] = field(default_factory=dict)
    cgroup_note: str = ""
    root: bool = False
    view: bool = False  # each engine sees a filesystem and processes of its own (view.py)
    view_note: str = ""
    own_proc: bool = False  # ... and its own /proc in that view

    @property
    def network_isolated(self) -> bool:
        return self.network_flags != 0

    def describe(self) -> list[str]:
        network = ("isolated: each engine in a new, empty network namespace"
                   + (" (inside a user namespace)" if self.network_flags & _CLONE_NEWUSER
                      else "")
                   if self.network_isolated else f"NOT isolated ({self.network_note})")
        memory = self.cgroups.get("memory")
        pids = self.cgroups.get("pids")
        cpu = self.cgroups.get("cpuacct")
        if pids:
            processes = f"cgroup v{pids.version} pids.max"
        elif self.root:
            processes = "NOT limited (root ignores RLIMIT_NPROC and there is no pids cgroup)"
        else:
            processes = "RLIMIT_NPROC (counted over all of the user's processes)"
        view = ("its own: system folders, Python, its files, read-only; its working folder; "
                + ("its own /proc" if self.own_proc else "no /proc (the kernel refused one)")
                + "; an unprivileged user" if self.view else f"NOT isolated ({self.view_note})")
        others = ("isolated: a process namespace of its own (it sees and signals only its "
                  "own processes)" if self.view else "NOT isolated: it can signal every "
                  f"process of the worker's user ({self.view_note})")
        return [
            "process group: own session; stop kills the group; SIGKILL if the worker dies",
            f"filesystem: {view}",
            f"other processes: {others}",
            f"network: {network}",
            "memory: " + (f"cgroup v{memory.version} limit on resident memory, kills reported"
                          if memory else "RLIMIT_AS on virtual memory (no memory cgroup)"),
            f"processes: {processes}",
            "escaped processes: " + ("killed through the cgroup" if self.cgroups else
                                     "found by their sandbox marker (best effort)"),
            "between moves: " + ("SIGSTOP to every process of its cgroup" if self.cgroups
                                 else "SIGSTOP to its process group (a process that left it "
                                 "keeps running)"),
            "CPU time charged to a move: " + (
                f"every process of its cgroup (v{cpu.version} CPU account)" if cpu else
                "its own process and the children it waited for (no cgroup CPU account)"),
            "CPU time, open files, file size, core dumps: rlimits",
            "working directory: private, removed on stop",
        ] + ([f"note: {self.cgroup_note}"] if self.cgroup_note else [])


def probe_protections(*, network: bool = True, cgroups: bool = True, view: bool = True
                      ) -> Protections:
    """Find out what the machine allows by trying it once."""
    flags, network_note = _probe_network() if network else (0, "turned off by the operator")
    viewed, own_proc, view_note = (_probe_view(flags) if view
                                   else (False, False, "turned off by the operator"))
    found: dict[str, Hierarchy] = {}
    cgroup_note = "cgroups turned off by the operator"
    if cgroups:
        found, cgroup_note = find_hierarchies()
    return Protections(flags, network_note, found, cgroup_note, os.geteuid() == 0, viewed,
                       view_note, own_proc)


def _probe_network() -> tuple[int, str]:
    true = shutil.which("true") or "/bin/true"
    tried = []
    for flags in (_CLONE_NEWNET, _CLONE_NEWUSER | _CLONE_NEWNET):
        try:
            subprocess.run([true], preexec_fn=_unshare_or_fail(flags), check=True,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=10)
            return flags, ""
        except (OSError, subprocess.SubprocessError) as exc:
            tried.append(str(exc).strip() or type(exc).__name__)
    return 0, "cannot create a network namespace: " + "; ".join(tried)


def _probe_view(network_flags: int) -> tuple[bool, bool, str]:
    """Whether an engine can be given a view of its own, and whether it has a ``/proc``
    there: ``test -d /proc/self`` run inside one (1 if no ``/proc``)."""
    test = os.path.realpath(shutil.which("test") or "/usr/bin/test")
    with tempfile.TemporaryDirectory(prefix=PREFIX + "probe-") as folder:
        work, root = Path(folder, "work"), Path(folder, "view")
        work.mkdir()
        root.mkdir()
        view = plan_view(root, work, [test], network_flags & ~_CLONE_NEWUSER)
        try:
            done = subprocess.run(view.command([test, "-d", "/proc/self"]), cwd=work,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, timeout=30)
        except (OSError, subprocess.SubprocessError) as exc:
            return False, False, f"cannot build one: {exc}"
        if done.returncode not in (0, 1):
            said = done.stderr.decode(errors="replace").strip().splitlines()
            return False, False, said[-1] if said else f"exit status {done.returncode}"
        return True, done.returncode == 0, ""


def _unshare_or_fail(flags: int) -> Callable[[], None]:
    def unshare() -> None:
        if _LIBC.unshare(flags) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"unshare: {os.strerror(error)}")
    return unshare


@dataclass(frozen=True)
class _ChildPlan:
    """Everything the child does between fork and exec, computed before the fork so
    that the child only makes system calls (no imports, no allocation-heavy work)."""

    cgroup_procs: tuple[bytes, ...]
    unshare_flags: int
    rlimits: tuple[tuple[int, tuple[int, int]], ...]
    parent_pid: int
    report_fd: int  # why it failed goes here (subprocess only says that it did)

    def __call__(self) -> None:
        try:
            self._prepare()
        except BaseException as exc:
            os.write(self.report_fd, str(exc).encode()[:_REPORT_BYTES])
            raise

    def _prepare(self) -> None:
        for path in self.cgroup_procs:
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"0")  # 0 is "the writing process"
            finally:
                os.close(fd)
        if self.unshare_flags and _LIBC.unshare(self.unshare_flags) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"unshare: {os.strerror(error)}")
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != self.parent_pid:  # the worker died before the signal was set
            os._exit(1)
        for kind, value in self.rlimits:
            resource.setrlimit(kind, value)


@dataclass
class SandboxedProcess:
    """A started engine process and what it holds: its group, folder and cgroup.

    ``popen`` is the process the worker started, which leads the group; in a view that is
    the script's keeper, and the engine is its grandchild (``view.py``)."""

    popen: subprocess.Popen[bytes]
    sandbox_id: str
    workdir: Path
    cgroup: EngineCgroup | None
    limits: SandboxLimits
    viewed: bool = False
    _engine_pid: int | None = field(default=None, repr=False)

    @property
    def pid(self) -> int:
        """The engine's own process (its CPU time, its threads), as the worker's
        namespace numbers it."""
        if not self.viewed:
            return self.popen.pid
        # None: the script ended before it started the engine
        return self._engine(ENGINE_FOUND_S) or self.popen.pid

    def _engine(self, wait_s: float) -> int | None:
        if self._engine_pid is None:
            self._engine_pid = _descendant(self.popen, HELPERS, wait_s)
        return self._engine_pid

    def engine_ended(self) -> bool:
        """Whether the engine's own process is gone (or dead, not yet reaped). In a view,
        the helpers that would notice and end with it are stopped with it between moves,
        so the worker's own child still looks alive."""
        if not self.viewed:
            return False
        engine = self._engine(0.0)  # not started yet is not ended
        if engine is None:
            return False
        fields = stat_fields(f"/proc/{engine}/stat")
        return fields is None or fields[0] in (b"Z", b"X")

    def stop(self) -> None:
        """``SIGSTOP`` every process of the engine: its group, then (where it has a control
        group) any process that left the group."""
        self.signal_group(signal.SIGSTOP)
        if self.cgroup is not None:
            self.cgroup.signal_all(signal.SIGSTOP)

    def go_on(self) -> None:
        if self.cgroup is not None:
            self.cgroup.signal_all(signal.SIGCONT)
        self.signal_group(signal.SIGCONT)

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signum)

    def kill_all(self) -> None:
        """SIGKILL the process group, then anything that left it."""
        self.signal_group(signal.SIGCONT)
        self.signal_group(signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill()
        else:
            kill_marked(self.sandbox_id)

    def release(self) -> None:
        """Reap the process and remove its cgroup and folder (after ``kill_all``)."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        for stream in (self.popen.stdin, self.popen.stdout, self.popen.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        if self.cgroup is not None:
            self.cgroup.remove()
        _remove_folders(self.workdir)


ENGINE_FOUND_S = 10.0  # how long the engine of a live keeper may take to appear


def _descendant(popen: subprocess.Popen[bytes], generations: int, wait_s: float
                ) -> int | None:
    """The process ``generations`` below ``popen``, following the one child each has (the
    keeper's init, the init's engine); None if ``popen`` ends (or ``wait_s`` passes)
    first."""
    deadline = time.monotonic() + wait_s
    pid = popen.pid
    for _ in range(generations):
        while (child := _child_of(pid)) is None:
            if popen.poll() is not None or time.monotonic() > deadline:
                return None
            time.sleep(0.005)  # a look costs about 2 ms
        pid = child
    return pid


def _child_of(parent: int) -> int | None:
    """The oldest child of ``parent`` (the lowest start time), from ``/proc/*/stat``."""
    found: list[tuple[int, int]] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(f"/proc/{entry}/stat")
            if fields is not None and int(fields[1]) == parent:
                found.append((int(fields[19]), int(entry)))
    return min(found)[1] if found else None


def stat_fields(path: str) -> list[bytes] | None:
    """The fields of a ``/proc`` ``stat`` file after the command's name (which may hold
    spaces and parentheses): ``[0]`` the state, ``[1]`` the parent, ``[11:15]`` user and
    system time and those of the children waited for (clock ticks), ``[19]`` the start
    time; None if it cannot be read (the process is gone)."""
    try:
        with open(path, "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields if len(fields) > 19 else None


def view_root(workdir: Path) -> Path:
    """The empty folder an engine's view is mounted on (in its own namespace only)."""
    return workdir.with_name(workdir.name + ".view")


def _remove_folders(workdir: Path) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
    with contextlib.suppress(OSError):
        view_root(workdir).rmdir()


# An engine's folder: ``arena-engine-<worker pid>-<worker start>-<n>-<mkdtemp's suffix>``
# (an older version's: no start), and its view's.
_FOLDER_RE = re.compile(re.escape(PREFIX) + r"(\d+)-(?:(\d+)-)?\d+-\w+(\.view)?")


def sweep_stale_folders(root: Path) -> int:
    """Remove the engine folders under ``root`` whose worker is gone (killed before it
    could remove them; its engines died with it, of the parent-death signal); returns
    how many. An engine's files stay on disk no longer than until the next worker
    starts."""
    removed = 0
    try:
        entries = list(root.iterdir())
    except OSError:
        return 0
    for entry in entries:
        match = _FOLDER_RE.fullmatch(entry.name)
        if (match is None or not worker_gone(int(match.group(1)), match.group(2))
                or not entry.is_dir()):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed += match.group(3) is None and not entry.exists()
    return removed


KILL_WAIT_S = 2.0  # how long a sweep waits for the processes it killed to be gone


def kill_marked(sandbox_id: str) -> int:
    """SIGKILL every process whose environment carries this sandbox's marker, and wait (at
    most ``KILL_WAIT_S``) until none is left: a killed process lives on while it exits,
    and on a busy machine a sweep that returned at once was seen to leave one running
    (a zombie's environment reads empty, so it no longer counts)."""
    marker = f"{MARKER}={sandbox_id}".encode()
    killed: set[int] = set()
    deadline = time.monotonic() + KILL_WAIT_S
    while pids := marked_pids(marker):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except (ProcessLookupError, PermissionError):
                pass
        if time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    return len(killed)


def marked_pids(marker: bytes) -> list[int]:
    """Processes whose initial environment holds ``marker`` (``NAME=value`` bytes)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


class _Spawner:
    """A long-lived thread that starts every engine (see the module docstring)."""

    def __init__(self) -> None:
        self._jobs: Queue[tuple[Callable[[], object], Future[object]]] = Queue()
        threading.Thread(target=self._run, name="engine-spawner", daemon=True).start()

    def _run(self) -> None:
        while True:
            job, future = self._jobs.get()
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, whatever it is
                future.set_exception(exc)

    def call(self, job: Callable[[], T]) -> T:
        future: Future[object] = Future()
        self._jobs.put((job, future))
        return future.result()  # type: ignore[return-value]


_SPAWNER: _Spawner | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawner() -> _Spawner:
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = _Spawner()
        return _SPAWNER


class Sandbox:
    """Starts engine processes under ``protections`` (probed if not given), each with a
    folder under ``root`` (the system's temporary folder by default)."""

    def __init__(self, protections: Protections | None = None, root: Path | None = None
                 ) -> None:
        self.protections = protections if protections is not None else probe_protections()
        self.root = Path(root) if root is not None else Path(tempfile.gettempdir())
        self._names = itertools.count(1)
        self.stale_groups_removed = sweep_stale(dict(self.protections.cgroups))
        self.stale_folders_removed = sweep_stale_folders(self.root)

    def start(self, command: Sequence[str], limits: SandboxLimits,
              env: Mapping[str, str] | None = None, readable: Sequence[str] = ()
              ) -> SandboxedProcess:
        """Start ``command`` (its first word an executable path) with pipes on its
        stdin, stdout and stderr. Besides the paths its command names, the engine may
        read ``readable`` (its catalog ``files``). Raises ``OSError`` if it cannot be
        started."""
        if not os.access(command[0], os.X_OK):  # as exec would say, before anything is made
            raise FileNotFoundError(errno.ENOENT, "no executable file", command[0])
        name = f"{name_prefix()}{next(self._names)}"
        workdir = Path(tempfile.mkdtemp(prefix=name + "-", dir=self.root))
        cgroup = None
        try:
            view = None
            if self.protections.view:
                view_root(workdir).mkdir()
                view = plan_view(view_root(workdir), workdir,
                                 [*command_paths(command), *readable],
                                 self.protections.network_flags & ~_CLONE_NEWUSER)
                command = view.command(command)
            # The process cap is the engine's own: the view's helpers come on top of it.
            caps = replace(limits, processes=limits.processes + (HELPERS if view else 0))
            if self.protections.cgroups:
                cgroup = EngineCgroup.create(dict(self.protections.cgroups), name,
                                             caps.memory_mb << 20, caps.processes)
            popen = self._spawn(command, workdir, env, caps, cgroup, view)
        except BaseException:
            if cgroup is not None:
                cgroup.remove()
            _remove_folders(workdir)
            raise
        return SandboxedProcess(popen, workdir.name, workdir, cgroup, limits, view is not None)

    def _spawn(self, command: Sequence[str], workdir: Path, env: Mapping[str, str] | None,
               limits: SandboxLimits, cgroup: EngineCgroup | None, view: View | None
               ) -> subprocess.Popen[bytes]:
        """Start the process (through its view's script, which unshares the namespaces
        itself); a failure between fork and exec is an ``OSError`` saying why (the child
        writes it to a pipe of its own before it exits)."""
        report, report_w = os.pipe()
        try:
            # A view's script unshares the namespaces itself (view.py says why).
            flags = 0 if view is not None else self.protections.network_flags
            plan = self._plan(limits, cgroup, flags, report_w)
            return _spawner().call(lambda: subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, cwd=workdir, env=self._env(workdir, env),
                start_new_session=True, preexec_fn=plan, bufsize=0))
        except subprocess.SubprocessError:
            os.close(report_w)
            report_w = -1
            why = os.read(report, _REPORT_BYTES).decode(errors="replace") or "no reason given"
            raise OSError(f"the sandbox could not be set up: {why}") from None
        finally:
            os.close(report)
            if report_w >= 0:
                os.close(report_w)

    def _plan(self, limits: SandboxLimits, cgroup: EngineCgroup | None, unshare_flags: int,
              report_fd: int) -> _ChildPlan:
        rlimits = [
            (resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1)),  # SIGXCPU, then KILL
            (resource.RLIMIT_NOFILE, (limits.open_files, limits.open_files)),
            (resource.RLIMIT_FSIZE, (limits.output_kb << 10, limits.output_kb << 10)),
            (resource.RLIMIT_CORE, (0, 0)),
        ]
        if "memory" not in self.protections.cgroups:
            rlimits.append((resource.RLIMIT_AS, (limits.memory_mb << 20,) * 2))
        if "pids" not in self.protections.cgroups and not self.protections.root:
            allowed = _user_tasks() + limits.processes
            rlimits.append((resource.RLIMIT_NPROC, (allowed, allowed)))
        procs = cgroup.procs_files() if cgroup is not None else ()
        return _ChildPlan(procs, unshare_flags, tuple(rlimits), os.getpid(), report_fd)

    def _env(self, workdir: Path, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = {key: os.environ[key] for key in _PASSED_ENV if key in os.environ}
        env.setdefault("PATH", os.defpath)
        # The worker's own interpreter folder, so that console scripts beside it resolve.
        env["PATH"] = f"{env['PATH']}{os.pathsep}{Path(sys.executable).parent}"
        env.update(_ONE_THREAD_ENV)
        env.update({"HOME": str(workdir), "TMPDIR": str(workdir), "LANG": "C.UTF-8"})
        env.update(extra or {})
        env[MARKER] = workdir.name  # last: the catalog cannot hide a process from the sweep
        return env


def _user_tasks() -> int:
    """Threads the real user runs now: RLIMIT_NPROC counts all of them together."""
    uid = os.getuid()
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(entry / "task"))
            except OSError:
                continue
    return count
