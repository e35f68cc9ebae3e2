"""The one launcher of Arena's processes: `arena up`, the demo and the system tests.

A :class:`Launcher` starts the two Redis servers (or uses given ones), then the services
in the order their addresses are needed (the registry, the referees, then the ladder
service, the match workers, the analysis workers and the web gateway), each a
``python -m arena.services.<role>`` process with its log under ``<home>/logs`` (an
``analyst`` is a worker of the analysis pool). Before the first worker starts, the engines
are compiled once, by one step (``arena.services.worker.warm``: a process per game), so
that workers starting together on a fresh machine load the kernels instead of each
compiling them. It can kill, restart and add single processes (the system tests do),
scale the workers, and supervise: a process that dies is started again, on the same port,
after a growing pause; one that keeps dying stops the stack.

``<home>/stack.json`` says where everything listens (the CLI and the SDK read it), and
``<home>/admin.token`` holds the local admin token. Children get ``PR_SET_PDEATHSIG``, so
even a SIGKILLed launcher leaves nothing behind. One launcher runs per home: it holds a
lock on ``<home>/run/launcher.lock`` while it runs (``Launcher.lock_home``), and a second
one is refused instead of sharing the first one's Redis files.

The embedded Redis servers admit only their ACL users (``redis_acl``): each service logs
in as its own user with a password generated once under ``<home>/secrets``. With
``tls`` (`arena up --tls`) every server serves TLS with a certificate of a local CA
(``tls.ensure_local_pki``, under ``<home>/tls``), services verify each other, and the
stack file names the CA and a client certificate, so `arena` commands connect securely
without options; ``mutual_tls`` also makes every server require a client certificate.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import grpc
from arena.clients.sdk import channel_credentials
from arena.services.common import pids
from arena.services.common.embedded_redis import EmbeddedRedis, Flavour, free_port
from arena.services.common.redis_acl import (
    ADMIN,
    acl_text,
    local_passwords,
    read_passwords,
    write_private,
)
from arena.services.common.server import check_health
from arena.services.common.tls import LocalPKI, ensure_local_pki

from arena.errors import FailedPreconditionError, InvalidArgumentError
from arena.home import ADMIN_TOKEN_FILE, STACK_FILE, arena_home
from arena.text import bounded

PARENT_ENV = "ARENA_PARENT_PID"
# The client roles (the SDK's addresses) and the processes that serve them.
ROLE_PROCESSES = {"registry": "registry", "referee": "referee", "ladder": "ladder",
                  "engine": "analyst"}
# `arena workers scale N` writes the wanted worker count to run/control.json; workers
# started by hand (`arena worker`) leave their pid files in run/extra/ (arena.clients.workers).
CONTROL_FILE = "control.json"
LOCK_FILE = "launcher.lock"  # in <home>/run; see ``Launcher.lock_home``
EXTRA_DIR = "extra"
# Settings the launcher decides for its children (an inherited value would contradict it).
ACCESS_ENV = ("ARENA_TLS_CERT_FILE", "ARENA_TLS_KEY_FILE", "ARENA_TLS_CA_FILE",
              "ARENA_TLS_CLIENT_CA_FILE", "ARENA_REDIS_USERNAME", "ARENA_REDIS_PASSWORD_FILE",
              "ARENA_REDIS_CA_FILE")
WORKERS_PER_CORE = 4  # a worker searches on one thread: more per core only wait their turn
MEMORY_PER_WORKER = 512 << 20  # a worker is about 250 MB, more with its engines' tables
# A process's log past this is moved to NAME.log.1 (the one before dropped) and begun
# again, looked at every LOG_CHECK_S: a referee's line a move filled 14.6 MB in half an
# hour of ladders.
LOG_MAX_BYTES = 32 << 20
LOG_CHECK_S = 5.0
# Restart pauses grow 0.5 s, 1 s, 2 s ... up to this; a process that died this many times
# within FAILURE_WINDOW_S makes the supervisor give up and stop the stack.
MAX_BACKOFF_S = 30.0
MAX_FAILURES = 5
FAILURE_WINDOW_S = 60.0
# A service whose port (or metrics port) another program took between the launcher's
# choice and its bind exits with this (sysexits' EX_TEMPFAIL: try again); the launcher
# then starts the stack's services again on other ports, at most this many times in all.
EXIT_PORT_TAKEN = 75
PORT_ATTEMPTS = 3


def exit_code(exc: OSError) -> int:
    """How a service that cannot serve ends: ``EXIT_PORT_TAKEN`` when its address is in
    use, else 2 (a bad address, say)."""
    return EXIT_PORT_TAKEN if exc.errno == errno.EADDRINUSE else 2


class PortTaken(RuntimeError):
    """A process of the stack found its port taken as it started (``EXIT_PORT_TAKEN``)."""


def die_with_parent() -> None:
    """Called first thing by a child of the launcher: get SIGTERM when the parent dies.

    The child does this itself rather than through ``preexec_fn``: running Python between
    fork and exec in a process with gRPC threads can crash the child (gRPC's fork handlers
    restart its poller, and Popen then closes the poller's descriptors).
    """
    parent = os.environ.get(PARENT_ENV)
    if not parent:
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        return
    if os.getppid() != int(parent):  # the parent died before prctl took effect
        os.kill(os.getpid(), signal.SIGTERM)


def max_workers() -> int:
    """The most workers one launcher runs: ``WORKERS_PER_CORE`` per core this process may
    use (at least 8), and no more than one per ``MEMORY_PER_WORKER`` of the machine's
    memory (at least 1). Each is a process of about 250 MB that loads every engine; `arena
    workers scale 99999` once started them until the machine stopped answering."""
    by_cores = max(8, WORKERS_PER_CORE * len(os.sched_getaffinity(0)))
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return max(1, min(by_cores, memory // MEMORY_PER_WORKER))


def check_worker_count(count: int, what: str = "the worker count") -> None:
    """Raises ``InvalidArgumentError`` naming ``what`` unless ``0 <= count <= max_workers()``."""
    if count < 0:
        raise InvalidArgumentError(f"{what} must be 0 or more, got {count}")
    if count > max_workers():
        raise InvalidArgumentError(
            f"{what} must be at most {max_workers()} on this machine ({WORKERS_PER_CORE} "
            f"per core, at least 8; one per {MEMORY_PER_WORKER >> 20} MB of memory), got "
            f"{count}; more workers on one machine only queue for its cores: run more on "
            "other machines (`arena worker`)")


def available_memory() -> int | None:
    """Bytes of memory the machine can still give without swapping (``MemAvailable`` of
    /proc/meminfo); None where it does not say."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_memory_for(more: int) -> None:
    """Raises ``InvalidArgumentError`` when ``more`` new workers, ``MEMORY_PER_WORKER``
    each, would not fit in the memory the machine has available now: ``max_workers``
    counts all its memory, whatever other programs hold."""
    available = available_memory()
    if more <= 0 or available is None or more * MEMORY_PER_WORKER <= available:
        return
    raise InvalidArgumentError(
        f"{more} more worker{'s' if more > 1 else ''} need about "
        f"{more * MEMORY_PER_WORKER >> 20} MB and this machine has {available >> 20} MB "
        "available: free some memory, or run workers on other machines (`arena worker`)")


@dataclass
class Process:
    """One service process the launcher runs (and restarts under the same name)."""

    name: str  # "registry", "referee-2", "worker-1", ...
    role: str
    args: list[str]
    ready_file: Path
    log_file: Path
    popen: subprocess.Popen[bytes] | None = None
    port: int = 0
    metrics_port: int = 0  # its /metrics port, if the launcher gave it one (kept on restart)
    failures: list[float] = field(default_factory=list)  # monotonic times of deaths
    restart_at: float = 0.0  # when a dead process is due to start again (0: not dead)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no log)"

    def last_words(self) -> str:
        """The last line of the log (a service that cannot start says why there last)."""
        lines = [line.strip() for line in self.log_tail(2000).splitlines() if line.strip()]
        return bounded(lines[-1], 400) if lines else "(an empty log)"


def rotate_log(path: Path, max_bytes: int) -> bool:
    """If the log at ``path`` holds more than ``max_bytes``, copy it to ``path.1`` (over
    the one before) and empty it; True if it did. Its process keeps writing: the file was
    opened for appending, so its next line lands at the new end (a line written between
    the copy and the emptying is lost)."""
    try:
        if path.stat().st_size <= max_bytes:
            return False
        shutil.copyfile(path, path.with_name(path.name + ".1"))
        os.truncate(path, 0)
    except OSError:  # gone, or the disk full: tried again next time
        return False
    return True


# (NUMBA_CACHE_DIR, ARENA_WARM_GAMES) whose kernels this process had compiled.
_COMPILED: set[tuple[str, str]] = set()


@dataclass
class Launcher:
    """A local Arena: Redis, services, workers. Use as a context manager or start()/stop().

    ``redis_urls`` (durable, cache) uses Redis servers someone else runs (the tests);
    otherwise two embedded servers are started under ``home``. ``env`` adds environment
    variables for every service (settings: ``docs/configuration.md``). ``metrics`` gives
    each process a free loopback port for its Prometheus endpoint (``stack.json`` lists
    them under ``metrics``). ``engines`` is the match workers' engine catalog (protocol
    engines). Services log text lines (``ARENA_LOG_FORMAT``) to their files.
    """

    home: Path = field(default_factory=arena_home)
    workers: int = 2
    analysts: int = 1
    referees: int = 1
    web: bool = False
    metrics: bool = False
    engines: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    redis_urls: tuple[str, str] | None = None
    durable: EmbeddedRedis | None = None
    cache: EmbeddedRedis | None = None
    processes: dict[str, Process] = field(default_factory=dict)
    admin_token: str = ""
    tls: bool = False
    mutual_tls: bool = False
    pki: LocalPKI | None = None
    redis_passwords: dict[str, Path] = field(default_factory=dict)  # user -> password file
    home_lock: IO[str] | None = field(default=None, repr=False)  # held while running
    log_max_bytes: int = LOG_MAX_BYTES  # a process's log, before it is rotated
    _next_log_check: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        check_worker_count(self.workers)
        check_memory_for(self.workers)

    # -- lifecycle -----------------------------------------------------------------------

    def prepare(self) -> Launcher:
        """Folders, certificates, Redis and the admin token: what every process needs
        before it starts."""
        self.lock_home()
        if self.tls or self.mutual_tls:
            self.pki = ensure_local_pki(self.home / "tls")
        self.start_redis()
        self.admin_token = self.admin_token or self._admin_token()
        return self

    def lock_home(self) -> None:
        """Hold ``<home>/run/launcher.lock`` from here to ``stop``: a second stack on the
        same home would share this one's Redis files and overwrite its stack file. The
        kernel drops the lock when the process ends, however it ends. Raises
        ``FailedPreconditionError`` if another launcher holds it."""
        if self.home_lock is not None:
            return
        for folder in (self.home, self.home / "logs", self.home / "run"):
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except (FileExistsError, NotADirectoryError) as exc:
                blocker = next((p for p in (folder, *folder.parents)
                                if p.exists() and not p.is_dir()), folder)
                raise FailedPreconditionError(
                    f"the arena home {self.home} cannot be made: {blocker} is a file, not a "
                    "folder (choose another with --home or ARENA_HOME)") from exc
        handle = open(self.home / "run" / LOCK_FILE, "a+")  # noqa: SIM115 (held until stop)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            owner = handle.read().strip() or "?"
            handle.close()
            raise FailedPreconditionError(
                f"Arena is already running in {self.home} (launcher pid {owner}): stop it "
                "first (Ctrl-C where it runs), or give another --home") from None
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self.home_lock = handle

    def start(self, timeout_s: float = 120.0) -> Launcher:
        """Start everything at once: every process gets its port first, so each one knows
        where all the others listen (the registry and the referee call each other)."""
        self.lock_home()  # before the clean-up below: a refused start stops nothing
        try:
            self.prepare()
            for attempt in range(1, PORT_ATTEMPTS + 1):
                planned = self._plan()
                if any(p.role in ("worker", "analyst") for p in planned):
                    self.compile_engines()
                for process in planned:
                    self._launch(process)
                try:
                    self.wait_ready([p.name for p in planned], timeout_s)
                    break
                except PortTaken:
                    if attempt == PORT_ATTEMPTS:
                        raise
                    # every process was told where the others listen: all move together
                    self._stop_processes(planned)
            self.write_manifest()
        except BaseException:
            self.stop()
            raise
        return self

    def _plan(self) -> list[Process]:
        """Every service process of the stack, each on a port of its own."""
        planned = [self.add("registry"), self.add("ladder")]
        planned += [self.add("referee", self._numbered("referee", i))
                    for i in range(self.referees)]
        planned += [self.add("worker", f"worker-{i + 1}") for i in range(self.workers)]
        planned += [self.add("analyst", f"analyst-{i + 1}") for i in range(self.analysts)]
        if self.web:
            planned.append(self.add("web"))
        return planned

    def compile_engines(self) -> None:
        """Compile the engines' kernels in one step before any worker starts (the
        workers then load them from numba's cache within their ready timeout). Once per
        launcher process and cache folder: later starts only load."""
        env = self.env_for("worker")
        key = (env.get("NUMBA_CACHE_DIR", ""), env.get("ARENA_WARM_GAMES", ""))
        if key in _COMPILED:
            return
        log_file = self.home / "logs" / "compile.log"
        with open(log_file, "ab") as log:  # Ctrl-C is ours to handle: a session of its own
            code = subprocess.run([sys.executable, "-m", "arena.services.worker.warm"],
                                  stdout=log, stderr=subprocess.STDOUT, env=env,
                                  start_new_session=True).returncode
        if code != 0:  # one line: its last line says why (a bad setting, an exception)
            said = [line for line in log_file.read_text(errors="replace").splitlines()
                    if line.strip()]
            why = f": {said[-1].strip()}" if said else ""
            raise RuntimeError(f"compiling the engines failed (exit code {code}){why}; the "
                               f"log: {log_file}")
        _COMPILED.add(key)

    def start_redis(self) -> None:
        if self.redis_urls is not None:
            return
        self.redis_passwords = local_passwords(self.home / "secrets")
        self.durable = self._embedded_redis("durable")
        self.cache = self._embedded_redis("cache")

    def _embedded_redis(self, flavour: Flavour) -> EmbeddedRedis:
        folder = self.home / f"redis-{flavour}"
        folder.mkdir(parents=True, exist_ok=True)
        passwords = read_passwords(self.redis_passwords)
        write_private(folder / "users.acl", acl_text(flavour, passwords))
        return EmbeddedRedis(folder, flavour, tied_to_parent=True,
                             acl_file=folder / "users.acl",
                             admin_password=passwords[ADMIN]).start()

    @property
    def redis_url(self) -> str:
        """The durable Redis, with every right (the admin's): for tests and tools."""
        return self._urls(admin=True)[0]

    @property
    def cache_url(self) -> str:
        return self._urls(admin=True)[1]

    def _urls(self, admin: bool = False) -> tuple[str, str]:
        if self.redis_urls is not None:
            return self.redis_urls
        assert self.durable is not None and self.cache is not None, "Redis is not started"
        if admin:
            return self.durable.admin_url, self.cache.admin_url
        return self.durable.url, self.cache.url

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM every process (and hand-started workers), wait, SIGKILL what is left,
        stop Redis, remove the stack file."""
        self._stop_extra_workers()
        self._stop_processes(list(self.processes.values()), grace_s)
        for server in (self.cache, self.durable):
            if server is not None:
                server.stop()
        (self.home / STACK_FILE).unlink(missing_ok=True)
        if self.home_lock is not None:
            self.home_lock.close()  # releases the lock
            self.home_lock = None

    def _stop_processes(self, processes: list[Process], grace_s: float = 15.0) -> None:
        """SIGTERM ``processes``, wait, SIGKILL what is left; they leave the stack."""
        running = [p for p in processes if p.alive()]
        for process in running:
            assert process.popen is not None
            process.popen.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for process in running:
            self._reap(process, max(0.1, deadline - time.monotonic()))
        for process in processes:
            self.processes.pop(process.name, None)

    def __enter__(self) -> Launcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- single processes ------------------------------------------------------------------

    def add(self, role: str, name: str | None = None, args: list[str] | None = None) -> Process:
        """Plan one process of ``role`` on a free port (``spawn`` also starts it)."""
        name = name or role
        process = Process(name, role, list(args or []), self.home / "run" / f"{name}.port",
                          self.home / "logs" / f"{name}.log", port=free_port())
        self.processes[name] = process
        return process

    def spawn(self, role: str, name: str | None = None, wait: bool = True,
              args: list[str] | None = None, timeout_s: float = 120.0) -> Process:
        """Start one process of ``role`` (also to add a process to a running stack)."""
        process = self.add(role, name, args)
        if role in ("worker", "analyst"):
            self.compile_engines()
        self._launch(process)
        if wait:
            self.wait_ready([process.name], timeout_s)
        return process

    def _launch(self, process: Process) -> None:
        process.ready_file.unlink(missing_ok=True)
        listen = f"127.0.0.1:{process.port}"  # a restart keeps its port: others know it
        module, pool = ("worker", ["--pool", "analysis"]) if process.role == "analyst" else (
            process.role, [])
        command = [sys.executable, "-m", f"arena.services.{module}", "--listen", listen,
                   "--ready-file", str(process.ready_file), "--instance", process.name,
                   *pool, *self._metrics_args(process), *process.args]
        with open(process.log_file, "ab") as log:
            process.popen = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                             env=self.env_for(process.role))

    def _metrics_args(self, process: Process) -> list[str]:
        if not self.metrics:
            return []
        process.metrics_port = process.metrics_port or free_port()
        return ["--metrics-listen", f"127.0.0.1:{process.metrics_port}"]

    def env_for(self, role: str) -> dict[str, str]:
        """The environment of a service process: where Redis and the other services are,
        and how it proves who it is to them."""
        env = {k: v for k, v in os.environ.items() if k not in ACCESS_ENV}
        durable, cache = self._urls()
        env.update(ARENA_REDIS_URL=durable, ARENA_CACHE_URL=cache,
                   ARENA_ADMIN_TOKEN=self.admin_token, PYTHONUNBUFFERED="1",
                   **{PARENT_ENV: str(os.getpid())})
        env.update(self.access_env(role))
        env.setdefault("ARENA_LOG_FORMAT", "text")  # the log files are read by people
        for peer, target in self.roles().items():
            env[f"ARENA_{peer.upper()}"] = target
        if role in ("worker", "analyst") and self.engines is not None:
            env["ARENA_ENGINES_CATALOG"] = str(self.engines.resolve())
        env.update(self.env)
        return env

    def access_env(self, role: str) -> dict[str, str]:
        """A service's TLS files and Redis user (settings ``tls_*``, ``redis_*``)."""
        env: dict[str, str] = {}
        if self.pki is not None:
            env.update(ARENA_TLS_CERT_FILE=str(self.pki.service_cert),
                       ARENA_TLS_KEY_FILE=str(self.pki.service_key),
                       ARENA_TLS_CA_FILE=str(self.pki.ca_file))
            if self.mutual_tls:
                env["ARENA_TLS_CLIENT_CA_FILE"] = str(self.pki.ca_file)
        user = "worker" if role == "analyst" else role
        if user in self.redis_passwords:
            env.update(ARENA_REDIS_USERNAME=user,
                       ARENA_REDIS_PASSWORD_FILE=str(self.redis_passwords[user]))
        return env

    def client_credentials(self) -> grpc.ChannelCredentials | None:
        """What a client of this stack connects with (None: plaintext)."""
        if self.pki is None:
            return None
        return channel_credentials(str(self.pki.ca_file), str(self.pki.client_cert),
                                   str(self.pki.client_key))

    def roles(self) -> dict[str, str]:
        """Where clients reach each service role (several servers of a role balanced)."""
        found = {}
        for peer, role in ROLE_PROCESSES.items():
            targets = [self.processes[n].target for n in self.names(role)
                       if self.processes[n].port]
            if targets:
                found[peer] = balanced_target(targets)
        return found

    def wait_ready(self, names: list[str], timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        credentials = self.client_credentials()
        for name in names:
            process = self.processes[name]
            while not (process.ready_file.exists() and process.ready_file.read_text().strip()):
                if not process.alive():
                    failed = PortTaken if self._code(process) == EXIT_PORT_TAKEN else \
                        RuntimeError
                    raise failed(f"{name} exited with {self._code(process)}: "
                                 f"{process.last_words()} (see {process.log_file})\n"
                                 f"{process.log_tail()}")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{name} did not become ready in {timeout_s:.0f} s; "
                                       f"see {process.log_file}")
                time.sleep(0.05)
            while process.role != "web" and not check_health(process.target,
                                                             credentials=credentials):
                if not process.alive() or time.monotonic() > deadline:
                    raise RuntimeError(f"{name} is not SERVING at {process.target}:\n"
                                       f"{process.log_tail()}")
                time.sleep(0.05)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one process and wait for it (the tests' kill -9)."""
        process = self.processes[name]
        if process.alive():
            assert process.popen is not None
            process.popen.send_signal(sig)
            self._reap(process, 15.0)

    def restart(self, name: str, wait: bool = True) -> Process:
        """Start a process again under its name and on its port (stopping it first)."""
        process = self.processes[name]
        self.kill(name, signal.SIGTERM)
        self._launch(process)
        if wait:
            self.wait_ready([name])
        return process

    def names(self, role: str) -> list[str]:
        return [n for n, p in self.processes.items() if p.role == role]

    def target(self, role: str) -> str:
        """The address of the first process of ``role``."""
        return self.processes[self.names(role)[0]].target

    @staticmethod
    def _numbered(role: str, index: int) -> str:
        return role if index == 0 else f"{role}-{index + 1}"

    @staticmethod
    def _code(process: Process) -> int | None:
        return process.popen.returncode if process.popen else None

    @staticmethod
    def _reap(process: Process, timeout_s: float) -> None:
        assert process.popen is not None
        try:
            process.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.popen.kill()
            process.popen.wait()

    # -- supervision and scaling -----------------------------------------------------------

    def supervise_once(self) -> list[str]:
        """Restart dead processes whose pause is over; returns what happened, one line
        each. Raises ``RuntimeError`` when a process keeps dying."""
        events: list[str] = []
        now = time.monotonic()
        for process in list(self.processes.values()):
            if process.alive():
                continue
            if not process.restart_at:
                process.failures = [t for t in process.failures if now - t < FAILURE_WINDOW_S]
                process.failures.append(now)
                if len(process.failures) >= MAX_FAILURES:
                    raise RuntimeError(
                        f"{process.name} died {len(process.failures)} times within "
                        f"{FAILURE_WINDOW_S:.0f} s (exit {self._code(process)}); last log:\n"
                        f"{process.log_tail(1500)}")
                pause = min(MAX_BACKOFF_S, 0.5 * 2 ** (len(process.failures) - 1))
                process.restart_at = now + pause
                events.append(f"{process.name} exited with {self._code(process)}; "
                              f"restarting in {pause:.1f} s")
            elif now >= process.restart_at:
                process.restart_at = 0.0
                self._launch(process)
                events.append(f"{process.name} restarted (pid {process.pid})")
        events += self._supervise_redis()
        if any("restarted" in event for event in events):
            self.write_manifest()  # new pids
        if now >= self._next_log_check:
            self._next_log_check = now + LOG_CHECK_S
            for process in self.processes.values():
                rotate_log(process.log_file, self.log_max_bytes)
        return events

    def _supervise_redis(self) -> list[str]:
        events = []
        for server in (self.durable, self.cache):
            if server is not None and not server.alive():
                server.start()  # same port and data folder: the durable one reloads its AOF
                events.append(f"redis ({server.flavour}) restarted on port {server.port}")
        return events

    def scale(self, workers: int, timeout_s: float = 120.0) -> list[str]:
        """Add or remove workers until ``workers`` run; returns what changed. Raises
        ``InvalidArgumentError`` for a count ``check_worker_count`` refuses, or new workers
        the available memory cannot hold."""
        check_worker_count(workers)
        current = sorted(self.names("worker"), key=lambda n: int(n.rsplit("-", 1)[1]))
        check_memory_for(workers - len(current))
        events = []
        if workers > len(current):
            taken = {int(n.rsplit("-", 1)[1]) for n in current}
            numbers = (i for i in range(1, workers + len(current) + 1) if i not in taken)
            added = [self.spawn("worker", f"worker-{next(numbers)}", wait=False).name
                     for _ in range(workers - len(current))]
            self.wait_ready(added, timeout_s)
            events += [f"{name} started" for name in added]
        for name in reversed(current[max(0, workers):]):
            self.kill(name, signal.SIGTERM)  # a worker hands back or finishes its job
            del self.processes[name]
            events.append(f"{name} stopped")
        if events:
            self.write_manifest()
        return events

    def _stop_extra_workers(self) -> None:
        for pid_file in (self.home / "run" / EXTRA_DIR).glob("*.pid"):
            # The file of a worker killed long ago may name another process by now: its
            # start time tells them apart.
            with contextlib.suppress(OSError):
                pids.send(pid_file.read_text())
            pid_file.unlink(missing_ok=True)

    # -- what is where ---------------------------------------------------------------------

    def _admin_token(self) -> str:
        path = self.home / ADMIN_TOKEN_FILE
        if not path.exists():
            path.write_text(secrets.token_urlsafe(24) + "\n")
            path.chmod(0o600)
        return path.read_text().strip()

    def manifest(self) -> dict[str, object]:
        services = {name: p.target for name, p in self.processes.items() if p.role != "web"}
        durable, cache = self._urls()
        found: dict[str, object] = {
            "redis": durable, "cache": cache,
            "token_file": str(self.home / ADMIN_TOKEN_FILE), "roles": self.roles(),
            "services": services,
            "pids": {name: p.pid for name, p in self.processes.items()},
            "launcher": pids.stamp(),  # "<pid> <start>": `arena workers scale` asks it
            "service_env": self.access_env("worker"),  # for `arena worker`
        }
        if self.pki is not None:
            found["tls"] = {"ca_file": str(self.pki.ca_file),
                            "cert_file": str(self.pki.client_cert),
                            "key_file": str(self.pki.client_key), "mutual": self.mutual_tls}
        if self.durable is not None and self.cache is not None:
            numbers = found["pids"]
            assert isinstance(numbers, dict)
            numbers.update({"redis-durable": self.durable.pid, "redis-cache": self.cache.pid})
        for name in self.names("web"):
            found["web"] = f"http://{self.processes[name].target}"
        if self.engines is not None:
            found["engines"] = str(self.engines.resolve())
        if self.metrics:
            found["metrics"] = {name: f"127.0.0.1:{p.metrics_port}"
                                for name, p in self.processes.items() if p.metrics_port}
        return found

    def write_manifest(self) -> None:
        path = self.home / STACK_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.manifest(), indent=2) + "\n")
        tmp.replace(path)

    def describe(self) -> str:
        durable, cache = self._urls()
        lines = [f"  {'redis (durable, AOF)':<22} {durable}",
                 f"  {'redis (cache, LRU)':<22} {cache}"]
        if self.pki is not None:
            mode = "mutual TLS" if self.mutual_tls else "TLS"
            lines.append(f"  {mode:<22} CA {self.pki.ca_file}")
        for name, process in self.processes.items():
            where = f"http://{process.target}" if process.role == "web" else process.target
            if process.metrics_port:
                where += f"  (metrics http://127.0.0.1:{process.metrics_port}/metrics)"
            lines.append(f"  {name:<22} {where}")
        lines.append(f"  {'admin token':<22} {self.home / ADMIN_TOKEN_FILE}")
        return "\n".join(lines)


