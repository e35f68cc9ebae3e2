"""Protocol engines as bots on a real stack: worker processes with an engine catalog run
Arena's own bots as NBoard, GTP and Gomocup executables, and a small engine that misbehaves
on purpose, in their sandbox. Registered through the registry, scheduled by the ladder
service, refereed like any bot.

- Mixed ladders (built-in, external and protocol bots; all three protocols) finish, and
  every move equals what the same bot plays in this process at the same fixed depth.
- Each way of misbehaving costs the engine's bot the game with the right reason, and the
  workers go on with the next job; so does a game a GTP engine cannot be given (a custom
  start, the international variant).
- A worker killed while its engine thinks: another worker that has the engine takes the
  move over, and the killed worker's engine processes are gone.
"""

from __future__ import annotations

import json
import random
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from arena.clients.sdk import ArenaClient
from arena.services.common.launcher import Launcher

from arena.bots.spec import config_to_struct
from arena.engine.api import Limits
from arena.errors import FailedPreconditionError, InvalidArgumentError
from arena.games import PASS, Position, game
from arena.protocols.gomocup_brain import turn_budget_ms
from arena.v1 import bots_pb2, common_pb2, engine_pb2, ladder_pb2, match_pb2
from tests.observability.test_stack import scrape_all, total
from tests.protocol_engines.conftest import FAKE_ENGINE, sandboxed_pids
from tests.support.bots import (
    GOMOKU,
    OTHELLO,
    bot_server,
    builtin_bot,
    first_legal,
    match_config,
    replay_moves,
    wait_finished,
)
from tests.support.engines import choose, presets
from tests.support.stacks import arena_command
from tests.system.conftest import stack_client

MOVE_TIME_MS = 20_000  # never binding: every search here stops at its depth
UNOFFERED_MS = 5000  # a move of a build no live worker offers: the game ends void after this
# The NBoard engine's bot (over the protocol, depth 3) and the built-in Othello bot (depth 2).
NBOARD_CONFIG = {**presets("othello")["arena-fast"], "time_ms": 60_000, "endgame_empties": 8}
OTHELLO_BUILTIN = {**NBOARD_CONFIG, "depth": 2}
GOMOKU_BUILTIN = {"evaluator": "arena-gomoku", "max_depth": 2}
# An NBoard engine that thinks about a second a move (time-limited iterative deepening).
SLOW_CONFIG = {**presets("othello")["arena-fast"], "time_ms": 1500, "depth": 30,
               "endgame_empties": 0}
MISBEHAVING = {  # fake engine mode: (termination, words in the detail)
    "crash": (match_pb2.TERMINATION_BOT_CRASHED, "crashing on purpose"),
    "garbage": (match_pb2.TERMINATION_MALFORMED_ANSWER, "garbage"),
    "illegal": (match_pb2.TERMINATION_ILLEGAL_MOVE, ""),
    "hang": (match_pb2.TERMINATION_TIME_FORFEIT, ""),
    "memory": (match_pb2.TERMINATION_BOT_CRASHED, "memory"),
}


def _engine(name: str, games: str, protocol: str, command: list[str], limits: str = "",
            options: str = "") -> str:
    return (f"[engines.{name}]\ngames = [\"{games}\"]\nprotocol = \"{protocol}\"\n"
            f"command = {json.dumps(command)}\n"
            f"limits = {{ startup_ms = 300000, grace_ms = 300{limits} }}\n"
            + (f"options = {{ {options} }}\n" if options else ""))


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A port on the worker's loopback an engine must not reach."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        sock.settimeout(0.5)
        yield sock


