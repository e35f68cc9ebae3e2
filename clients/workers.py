"""`arena worker` (one more worker on the running stack) and `arena workers scale N`.

Both find the stack the way every command does: the stack file in the home folder. A
worker started by hand leaves its pid under ``run/extra/`` so that `arena up` stops it with
the rest, and stops by itself if that `arena up` ends without stopping it (killed: its
Redis servers went with it); `scale` asks the running `arena up` for a worker count and
waits until the stack file shows it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import redis
from arena.services.common import pids
from arena.services.common.launcher import (
    CONTROL_FILE,
    EXTRA_DIR,
    check_memory_for,
    check_worker_count,
)

from arena.errors import InvalidArgumentError, UnavailableError
from arena.home import ADMIN_TOKEN_FILE, STACK_FILE, arena_home

log = logging.getLogger(__name__)

RUN_DIR = "run"
LAUNCHER_POLL_S = 1.0  # how often a hand-started worker looks for its `arena up`


def read_stack(home: Path) -> dict[str, Any]:
    """The running stack's file, or a clear error naming where it was looked for."""
    path = home / STACK_FILE
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise UnavailableError(f"no running stack: {path} does not exist; start one with "
                               "`arena up` (or give the worker --redis-url and --cache-url)"
                               ) from None
    except (OSError, ValueError) as exc:
        raise InvalidArgumentError(f"unreadable stack file {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidArgumentError(f"unreadable stack file {path}: not an object")
    return data


def _given(argv: list[str], flag: str) -> bool:
    return any(arg == flag or arg.startswith(flag + "=") for arg in argv)


def worker_environment(home: Path, argv: list[str]) -> dict[str, str]:
    """What a hand-started worker needs from the stack file (flags and the environment
    given explicitly win)."""
    if _given(argv, "--redis-url") or os.environ.get("ARENA_REDIS_URL"):
        return {}
    stack = read_stack(home)
    services = stack.get("services") if isinstance(stack.get("services"), dict) else {}
    assert isinstance(services, dict)
    env = {"ARENA_REDIS_URL": str(stack.get("redis", "")),
           "ARENA_CACHE_URL": str(stack.get("cache", ""))}
    if "registry" in services:
        env["ARENA_REGISTRY"] = str(services["registry"])
    access = stack.get("service_env")  # the stack's TLS files and the workers' Redis user
    if isinstance(access, dict):
        env.update({str(k): str(v) for k, v in access.items()})
    if stack.get("engines") and not _given(argv, "--engines"):
        env["ARENA_ENGINES_CATALOG"] = str(stack["engines"])
    token_file = Path(str(stack.get("token_file") or home / ADMIN_TOKEN_FILE))
    if token_file.is_file():
        env["ARENA_ADMIN_TOKEN"] = token_file.read_text().strip()
    try:
        redis.Redis.from_url(env["ARENA_REDIS_URL"], socket_timeout=2).ping()
    except (redis.RedisError, ValueError) as exc:
        raise UnavailableError(f"the stack in {home} does not answer ({exc}); is `arena up` "
                               "still running?") from None
    return env


def run_worker(home: Path | None, argv: list[str]) -> int:
    """Run one worker in this process until Ctrl-C/SIGTERM (or until `arena up` stops)."""
    from arena.services.worker.__main__ import main

    state = arena_home(home)
    from_stack = worker_environment(state, argv)
    for key, value in from_stack.items():
        os.environ.setdefault(key, value)
    if from_stack:
        stop_with_launcher(read_stack(state).get("launcher"))
    if not _given(argv, "--instance") and not _given(argv, "--worker-id"):
        argv = [*argv, "--instance", f"worker-hand-{os.getpid()}"]
    if not _given(argv, "--listen"):
        argv = [*argv, "--listen", "127.0.0.1:0"]
    pid_file = state / RUN_DIR / EXTRA_DIR / f"{os.getpid()}.pid"
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(pids.stamp())
    try:
        return main(argv)
    finally:
        pid_file.unlink(missing_ok=True)


def stop_with_launcher(stamped: object, poll_s: float = LAUNCHER_POLL_S) -> None:
    """Stop this worker (SIGTERM to itself, a graceful stop) once the `arena up` of the
    stamp (the stack file's ``launcher``) has ended. `arena up` stops the workers started
    by hand when it stops; killed, it cannot, and a worker left behind retried its stack's
    Redis for good (a new `arena up` starts Redis on other ports). Nothing to watch for a
    stack without one (a Compose stack's file)."""
    if pids.running(stamped) is None:
        return

    def watch() -> None:
        while pids.running(stamped) is not None:
            time.sleep(poll_s)
        log.warning("the stack's `arena up` (pid %s) has ended: stopping",
                    str(stamped).split()[0])
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="launcher-watch", daemon=True).start()


def stack_workers(stack: dict[str, Any]) -> list[str]:
    services = stack.get("services")
    return sorted(n for n in services if n.startswith("worker-")) if isinstance(
        services, dict) else []


def scale_workers(home: Path | None, count: int, wait_s: float) -> int:
    """Ask the running `arena up` for ``count`` workers and wait until it has them."""
    check_worker_count(count)
    state = arena_home(home)
    stack = read_stack(state)
    if pids.running(stack.get("launcher")) is None:
        raise UnavailableError(f"the stack in {state} has no running `arena up` to ask")
    check_memory_for(count - len(stack_workers(stack)))
    control = state / RUN_DIR / CONTROL_FILE
    tmp = control.with_suffix(".tmp")
    tmp.write_text(json.dumps({"workers": count}))
    tmp.replace(control)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        workers = stack_workers(read_stack(state))
        if len(workers) == count:
            print(f"{count} worker{'' if count == 1 else 's'}: {', '.join(workers) or '-'}")
            return 0
        time.sleep(0.2)
    raise UnavailableError(f"the stack did not reach {count} workers in {wait_s:.0f} s; "
                           f"see {state / 'logs'}")
