"""Two users share a stack: one floods it, the other's ladder is not starved.

alice queues slow matches (external bots that think for seconds, the strongest built-in
bot at 2 s a move) and keeps the analysis pool busy; bob runs a small ladder meanwhile.
bob's games must all finish, none lost on time, his moves waiting a bounded time for a
worker (the figure is printed). Real processes: `arena up`'s launcher, two match workers.
"""

from __future__ import annotations

import contextlib
import json
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from arena.services.common.launcher import Launcher

from arena import errors
from arena.engine.othello import PRESETS
from arena.v1 import bot_service_pb2, common_pb2, ladder_pb2, match_pb2
from tests.support.bots import bot_server, builtin_bot, external_bot, first_legal, match_config
from tests.support.stacks import launcher, stack_client

pytestmark = pytest.mark.slow
TOKENS = {"alice-token": {"name": "alice", "role": "user"},
          "bob-token": {"name": "bob", "role": "user"}}


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Launcher]:
    env = {"ARENA_TOKENS": json.dumps(TOKENS), "ARENA_EXTERNAL_ALLOW": "127.0.0.0/8",
           "ARENA_QUOTAS": json.dumps({"user": {"running_matches": 2}}),
           "ARENA_WARM_GAMES": "othello"}
    with launcher(home=tmp_path / "arena", workers=2, env=env) as running:
        yield running


def _sleepy(request: bot_service_pb2.GetMoveRequest) -> bot_service_pb2.GetMoveResponse:
    time.sleep(3)
    return first_legal(request)


def _analyze_forever(stack: Launcher, stop: threading.Event) -> int:
    sdk = stack_client(stack, "alice-token", engine=stack.target("analyst"))
    position = common_pb2.Position(game=common_pb2.GameSpec(kind=1), text=(
        "---------------------------OX------XO--------------------------- X"))
    calls = 0
    while not stop.is_set():
        try:
            sdk.analyze(position, engine_config={**PRESETS["arena-strong"], "time_ms": 60_000},
                        limits=common_pb2.SearchLimits(time_ms=2000))
        except errors.ResourceExhaustedError:
            stop.wait(0.2)  # the pool is busy with alice's other call: as designed
        calls += 1
    return calls


def test_a_flood_by_one_user_does_not_starve_another(stack: Launcher) -> None:
    targets = {role: stack.target(role) for role in ("registry", "referee", "ladder")}
    alice = stack_client(stack, "alice-token", **targets)
    bob = stack_client(stack, "bob-token", **targets)
    for name, preset in (("heavy", "arena-strong"), ("b-one", "lab-beginner"),
                         ("b-two", "lab-intermediate")):
        builtin_bot(alice if name == "heavy" else bob, name, dict(PRESETS[preset]))
    stop = threading.Event()
    analyst = threading.Thread(target=_analyze_forever, args=(stack, stop), daemon=True)
    with bot_server(_sleepy) as address:
        external_bot(alice, "sleepy", address)
        flood = [alice.create_match(match_config("sleepy", "sleepy", move_time_ms=5000)).id
                 for _ in range(6)]
        flood += [alice.create_match(match_config("heavy", "heavy", move_time_ms=2000)).id
                  for _ in range(4)]
        analyst.start()
        try:
            ladder = bob.create_ladder(ladder_pb2.LadderConfig(
                game=common_pb2.GameSpec(kind=1), games_per_pairing=4,
                bots=[common_pb2.BotRef(name="b-one"), common_pb2.BotRef(name="b-two")],
                time_control=common_pb2.TimeControl(move_time_ms=1000)))
            deadline = time.monotonic() + 240
            while bob.get_standings(ladder.id).ladder.status == ladder_pb2.LADDER_STATUS_RUNNING:
                assert time.monotonic() < deadline, "bob's ladder was starved"
                time.sleep(0.5)
            games = [bob.get_match(match_id) for match_id in
                     bob.get_standings(ladder.id).ladder.match_ids]
        finally:
            stop.set()
            root = stack_client(stack, stack.admin_token, **targets)
            for match_id in flood:  # end the flood now; nothing more to learn from it
                with contextlib.suppress(errors.FailedPreconditionError):
                    root.cancel_match(match_id)
            analyst.join(30)
    assert len(games) == 4
    assert all(m.result.termination == match_pb2.TERMINATION_NORMAL for m in games), [
        m.result for m in games]
    waits = [r.wait_ms for m in games for r in m.moves if r.move.square != 64]
    assert waits and all(w >= 0 for w in waits)
    print(f"bob's move waits while alice floods: median {statistics.median(waits):.0f} ms, "
          f"max {max(waits)} ms over {len(waits)} moves")