def balanced_target(targets: list[str]) -> str:
    """One gRPC target for several servers of a role (``ipv4:a,b``; clients balance
    calls between them round robin), or the address itself for one."""
    return targets[0] if len(targets) == 1 else "ipv4:" + ",".join(targets)


def read_control(home: Path) -> Mapping[str, object]:
    try:
        data = json.loads((home / "run" / CONTROL_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class StoppedWhileStarting(Exception):
    """Ctrl-C or SIGTERM while `arena up` was starting (a first start compiles for
    minutes): the start is abandoned at once, not finished and then stopped."""


@dataclass
class _StopSignals:
    requested: bool = False
    starting: bool = True


@contextlib.contextmanager
def _signals_stop() -> Iterator[_StopSignals]:
    """SIGTERM and SIGINT ask to stop: while starting, at once (``StoppedWhileStarting``
    out of whatever the start waits for); once up, at the supervisor's next round."""
    stop = _StopSignals()

    def on_signal(signum: int, _frame: object) -> None:
        stop.requested = True
        if stop.starting:
            stop.starting = False  # once: a second signal must not cut the clean-up short
            raise StoppedWhileStarting(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_up(workers: int, home: Path | None = None, web: bool = False,
           analysts: int = 1, metrics: bool = False, engines: Path | None = None,
           tls: bool = False, mutual_tls: bool = False) -> int:
    """`arena up`: start everything, print where it listens, supervise until Ctrl-C or
    SIGTERM; `arena workers scale N` changes the number of workers meanwhile."""
    with _signals_stop() as stop:
        launcher = Launcher(home=home or arena_home(), workers=workers, analysts=analysts,
                            web=web, metrics=metrics, engines=engines, tls=tls,
                            mutual_tls=mutual_tls)
        try:
            launcher.lock_home()  # refused before it says anything or touches the home
            (launcher.home / "run" / CONTROL_FILE).unlink(missing_ok=True)
            print(f"Starting Arena in {launcher.home} (the first start on a machine "
                  "compiles the engines: a few minutes)...", flush=True)
            launcher.start()
            stop.starting = False
        except StoppedWhileStarting as signalled:
            if launcher.home_lock is not None:  # start() stops what it began, unless the
                launcher.stop()                 # signal came just after it returned
            print(f"stopped while starting ({signalled}): nothing is left running.",
                  flush=True)
            return 0
        try:
            print("Arena is up:\n" + launcher.describe(), flush=True)
            print("Press Ctrl-C to stop.", flush=True)
            while not stop.requested:
                for event in launcher.supervise_once():
                    print(event, file=sys.stderr, flush=True)
                wanted = read_control(launcher.home).get("workers")
                if isinstance(wanted, int) and wanted != len(launcher.names("worker")):
                    try:
                        for event in launcher.scale(wanted):
                            print(event, flush=True)
                    except InvalidArgumentError as exc:  # written by hand: said once
                        print(f"not scaled: {exc}", file=sys.stderr, flush=True)
                        (launcher.home / "run" / CONTROL_FILE).unlink(missing_ok=True)
                time.sleep(0.2)
        except RuntimeError as exc:
            print(f"giving up: {exc}", file=sys.stderr, flush=True)
            return 1
        finally:
            print("stopping Arena...", flush=True)
            launcher.stop()
            print("stopped.", flush=True)
    return 0
