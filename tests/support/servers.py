"""Real services inside the test process: each on a real gRPC server bound to port 0.

``serve(role, config)`` builds the role's service the way its ``__main__`` does (the same
``create_service`` factory), with the test tokens below. Tests that need whole processes
use the launcher instead (``tests/conftest.py``: the ``launcher`` fixture).
"""

from __future__ import annotations

import functools
import importlib
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from arena.clients.sdk import ArenaClient, StackAddresses
from arena.services.common.auth import Principal, TokenStore
from arena.services.common.config import Config
from arena.services.common.server import ServerHandle, build_server
from arena.services.common.tls import server_credentials

ADMIN_TOKEN = "admin-token"
TOKENS = {
    ADMIN_TOKEN: Principal("root", "admin"),
    "alice-token": Principal("alice", "user"),
    "bob-token": Principal("bob", "user"),
}


@dataclass
class Server:
    """One in-process service."""

    handle: ServerHandle

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.handle.port}"

    def stop(self) -> None:
        self.handle.stop(0)


@functools.cache
def compile_engines() -> None:
    """Compile every game's kernels into numba's cache the way the launcher does (the warm
    module: one process per game, at once), so that the first worker in this process only
    loads them. Once per test session; seconds when the cache is warm."""
    subprocess.run([sys.executable, "-m", "arena.services.worker.warm"], check=True,
                   stdout=subprocess.DEVNULL, timeout=900)


def serve(role: str, config: Config, **factory_args: Any) -> Server:
    """The ``role`` service, serving TLS if ``config`` gives it a certificate (as the
    services' runner does)."""
    if role == "worker":
        compile_engines()
    factory = importlib.import_module(f"arena.services.{role}.server").create_service
    registrations, names, on_stop = factory(config.replace(role=role), **factory_args)
    handle = build_server(registrations, names, "127.0.0.1:0", TokenStore(TOKENS),
                          credentials=server_credentials(config)).start()
    handle.on_stop.extend(on_stop)
    return Server(handle)


def client(token: str = ADMIN_TOKEN, **targets: str) -> ArenaClient:
    """An SDK client for the given services (``registry=...``, ``referee=...``)."""
    return ArenaClient(addresses=StackAddresses(token=token, **targets))


def metadata(token: str | None = "alice-token") -> tuple[tuple[str, str], ...]:
    return () if token is None else (("authorization", f"Bearer {token}"),)


def first_refusal(ask: Callable[[], object], reason: str, timeout_s: float = 30,
                  ) -> tuple[grpc.RpcError, float]:
    """Call ``ask`` until it is refused (a call that is served means what the test waits
    for has not happened yet: on a busy machine an earlier call may take a moment to
    arrive); the refusal and how long that call took. ``reason`` says what never came."""
    deadline = time.monotonic() + timeout_s
    while True:
        began = time.monotonic()
        try:
            ask()
        except grpc.RpcError as refusal:
            return refusal, time.monotonic() - began
        assert time.monotonic() < deadline, reason
