"""Helpers for running the real `arena` command in a subprocess."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.config import Config
from arena.services.common.embedded_redis import EmbeddedRedis
from arena.services.ladder.follower import FollowerConfig

from tests.conftest import TEST_BOTS
from tests.support.servers import ADMIN_TOKEN, Server, client, serve

REPO = Path(__file__).resolve().parents[2]

RunArena = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_arena(tmp_path: Path) -> RunArena:
    """Run ``python -m arena.clients ARGS`` in ``tmp_path`` with an isolated ARENA_HOME
    (so no real stack is found unless a test points at one)."""

    def run(*args: str, stdin: str | IO[bytes] = "", env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """``stdin``: the text typed, or an open file (bytes no text holds)."""
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
        full_env["ARENA_HOME"] = str(tmp_path / ".arena")
        full_env["PYTHONPATH"] = str(REPO)
        full_env.update(env or {})
        given = {"input": stdin} if isinstance(stdin, str) else {"stdin": stdin}
        return subprocess.run(
            [sys.executable, "-m", "arena.clients", *args], text=True, capture_output=True,
            cwd=tmp_path, env=full_env, timeout=timeout, **given,
        )

    return run


def assert_one_line_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """A failed command: non-zero exit, one line on stderr, no traceback."""
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr + result.stdout, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("arena: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]


# --- the `arena` command against services running in this process -----------------------


@dataclass
class CliResult:
    code: int
    out: str
    err: str


RunCli = Callable[..., CliResult]


@dataclass
class InProcessStack:
    """Registry, referee, ladder service, a match worker and an analysis worker on real
    gRPC servers in this process, on the session's Redis servers; ``run`` is the `arena`
    command aimed at them."""

    servers: dict[str, Server]
    run: RunCli

    def client(self) -> ArenaClient:
        # The SDK calls the analysis pool its "engine" address (the CLI: --analysis).
        return client(**{"engine" if role == "analysis" else role: server.target
                         for role, server in self.servers.items() if role != "worker"})


@pytest.fixture
def cli_stack(registry_server: Server, redis_server: EmbeddedRedis, cache_server: EmbeddedRedis,
              cache_client: redis.Redis, capsys: pytest.CaptureFixture[str],
              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InProcessStack]:
    """The `arena` command (``arena.clients.cli.main``, in this process) against a whole
    stack of real services started here; each ``run`` returns the exit code and output."""
    config = Config(redis_url=redis_server.url, cache_url=cache_server.url,
                    registry=registry_server.target, service_token=ADMIN_TOKEN,
                    ladder_reconcile_s=1.0, heartbeat_ms=100, match_idle_ms=1500,
                    external_allow=TEST_BOTS)
    servers = {"registry": registry_server}
    try:
        servers["worker"] = serve("worker", config)
        servers["analysis"] = serve("worker", config.replace(worker_pool="analysis"))
        servers["referee"] = serve("referee", config)
        servers["ladder"] = serve("ladder", config.replace(referee=servers["referee"].target),
                                  follower=FollowerConfig(block_ms=100))
        monkeypatch.chdir(tmp_path)
        for name in [n for n in os.environ if n.startswith("ARENA_")]:
            monkeypatch.delenv(name)
        monkeypatch.setenv("ARENA_HOME", str(tmp_path / ".arena"))
        where = [f"--{role}={server.target}" for role, server in servers.items()
                 if role != "worker"]

        def run(*args: str, stdin: str = "", addresses_from_env: bool = False) -> CliResult:
            """``addresses_from_env``: the services' addresses and the token come from the
            environment (as a user's do, or from stack.json), not the command line."""
            from arena.clients.cli import main

            capsys.readouterr()
            monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
            given = [*where, "--token", ADMIN_TOKEN]
            if addresses_from_env:
                for role, server in servers.items():
                    if role != "worker":
                        name = "ENGINE" if role == "analysis" else role.upper()
                        monkeypatch.setenv(f"ARENA_{name}", server.target)
                monkeypatch.setenv("ARENA_TOKEN", ADMIN_TOKEN)
                given = []
            code = main([*given, "--timeout", "30", *args])
            captured = capsys.readouterr()
            return CliResult(code, captured.out, captured.err)

        yield InProcessStack(servers, run)
    finally:
        for role, server in servers.items():
            if role != "registry":
                server.stop()


def ok(result: CliResult) -> str:
    """The output of a command that must succeed."""
    assert result.code == 0, result.err + result.out
    return result.out


def one_line_error(result: CliResult, *needles: str) -> str:
    """The message of a command that must fail with one line and no traceback."""
    assert result.code != 0, result.out
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