@pytest.fixture
def catalog(tmp_path: Path, listener: socket.socket) -> Path:
    # An engine whose executable a test changes in place (a copy of the fake one)
    changing = tmp_path / "changing-engine.py"
    changing.write_text(f"#!{sys.executable}\n" + FAKE_ENGINE.read_text())
    changing.chmod(0o755)
    (tmp_path / "nboard.json").write_text(json.dumps(NBOARD_CONFIG))
    (tmp_path / "slow.json").write_text(json.dumps(SLOW_CONFIG))
    fake = [sys.executable, str(FAKE_ENGINE), "nboard"]
    entries = [
        _engine("nboard-arena", "othello", "nboard",
                ["arena-nboard", "--config", f"@{tmp_path / 'nboard.json'}"],
                ", memory_mb = 1024", "depth = 3"),
        _engine("gtp-arena", "othello", "gtp",
                ["arena-gtp", "--config", f"@{tmp_path / 'nboard.json'}", "--depth", "3"],
                ", memory_mb = 1024"),
        _engine("nboard-slow", "othello", "nboard",
                ["arena-nboard", "--config", f"@{tmp_path / 'slow.json'}"], ", memory_mb = 1024"),
        _engine("pbrain-arena", "gomoku", "gomocup",
                ["pbrain-arena", "--preset", "arena-gomoku", "--depth", "3"],
                ", memory_mb = 1024"),
        *(_engine(f"fake-{mode}", "othello", "nboard", [*fake, mode],
                  ", memory_mb = 128" if mode == "memory" else "") for mode in MISBEHAVING),
        _engine("fake-network", "othello", "nboard",
                [*fake, "network", str(listener.getsockname()[1])]),
        _engine("fake-sleepy", "othello", "nboard", [*fake, "sleepy", "5000"]),
        _engine("fake-burn", "othello", "nboard", [*fake, "burn", "2500"]),
        _engine("fake-changing", "othello", "nboard", [str(changing), "nboard", "burn", "200"]),
        _engine("fake-talk", "gomoku", "gomocup",
                [sys.executable, str(FAKE_ENGINE), "gomocup", "talk"]),
    ]
    path = tmp_path / "engines.toml"
    path.write_text("\n".join(entries))
    return path


@pytest.fixture
def stack(services: Launcher, catalog: Path) -> Launcher:
    """Registry (from ``services``), a referee, the ladder service and two workers that
    offer the catalog's engines."""
    services.engines = catalog
    services.metrics = True
    services.env["ARENA_UNOFFERED_MS"] = str(UNOFFERED_MS)
    services.spawn("referee", "referee-1")
    services.spawn("ladder", "ladder-1")
    for name in ("worker-1", "worker-2"):
        services.spawn("worker", name, timeout_s=300)
    with stack_client(services) as sdk:
        until_listed(sdk, lambda e: any(o.workers == 2 for o in e), "the workers")
    return services


def until_listed(sdk: ArenaClient, ready: Callable[[list[engine_pb2.EngineOffer]], bool],
                 who: str) -> None:
    """Wait (at most a minute) until the engines live services offer satisfy ``ready``."""
    deadline = time.monotonic() + 60
    while not ready(sdk.list_engines()):
        assert time.monotonic() < deadline, f"{who} never advertised their engines"
        time.sleep(0.2)


def protocol_bot(sdk: ArenaClient, name: str, engine: str, kind: int = OTHELLO,
                 **options: object) -> bots_pb2.BotVersion:
    return sdk.register_bot(bots_pb2.BotSpec(name=name, game=kind, protocol=bots_pb2.ProtocolEngine(
        engine=engine, options=config_to_struct(dict(options)))))


def run_ladder(sdk: ArenaClient, client: redis.Redis, name: str, kind: int, bots: list[str],
               **extra: object) -> list[match_pb2.Match]:
    config = ladder_pb2.LadderConfig(
        name=name, game=common_pb2.GameSpec(kind=kind),
        bots=[common_pb2.BotRef(name=n) for n in bots],
        format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2, seed=11,
        time_control=common_pb2.TimeControl(move_time_ms=MOVE_TIME_MS), **extra)
    info = sdk.create_ladder(config)
    deadline = time.monotonic() + 600
    while sdk.get_standings(info.id).ladder.status != ladder_pb2.LADDER_STATUS_FINISHED:
        assert time.monotonic() < deadline, f"ladder {name} did not finish in 600 s"
        time.sleep(0.5)
    ladder = sdk.get_standings(info.id).ladder
    return [wait_finished(client, match_id) for match_id in ladder.match_ids]


def expected_move(kind: int, bot: str, text: str, history: list[int]) -> int:
    """What ``bot`` plays in this process (the protocol engines' bots at their depth)."""
    name = game(kind).name
    if bot == "first-legal":
        return game(kind).position_from_text(text).legal_moves()[0]
    if bot in ("nboard-bot", "gtp-bot"):  # the same config and depth behind both protocols
        return choose(name, text, [], NBOARD_CONFIG, Limits(depth=3)).move
    if bot == "pbrain-bot":
        limits = Limits(depth=3, time_ms=turn_budget_ms(MOVE_TIME_MS))
        return choose(name, text, history, presets("gomoku")["arena-gomoku"], limits).move
    config = OTHELLO_BUILTIN if kind == OTHELLO else GOMOKU_BUILTIN
    return choose(name, text, history, config, Limits(time_ms=MOVE_TIME_MS)).move


