"""System tests: real referee and worker processes, kill -9 included.

Each test checks the record of every match it plays: plies 0..n-1 exactly once each, every
move legal when re-played through the rules library.
"""

from __future__ import annotations

import signal
import time

import pytest
import redis
from arena.services.common.launcher import Launcher
from arena.services.common.protocol.matches import MatchStore
from google.protobuf import json_format, struct_pb2

from arena.formats import parse_ggf, write_ggf
from arena.v1 import bots_pb2, common_pb2, match_pb2, referee_pb2, referee_pb2_grpc
from tests.support.bots import (
    GOMOKU,
    OTHELLO,
    match_config,
    replay_moves,
    wait_finished,
)
from tests.support.servers import ADMIN_TOKEN
from tests.support.stacks import stack_channel
from tests.system.conftest import stack_client

AUTH = [("authorization", f"Bearer {ADMIN_TOKEN}")]


def _presets(services: Launcher, *names: str) -> None:
    """Each preset as the bot of its name (only an admin may register one so)."""
    with stack_client(services) as sdk:
        for name in names:
            sdk.register_bot(bots_pb2.BotSpec(name=name), from_preset=name)


def _create(services: Launcher, config: match_pb2.MatchConfig, count: int) -> list[str]:
    with stack_client(services) as sdk:
        return [sdk.create_match(config).id for _ in range(count)]


def _checked(client: redis.Redis, match_ids: list[str], timeout_s: float) -> list[
    match_pb2.Match
]:
    matches = [wait_finished(client, match_id, timeout_s) for match_id in match_ids]
    for match in matches:
        replay_moves(match)  # plies contiguous, each legal, positions as recorded
    return matches


def test_preset_match_watch_and_ggf_roundtrip(redis_client: redis.Redis,
                                              services: Launcher) -> None:
    _presets(services, "lab-intermediate", "arena-fast")
    referee = services.spawn("referee", "referee-1")
    services.spawn("worker", "worker-1")
    services.spawn("worker", "worker-2")
    with stack_channel(services, referee.target) as channel:
        stub = referee_pb2_grpc.RefereeStub(channel)
        created = stub.CreateMatch(referee_pb2.CreateMatchRequest(
            config=match_config("lab-intermediate", "arena-fast", move_time_ms=2000, seed=3)),
            metadata=AUTH, timeout=10)
        events = list(stub.WatchMatch(referee_pb2.WatchMatchRequest(match_id=created.id),
                                      metadata=AUTH, timeout=120))
        (match,) = _checked(redis_client, [created.id], 60)
        ggf = stub.GetReplay(referee_pb2.GetReplayRequest(
            match_id=match.id, format=referee_pb2.REPLAY_FORMAT_GGF), metadata=AUTH,
            timeout=10).content
    assert match.result.termination == match_pb2.TERMINATION_NORMAL
    watched = [e for e in events if e.WhichOneof("event") in ("move", "pass")]
    assert [e.move.ply if e.HasField("move") else getattr(e, "pass").ply for e in watched] == [
        r.ply for r in match.moves]
    assert events[-1].ended.result == match.result
    game = parse_ggf(ggf)
    assert write_ggf(game) == ggf.strip()
    assert [m.move for m in game.moves] == [r.move.square for r in match.moves]


@pytest.mark.parametrize(("kind", "preset", "game_time_ms"),
                         [(OTHELLO, "arena-strong", 2_000), (GOMOKU, "arena-gomoku", 4_000)])
def test_builtin_bots_keep_to_a_game_clock(redis_client: redis.Redis, services: Launcher,
                                          kind: common_pb2.GameKind.ValueType, preset: str,
                                          game_time_ms: int) -> None:
    """With a game budget far under the move limit times the moves, Arena's bots take a
    share of what is left each move and finish the game. Before, each move was given
    all of the clock up to the move limit: both bots spent most of it on their first
    moves and the game ended in a time forfeit (Gomoku at move 17 of a 30 s game)."""
    with stack_client(services) as sdk:
        for name in ("clock-a", "clock-b"):
            sdk.register_bot(bots_pb2.BotSpec(name=name, game=kind), from_preset=preset)
    services.spawn("referee", "referee-1")
    services.spawn("worker", "worker-1")
    config = match_config("clock-a", "clock-b", kind, move_time_ms=10_000, seed=1)
    config.time_control.game_time_ms = game_time_ms
    (match,) = _checked(redis_client, _create(services, config, 1), 120)
    assert match.result.termination in (match_pb2.TERMINATION_NORMAL,  # not TIME_FORFEIT
                                        match_pb2.TERMINATION_BOARD_FULL), match.result
    for color in (common_pb2.COLOR_BLACK, common_pb2.COLOR_WHITE):
        times = [r.charged_ms for r in match.moves if r.color == color]  # CPU: load-proof
        assert sum(times) <= game_time_ms
        # the first move took its share (8 %), not the clock (slack: one move's overhead)
        assert times[0] <= 0.08 * game_time_ms + 60, times


