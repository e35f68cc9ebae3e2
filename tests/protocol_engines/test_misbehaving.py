"""Engines that misbehave fail with the right typed reason, quickly, and leave nothing
behind: real processes in the real sandbox, for both protocols."""

from __future__ import annotations

import socket
import time
from dataclasses import replace

import pytest
from arena.services.referee.judge import MoveClock, judge_answer
from arena.services.worker.engines.client import PlayLimits
from arena.services.worker.engines.failures import EngineFailure, FailureReason
from arena.services.worker.engines.pool import EnginePool
from arena.services.worker.engines.results import answer_result
from arena.services.worker.engines.sandbox import Sandbox

from arena.games import GomokuBoard, Position, position_from_text
from arena.games.othello import OthelloBoard
from arena.v1 import engine_pb2, match_pb2
from tests.protocol_engines.conftest import (
    OTHELLO_START,
    FakeSpec,
    empty_gomoku,
    gomoku_job,
    hosted,
)

pytestmark = pytest.mark.usefixtures("no_orphans")
# A move on this board: Black has played the centre, White to move.
GOMOKU_AFTER_ONE = "15 freestyle " + "/".join(
    "-" * 15 if y != 7 else "-" * 7 + "X" + "-" * 7 for y in range(15)) + " O"
POSITIONS = {"gomocup": GOMOKU_AFTER_ONE, "nboard": OTHELLO_START, "gtp": OTHELLO_START}
PROTOCOLS = ("gomocup", "nboard", "gtp")
# Far above any honest wait in these tests: only a hang would reach it.
NEVER_S = 60.0


def fail(sandbox: Sandbox, spec_maker: FakeSpec, protocol: str, mode: str, arg: str = "",
         move_time_ms: int = 2000, **limits: int) -> EngineFailure:
    spec = spec_maker(protocol, mode, arg, **limits)
    pool = EnginePool(sandbox)
    started = time.monotonic()
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(spec, POSITIONS[protocol], [112] if protocol == "gomocup" else [],
                      PlayLimits(move_time_ms))
        assert time.monotonic() - started < NEVER_S
        return caught.value
    finally:
        pool.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_crash_is_reported_with_the_engines_last_words(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str) -> None:
    failure = fail(sandbox, fake_spec, protocol, "crash")
    assert failure.reason is FailureReason.CRASH
    assert "exited with code 3" in failure.detail
    assert failure.stderr_tail[-1] == "fake engine: crashing on purpose"
    assert "crashing on purpose" in failure.report()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_silent_engine_times_out_after_its_limit_and_grace(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str) -> None:
    started = time.monotonic()
    failure = fail(sandbox, fake_spec, protocol, "hang", move_time_ms=300, grace_ms=200)
    assert failure.reason is FailureReason.TIMEOUT
    assert time.monotonic() - started >= 0.5  # it was given its limit and grace


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_garbage_instead_of_a_move(sandbox: Sandbox, fake_spec: FakeSpec, protocol: str
                                   ) -> None:
    failure = fail(sandbox, fake_spec, protocol, "garbage")
    assert failure.reason is FailureReason.GARBAGE
    assert ("nowhere" if protocol == "nboard" else "I think") in failure.detail