def check_against_in_process(match: match_pb2.Match) -> None:
    assert match.status == match_pb2.MATCH_STATUS_FINISHED, match.result
    assert match.result.termination in (match_pb2.TERMINATION_NORMAL,
                                        match_pb2.TERMINATION_BOARD_FULL), match.result
    replay_moves(match)
    kind = match.config.game.kind
    text, history = match.start_position, list(match.config.opening)
    for record in match.moves:
        side = match.black if record.color == common_pb2.COLOR_BLACK else match.white
        if record.move.text != "pass":
            assert record.move.square == expected_move(kind, side.name, text, history), (
                f"{match.id} ply {record.ply}: {side.name} in {text}")
        text = record.position_after
        history.append(record.move.square)


def test_mixed_ladders_play_like_the_bots_in_process(redis_client: redis.Redis,
                                                     stack: Launcher) -> None:
    with bot_server(first_legal) as address, stack_client(stack) as sdk:
        protocol_bot(sdk, "nboard-bot", "nboard-arena")
        builtin_bot(sdk, "builtin-bot", OTHELLO_BUILTIN)
        sdk.register_bot(bots_pb2.BotSpec(name="first-legal", game=OTHELLO,
                                          external=bots_pb2.ExternalEngine(address=address)))
        protocol_bot(sdk, "gtp-bot", "gtp-arena")
        protocol_bot(sdk, "pbrain-bot", "pbrain-arena", GOMOKU)
        builtin_bot(sdk, "gomoku-bot", GOMOKU_BUILTIN, GOMOKU)
        othello = run_ladder(sdk, redis_client, "mixed-othello", OTHELLO,
                             ["nboard-bot", "builtin-bot", "first-legal"],
                             opening_suite="othello-balanced")
        gtp = run_ladder(sdk, redis_client, "gtp-othello", OTHELLO, ["gtp-bot", "builtin-bot"],
                         opening_suite="othello-balanced")  # the opening is replayed over GTP
        gomoku = run_ladder(sdk, redis_client, "mixed-gomoku", GOMOKU,
                            ["pbrain-bot", "gomoku-bot"])
        offered = {engine.name for engine in sdk.list_engines()}
    assert len(othello) == 6 and len(gomoku) == 2 and len(gtp) == 2
    for match in othello + gomoku + gtp:
        check_against_in_process(match)
    def moves_of(matches: list[match_pb2.Match], bot: str) -> list[match_pb2.MoveRecord]:
        return [r for m in matches for r in m.moves if r.move.text != "pass"
                and (m.black if r.color == common_pb2.COLOR_BLACK else m.white).name == bot]

    # The engines' search lines are kept as the moves' search info: depth 3 in the
    # midgame; an Othello endgame is solved to its last empty square.
    midgame = [r for r in moves_of(othello, "nboard-bot") if r.position_after.count("-") > 8]
    assert midgame and {r.search.depth for r in midgame} == {3}
    assert all(r.search.depth >= 1 for r in moves_of(gomoku, "pbrain-bot"))

    # Each worker counts its engine moves and starts: every protocol move was counted, and
    # all but the first move of each process (at most one per worker and engine) were
    # answered by a process already running.
    samples = scrape_all(stack)
    played = (len(moves_of(othello, "nboard-bot")) + len(moves_of(gomoku, "pbrain-bot"))
              + len(moves_of(gtp, "gtp-bot")))
    assert total(samples, "arena_protocol_engine_moves_total") == played
    starts = total(samples, "arena_protocol_engine_starts_total")
    assert 3 <= starts <= 6
    assert total(samples, "arena_protocol_engine_moves_total", warm="yes") == played - starts
    # The queue exporter shows every engine's own move stream, all drained.
    engine_lags = {dict(labels)["stream"]: value for per_process in samples.values()
                   for (metric, labels), value in per_process.items()
                   if metric == "arena_stream_group_lag"
                   and dict(labels)["stream"].startswith("arena:stream:moves:engine:")}
    assert {name.split(":")[4] for name in engine_lags} == offered
    assert set(engine_lags.values()) == {0}


GTP_CANNOT = {  # games a GTP engine cannot be given: refused on the worker, a forfeit
    "international": (match_pb2.TERMINATION_BOT_CRASHED, "cannot play the international"),
    "custom-start": (match_pb2.TERMINATION_BOT_CRASHED, "reached from the standard start"),
}


def gtp_cannot_play() -> dict[str, match_pb2.MatchConfig]:
    international = match_config("gtp-bot", "builtin-bot", move_time_ms=2000)
    international.game.variant = "international"
    after_f5 = game(OTHELLO).position_from_text(
        "---------------------------OX------XO--------------------------- X")
    after_f5.push_str("f5")
    after_f5.push_str("f6")  # Black to move again: the GTP bot (Black) is asked
    custom = match_config("gtp-bot", "builtin-bot", move_time_ms=2000,
                          start_position=after_f5.to_text())
    return {"international": international, "custom-start": custom}


