"""The pool of warm engine processes: reused across moves and games, restarted after a
death or a failure that killed them, the least recently used stopped past the cap."""

from __future__ import annotations

import os
import signal
import threading
import time
from dataclasses import replace

import pytest
from arena.services.common import pids
from arena.services.referee.judge import MoveClock, judge_answer
from arena.services.worker.engines import pool as pool_module
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.sandbox import Sandbox

from arena.engine.api import StopFlag
from arena.games import GomokuBoard
from arena.v1 import common_pb2, engine_pb2
from tests.protocol_engines.conftest import (
    OTHELLO_START,
    FakeSpec,
    empty_gomoku,
    gomoku_job,
    hosted,
)

pytestmark = pytest.mark.usefixtures("no_orphans")
LIMITS = PlayLimits(5000)


def play_game(pool: EnginePool, spec_maker: FakeSpec, plies: int) -> None:
    board = GomokuBoard(15, "freestyle")
    spec = spec_maker("gomocup", "play")
    for _ in range(plies):
        answer = pool.play(spec, board.to_text(), board.move_stack, LIMITS)
        board.push(answer.move)


def test_one_process_serves_moves_of_many_games(sandbox: Sandbox, fake_spec: FakeSpec
                                                ) -> None:
    pool = EnginePool(sandbox)
    try:
        for _ in range(3):
            play_game(pool, fake_spec, 6)
        [pid] = pool.running()
        stamp = pids.stamp(pid)
        assert pool.stats.starts == 1 and pool.stats.moves == 18
        assert pool.stats.reuse_rate == pytest.approx(17 / 18)
        assert pids.running(stamp)
    finally:
        pool.close()
    assert pids.running(stamp) is None


