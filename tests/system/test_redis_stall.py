"""A durable Redis that stops answering for a while (a stalled disk under its AOF fsync, a
paused VM) and then answers again: the stack plays on, with nothing restarted.

The services' Redis clients time a read out after redis-py's default socket timeout (5 s),
so a stall longer than that reaches every loop blocked in a read as ``TimeoutError``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import redis
from arena.clients.sdk import ArenaClient

from arena.v1 import match_pb2
from tests.support.bots import builtin_bot, match_config
from tests.support.servers import ADMIN_TOKEN
from tests.support.stacks import launcher
from tests.system.conftest import FAST_ENV, stack_client

# Longer than the read timeout of a client made as the services make theirs.
STALL_S = (redis.Connection().socket_timeout or 0) + 2.0


@contextlib.contextmanager
def stalled(pid: int) -> Iterator[None]:
    """The process ``pid`` stopped (SIGSTOP) inside the block, and always resumed."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_matches_are_played_after_redis_stalled(tmp_path: Path) -> None:
    with launcher(home=tmp_path, workers=1, analysts=0, env=dict(FAST_ENV),
                  admin_token=ADMIN_TOKEN) as stack, stack_client(stack) as sdk:
        builtin_bot(sdk, "lab-a", {"evaluator": "lab", "look_ahead": 0})
        builtin_bot(sdk, "lab-b", {"evaluator": "lab", "look_ahead": 3})
        assert stack.durable is not None and stack.durable.pid is not None
        pid = stack.durable.pid
        config = match_config("lab-a", "lab-b", move_time_ms=500)
        during = sdk.create_match(config)
        while not sdk.get_match(during.id).moves:  # under way when Redis stalls
            time.sleep(0.05)
        with stalled(pid):
            time.sleep(STALL_S)  # the referee and the worker wait in XREADGROUP meanwhile
        # Before, both loops' threads had died of the TimeoutError: a match created after
        # stayed pending for ever while every health check said SERVING.
        after = sdk.create_match(config)
        matches = [finished(sdk, match.id, 60) for match in (during, after)]
    # The match under way too. Before, when the stall held back the answer to a move
    # already started, the wall-clock guard charged it to the bot ('took 7002 ms on the
    # wall clock (0 ms of CPU time)'): a time forfeit in a third of the runs.
    assert [m.result.termination for m in matches] == [match_pb2.TERMINATION_NORMAL] * 2, [
        m.result.detail for m in matches]


def finished(sdk: ArenaClient, match_id: str, timeout_s: float) -> match_pb2.Match:
    deadline = time.monotonic() + timeout_s
    while (match := sdk.get_match(match_id)).status != match_pb2.MATCH_STATUS_FINISHED:
        status = match_pb2.MatchStatus.Name(match.status)
        assert time.monotonic() < deadline, f"match {match_id} is still {status}"
        time.sleep(0.2)
    return match


def test_status_does_not_count_ladders_it_cannot_read(tmp_path: Path) -> None:
    with launcher(home=tmp_path, workers=1, analysts=0, env=dict(FAST_ENV),
                  admin_token=ADMIN_TOKEN) as stack:
        assert stack.durable is not None and stack.durable.pid is not None
        env = dict(os.environ, ARENA_HOME=str(tmp_path), ARENA_TOKEN=ADMIN_TOKEN)
        with stalled(stack.durable.pid):  # every service answers its health check
            shown, printed = (subprocess.run(
                [sys.executable, "-m", "arena.clients", "status", "--timeout", "2", *json],
                capture_output=True, text=True, timeout=60, env=env)
                for json in (["--json"], []))
    # Before: "ladders running: 0" and "ladders": [], as if the arena had none.
    assert (shown.returncode, printed.returncode) == (1, 1)
    reply = json.loads(shown.stdout)
    assert reply["ladders"] is None and "did not answer in time" in reply["ladders_error"]
    lines = printed.stdout.splitlines()
    assert lines[0] == "services: registry up  referee up  ladder up"
    assert lines[2].startswith("ladders running: unknown (ladder at ")
    assert lines[2].endswith("did not answer in time)"), lines


def test_a_stalled_cache_costs_no_bot_its_game(tmp_path: Path) -> None:
    """The shared transposition cache is an optimisation: while its Redis does not answer,
    moves are searched. Before, each probe waited out the read timeout inside the bot's
    move, and the first move of the game was forfeited: 'took 5005 ms on the wall clock
    (2 ms of CPU time); a move timed on CPU may take 4200 ms'."""
    with launcher(home=tmp_path, workers=1, analysts=0, env=dict(FAST_ENV),
                  admin_token=ADMIN_TOKEN) as stack, stack_client(stack) as sdk:
        builtin_bot(sdk, "lab-a", {"evaluator": "lab", "look_ahead": 0})
        builtin_bot(sdk, "lab-b", {"evaluator": "lab", "look_ahead": 1})
        assert stack.cache is not None and stack.cache.pid is not None
        with stalled(stack.cache.pid):
            created = sdk.create_match(match_config("lab-a", "lab-b", move_time_ms=500))
            match = finished(sdk, created.id, 60)
    assert match.result.termination == match_pb2.TERMINATION_NORMAL, match.result