def test_misbehaving_engines_forfeit_with_their_reason(redis_client: redis.Redis,
                                                      stack: Launcher,
                                                      listener: socket.socket) -> None:
    with stack_client(stack) as sdk:
        builtin_bot(sdk, "builtin-bot", OTHELLO_BUILTIN)
        protocol_bot(sdk, "nboard-bot", "nboard-arena")
        created = {}
        for mode in [*MISBEHAVING, "network"]:
            protocol_bot(sdk, f"bad-{mode}", f"fake-{mode}")
            created[mode] = sdk.create_match(match_config(f"bad-{mode}", "builtin-bot",
                                                          move_time_ms=2000)).id
        protocol_bot(sdk, "gtp-bot", "gtp-arena")
        for what, config in gtp_cannot_play().items():
            created[what] = sdk.create_match(config).id
        results = {mode: wait_finished(redis_client, match_id, 120)
                   for mode, match_id in created.items()}
        # The workers go on: a good engine's match after all of that plays to its end.
        after = wait_finished(redis_client, sdk.create_match(
            match_config("nboard-bot", "builtin-bot", move_time_ms=MOVE_TIME_MS)).id, 300)
    for mode, (termination, words) in {**MISBEHAVING, **GTP_CANNOT}.items():
        result = results[mode].result
        assert result.termination == termination, (mode, result)
        assert result.forfeited and result.winner == common_pb2.COLOR_WHITE, (mode, result)
        assert words in result.detail, (mode, result.detail)
        assert result.detail.isprintable(), (mode, result.detail)  # shown in terminals
    # The engine's coloured stderr line reached the result with its escapes made harmless.
    assert "\ufffd[31mfake engine: about to crash" in results["crash"].result.detail
    network = results["network"].result
    protections = "\n".join(stack.processes["worker-1"].log_file.read_text().splitlines())
    if "network: isolated" in protections:
        assert network.termination == match_pb2.TERMINATION_BOT_CRASHED, network
        assert "no network" in network.detail
        with pytest.raises(TimeoutError):
            listener.accept()
    else:  # the machine allows no isolation: the worker said so, and the engine got out
        assert "network: NOT isolated" in protections
        listener.accept()[0].close()
    check_against_in_process(after)


def test_a_worker_killed_while_its_engine_thinks(redis_client: redis.Redis,
                                                 stack: Launcher) -> None:
    with stack_client(stack) as sdk:
        protocol_bot(sdk, "slow", "nboard-slow")
        builtin_bot(sdk, "opponent", OTHELLO_BUILTIN)
        match_id = sdk.create_match(match_config("slow", "opponent", move_time_ms=6000)).id
        deadline = time.monotonic() + 120
        victim = None
        while victim is None:  # a worker thinking with the slow engine, a few plies in
            assert time.monotonic() < deadline, "the slow engine never got a move"
            for worker in sdk.get_status().workers:
                if (worker.match_id == match_id and worker.bot.startswith("slow@")
                        and worker.ply >= 4 and time.time() * 1000 - worker.job_since_unix_ms
                        < 500):
                    victim = worker.worker_id
            time.sleep(0.05)
        pid = stack.processes[victim].pid
        assert pid is not None and sandboxed_pids(pid), "its engine runs"
        time.sleep(0.3)  # the engine is thinking now
        stack.kill(victim)  # kill -9
        orphans_deadline = time.monotonic() + 10
        while sandboxed_pids(pid):
            assert time.monotonic() < orphans_deadline, sandboxed_pids(pid)
            time.sleep(0.1)
        match = wait_finished(redis_client, match_id, 600)
    assert match.status == match_pb2.MATCH_STATUS_FINISHED, match.result
    assert not match.result.forfeited, match.result
    replay_moves(match)
    taken_over = [r for r in match.moves if r.worker_id != victim]
    assert taken_over, "the other worker played on"