@pytest.mark.slow
def test_kill9_workers_mid_search_many_times(redis_client: redis.Redis,
                                             services: Launcher) -> None:
    _presets(services, "arena-strong")
    services.spawn("referee", "referee-1")
    workers = [services.spawn("worker", f"worker-{i}").name for i in range(3)]
    config = match_config("arena-strong", "arena-strong", move_time_ms=250)
    config.time_control.grace_ms = 1500  # two loaded cores: lateness is not under test here
    ids = _create(services, config, 4)
    store = MatchStore(redis_client)
    kills = 0
    next_name = 3
    deadline = time.monotonic() + 150
    while kills < 8 and time.monotonic() < deadline:
        time.sleep(1.5)
        if all(store.header(i).status == match_pb2.MATCH_STATUS_FINISHED for i in ids):
            break
        victim = workers.pop(0)
        services.kill(victim)  # kill -9: whatever it was searching is left pending
        kills += 1
        workers.append(services.spawn("worker", f"worker-{next_name}", wait=False).name)
        next_name += 1
    matches = _checked(redis_client, ids, 180)
    assert kills >= 4
    for match in matches:
        assert match.result.termination in (match_pb2.TERMINATION_NORMAL,), match.result
    logs = "".join(p.log_file.read_text() for p in services.processes.values())
    assert "took over move job" in logs  # some kills did hit a search in progress


@pytest.mark.slow
def test_kill9_referee_mid_match_another_finishes(redis_client: redis.Redis,
                                                  services: Launcher) -> None:
    _presets(services, "lab-advanced", "arena-fast")
    services.spawn("referee", "referee-1")
    services.spawn("worker", "worker-1")
    services.spawn("worker", "worker-2")
    ids = _create(services, match_config("lab-advanced", "arena-fast"), 3)
    store = MatchStore(redis_client)
    deadline = time.monotonic() + 30
    while min(len(store.records(i)) for i in ids) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    services.kill("referee-1")
    plies_at_kill = {i: len(store.records(i)) for i in ids}
    services.spawn("referee", "referee-2")
    matches = _checked(redis_client, ids, 120)
    for match in matches:
        assert match.result.termination == match_pb2.TERMINATION_NORMAL
        assert len(match.moves) > plies_at_kill[match.id]


@pytest.mark.slow
def test_a_stopped_referee_hands_its_matches_back_at_once(redis_client: redis.Redis,
                                                         services: Launcher) -> None:
    """SIGTERM: the referee hands its unfinished matches back, and another one resumes
    them long before the idle take-over (set to a minute here) would. The other referee
    is started first and held (SIGSTOP) while the first takes the matches: started after
    them on a busy machine, it took so long to come up that the games were over when the
    first was stopped, and the test saw nothing."""
    services.env["ARENA_MATCH_IDLE_MS"] = "60000"
    _presets(services, "lab-advanced")
    # A bot that thinks 300 ms a move: a game lasts some 20 s, not the blink two fast bots
    # take (CI saw both games over before the stopped referee had exited).
    config = struct_pb2.Struct()
    json_format.ParseDict({"depth": 60, "time_ms": 300}, config)
    with stack_client(services) as sdk:
        sdk.register_bot(bots_pb2.BotSpec(name="thinker", preset="arena-fast",
                                          builtin=bots_pb2.BuiltinEngine(config=config)),
                         from_preset="arena-fast")
    services.spawn("referee", "referee-1")
    services.spawn("worker", "worker-1")
    second = services.spawn("referee", "referee-2").popen
    assert second is not None
    second.send_signal(signal.SIGSTOP)
    time.sleep(1.0)  # its last blocking read of match jobs is over: it takes none of them
    ids = _create(services, match_config("lab-advanced", "thinker"), 2)
    store = MatchStore(redis_client)
    deadline = time.monotonic() + 60
    while min(len(store.records(i)) for i in ids) < 4:
        assert time.monotonic() < deadline, "the matches did not start"
        time.sleep(0.05)
    running = [i for i in ids if store.header(i).status == match_pb2.MATCH_STATUS_RUNNING]
    assert running, "the games were over before the referee was stopped: nothing tested"
    second.send_signal(signal.SIGCONT)
    services.kill("referee-1", signal.SIGTERM)  # returns once it has exited
    stopped_at = time.monotonic()
    plies = {i: len(store.records(i)) for i in ids}
    while any(len(store.records(i)) <= plies[i] for i in running
              if store.header(i).status == match_pb2.MATCH_STATUS_RUNNING):
        if time.monotonic() - stopped_at > 30:
            logs = "".join(f"\n--- {name}\n{services.processes[name].log_file.read_text()[-1500:]}"
                           for name in ("referee-1", "referee-2", "worker-1"))
            raise AssertionError(f"no referee resumed the matches{logs}")
        time.sleep(0.05)
    log = services.processes["referee-1"].log_file.read_text()
    assert "Traceback" not in log and "could not settle" not in log, log[-3000:]
    for match in _checked(redis_client, ids, 120):
        assert match.result.termination == match_pb2.TERMINATION_NORMAL
