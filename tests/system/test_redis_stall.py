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

from arena.engine.othello import PRESETS
from arena.v1 import common_pb2, ladder_pb2, match_pb2
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
    assert lines[2].endswith(": Redis did not answer in time (TimeoutError); retry in a few "
                             "seconds)"), lines


def test_status_names_a_stalled_redis_within_seconds(tmp_path: Path) -> None:
    """`arena status` while the durable Redis does not answer. Before, it printed after
    some 20 s that the referee, then the ladder service, 'did not answer in time': the
    two were asked one after the other, each answered UNAVAILABLE only after its Redis
    read timed out (5 s), and gRPC retried that until the call's 10 s deadline."""
    with launcher(home=tmp_path, workers=1, analysts=0, env=dict(FAST_ENV),
                  admin_token=ADMIN_TOKEN) as stack:
        assert stack.durable is not None and stack.durable.pid is not None
        env = dict(os.environ, ARENA_HOME=str(tmp_path), ARENA_TOKEN=ADMIN_TOKEN)
        with stalled(stack.durable.pid):
            started = time.monotonic()
            printed = subprocess.run([sys.executable, "-m", "arena.clients", "status"],
                                     capture_output=True, text=True, timeout=60, env=env)
            took = time.monotonic() - started
    # The command's own start (imports) is most of it; the parts are asked at once, each
    # for at most 3 s.
    assert took < 12, f"arena status took {took:.1f} s: {printed.stdout}"
    assert printed.returncode == 1, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[0] == "services: registry up  referee up  ladder up", lines
    assert lines[1].startswith("no picture of workers, queues and matches: referee at "), lines
    assert lines[1].endswith(" cannot answer now: Redis did not answer in time "
                             "(TimeoutError); retry in a few seconds"), lines
    # The ladder service's list of ladders waits as little for Redis (before: 'did not
    # answer in time', its 5 s read past the command's 3 s).
    assert lines[2].startswith("ladders running: unknown (ladder at "), lines
    assert "Redis did not answer in time (TimeoutError)" in lines[2], lines


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


def test_a_watch_waits_out_a_stall(tmp_path: Path) -> None:
    """`arena ladder watch` and `arena match watch` follow on after the stall. Before, each
    stopped with 'ladder at ... cannot answer now: storage unavailable (TimeoutError)' and
    exit 1, while the ladder played on (`arena test`, which watches, lost its verdict)."""
    with launcher(home=tmp_path, workers=2, analysts=0, env=dict(FAST_ENV),
                  admin_token=ADMIN_TOKEN) as stack, stack_client(stack) as sdk:
        builtin_bot(sdk, "lab-a", {"evaluator": "lab", "look_ahead": 0})
        builtin_bot(sdk, "lab-b", {"evaluator": "lab", "look_ahead": 3})
        for name in ("strong-a", "strong-b"):  # they search most of their move's time
            builtin_bot(sdk, name, dict(PRESETS["arena-strong"]))
        ladder = sdk.create_ladder(ladder_pb2.LadderConfig(
            game=common_pb2.GameSpec(kind=common_pb2.GAME_KIND_OTHELLO), games_per_pairing=40,
            bots=[common_pb2.BotRef(name="lab-a"), common_pb2.BotRef(name="lab-b")],
            time_control=common_pb2.TimeControl(move_time_ms=500)))
        match = sdk.create_match(match_config("strong-a", "strong-b", move_time_ms=300))
        env = dict(os.environ, ARENA_HOME=str(tmp_path), ARENA_TOKEN=ADMIN_TOKEN)
        watches = [subprocess.Popen([sys.executable, "-m", "arena.clients", *command],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=env)
                   for command in (["ladder", "watch", ladder.id],
                                   ["match", "watch", match.id, "--no-board"])]
        firsts = [watch.stdout.readline() for watch in watches if watch.stdout]  # following
        assert stack.durable is not None and stack.durable.pid is not None
        with stalled(stack.durable.pid):
            time.sleep(STALL_S)
        outputs = [watch.communicate(timeout=150) for watch in watches]
    for watch, (_, err) in zip(watches, outputs, strict=True):
        assert watch.returncode == 0, err
    ladder_out, match_out = (first + out for first, (out, _) in zip(firsts, outputs, strict=True))
    assert "100%" not in firsts[0] and "40/40 games over" in ladder_out, ladder_out
    plies = [int(line.split(".")[0]) for line in match_out.splitlines()
             if line[:4].strip().isdigit() and line[3:4] == "."]
    assert plies == list(range(1, len(plies) + 1)), match_out  # each move once, in order
    assert match_out.rstrip().splitlines()[-1].startswith("result: "), match_out