def test_a_bot_whose_engine_no_worker_offers_any_more_is_refused_a_game(
        redis_client: redis.Redis, stack: Launcher) -> None:
    """The workers restarted with a catalog without the engine (or with another build of
    it): a match or ladder of its bot was created all the same and stayed 'running' with
    no move, its moves queued on a stream no worker reads. Both are refused, naming the
    bot; a game of other bots is still played."""
    with stack_client(stack) as sdk:
        brain = protocol_bot(sdk, "gone-brain", "pbrain-arena", GOMOKU)
        builtin_bot(sdk, "stays", GOMOKU_BUILTIN, GOMOKU)
        builtin_bot(sdk, "stays-too", GOMOKU_BUILTIN, GOMOKU)
        stack.engines = None
        stack.spawn("worker", "worker-3", timeout_s=300)  # no catalog
        for name in ("worker-1", "worker-2"):
            stack.kill(name, signal.SIGTERM)
        until_listed(sdk, lambda e: not any(o.workers for o in e), "the stopped workers")
        why = (f"bot 'gone-brain' v1 runs protocol engine 'pbrain-arena' "
               f"({brain.spec.protocol.checksum[:12]}), which no live match worker offers")
        with pytest.raises(InvalidArgumentError, match=re.escape(why)) as refused:
            sdk.create_match(match_config("stays", "gone-brain", kind=GOMOKU))
        assert [v.field for v in refused.value.violations] == ["config.white"]
        ladder = ladder_pb2.LadderConfig(
            game=common_pb2.GameSpec(kind=GOMOKU),
            bots=[common_pb2.BotRef(name=n) for n in ("stays", "gone-brain")],
            format=ladder_pb2.LADDER_FORMAT_ROUND_ROBIN, games_per_pairing=2,
            time_control=common_pb2.TimeControl(move_time_ms=MOVE_TIME_MS))
        with pytest.raises(InvalidArgumentError, match=re.escape(why)) as refused:
            sdk.create_ladder(ladder)
        assert [v.field for v in refused.value.violations] == ["config.bots[1]"]
        assert not list(sdk.iter_ladders())
        played = sdk.create_match(match_config("stays", "stays-too", kind=GOMOKU))
        assert wait_finished(redis_client, played.id, 300).result.termination in (
            match_pb2.TERMINATION_NORMAL, match_pb2.TERMINATION_BOARD_FULL)


def test_a_changed_build_is_left_to_the_workers_that_have_it(
        redis_client: redis.Redis, stack: Launcher, catalog: Path) -> None:
    """An operator installs a new build of an engine in place while its games run. The
    workers whose files changed no longer have the build the bot pinned and must not play
    another under its name: they stop reading its moves, and a worker that still has the
    build plays them. Before, they kept taking its moves and each one they took ended the
    game void, though another worker had the build. Once no live worker offers the build,
    the game ends void (no fault of the bot's: no result for the ratings) after
    ``unoffered_ms``, not after the ten minutes of ``stall_timeout_ms``."""
    script = catalog.parent / "changing-engine.py"
    # Worker-3 has the same build in a folder of its own, which nobody changes.
    keeper = catalog.parent / "keeper"
    keeper.mkdir()
    (keeper / "changing-engine.py").write_bytes(script.read_bytes())
    (keeper / "changing-engine.py").chmod(0o755)
    (keeper / "engines.toml").write_text(_engine(
        "fake-changing", "othello", "nboard",
        [str(keeper / "changing-engine.py"), "nboard", "burn", "200"]))
    stack.spawn("worker", "worker-3", args=["--engines", str(keeper / "engines.toml")],
                timeout_s=300)
    with stack_client(stack) as sdk:
        until_listed(sdk, lambda e: any(o.name == "fake-changing" and o.workers == 3
                                        for o in e), "the third worker")
        checksum = protocol_bot(sdk, "changing-bot", "fake-changing").spec.protocol.checksum
        builtin_bot(sdk, "steady", OTHELLO_BUILTIN)

        def started() -> str:
            match = sdk.create_match(match_config("changing-bot", "steady",
                                                  move_time_ms=MOVE_TIME_MS))
            deadline = time.monotonic() + 120
            while len(sdk.get_match(match.id).moves) < 2:
                assert time.monotonic() < deadline, "the engine's first move never came"
                time.sleep(0.1)
            return match.id

        played = started()
        script.write_text(script.read_text() + "\n# the next build\n")
        done = wait_finished(redis_client, played, 300)
        assert done.result.termination == match_pb2.TERMINATION_NORMAL, done.result
        until_listed(sdk, lambda e: any(o.name == "fake-changing" and o.workers == 1
                                        for o in e), "the workers without the build")
        logs = {name: stack.processes[name].log_file.read_text()
                for name in ("worker-1", "worker-2")}
        assert all("changed on disk" in log for log in logs.values())
        # The last worker with the build stops: its move goes back, and nobody takes it.
        voided = started()
        stack.kill("worker-3", signal.SIGTERM)
        stopped_at = time.monotonic()
        done = wait_finished(redis_client, voided, 120)
        waited = time.monotonic() - stopped_at
    assert done.result.void and not done.result.forfeited, done.result
    assert done.result.termination == match_pb2.TERMINATION_DEAD_LETTERED
    assert done.result.detail == (f"no live worker offers engine 'fake-changing' build "
                                  f"{checksum[:12]} (for {UNOFFERED_MS / 1000:g} s)"), done.result
    assert waited < 60, waited  # unoffered_ms (5 s here) and the worker's TTL, not 10 min


