"""How a move's time is counted (``judge.MoveClock``): the wall clock for external and
protocol bots, the search's CPU time for built-in bots with the wall clock as the outer
guard, and what each charges to a game budget."""

from __future__ import annotations

from arena.services.common.protocol.delivery import WALL_SLACK_MS, cpu_wall_guard_ms
from arena.services.referee.judge import MoveClock, judge_answer

from arena.games import new_position
from arena.v1 import common_pb2, engine_pb2, match_pb2

START = new_position("othello")
D3 = START.parse_move("d3")


def answer(cpu_ms: int = 0) -> engine_pb2.MoveResult:
    return engine_pb2.MoveResult(move=common_pb2.Move(square=D3), cpu_ms=cpu_ms)


def test_the_wall_clock_counts_the_referees_interval() -> None:
    clock = MoveClock(limit_ms=1000, grace_ms=200)
    assert clock.late(1200, answer()) is None
    assert clock.late(1201, answer(cpu_ms=5)) == "took 1201 ms; limit 1000 ms + 200 ms grace"
    assert clock.charged_ms(1201, answer(cpu_ms=5)) == 1201


def test_the_reading_of_a_captured_tree_is_no_clocks() -> None:
    """A built-in bot's search tree read for viewers after the search (400 ms for 50,000
    nodes) made 500 ms moves late: the worker says how long it took, and neither clock
    counts it."""
    read = engine_pb2.MoveResult(move=common_pb2.Move(square=D3), recording_ms=400,
                                 cpu_ms=480, worker_time_ms=890)
    wall = MoveClock(limit_ms=500, grace_ms=200)
    assert wall.late(900, read) is None and wall.charged_ms(900, read) == 500
    assert wall.late(1101, read) == "took 701 ms; limit 500 ms + 200 ms grace"
    cpu = MoveClock(limit_ms=500, grace_ms=200, cpu=True, wall_factor=1.0)
    past = cpu_wall_guard_ms(500, 200, 1.0) + 300  # the wall guard does not count it either
    read.worker_time_ms = past
    assert cpu.late(past, read) is None
    read.recording_ms = 0
    assert "a move timed on CPU may take" in (cpu.late(past, read) or "")


def test_a_busy_machine_does_not_cost_a_bot_on_the_cpu_clock_its_move() -> None:
    clock = MoveClock(limit_ms=1000, grace_ms=200, cpu=True, wall_factor=4.0)
    # 1,275 ms on the wall for a search of 990 ms of CPU: the move stands, 990 ms charged.
    assert clock.late(1275, answer(cpu_ms=990)) is None
    assert clock.charged_ms(1275, answer(cpu_ms=990)) == 990
    assert judge_answer(START, answer(cpu_ms=990), 1275, clock) is None


def test_too_much_cpu_time_is_late_on_the_cpu_clock() -> None:
    clock = MoveClock(limit_ms=1000, grace_ms=200, cpu=True)
    forfeit = judge_answer(START, answer(cpu_ms=1201), 1300, clock)
    assert forfeit is not None and forfeit.termination == match_pb2.TERMINATION_TIME_FORFEIT
    assert forfeit.detail == "searched 1201 ms of CPU time; limit 1000 ms + 200 ms grace"


def test_the_wall_clock_stays_the_outer_guard() -> None:
    clock = MoveClock(limit_ms=1000, grace_ms=200, cpu=True, wall_factor=4.0)
    guard = 4200 + WALL_SLACK_MS
    assert clock.late(guard, answer(cpu_ms=10)) is None
    assert clock.late(guard + 1, answer(cpu_ms=10)) == (
        f"took {guard + 1} ms on the wall clock (10 ms of CPU time); a move timed on CPU may "
        f"take {guard} ms")
    # A stall of an overloaded machine is not the short move's fault (1,364 ms were seen
    # for a 150 ms move of 30 ms CPU beside a CPU hog at load 6).
    short = MoveClock(limit_ms=150, grace_ms=100, cpu=True, wall_factor=4.0)
    assert short.late(1364, answer(cpu_ms=30)) is None
    # A factor below one would make the CPU clock stricter than the wall clock: it is one.
    strict = MoveClock(limit_ms=1000, grace_ms=200, cpu=True, wall_factor=0.1)
    assert strict.late(1200 + WALL_SLACK_MS, answer(cpu_ms=10)) is None
    assert strict.late(1201 + WALL_SLACK_MS, answer(cpu_ms=10)) is not None


def test_an_error_is_judged_before_the_time() -> None:
    crashed = engine_pb2.MoveResult(error=engine_pb2.MOVE_ERROR_BOT_CRASHED,
                                    error_detail="boom", cpu_ms=99_999)
    forfeit = judge_answer(START, crashed, 10, MoveClock(1000, 200, cpu=True))
    assert forfeit is not None and forfeit.termination == match_pb2.TERMINATION_BOT_CRASHED


def test_an_answer_held_back_on_its_way_is_not_late_on_the_cpu_clock() -> None:
    """The referee's interval ends when the answer reaches Redis; a Redis that stalled for
    12 s held back an answer of a 1 ms search, and the bot lost the game on time. The
    worker's own wall time of the search bounds the interval; it counts a stuck search
    (a worker stopped mid-search) as much as the interval does."""
    clock = MoveClock(limit_ms=300, grace_ms=200, cpu=True, wall_factor=4.0)
    guard = 1400 + WALL_SLACK_MS
    held_back = engine_pb2.MoveResult(move=common_pb2.Move(square=D3), cpu_ms=1,
                                      worker_time_ms=3)
    assert clock.late(12005, held_back) is None
    stuck = engine_pb2.MoveResult(move=common_pb2.Move(square=D3), cpu_ms=1,
                                  worker_time_ms=guard + 1)
    assert clock.late(12005, stuck) == (
        f"took {guard + 1} ms on the wall clock (1 ms of CPU time); a move timed on CPU may "
        f"take {guard} ms")
    assert clock.late(guard + 1, answer(cpu_ms=1)) is not None  # no time of its own: the interval
    # On the wall clock the interval is the time, however the worker timed it.
    wall = MoveClock(limit_ms=300, grace_ms=200)
    assert wall.late(12005, held_back) == "took 12005 ms; limit 300 ms + 200 ms grace"


def test_time_spent_waiting_for_a_cpu_is_not_late_on_the_cpu_clock() -> None:
    """With two test suites and a Compose stack on two cores, a 150 ms move took 4,781 ms
    on the wall clock for 147 ms of CPU time and forfeited; the worker's thread had been
    ready to run most of that time. The worker reports that run-queue wait (``queued_ms``),
    and the guard counts the rest: a search that sleeps or hangs still loses the move."""
    clock = MoveClock(limit_ms=150, grace_ms=2000, cpu=True, wall_factor=4.0)
    guard = 2600 + WALL_SLACK_MS

    def result(queued_ms: int) -> engine_pb2.MoveResult:
        return engine_pb2.MoveResult(move=common_pb2.Move(square=D3), cpu_ms=147,
                                     worker_time_ms=4781, queued_ms=queued_ms)

    assert clock.late(4790, result(4400)) is None
    assert clock.late(4790, result(100)) == (
        f"took 4781 ms on the wall clock (147 ms of CPU time, 100 ms waiting for a CPU); a "
        f"move timed on CPU may take {guard} ms")