def test_a_brain_that_drops_a_command_right_after_its_move_loses_nothing(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """The brain drops the first word it reads after each move (as Rapfi 0.43 does until
    it has cleared its thinking flag): the client asks ABOUT until it answers before it
    sends anything else, so clock lines, set-ups and positions all arrive whole."""
    pool = EnginePool(sandbox)
    spec = fake_spec("gomocup", "lagging")
    try:
        board = GomokuBoard(15, "freestyle")
        for move_ms in (5000, 4000, 4000, 3000):  # the clock lines change, and stay
            answer = pool.play(spec, board.to_text(), board.move_stack, PlayLimits(move_ms))
            assert not [n for n in answer.notes if "Unknown command" in n]
            board.push(answer.move)
        other = GomokuBoard(19, "freestyle")  # a new size: START comes after a move
        pool.ready(spec, other.to_text())
        assert pool.play(spec, other.to_text(), [], LIMITS).move == 0
        assert pool.stats.starts == 1 and pool.stats.restarts == 0
    finally:
        pool.close()


def test_a_warm_brain_opens_a_new_game_on_the_empty_board(sandbox: Sandbox,
                                                          fake_spec: FakeSpec) -> None:
    """A brain refuses BEGIN once it has played (Rapfi 0.43 and Arena's own do): a game
    from the empty board after another game starts it again (START), outside the move."""
    pool = EnginePool(sandbox)
    try:
        for _ in range(3):
            play_game(pool, fake_spec, 3)  # each game from the empty board
        assert pool.stats.starts == 1 and pool.stats.restarts == 0
    finally:
        pool.close()


def test_a_dead_process_is_replaced_on_the_next_move(sandbox: Sandbox, fake_spec: FakeSpec
                                                     ) -> None:
    pool = EnginePool(sandbox)
    spec = fake_spec("nboard", "play")
    try:
        pool.play(spec, OTHELLO_START, [], LIMITS)
        [first] = pool.running()
        stamp = pids.stamp(first)
        os.kill(first, signal.SIGKILL)  # dies while suspended between moves
        deadline = time.monotonic() + 10
        while pids.running(stamp) and time.monotonic() < deadline:
            time.sleep(0.01)
        pool.play(spec, OTHELLO_START, [], LIMITS)
        [second] = pool.running()
        assert second != first and pool.stats.restarts == 1 and pool.stats.starts == 2
    finally:
        pool.close()


def test_a_timeout_kills_the_process_and_the_next_move_gets_a_new_one(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    hang = fake_spec("gomocup", "hang", grace_ms=100)
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(hang, empty_gomoku(), [], PlayLimits(200))
        assert caught.value.reason is FailureReason.TIMEOUT
        assert pool.running() == []
        with pytest.raises(EngineFailure):
            pool.play(hang, empty_gomoku(), [], PlayLimits(200))
        assert pool.stats.starts == 2 and pool.stats.restarts == 1
    finally:
        pool.close()


def test_an_answer_carries_the_cpu_time_the_engine_used(sandbox: Sandbox,
                                                       fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    burner, sleeper = fake_spec("nboard", "burn", "400"), fake_spec("nboard", "sleepy", "600")
    try:
        burnt = pool.play(burner, OTHELLO_START, [], LIMITS)
        slept = pool.play(sleeper, OTHELLO_START, [], LIMITS)
    finally:
        pool.close()
    assert 350 <= burnt.cpu_ms <= burnt.elapsed_ms + 20, burnt
    assert slept.elapsed_ms >= 600 and slept.cpu_ms < 200, slept


@pytest.mark.parametrize("bare", [False, True], ids=["cgroup", "no cgroup"])
def test_the_cpu_time_of_the_engines_children_is_charged_to_it(
        sandbox: Sandbox, fake_spec: FakeSpec, bare: bool) -> None:
    """An engine whose search runs in a child process (a second core, uncounted) uses the
    CPU time its move is charged, whatever it uses it in; without a cgroup, the time of
    the children it waited for."""
    if bare:
        sandbox = Sandbox(replace(sandbox.protections, cgroups={}), root=sandbox.root)
    pool = EnginePool(sandbox)
    try:
        farmed = pool.play(fake_spec("nboard", "farm", "400"), OTHELLO_START, [], LIMITS)
    finally:
        pool.close()
    assert 350 <= farmed.cpu_ms <= farmed.elapsed_ms + 20, farmed


def test_a_gomocup_set_up_is_not_charged_to_the_move(sandbox: Sandbox,
                                                    fake_spec: FakeSpec) -> None:
    """A brain that computes on START (Rapfi sizes its hash there) is set up outside its
    first move's CPU time, as outside its wall time."""
    pool = EnginePool(sandbox)
    try:
        first = pool.play(fake_spec("gomocup", "slowstart", "500"), empty_gomoku(), [], LIMITS)
    finally:
        pool.close()
    assert first.cpu_ms < 250, first


@pytest.mark.parametrize("protocol, position", [("gomocup", empty_gomoku()),
                                                ("nboard", OTHELLO_START)])
def test_what_an_engine_computes_after_its_start_is_not_charged_to_its_first_move(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str, position: str) -> None:
    """An engine that goes on computing after it answered its handshake (NBoard here) or
    its set-up (Gomocup) was charged that work in its first move. The pool now waits for
    it to settle first."""
    pool = EnginePool(sandbox)
    try:
        first = pool.play(fake_spec(protocol, "latestart", "600"), position, [], LIMITS)
    finally:
        pool.close()
    assert first.cpu_ms < 250, first


def test_a_brain_given_an_option_it_does_not_know_keeps_its_first_move_at_200_ms(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """Rapfi 0.43 answers an INFO key it does not know with an ERROR line (a bot's option
    ``bogus=1``: "ERROR Unknown command: 1"), which the set-up took for a refusal of
    ABOUT, its end; Rapfi went on to size its hash (``INFO max_memory``), and its first
    move was charged that: at 200 ms a move, every new Rapfi of such a bot lost it on time
    (searched 583 to 725 ms). The worker's path (ready, then a move timed on CPU) judged
    by the referee's clock: it forfeited before ("searched 577 ms"), not now."""
    spec = fake_spec("gomocup", "strictinfo", "600", grace_ms=100).with_options(
        {"bogus": "1"})
    host, bot = hosted(spec, sandbox)
    board = GomokuBoard(15, "freestyle")
    board.push(112)
    job = gomoku_job(bot, board, 200)
    try:
        assert host.ready(job) is None
        began = time.monotonic()
        result = host.play(job)
        wall_ms = round((time.monotonic() - began) * 1000)
    finally:
        host.close()
    assert judge_answer(board, result, wall_ms, MoveClock(200, 100, cpu=True)) is None, result


def test_what_a_brain_said_in_its_set_up_is_in_its_first_moves_notes(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """A bot's option the brain does not know is refused in the brain's set-up, where
    nobody saw it (the bot played as if it had no such option); its owner now reads it in
    the notes of the brain's first move, and only there."""
    spec = fake_spec("gomocup", "strictinfo", "0").with_options({"bogus": "1"})
    pool = EnginePool(sandbox)
    board = GomokuBoard(15, "freestyle")
    board.push(112)
    try:
        first = pool.play(spec, board.to_text(), [], LIMITS)
        board.push(first.move)
        second = pool.play(spec, board.to_text(), [], LIMITS)
    finally:
        pool.close()
    assert first.notes == ("set-up: MESSAGE Unknown Info Parameter: BOGUS",
                           "set-up: ERROR Unknown command: 1"), first
    assert second.notes == (), second


def test_the_worker_sets_a_brain_up_before_the_move_is_timed(sandbox: Sandbox,
                                                             fake_spec: FakeSpec) -> None:
    """The set-up on START stayed inside the referee's wall interval (the worker reports
    a move started before it plays it): 0.6-0.8 s for Arena's own Python brains, ~1 s for
    Rapfi, more on a busy machine, against a wall guard of 2.7 s at 100 ms a move. The
    worker's engine host now sets the brain up when it readies the engine, before that."""
    spec = fake_spec("gomocup", "slowstart", "600")
    host, bot = hosted(spec, sandbox)
    timings = []
    try:
        # A new size is set up again; the same one is not, in a game under way.
        for size, stones in ((15, ()), (19, ()), (19, (180,))):
            board = GomokuBoard(size, "freestyle")
            for stone in stones:
                board.push(stone)
            job = engine_pb2.MoveJob(
                game=common_pb2.GAME_KIND_GOMOKU, bot=bot, time_budget_ms=1000, cpu_clock=True,
                position=common_pb2.Position(text=board.to_text()))
            began = time.monotonic()
            assert host.ready(job) is None
            readied = time.monotonic()
            result = host.play(job)
            timings.append((readied - began, time.monotonic() - readied))
            assert result.HasField("move") and result.cpu_ms < 250, result
    finally:
        host.close()
    assert [ready >= 0.55 for ready, _ in timings] == [True, True, False], timings
    assert all(played < 0.4 for _, played in timings), timings


def switches(pgid: int) -> int:
    """Context switches of every thread of every process in the group ``pgid``: a stopped
    process woken and stopped again adds some, one left stopped adds none."""
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.getpgid(int(pid)) != pgid:
                continue
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/status") as status:
                    total += sum(int(line.split()[1]) for line in status
                                 if line.split(":")[0].endswith("ctxt_switches"))
        except (ProcessLookupError, FileNotFoundError):
            continue
    return total


def test_readying_an_engine_with_nothing_to_set_up_leaves_it_stopped(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """Between moves an engine is stopped (SIGSTOP). Readying the next move woke it and
    stopped it again even with nothing to tell it (NBoard, GTP, a Gomocup brain of the same
    size): a pair of signals and a wait for it to settle, every move. It stays stopped now;
    a new size still wakes the brain for its set-up."""
    pool = EnginePool(sandbox)
    nboard, gomocup = fake_spec("nboard", "play"), fake_spec("gomocup", "play")
    try:
        pool.play(nboard, OTHELLO_START, [], LIMITS)
        pool.play(gomocup, empty_gomoku(15), [], LIMITS)
        [nboard_pid, gomocup_pid] = pool.running()
        under_way = GomokuBoard(15, "freestyle")
        under_way.push(112)  # the same size, a game under way (an empty board: a new game)
        ran = []
        for spec, pid, position in ((nboard, nboard_pid, OTHELLO_START),
                                    (gomocup, gomocup_pid, under_way.to_text()),
                                    (gomocup, gomocup_pid, empty_gomoku(19))):
            before = switches(os.getpgid(pid))
            pool.ready(spec, position)
            time.sleep(0.05)
            ran.append(switches(os.getpgid(pid)) > before)
        assert ran == [False, False, True]
    finally:
        pool.close()


def test_wait_ms_waits_past_the_move_time(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """A move timed on CPU is waited for longer than its limit (the referee's wall guard)."""
    pool = EnginePool(sandbox)
    sleeper = fake_spec("nboard", "sleepy", "700", grace_ms=100)
    try:
        answer = pool.play(sleeper, OTHELLO_START, [], PlayLimits(300, wait_ms=5000))
        assert answer.elapsed_ms >= 700
        pool.close()
        with pytest.raises(EngineFailure) as caught:  # a new process sleeps again
            pool.play(sleeper, OTHELLO_START, [], PlayLimits(300))
        assert caught.value.reason is FailureReason.TIMEOUT
    finally:
        pool.close()


def test_a_stop_kills_the_thinking_engine_at_once_and_the_next_move_gets_a_new_one(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """A cancelled match (or a stopping worker) must not wait for the engine's answer."""
    pool = EnginePool(sandbox)
    hang = fake_spec("nboard", "hang")
    stop = StopFlag()
    try:
        pool.ready(hang)
        [pid] = pool.running()
        stamp = pids.stamp(pid)
        threading.Timer(0.3, stop.set).start()
        started = time.monotonic()
        with pytest.raises(EngineFailure) as caught:
            pool.play(hang, OTHELLO_START, [], PlayLimits(60_000, stop=stop))
        waited = time.monotonic() - started
        assert caught.value.reason is FailureReason.STOPPED
        assert waited < 5, f"the stop took {waited:.1f} s to end a 60 s move"
        assert pool.running() == [] and pids.running(stamp) is None
        with pytest.raises(EngineFailure) as again:  # a fresh process takes the next move
            pool.play(hang, OTHELLO_START, [], PlayLimits(200))
        assert again.value.reason is FailureReason.TIMEOUT and pool.stats.starts == 2
    finally:
        pool.close()


def test_a_stop_raised_before_the_move_asks_the_engine_nothing(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    spec = fake_spec("gomocup", "play")
    stop = StopFlag()
    stop.set()
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(spec, empty_gomoku(), [], PlayLimits(5000, stop=stop))
        assert caught.value.reason is FailureReason.STOPPED
        answer = pool.play(spec, empty_gomoku(), [], LIMITS)  # unstopped: plays as usual
        assert answer.move >= 0
    finally:
        pool.close()


def test_the_least_recently_used_engine_is_stopped_past_the_cap(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox, capacity=2)
    specs = [replace(fake_spec("gomocup", "play"), name=f"brain-{n}") for n in range(3)]
    try:
        stamps = []
        for spec in specs[:2]:
            pool.play(spec, empty_gomoku(), [], LIMITS)
            stamps.append(pids.stamp(pool.running()[-1]))
        pool.play(specs[0], empty_gomoku(), [], LIMITS)  # brain-1 is now the oldest
        pool.play(specs[2], empty_gomoku(), [], LIMITS)
        assert pool.stats.evictions == 1 and len(pool.running()) == 2
        assert pids.running(stamps[0]) and pids.running(stamps[1]) is None
    finally:
        pool.close()


def test_an_owner_cycling_through_engines_makes_room_among_their_own(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """Least recently used alone, carol's moves over bots that differ only in their
    options stopped bob's warm engine between two of his moves: his next one waited for a
    fresh start. The owner holding the most processes makes room; bob's stays warm."""
    pool = EnginePool(sandbox, capacity=3)
    specs = [replace(fake_spec("gomocup", "play"), name=f"brain-{n}") for n in range(6)]
    try:
        pool.play(specs[0], empty_gomoku(), [], LIMITS, owner="bob")
        bobs = pids.stamp(pool.running()[-1])
        for round_ in range(2):
            for spec in specs[1:]:
                pool.play(spec, empty_gomoku(), [], LIMITS, owner="carol")
            carols = pids.stamp(pool.running()[-1])  # brain-5, her latest
            pool.play(specs[0], empty_gomoku(), [], LIMITS, owner="bob")
            assert pids.running(bobs), round_
        assert pool.stats.starts == 1 + 10 and len(pool.running()) == 3
        pool.play(specs[1], empty_gomoku(), [], LIMITS, owner="bob")  # 2 each: oldest goes
        assert pids.running(bobs) and pids.running(carols)
        pool.play(specs[2], empty_gomoku(), [], LIMITS, owner="bob")  # bob would hold 3
        assert pids.running(bobs) is None and pids.running(carols)
    finally:
        pool.close()


def test_equal_specs_share_a_process(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    try:
        pool.play(fake_spec("nboard", "play"), OTHELLO_START, [], LIMITS)
        pool.play(fake_spec("nboard", "play").with_options({}), OTHELLO_START, [], LIMITS)
        pool.play(fake_spec("nboard", "play").with_options({"depth": 5}), OTHELLO_START, [],
                  LIMITS)
        assert pool.stats.starts == 2 and len(pool.running()) == 2
    finally:
        pool.close()


def test_a_process_near_its_cpu_seconds_is_replaced_between_moves(
        sandbox: Sandbox, fake_spec: FakeSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "RECYCLE_CPU_SHARE", 0.0)  # every process is worn out
    pool = EnginePool(sandbox)
    try:
        for _ in range(3):
            pool.play(fake_spec("gomocup", "play"), empty_gomoku(), [], LIMITS)
        assert pool.stats.recycled == 2 and pool.stats.restarts == 0
    finally:
        pool.close()


def test_moves_of_different_engines_from_several_threads(sandbox: Sandbox,
                                                        fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    errors: list[BaseException] = []

    def play(protocol: str) -> None:
        position = OTHELLO_START if protocol == "nboard" else empty_gomoku()
        try:
            for _ in range(5):
                pool.play(fake_spec(protocol, "play"), position, [], LIMITS)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(p,)) for p in ("nboard", "gomocup") * 2]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == [] and pool.stats.moves == 20 and pool.stats.starts == 2
    finally:
        pool.close()


def test_a_pool_needs_room_for_one(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="capacity"):
        EnginePool(sandbox, capacity=0)