def test_protocol_moves_are_timed_on_the_engines_cpu(redis_client: redis.Redis,
                                                    stack: Launcher) -> None:
    """An engine kept off the CPU (here: asleep; on a busy machine: descheduled) is not
    charged for the wall time; an engine that computes past its limit forfeits on CPU."""
    with stack_client(stack) as sdk:
        builtin_bot(sdk, "opponent", OTHELLO_BUILTIN)
        protocol_bot(sdk, "sleepy", "fake-sleepy")
        protocol_bot(sdk, "burner", "fake-burn")
        sleepy = sdk.create_match(match_config("sleepy", "opponent", move_time_ms=1500)).id
        burner = sdk.create_match(match_config("burner", "opponent", move_time_ms=1500)).id
        slept, burnt = wait_finished(redis_client, sleepy, 300), wait_finished(redis_client,
                                                                              burner, 300)
    assert slept.status == match_pb2.MATCH_STATUS_FINISHED and not slept.result.forfeited, (
        slept.result)
    # 5 s asleep on a 1.5 s limit: no forfeit, little CPU charged. The wall time runs from
    # the worker's `started`, posted beside the search (consumer.py), not before it: it
    # may miss that round trip (4,952 ms once, at load 3).
    first = slept.moves[0]
    assert first.time_ms >= 4500 and first.charged_ms < 500, first
    assert sum(r.charged_ms for r in slept.moves if r.color == common_pb2.COLOR_BLACK) < 3000
    assert burnt.result.termination == match_pb2.TERMINATION_TIME_FORFEIT, burnt.result
    assert burnt.result.winner == common_pb2.COLOR_WHITE
    assert "ms of CPU time" in burnt.result.detail, burnt.result.detail


def test_a_cancelled_match_kills_its_engine_mid_move(redis_client: redis.Redis,
                                                    stack: Launcher) -> None:
    """The hanging engine is given a minute for its move; cancelling the match must end
    that move at once (its process killed), not when the minute is up."""
    with stack_client(stack) as sdk:
        protocol_bot(sdk, "stuck", "fake-hang")
        builtin_bot(sdk, "opponent", OTHELLO_BUILTIN)
        match_id = sdk.create_match(match_config("stuck", "opponent", move_time_ms=60_000)).id
        deadline = time.monotonic() + 60
        thinker = None
        while thinker is None:
            assert time.monotonic() < deadline, "the engine never got its move"
            thinker = next((w.worker_id for w in sdk.get_status().workers
                            if w.match_id == match_id and w.bot.startswith("stuck@")), None)
            time.sleep(0.05)
        pid = stack.processes[thinker].pid
        assert pid is not None and sandboxed_pids(pid), "its engine runs"
        cancelled = time.monotonic()
        sdk.cancel_match(match_id, "taking too long")
        while sandboxed_pids(pid):
            assert time.monotonic() - cancelled < 10, "the engine still thinks"
            time.sleep(0.05)
        match = wait_finished(redis_client, match_id, 30)
        # The worker is free again: a good engine's match plays through on it and the other.
        protocol_bot(sdk, "nboard-bot", "nboard-arena")
        after = wait_finished(redis_client, sdk.create_match(
            match_config("nboard-bot", "opponent", move_time_ms=MOVE_TIME_MS)).id, 300)
    assert match.status == match_pb2.MATCH_STATUS_CANCELLED, match.result
    assert after.status == match_pb2.MATCH_STATUS_FINISHED, after.result


