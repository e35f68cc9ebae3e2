"""Real service processes (``python -m arena.services.<role>``) on the session Redis servers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.common.server import check_health

ADMIN_TOKEN = "system-test-admin"
FAST_ENV = {
    "ARENA_MATCH_IDLE_MS": "1500",
    "ARENA_MIN_RECLAIM_IDLE_MS": "600",
    "ARENA_RECLAIM_MARGIN_MS": "300",
    "ARENA_HEARTBEAT_MS": "100",
    "ARENA_MAX_DELIVERIES": "10",
    "ARENA_WARM_GAMES": "othello",
}


@dataclass
class Proc:
    name: str
    process: subprocess.Popen[bytes]
    ready: Path
    log: Path
    port: int = 0

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"


@dataclass
class Services:
    """Starts, kills and stops service processes; every process is gone at teardown."""

    durable: EmbeddedRedis
    cache: EmbeddedRedis
    home: Path
    env: dict[str, str] = field(default_factory=dict)
    procs: list[Proc] = field(default_factory=list)

    def spawn(self, role: str, name: str, wait: bool = True) -> Proc:
        ready = self.home / f"{name}.port"
        log = self.home / f"{name}.log"
        env = dict(os.environ, ARENA_REDIS_URL=self.durable.url, ARENA_CACHE_URL=self.cache.url,
                   ARENA_ADMIN_TOKEN=ADMIN_TOKEN, PYTHONUNBUFFERED="1", **FAST_ENV)
        env.update(self.env)
        args = [sys.executable, "-m", f"arena.services.{role}", "--listen", "127.0.0.1:0",
                "--ready-file", str(ready), "--worker-id", name]
        with open(log, "ab") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env,
                                       cwd=Path(__file__).resolve().parents[2])
        proc = Proc(name, process, ready, log)
        self.procs.append(proc)
        if wait:
            self.wait_ready(proc)
        return proc

    def wait_ready(self, proc: Proc, timeout_s: float = 90.0) -> None:
        deadline = time.monotonic() + timeout_s
        while not proc.ready.exists() or not check_health(f"127.0.0.1:{proc.ready.read_text()}"):
            if proc.process.poll() is not None:
                raise RuntimeError(f"{proc.name} exited: {proc.log.read_text()[-3000:]}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"{proc.name} not ready: {proc.log.read_text()[-3000:]}")
            time.sleep(0.05)
        proc.port = int(proc.ready.read_text())

    def kill9(self, proc: Proc) -> None:
        proc.process.send_signal(signal.SIGKILL)
        proc.process.wait(10)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.process.poll() is None:
                proc.process.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.process.wait(15)
            except subprocess.TimeoutExpired:
                proc.process.kill()
                proc.process.wait()


@pytest.fixture
def services(redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
             redis_client: redis.Redis, cache_client: redis.Redis,
             tmp_path: Path) -> Iterator[Services]:
    running = Services(redis_server, cache_server, tmp_path)
    try:
        yield running
    finally:
        running.stop_all()