def test_an_nboard_engines_diagnostic_line_is_a_note_not_garbage(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    # Edax prints such lines on stdout; only a malformed "===" answer is garbage.
    pool = EnginePool(sandbox)
    try:
        answer = pool.play(fake_spec("nboard", "chatter"), OTHELLO_START, [], PlayLimits(2000))
    finally:
        pool.close()
    assert answer.move in OthelloBoard().legal_moves()
    assert "*** SEARCH STILL RUNNING ? (0) ***" in answer.notes


@pytest.mark.parametrize("protocol", ["gomocup", "nboard"])
def test_a_search_no_engine_has_is_dropped_and_the_move_kept(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str) -> None:
    """A depth of 5,000 digits or a node count of 10**400 failed int() or int64 outside
    the engine's failure path; a score of 1e999 reached the API as infinity."""
    pool = EnginePool(sandbox)
    try:
        answer = pool.play(fake_spec(protocol, "boast"), POSITIONS[protocol],
                           [112] if protocol == "gomocup" else [], PlayLimits(2000))
    finally:
        pool.close()
    assert answer.move >= 0
    report = answer.search
    if protocol == "gomocup":
        assert (report.depth, report.score, report.nodes) == (7, 12.0, None)
    else:
        assert (report.depth, report.score, report.nodes) == (None, None, None)
    result = answer_result(answer, _position(protocol))
    # what the worker posts: every figure fits its field
    assert result.move.square == answer.move
    assert result.search.score == (12 if protocol == "gomocup" else 0)


def _position(protocol: str) -> Position:
    return position_from_text("gomoku" if protocol == "gomocup" else "othello",
                              POSITIONS[protocol])


def test_a_long_report_is_kept_bounded(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """A PV of 3,001 plies went into the match's record (and to every viewer) whole. Its
    first move is legal, then A1 again and again: the legal start is kept."""
    pool = EnginePool(sandbox)
    try:
        answer = pool.play(fake_spec("nboard", "longpv"), POSITIONS["nboard"], [],
                           PlayLimits(2000))
    finally:
        pool.close()
    assert len(answer.search.pv) == 3001
    result = answer_result(answer, _position("nboard"))
    assert result.search.depth == 5 and list(result.search.pv) == [answer.search.pv[0]]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_illegal_move_keeps_the_process(sandbox: Sandbox, fake_spec: FakeSpec,
                                           protocol: str) -> None:
    spec = fake_spec(protocol, "illegal")
    pool = EnginePool(sandbox)
    try:
        for _ in range(2):
            with pytest.raises(EngineFailure) as caught:
                pool.play(spec, POSITIONS[protocol], [112] if protocol == "gomocup" else [],
                          PlayLimits(2000))
            assert caught.value.reason is FailureReason.ILLEGAL_MOVE
            assert caught.value.process_survives
        assert pool.stats.starts == 1 and pool.stats.reused == 1
    finally:
        pool.close()


def test_a_point_off_the_board_is_illegal(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "gomocup", "offboard")
    assert failure.reason is FailureReason.ILLEGAL_MOVE
    assert "off the 15x15 board" in failure.detail


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_allocating_past_the_memory_limit(sandbox: Sandbox, fake_spec: FakeSpec,
                                          protocol: str) -> None:
    failure = fail(sandbox, fake_spec, protocol, "memory", move_time_ms=10_000, memory_mb=128)
    assert failure.reason is FailureReason.MEMORY_LIMIT
    assert "128 MiB" in failure.detail


def test_an_engine_cannot_reach_the_network(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """A listener on the worker's loopback: an isolated engine cannot connect to it (it
    crashes, saying why). Where the machine allows no isolation, the protections report
    must say so, and the engine does connect: the report tells the truth either way."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.5)
    port = str(listener.getsockname()[1])
    try:
        if sandbox.protections.network_isolated:
            failure = fail(sandbox, fake_spec, "gomocup", "network", port)
            assert failure.reason is FailureReason.CRASH
            assert "no network" in failure.stderr_tail[-1]
            with pytest.raises(TimeoutError):
                listener.accept()
        else:
            assert "network: NOT isolated" in "\n".join(sandbox.protections.describe())
            pool = EnginePool(sandbox)
            try:
                pool.play(fake_spec("gomocup", "network", port), GOMOKU_AFTER_ONE, [112],
                          PlayLimits(5000))
            finally:
                pool.close()
            listener.accept()[0].close()
    finally:
        listener.close()


def test_computing_past_the_cpu_seconds(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "nboard", "spin", move_time_ms=40_000, cpu_s=1)
    assert failure.reason is FailureReason.CPU_LIMIT
    assert "1 CPU seconds" in failure.detail


def test_writing_a_file_past_the_size_limit(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "gomocup", "bigfile", "512", output_kb=64)
    assert failure.reason is FailureReason.OUTPUT_LIMIT
    assert "wrote a file past 64 KiB" in failure.detail


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_flooding_output_hits_the_output_limit(sandbox: Sandbox, fake_spec: FakeSpec,
                                               protocol: str) -> None:
    failure = fail(sandbox, fake_spec, protocol, "flood", "256", output_kb=64)
    assert failure.reason is FailureReason.OUTPUT_LIMIT


def test_a_brain_that_refuses_the_board(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "gomocup", "refuse")
    assert failure.reason is FailureReason.REFUSED
    assert "refuses" in failure.detail


def test_a_gtp_engine_that_refuses_the_board_size_fails_to_start(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "gtp", "refuse")
    assert failure.reason is FailureReason.START_FAILED
    assert "'boardsize 8' with ? unacceptable size" in failure.detail


def test_a_gtp_engine_that_resigns(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "gtp", "resign")
    assert failure.reason is FailureReason.ILLEGAL_MOVE and failure.move is None
    assert "resigned" in failure.detail


def test_a_brain_that_never_answers_about_fails_its_set_up_in_time(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    # Time enough to answer START (a fake brain is a Python process: it took more than
    # 500 ms to start under the full test load), then none to ABOUT.
    failure = fail(sandbox, fake_spec, "gomocup", "mute", startup_ms=3000)
    assert failure.reason is FailureReason.START_FAILED
    assert "set-up failed: timeout: no answer to ABOUT" in failure.detail


HANDSHAKES = {"gomocup": "answer to START 15", "nboard": "pong 0", "gtp": "answer to name"}


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_engine_that_never_answers_its_handshake_fails_to_start(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str) -> None:
    """Not a time forfeit: the handshake (a Gomocup brain's is ``START``, sent with the
    first move of a board) is outside every move's time, within ``startup_ms``. A brain
    that never answered ``START`` was reported as ``timeout: no answer to START 15 in
    time``, where an NBoard engine that never pongs was ``start_failed``."""
    started = time.monotonic()
    failure = fail(sandbox, fake_spec, protocol, "deaf", startup_ms=400)
    assert failure.reason is FailureReason.START_FAILED
    assert f"timeout: no {HANDSHAKES[protocol]} in time" in failure.detail
    assert time.monotonic() - started >= 0.4  # it was given its startup_ms


def test_the_referee_is_told_a_brain_that_never_answers_start_failed_to_start(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """The worker's answer when it readies the brain for a move, before the move's clock,
    as the referee judges it: the bot's engine did not start (``bot_crashed``, as for an
    NBoard engine that never pongs), not ``time-forfeit: MOVE_ERROR_TIMEOUT``."""
    host, bot = hosted(fake_spec("gomocup", "deaf", startup_ms=400), sandbox)
    board = GomokuBoard(15, "freestyle")
    try:
        result = host.ready(gomoku_job(bot, board, 1000))
    finally:
        host.close()
    assert result is not None and result.error == engine_pb2.MOVE_ERROR_BOT_CRASHED, result
    assert result.error_detail.startswith(
        "start_failed: set-up failed: timeout: no answer to START 15 in time")
    forfeit = judge_answer(board, result, 0, MoveClock(1000, 300))
    assert forfeit is not None and forfeit.termination == match_pb2.TERMINATION_BOT_CRASHED


def test_a_brain_slower_than_its_startup_ms_on_start_fails_to_start(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """A brain computing on ``START`` (as Rapfi sizes its hash) past ``startup_ms``."""
    failure = fail(sandbox, fake_spec, "gomocup", "slowstart", "5000", startup_ms=300)
    assert failure.reason is FailureReason.START_FAILED
    assert "set-up failed: timeout: no answer to START 15" in failure.detail


def test_an_nboard_engine_that_never_finishes_its_handshake(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    failure = fail(sandbox, fake_spec, "nboard", "refuse", startup_ms=500)
    assert failure.reason is FailureReason.START_FAILED
    assert "pong 0" in failure.detail


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_closing_its_output_is_a_crash(sandbox: Sandbox, fake_spec: FakeSpec, protocol: str
                                       ) -> None:
    failure = fail(sandbox, fake_spec, protocol, "closeout")
    assert failure.reason is FailureReason.CRASH
    assert failure.detail == "closed its output"


def test_a_missing_executable_fails_to_start(sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    spec = fake_spec("gomocup", "play")
    broken = replace(spec, command=("/nonexistent/pbrain-nothing",))
    pool = EnginePool(sandbox)
    try:
        with pytest.raises(EngineFailure) as caught:
            pool.play(broken, GOMOKU_AFTER_ONE, [112], PlayLimits(1000))
        assert caught.value.reason is FailureReason.START_FAILED
    finally:
        pool.close()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_child_that_left_the_process_group_is_killed_too(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str) -> None:
    pool = EnginePool(sandbox)
    try:
        answer = pool.play(fake_spec(protocol, "escape"), POSITIONS[protocol],
                           [112] if protocol == "gomocup" else [], PlayLimits(5000))
        assert answer.move >= 0
    finally:
        pool.close()  # no_orphans then checks the escaped child is gone


@pytest.mark.parametrize("protocol", ("gomocup", "nboard"))  # GTP has no remarks to count in
def test_the_engine_does_not_think_on_the_opponents_time(
        sandbox: Sandbox, fake_spec: FakeSpec, protocol: str) -> None:
    """A thread in the engine counts 10 ms ticks; between moves the engine is stopped."""
    pool = EnginePool(sandbox)
    spec = fake_spec(protocol, "ponder")
    history = [112] if protocol == "gomocup" else []
    try:
        counts = []
        for _ in range(2):
            answer = pool.play(spec, POSITIONS[protocol], history, PlayLimits(5000))
            counts.append(int(answer.notes[-1].split()[-1]))
            time.sleep(1.0)  # ~100 ticks if it were running
        assert counts[1] - counts[0] < 50
    finally:
        pool.close()


def test_a_process_that_left_the_group_does_not_think_on_the_opponents_time(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    """The same count, kept by a child that left the engine's process group: stopping the
    group does not reach it; stopping every process of the engine's control group does."""
    if not sandbox.protections.cgroups:
        assert "between moves: SIGSTOP" in "\n".join(sandbox.protections.describe())
        return
    pool = EnginePool(sandbox)
    spec = fake_spec("gomocup", "hiddenponder")
    try:
        counts = []
        for _ in range(2):
            answer = pool.play(spec, POSITIONS["gomocup"], [112], PlayLimits(5000))
            counts.append(int(answer.notes[-1].split()[-1]))
            time.sleep(1.0)  # ~100 ticks if it were running
        assert counts[1] - counts[0] < 50
    finally:
        pool.close()


def test_empty_and_finished_positions_are_refused_before_the_engine(
        sandbox: Sandbox, fake_spec: FakeSpec) -> None:
    pool = EnginePool(sandbox)
    try:
        with pytest.raises(ValueError):
            pool.play(fake_spec("gomocup", "play"), "not a board", [], PlayLimits(1000))
        answer = pool.play(fake_spec("gomocup", "play"), empty_gomoku(), [], PlayLimits(1000))
        assert answer.move == 0
    finally:
        pool.close()