def test_what_an_engine_says_is_kept_with_its_moves(redis_client: redis.Redis,
                                                    stack: Launcher) -> None:
    """An engine's MESSAGE lines reach the match record, bounded (its last 4 lines, each
    cut to 200 characters) and with the escape it printed made harmless; the command
    line shows them under each move and a replay file keeps them."""
    with stack_client(stack) as sdk:
        protocol_bot(sdk, "talker", "fake-talk", GOMOKU)
        builtin_bot(sdk, "listener", GOMOKU_BUILTIN, GOMOKU)
        match_id = sdk.create_match(match_config("talker", "listener", GOMOKU)).id
        match = wait_finished(redis_client, match_id, 300)
    assert match.status == match_pb2.MATCH_STATUS_FINISHED, match.result
    said = ["MESSAGE \ufffd]0;owned\ufffd a title", "MESSAGE " + "y" * 191 + "\u2026",
            "MESSAGE note 7", "MESSAGE note 8"]
    talker = [r for r in match.moves if r.color == common_pb2.COLOR_BLACK]
    assert talker and all(list(r.search.notes) == said for r in talker), talker[0].search
    assert all(not r.search.notes for r in match.moves if r.color == common_pb2.COLOR_WHITE)
    # The talker reports no evaluation or depth: none is made up for it (0 is a score).
    assert not any(r.search.HasField("score") or r.search.HasField("depth") for r in talker)
    listener = [r for r in match.moves if r.color == common_pb2.COLOR_WHITE]
    assert all(r.search.HasField("score") and r.search.depth > 0 for r in listener)

    watched = arena_command(stack, "match", "watch", match_id, "--no-board")
    assert watched.returncode == 0, watched.stderr
    assert watched.stdout.count("     | MESSAGE note 8\n") == len(talker), watched.stdout
    moves = [line for line in watched.stdout.splitlines() if line[:3].strip().isdigit()]
    assert [", score " in line for line in moves] == [r.color == common_pb2.COLOR_WHITE
                                                      for r in match.moves], moves
    assert "\x1b" not in watched.stdout and "\x07" not in watched.stdout
    exported = arena_command(stack, "match", "replay", match_id, "--ply", "1")
    assert exported.returncode == 0, exported.stderr
    assert "  | MESSAGE note 8" in exported.stdout and "\x1b" not in exported.stdout
    assert "score" not in exported.stdout and "depth" not in exported.stdout, exported.stdout


def must_pass() -> Position:
    """An Othello position whose side to move has no move but the other side has."""
    rng = random.Random(3)
    while True:
        board = game(OTHELLO).new_position()
        while not board.is_game_over():
            if board.legal_moves() == [PASS]:
                return board
            board.push(rng.choice(board.legal_moves()))


def test_a_protocol_bot_is_analysed_like_a_built_in_one(stack: Launcher) -> None:
    """An analyst with the catalog asks a protocol bot for its move on any position: the
    move its engine plays (Arena's Gomocup brain at depth 3, as in this process), what it
    reported, its notes; what an engine cannot answer, and an engine that fails, are clear
    errors; the command line shows it."""
    stack.spawn("analyst", "analyst-1", timeout_s=300)
    board = game(GOMOKU).new_position()
    history = [board.parse_move(name) for name in ("h8", "h9", "i9")]
    for move in history:
        board.push(move)
    position = common_pb2.Position(game=common_pb2.GameSpec(kind=GOMOKU), text=board.to_text())
    limits = common_pb2.SearchLimits(time_ms=MOVE_TIME_MS)
    with stack_client(stack) as sdk:
        until_listed(sdk, lambda e: all(o.analysts == 1 for o in e), "the analyst")
        assert all(e.workers == 2 for e in sdk.list_engines())  # counted apart
        listed = arena_command(stack, "engine", "list", "--game", "gomoku").stdout.splitlines()
        columns = listed[0].split()
        row = next(line.split() for line in listed if line.startswith("pbrain-arena "))
        assert (row[columns.index("WORKERS")], row[columns.index("ANALYSTS")]) == ("2", "1")
        protocol_bot(sdk, "pbrain-bot", "pbrain-arena", GOMOKU)
        protocol_bot(sdk, "talker", "fake-talk", GOMOKU)
        protocol_bot(sdk, "crasher", "fake-crash")
        reply = sdk.analyze(position, bot=common_pb2.BotRef(name="pbrain-bot"), limits=limits,
                            history=history)
        assert reply.move.square == expected_move(GOMOKU, "pbrain-bot", board.to_text(),
                                                  history)
        assert reply.search.depth == 3 and reply.search.HasField("score")
        assert reply.search.pv[0] == reply.move.square
        talked = sdk.analyze(position, bot=common_pb2.BotRef(name="talker"), limits=limits)
        assert talked.search.notes[-1] == "MESSAGE note 8"
        assert not talked.search.HasField("score") and not talked.search.HasField("depth")
        assert board.is_legal(talked.move.square)

        bot = common_pb2.BotRef(name="pbrain-bot")
        for asked, field in [
            ({"limits": common_pb2.SearchLimits(depth=4)}, "limits.depth"),
            ({"limits": common_pb2.SearchLimits(nodes=1000)}, "limits.nodes"),
            ({"limits": limits, "tree_node_budget": 100}, "tree_node_budget"),
        ]:
            with pytest.raises(InvalidArgumentError) as refused:
                sdk.analyze(position, bot=bot, **asked)
            assert [v.field for v in refused.value.violations] == [field], refused.value
        won = game(GOMOKU).new_position()
        for name in ("a1", "a2", "b1", "b2", "c1", "c2", "d1", "d2", "e1"):
            won.push(won.parse_move(name))
        with pytest.raises(InvalidArgumentError, match="the game is over"):
            sdk.analyze(common_pb2.Position(game=position.game, text=won.to_text()), bot=bot,
                        limits=limits)
        othello = common_pb2.Position(game=common_pb2.GameSpec(kind=OTHELLO),
                                      text=game(OTHELLO).new_position().to_text())
        protocol_bot(sdk, "nboard-bot", "nboard-arena")
        stuck = common_pb2.Position(game=othello.game, text=must_pass().to_text())
        passed = sdk.analyze(stuck, bot=common_pb2.BotRef(name="nboard-bot"), limits=limits)
        assert passed.move.square == PASS  # the side to move has none: the engine says so
        with pytest.raises(FailedPreconditionError, match="crash") as crashed:
            sdk.analyze(othello, bot=common_pb2.BotRef(name="crasher"), limits=limits)
        assert "crashing on purpose" in str(crashed.value)
        assert "\x1b" not in str(crashed.value)  # its stderr's colour escape made harmless
        # An illegal move is judged as in a match: an error, never handed out as a hint.
        protocol_bot(sdk, "cheater", "fake-illegal")
        with pytest.raises(FailedPreconditionError,
                           match=r"engine 'fake-illegal' gave no playable move: .* is illegal in"):
            sdk.analyze(othello, bot=common_pb2.BotRef(name="cheater"), limits=limits)

    shown = arena_command(stack, "analyze", "--bot", "talker", "--moves", "h8 h9 i9",
                          "--time-ms", "2000")
    assert shown.returncode == 0, shown.stderr
    assert "  | MESSAGE note 8" in shown.stdout and "score" not in shown.stdout, shown.stdout
    assert "\x1b]0;" not in shown.stdout
    refused = arena_command(stack, "analyze", "--bot", "pbrain-bot", "--moves", "h8",
                            "--depth", "5")
    assert refused.returncode == 1 and "--depth: a protocol engine is given a time, not a depth " \
        "limit: set --time-ms" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    crashed_cli = arena_command(stack, "analyze", "--bot", "crasher")
    assert crashed_cli.returncode == 1 and "crashing on purpose" in crashed_cli.stderr
    assert "\x1b" not in crashed_cli.stderr, crashed_cli.stderr