def test_one_users_long_moves_do_not_hold_every_worker(stack: Launcher) -> None:
    """bob's two matches think 10 s a move on a stack of two match workers; alice's match of
    quick bots, made just before them, plays meanwhile. The move queue is first come, first
    served: each of alice's moves was published behind one of bob's and waited for a worker
    as long as a move of his (10 s), so her game of some 60 moves would take 10 minutes.
    A worker now hands bob's job back while he holds his share (one of the two) and alice
    wants one: her moves wait for no move of his (the figure is printed)."""
    targets = {role: stack.target(role) for role in ("registry", "referee", "ladder")}
    alice = stack_client(stack, "alice-token", **targets)
    bob = stack_client(stack, "bob-token", **targets)
    builtin_bot(bob, "thinker", {**PRESETS["arena-strong"], "time_ms": 60_000})
    builtin_bot(alice, "a-one", dict(PRESETS["lab-beginner"]))
    builtin_bot(alice, "a-two", dict(PRESETS["lab-intermediate"]))
    quick = alice.create_match(match_config("a-one", "a-two", move_time_ms=1000)).id
    slow = [bob.create_match(match_config("thinker", "thinker", move_time_ms=10_000)).id
            for _ in range(2)]
    try:
        deadline = time.monotonic() + 180
        while (game := alice.get_match(quick)).status not in (
                match_pb2.MATCH_STATUS_FINISHED, match_pb2.MATCH_STATUS_CANCELLED):
            assert time.monotonic() < deadline, (
                f"alice's match was held back: {len(game.moves)} moves in 180 s")
            time.sleep(0.5)
        bob_moves = [len(bob.get_match(match_id).moves) for match_id in slow]
        # The first move of bob's that was handed back meanwhile, once played: its wait is
        # counted from when it first entered the queue, not from its last hand-back.
        while not all(bob.get_match(match_id).moves for match_id in slow):
            assert time.monotonic() < deadline + 60, "bob's matches did not go on"
            time.sleep(0.5)
        held = max(bob.get_match(match_id).moves[0].wait_ms for match_id in slow)
    finally:
        for match_id in slow:
            with contextlib.suppress(errors.FailedPreconditionError):
                bob.cancel_match(match_id)
    assert game.result.termination == match_pb2.TERMINATION_NORMAL, game.result
    waits = [r.wait_ms for r in game.moves if r.move.square != 64]
    # Her first move may find both workers already on bob's (a move is never stopped for
    # another's); after it, none of hers waits out one of his 10 s moves.
    assert len(waits) > 20 and max(waits[1:]) < 5_000, waits
    alice_ms = game.finished_at.ToMilliseconds() - game.created_at.ToMilliseconds()
    assert held >= alice_ms / 2, (held, alice_ms)
    print(f"alice's move waits beside bob's 10 s moves: median "
          f"{statistics.median(waits):.0f} ms, max after the first {max(waits[1:])} ms over "
          f"{len(waits)} moves in {alice_ms / 1000:.1f} s; bob's matches played {bob_moves} "
          f"moves meanwhile, and the one held back waited {held} ms for its first")
