"""The embedded stack behind `arena up`: two Redis servers, every service, N workers,
and the web gateway (HTTP, started last: it needs the others' addresses).

Everything runs as local processes under one state folder (``.arena/`` by default):
``redis-durable/`` (AOF), ``redis-cache/`` (LRU), ``logs/``, ``admin.token`` and
``stack.json`` (where everything listens, read by the CLI). Children get
``PR_SET_PDEATHSIG`` so that even a SIGKILLed ``arena up`` leaves nothing behind.
"""

from __future__ import annotations

import ctypes
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.server import check_health

SERVICES = ("registry", "referee", "ladder")
WEB = "web"
STATE_ENV = "ARENA_HOME"


def state_dir() -> Path:
    return Path(os.environ.get(STATE_ENV, ".arena")).resolve()


PARENT_ENV = "ARENA_PARENT_PID"


def die_with_parent() -> None:
    """Called first thing by a child of the stack: get SIGTERM when the parent dies (Linux).

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


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    ready_file: Path
    port: int = 0

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def healthy(self) -> bool:
        """gRPC health for the services, GET /healthz for the web gateway."""
        return check_http_health(self.target) if self.name == WEB else check_health(self.target)


@dataclass
class Stack:
    """A running embedded Arena. Use as a context manager, or start()/stop()."""

    home: Path = field(default_factory=state_dir)
    workers: int = 2
    durable: EmbeddedRedis | None = None
    cache: EmbeddedRedis | None = None
    children: list[Child] = field(default_factory=list)
    admin_token: str = ""
    extra_env: dict[str, str] = field(default_factory=dict)
    web: bool = True

    # -- lifecycle ---------------------------------------------------------------------

    def start(self, timeout_s: float = 90.0) -> Stack:
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "logs").mkdir(exist_ok=True)
        (self.home / "run").mkdir(exist_ok=True)
        try:
            self.durable = EmbeddedRedis(
                self.home / "redis-durable", "durable", tied_to_parent=True
            ).start()
            self.cache = EmbeddedRedis(
                self.home / "redis-cache", "cache", tied_to_parent=True
            ).start()
            self.admin_token = self._admin_token()
            for name in SERVICES:
                self.spawn(name)
            for index in range(self.workers):
                self.spawn("worker", f"worker-{index + 1}")
            self.wait_ready(timeout_s)
            if self.web:
                self.start_web(timeout_s)
            self._write_manifest()
        except BaseException:
            self.stop()
            raise
        return self

    def _admin_token(self) -> str:
        path = self.home / "admin.token"
        if not path.exists():
            path.write_text(secrets.token_urlsafe(24) + "\n")
            path.chmod(0o600)
        return path.read_text().strip()

    def env(self) -> dict[str, str]:
        assert self.durable is not None and self.cache is not None
        env = dict(os.environ)
        env.update(
            ARENA_REDIS_URL=self.durable.url,
            ARENA_CACHE_URL=self.cache.url,
            ARENA_ADMIN_TOKEN=self.admin_token,
            PYTHONUNBUFFERED="1",
            **{PARENT_ENV: str(os.getpid())},
        )
        env.update(self.extra_env)
        return env

    def spawn(self, role: str, name: str | None = None,
              env: dict[str, str] | None = None) -> Child:
        """Start one service process (also used by tests to add or replace processes)."""
        name = name or role
        ready = self.home / "run" / f"{name}.port"
        ready.unlink(missing_ok=True)
        args = [sys.executable, "-m", f"arena.services.{role}",
                "--listen", "127.0.0.1:0", "--ready-file", str(ready)]
        if role == "worker":
            args += ["--worker-id", name]
        log = open(self.home / "logs" / f"{name}.log", "ab")  # noqa: SIM115 - child owns it
        process = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=self.env() | (env or {})
        )
        log.close()
        child = Child(name, process, ready)
        self.children.append(child)
        return child

    def wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        for child in self.children:
            while not child.port:
                if child.process.poll() is not None:
                    raise RuntimeError(
                        f"{child.name} exited with {child.process.returncode}; "
                        f"see {self.home / 'logs' / (child.name + '.log')}"
                    )
                if child.ready_file.exists():
                    child.port = int(child.ready_file.read_text())
                elif time.monotonic() > deadline:
                    raise TimeoutError(f"{child.name} did not become ready in {timeout_s:.0f} s")
                else:
                    time.sleep(0.05)
            while not child.healthy():
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{child.name} is not SERVING at {child.target}")
                time.sleep(0.05)

    def start_web(self, timeout_s: float) -> Child:
        """The web gateway, pointed at the services through their gRPC addresses."""
        addresses = {f"ARENA_{role.upper()}": self.target(role) for role in SERVICES}
        if self.workers:
            addresses["ARENA_ENGINE"] = self.target("worker")
        child = self.spawn(WEB, env=addresses)
        self.wait_ready(timeout_s)
        return child

    @property
    def web_url(self) -> str:
        """The web gateway's address, or "" when it is not running."""
        child = self.find(WEB)
        return f"http://{child.target}" if child is not None and child.port else ""

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM every child, wait for the grace period, SIGKILL what is left, stop Redis."""
        for child in self.children:
            if child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for child in self.children:
            try:
                child.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait()
        self.children.clear()
        for server in (self.cache, self.durable):
            if server is not None:
                server.stop()
        (self.home / "stack.json").unlink(missing_ok=True)

    def __enter__(self) -> Stack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what is where -----------------------------------------------------------------

    def find(self, name: str) -> Child | None:
        return next((c for c in self.children if c.name == name), None)

    def target(self, role: str) -> str:
        child = self.find(role) or next(c for c in self.children if c.name.startswith(role))
        return child.target

    def manifest(self) -> dict[str, object]:
        assert self.durable is not None and self.cache is not None
        return {
            "redis": self.durable.url,
            "cache": self.cache.url,
            "token_file": str(self.home / "admin.token"),
            "services": {c.name: c.target for c in self.children if c.name != WEB},
            "web": self.web_url,
            "pids": {c.name: c.process.pid for c in self.children}
            | {"redis-durable": self.durable.pid, "redis-cache": self.cache.pid},
        }

    def _write_manifest(self) -> None:
        path = self.home / "stack.json"
        path.write_text(json.dumps(self.manifest(), indent=2) + "\n")

    def describe(self) -> str:
        assert self.durable is not None and self.cache is not None
        lines = [f"  {'redis (durable, AOF)':<22} {self.durable.url}",
                 f"  {'redis (cache, LRU)':<22} {self.cache.url}"]
        lines += [f"  {c.name:<22} {c.target}" for c in self.children if c.name != WEB]
        if self.web_url:
            lines.append(f"  {'web (browser)':<22} {self.web_url}")
        lines.append(f"  {'admin token':<22} {self.home / 'admin.token'}")
        return "\n".join(lines)


def check_http_health(target: str, timeout_s: float = 2.0) -> bool:
    """True if the web gateway at ``target`` answers GET /healthz with 200."""
    try:
        with urllib.request.urlopen(f"http://{target}/healthz", timeout=timeout_s) as reply:
            return bool(reply.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def run_up(workers: int, home: Path | None = None) -> int:
    """`arena up`: start everything, print where it listens, wait for Ctrl-C or SIGTERM."""
    stop_requested = False

    def on_signal(_signum: int, _frame: object) -> None:
        nonlocal stop_requested
        stop_requested = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    stack = Stack(home=home or state_dir(), workers=workers)
    stack.start()
    try:
        print("Arena is up:\n" + stack.describe(), flush=True)
        print("Press Ctrl-C to stop.", flush=True)
        while not stop_requested:
            for child in stack.children:
                if child.process.poll() is not None:
                    print(f"{child.name} exited with {child.process.returncode}; stopping",
                          file=sys.stderr)
                    stop_requested = True
            time.sleep(0.2)
    finally:
        print("stopping Arena...", flush=True)
        stack.stop()
        print("stopped.", flush=True)
    return 0