def test_the_engines_from_the_command_line(stack: Launcher) -> None:
    def arena(*argv: str) -> subprocess.CompletedProcess[str]:
        return arena_command(stack, *argv)

    listed = arena("engine", "list", "--game", "gomoku")
    assert listed.returncode == 0, listed.stderr
    assert "pbrain-arena" in listed.stdout and "nboard-arena" not in listed.stdout
    registered = arena("bot", "register", "--name", "cli-nboard", "--game", "othello",
                       "--engine", "nboard-arena", "--option", "contempt=1", "--json")
    assert registered.returncode == 0, registered.stderr
    spec = json.loads(registered.stdout)["spec"]
    assert spec["protocol"]["engine"] == "nboard-arena"
    assert spec["protocol"]["options"] == {"contempt": 1}
    assert len(spec["protocol"]["checksum"]) == 64
    for argv, words in [
        (["--engine", "no-such-engine"], "no live worker offers engine 'no-such-engine'"),
        (["--engine", "pbrain-arena"], "plays gomoku, not othello"),
        (["--engine", "nboard-arena", "--option", "depth=999"], "--option depth: must be int"),
        # The catalog's depth 3 is the operator's: a bot does not change it.
        (["--engine", "nboard-arena", "--option", "depth=4"],
         "--option depth: the operator's catalog sets depth = 3 for engine 'nboard-arena'"),
        (["--engine", "nboard-arena", "--option", "nonsense"], "--option needs KEY=VALUE"),
        (["--engine", "nboard-arena", "--depth", "3"], "takes --option KEY=VALUE"),
    ]:
        refused = arena("bot", "register", "--name", "cli-bad", "--game", "othello", *argv)
        assert refused.returncode == 1, (argv, refused.stdout)
        assert words in refused.stderr, (argv, refused.stderr)
        assert "Traceback" not in refused.stderr
    # Without --game the bot plays its engine's game (a new user's first try).
    gomocup = arena("bot", "register", "--name", "cli-pbrain", "--engine", "pbrain-arena",
                    "--json")
    assert gomocup.returncode == 0, gomocup.stderr
    assert json.loads(gomocup.stdout)["spec"]["game"] == "GAME_KIND_GOMOKU"
    exported = arena("bot", "export", "cli-nboard")
    assert exported.returncode == 0 and "[protocol]" in exported.stdout
    assert "[protocol.options]\ncontempt = 1" in exported.stdout
